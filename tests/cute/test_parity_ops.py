"""The parity-table functions of CuTe's int_tuple.hpp, stride.hpp and layout.hpp (modules
tensorlayout.cute.int_tuple_ops and layout_ops, and Layout.get_hier_coord/get_flat_coord/get_1d_coord)
against CuTe's C++ compiled host-only, pycute where it has the function, and brute force.

Each random case is one C++ expression over static values; where C++ does not compile it we
must raise, else we must print what C++ prints (static ``_`` markers aside).
"""

from __future__ import annotations

import contextlib
import inspect
import itertools
import random
import re
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tensorlayout import cute
from tensorlayout.cute import Layout, tla
from tensorlayout.cute import int_tuple_ops as ops
from tensorlayout.cute import layout_ops as lo
from tensorlayout.cute.basis import as_arithmetic_tuple
from tensorlayout.cute.int_tuple import flatten, format_int_tuple, unflatten
from tensorlayout.errors import AlgebraError, LayoutError, TensorLayoutError
from tests.cute import cpp_oracle, differential
from tests.test_robustness import JUNK

needs_cpp = pytest.mark.skipif(not cpp_oracle.available(), reason="needs g++ and the nvidia-cutlass headers")
T = cpp_oracle.int_tuple_expr
Lx = cpp_oracle.layout_expr


def text(x: Any) -> str:
    """Our answer in C++'s print form (bools print as 1/0)."""
    if isinstance(x, bool):
        return str(int(x))
    if isinstance(x, tuple) and len(x) == 2 and isinstance(x[0], Layout):
        return f"({x[0]},{x[1]})"
    if isinstance(x, (Layout, cute.CoordLayout, cute.ArithmeticTuple, cute.ScaledBasis)):
        return str(x).replace("_", "")  # C++'s text is compared with its static markers dropped
    return format_int_tuple(x)


Case = tuple[str, Callable[[], Any], str]
#: For cases built on composition: whether C++'s printed answer is right by the definitions
#: (tests/cute/differential.py); where it is not, we must raise instead.
JUDGES: dict[str, Callable[[Layout], bool]] = {}


def agree(cases: list[Case]) -> dict[str, int]:
    """Run every ``(label, ours, C++ expression)`` case through C++ and compare."""
    answers = cpp_oracle.run_exprs([c[2] for c in cases])
    counts = {"C++ answers": 0, "C++ rejects": 0, "C++ wrong": 0}
    for (label, ours, _expr), cpp in zip(cases, answers):
        try:
            mine: Any = ours()
        except TensorLayoutError as e:
            mine = e
        if cpp is None:
            assert isinstance(mine, TensorLayoutError), f"C++ rejects {label}, we give {mine}"
            counts["C++ rejects"] += 1
        elif label in JUDGES and not JUDGES[label](Layout.parse(cpp)):
            assert isinstance(mine, AlgebraError), f"C++'s {cpp} for {label} is wrong, we give {mine}"
            counts["C++ wrong"] += 1
        else:
            assert not isinstance(mine, Exception), f"C++ answers {label} = {cpp}, we raise {mine}"
            want = _as_tuple_text(cpp.replace("_", ""), mine)
            assert text(mine) == want, f"{label}: C++ {cpp}, ours {text(mine)}"
            counts["C++ answers"] += 1
    return counts


def _as_tuple_text(cpp: str, mine: Any) -> str:
    """C++ prints a one-leaf coordinate of an identity layout as a scaled basis ``v@0@0``
    (``v`` at mode path (0, 0)); as a tuple that is ``((v))``."""
    m = re.fullmatch(r"(-?\d+)((?:@\d+)+)", cpp)
    if m is None or not isinstance(mine, tuple):
        return cpp
    out: Any = int(m.group(1))
    for k in m.group(2)[1:].split("@"):
        out = (*(0,) * int(k), out)
    return text(out)


def rand_tuple(rng: random.Random, depth: int = 2, hi: int = 9) -> Any:
    if depth == 0 or rng.random() < 0.45:
        return rng.randint(0, hi)
    return tuple(rand_tuple(rng, depth - 1, hi) for _k in range(rng.randint(1, 3)))


def like(rng: random.Random, t: Any, hi: int = 9) -> Any:
    """A tuple of ``t``'s profile with random leaves; now and then a mode more or less."""
    out = unflatten([rng.randint(0, hi) for _k in flatten(t)], t)
    if isinstance(out, tuple) and rng.random() < 0.15:
        out = out[:-1] if rng.random() < 0.5 else (*out, rng.randint(0, hi))
    return out


# ---------------------------------------------------------------- int_tuple.hpp


def int_tuple_cases(seed: int, n: int) -> list[Case]:
    rng = random.Random(seed)
    cases: list[Case] = []

    def add(name: str, *args: Any, cpp: str | None = None) -> None:
        fn = getattr(ops, name)
        label = f"{name}({', '.join(map(format_int_tuple, args))})"
        cases.append((label, lambda: fn(*args), cpp or f"cute::{name}({','.join(T(a) for a in args)})"))

    for _k in range(n):
        a = rand_tuple(rng)
        b = like(rng, a) if rng.random() < 0.7 else rand_tuple(rng)
        pos_a = unflatten([x + 1 for x in flatten(a)], a)  # C++ divides by these at run time
        pos_b = unflatten([x + 1 for x in flatten(b)], b)
        for name in ("sum", "product_each", "max", "min", "gcd"):
            add(name, a)
        for name in ("max", "min", "gcd", "product_like", "elem_scale"):
            add(name, a, b)
        add("evenly_divides", pos_a, pos_b)
        add("round_up", a, pos_b)
        for order in ("lex", "colex", "elem"):
            for rel in ("less", "leq", "gtr", "geq"):
                if f"{order}_{rel}" != "elem_less":
                    add(f"{order}_{rel}", a, b)
        add("tuple_ceil_div", pos_a, pos_b, cpp=f"cute::ceil_div({T(pos_a)},{T(pos_b)})")
    for _k in range(n // 4):
        vals = [rng.randint(0, 9) for _j in range(rng.randint(1, 4))]
        big_n, cnt, init = rng.randint(1, 5), rng.randint(0, len(vals)), rng.randint(0, 9)
        arr = f"std::array<int,{len(vals)}>{{{','.join(map(str, vals))}}}"
        cases.append((f"make_int_tuple<{big_n}>({vals}, {cnt}, {init})",
                      lambda v=vals, N=big_n, c=cnt, i=init: ops.make_int_tuple(N, v, c, i),
                      f"cute::make_int_tuple<{big_n}>({arr},{cnt},{init})"))
    return cases


@needs_cpp
def test_int_tuple_functions_agree_with_cpp() -> None:
    counts = agree(int_tuple_cases(seed=1, n=40))
    assert counts["C++ answers"] > 500 and counts["C++ rejects"] > 20, counts


@needs_cpp
@pytest.mark.thorough
@pytest.mark.parametrize("seed", range(2, 6))
def test_int_tuple_functions_agree_with_cpp_long(seed: int) -> None:
    agree(int_tuple_cases(seed=seed, n=150))


def test_orders_brute_force() -> None:
    """On flat tuples of one rank the orders are Python's tuple order (colex: reversed tuples),
    and elem_leq is *not* "every leaf <=" (CuTe defines it as not elem_less(b, a))."""
    rng = random.Random(7)
    for _k in range(300):
        a = tuple(rng.randint(0, 3) for _j in range(3))
        b = tuple(rng.randint(0, 3) for _j in range(3))
        assert ops.lex_less(a, b) == (a < b) and ops.lex_leq(a, b) == (a <= b)
        assert ops.lex_gtr(a, b) == (a > b) and ops.lex_geq(a, b) == (a >= b)
        assert ops.colex_less(a, b) == (a[::-1] < b[::-1]) and ops.colex_geq(a, b) == (a[::-1] >= b[::-1])
        assert ops.colex_leq(a, b) == (a[::-1] <= b[::-1]) and ops.colex_gtr(a, b) == (a[::-1] > b[::-1])
        assert cute.elem_less(a, b) == all(x < y for x, y in zip(a, b))
        assert ops.elem_gtr(a, b) == all(x > y for x, y in zip(a, b))
        assert ops.elem_geq(a, b) == (not all(x < y for x, y in zip(a, b)))
    assert ops.elem_leq((1, 5), (2, 3)) and not all(x <= y for x, y in zip((1, 5), (2, 3)))
    with pytest.raises(AlgebraError, match=r"lex_less: a tuple compared with an int \(\(2,3\) and 4\)"):
        ops.lex_less((1, (2, 3)), (1, 4))  # C++ compares a tuple with an int: no overload


def test_elem_less_refuses_a_tuple_against_an_int() -> None:
    with pytest.raises(TensorLayoutError, match=r"elem_less: a tuple compared with an int \(\(1\) and 7\)"):
        cute.elem_less(((1,), 6), (7, 7))


def test_reductions_brute_force() -> None:
    rng = random.Random(8)
    for _k in range(200):
        a = rand_tuple(rng)
        leaves = flatten(a)
        assert ops.sum(a) == sum(leaves)
        assert ops.product_each(a) == tuple(cute.product(m) for m in (a if isinstance(a, tuple) else (a,)))
        if leaves and not any(isinstance(x, tuple) and not x for x in _subtuples(a)):
            assert ops.max(a) == max(leaves) and ops.min(a) == min(leaves)
            g = 0
            for x in leaves:
                g = _gcd(g, x)
            assert ops.gcd(a) == g
        assert ops.elem_scale(a, a) == unflatten([x * x for x in leaves], a)
    with pytest.raises(AlgebraError, match=r"max of an empty tuple has no value"):
        ops.max((3, ()))
    with pytest.raises(LayoutError, match=r"sum: expected an int or a tuple of ints nested at most 100"):
        ops.sum((1, "2"))


def _subtuples(t: Any) -> list[Any]:
    return [t] + [s for x in t for s in _subtuples(x)] if isinstance(t, tuple) else []


def _gcd(a: int, b: int) -> int:
    while b:
        a, b = b, a % b
    return abs(a)


def test_evenly_divides_means_logical_divide_tiles_exactly() -> None:
    """evenly_divides(shape, tiler) for int tilers: the tiler times the rest is the whole size."""
    rng = random.Random(9)
    for _k in range(200):
        shape = differential.random_shape(rng)
        tiler = rng.randint(1, 12)
        rest = ops.tuple_ceil_div(shape, tiler)
        assert ops.evenly_divides(shape, tiler) == (cute.product(shape) == tiler * cute.product(rest))


def test_elem_scale_and_tuple_max_match_pycute() -> None:
    pycute = pytest.importorskip("pycute")
    rng = random.Random(10)
    for _k in range(200):
        a = rand_tuple(rng)
        b = unflatten([rng.randint(0, 9) for _j in flatten(a)], a)
        assert ops.elem_scale(a, b) == pycute.elem_scale(a, b)
        if flatten(a) and not any(isinstance(x, tuple) and not x for x in _subtuples(a)):
            assert ops.max(a) == pycute.tuple_max(a)


# ---------------------------------------------------------------- stride.hpp


def stride_cases(seed: int, n: int) -> list[Case]:
    rng = random.Random(seed)
    cases: list[Case] = []
    for _k in range(n):
        shape = differential.random_shape(rng)
        for major in ("LayoutLeft", "LayoutRight"):
            cur = rng.choice((1, 2, 5))
            cases.append((f"compact_major<{major}>({shape}, {cur})",
                          lambda s=shape, m=major, c=cur: lo.compact_major(m, s, c),
                          f"cute::compact_major<cute::{major}>({T(shape)},{T(cur)})"))
        order = unflatten(rng.sample(range(len(flatten(shape))), len(flatten(shape))), shape)
        if rng.random() < 0.3:  # ties, and orders coarser than the shape
            order = rng.randint(0, 2) if rng.random() < 0.3 else unflatten(
                [rng.randint(0, 2) for _j in flatten(shape)], shape)
        cases.append((f"compact_order({shape}, {order})", lambda s=shape, o=order: lo.compact_order(s, o),
                      f"cute::compact_order({T(shape)},{T(order)})"))
        cases.append((f"make_ordered_layout({shape}, {order})",
                      lambda s=shape, o=order: Layout(s, lo.compact_order(s, o)),
                      f"cute::make_ordered_layout({T(shape)},{T(order)})"))
        if cute.size(shape) <= 64:
            cases.append((f"make_coord_iterator({shape})",
                          lambda s=shape: "".join(text(c) + ";" for c in lo.make_coord_iterator(s)),
                          f"!tl_oracle::show_coords(@ID, cute::make_coord_iterator({T(shape)}));"))
            perm = unflatten(rng.sample(range(len(flatten(shape))), len(flatten(shape))), shape)
            cases.append((f"make_coord_iterator<{perm}>({shape})",
                          lambda s=shape, p=perm: "".join(f"{text(c)};" for c in
                                                          lo.make_coord_iterator(s, p)),
                          f"!tl_oracle::show_coords(@ID, cute::make_coord_iterator<decltype({T(perm)})>"
                          f"({T(shape)}));"))
    return cases


@needs_cpp
def test_stride_functions_agree_with_cpp() -> None:
    counts = agree(stride_cases(seed=11, n=40))
    assert counts["C++ answers"] > 150, counts


def test_coord_iterator_brute_force() -> None:
    """All coordinates of the shape, each once, in the order given (colexicographic by default)."""
    rng = random.Random(12)
    for _k in range(100):
        shape = differential.random_shape(rng)
        flat = flatten(shape)
        perm = rng.sample(range(len(flat)), len(flat))
        got = [flatten(c) for c in lo.make_coord_iterator(shape, unflatten(perm, shape))]
        slow_to_fast = sorted(range(len(flat)), key=lambda k: -perm[k])
        want = [tuple(dict(zip(slow_to_fast, p))[k] for k in range(len(flat)))
                for p in itertools.product(*(range(flat[k]) for k in slow_to_fast))]
        assert got == want
        colex = [cute.idx2crd(i, shape) for i in range(cute.size(shape))]
        assert colex == list(lo.make_coord_iterator(shape))
    assert list(lo.make_coord_iterator((3, 2), coord=(1, 1))) == [(1, 1), (2, 1)]
    assert list(lo.make_coord_iterator((2, 0))) == []
    with pytest.raises(LayoutError, match=r"shape \(0,2\): C\+\+'s coordinate iterator never ends"):
        lo.make_coord_iterator((0, 2))  # C++'s iterator never ends


def test_compact_order_brute_force() -> None:
    """With distinct orders, compact_order gives a bijective layout whose strides increase with order."""
    rng = random.Random(13)
    for _k in range(100):
        shape = differential.random_shape(rng)
        flat = flatten(shape)
        perm = rng.sample(range(len(flat)), len(flat))
        L = Layout(shape, lo.compact_order(shape, unflatten(perm, shape)))
        assert sorted(L.offsets().tolist()) == list(range(cute.size(shape)))
        assert cute.make_ordered_layout(shape, unflatten(perm, shape)) == L


# ---------------------------------------------------------------- layout.hpp


def layout_cases(seed: int, n: int) -> list[Case]:
    rng = random.Random(seed)
    cases: list[Case] = []

    def add(label: str, ours: Callable[[], Any], cpp: str) -> None:
        cases.append((label, ours, cpp))

    for _k in range(n):
        L = differential.random_layout(rng, 256, compact=rng.random() < 0.5)
        C = differential.random_layout(rng, 64, compact=True)
        add(f"coshape({L})", lambda L=L: lo.coshape(L), f"cute::coshape({Lx(L)})")
        add(f"coprofile({L})", lambda L=L: lo.coprofile(L), f"cute::coprofile({Lx(L)})")
        add(f"make_fragment_like({L})", lambda L=L: lo.make_fragment_like(L),
            f"cute::make_fragment_like({Lx(L)})")
        add(f"max_alignment({L})", lambda L=L: lo.max_alignment(L), f"cute::max_alignment({Lx(L)})")
        b = rng.choice((1, 2, 3, 4, 6, 8, 12, 16))
        add(f"domain_distribute({L.shape}, {b})", lambda L=L, b=b: lo.domain_distribute(L.shape, b),
            f"cute::domain_distribute({T(L.shape)},{T(b)})")
        crd = cute.idx2crd(rng.randrange(max(L.size(), 1)), L.shape)
        add(f"domain_offset({crd}, {L})", lambda L=L, c=crd: lo.domain_offset(c, L),
            f"cute::domain_offset({T(crd)},{Lx(L)})")
        k = rng.randrange(L.rank() + 1)
        add(f"replace<{k}>({L}, {C})", lambda L=L, k=k, C=C: lo.replace(L, k, C),
            f"cute::replace<{k}>({Lx(L)},{Lx(C)})")
        shape = rng.choice((L.size(), differential.random_shape(rng)))
        add(f"{L}.with_shape({shape})", lambda L=L, s=shape: lo.with_shape(L, s),
            f"{Lx(L)}.with_shape({T(shape)})")
        JUDGES[cases[-1][0]] = lambda r, L=L, s=shape: differential.correct(
            "composition", (L, cute.make_layout(s)), r)
        add(f"make_identity_layout({L.shape})", lambda L=L: lo.make_identity_layout(L.shape),
            f"cute::make_identity_layout({T(L.shape)})")
        idx = rng.randrange(max(L.size(), 1))
        add(f"make_identity_layout({L.shape})({idx})", lambda L=L, i=idx: lo.make_identity_layout(L.shape)(i),
            f"cute::make_identity_layout({T(L.shape)})({idx})")
        add(f"coshape(identity {L.shape})", lambda L=L: lo.coshape(lo.make_identity_layout(L.shape)),
            f"cute::coshape(cute::make_identity_layout({T(L.shape)}))")
        add(f"coprofile(identity {L.shape})", lambda L=L: lo.coprofile(lo.make_identity_layout(L.shape)),
            f"cute::coprofile(cute::make_identity_layout({T(L.shape)}))")
        tiler = differential.random_tiler(rng, L)
        add(f"tile_unzip(logical_divide({L}, {tiler}))",
            lambda L=L, t=tiler: lo.tile_unzip(cute.logical_divide(L, t), t),
            f"cute::tile_unzip(cute::logical_divide({Lx(L)},{cpp_oracle.tiler_expr(tiler)}),"
            f"{cpp_oracle.tiler_expr(tiler)})")
        JUDGES[cases[-1][0]] = lambda r, L=L, t=tiler: differential.correct(
            "zipped_divide" if isinstance(t, tuple) else "logical_divide", (L, t), r)
        add(f"transform_layout({L}, coalesce)", lambda L=L: lo.transform_layout(L, cute.coalesce),
            f"cute::transform_layout({Lx(L)},[](auto const& m) {{ return cute::coalesce(m); }})")
        add(f"transform_layout({L}, {C}, composition)",
            lambda L=L, C=C: lo.transform_layout(L, C, cute.composition),
            f"cute::transform_layout({Lx(L)},{Lx(C)},"
            f"[](auto const& a, auto const& b) {{ return cute::composition(a, b); }})")
        JUDGES[cases[-1][0]] = lambda r, L=L, C=C: _composes_by_mode(L, C, r)
        P = differential.random_layout(rng, 64, compact=True)
        if all(s == 1 or d != 0 for s, d in P.flat_modes()):  # C++ divides by every stride
            add(f"index coordinates of {P}", lambda P=P: _index_coords(P),
                f"!tl_oracle::show_index_coords(@ID, {Lx(P)});")
    return cases


def _composes_by_mode(a: Layout, b: Layout, r: Layout) -> bool:
    """``r`` is ``transform_layout(a, b, composition)`` by the definition of composition."""
    ma, mb, mr = a.modes(), b.modes(), r.modes()
    n = min(len(ma), len(mb))
    return len(mr) == len(ma) + len(mb) - n and mr[n:] == ma[n:] + mb[n:] and all(
        differential.composes(x, y, z) for x, y, z in zip(ma, mb, mr))


def _index_coords(L: Layout) -> str:
    return "".join(f"{text(L.get_hier_coord(i))}|{text(L.get_flat_coord(i))}|{L.get_1d_coord(i)};"
                   for i in range(L.size()))


@needs_cpp
def test_layout_functions_agree_with_cpp() -> None:
    counts = agree(layout_cases(seed=21, n=30))
    assert counts["C++ answers"] > 350, counts


@needs_cpp
@pytest.mark.thorough
@pytest.mark.parametrize("seed", range(22, 25))
def test_layout_functions_agree_with_cpp_long(seed: int) -> None:
    agree(layout_cases(seed=seed, n=120))


def test_index_coords_brute_force_and_pycute() -> None:
    """On a compact layout get_hier_coord inverts the layout; get_1d_coord is the index whose
    colexicographic coordinate that is; pycute's idx2crd(i, shape, stride) agrees."""
    pycute = pytest.importorskip("pycute")
    rng = random.Random(31)
    for _k in range(60):
        L = differential.random_layout(rng, 128, compact=True)
        inverse = {L(i): i for i in range(L.size())}
        for off in range(L.size()):
            if off in inverse:
                c = L.get_hier_coord(off)
                assert L(c) == off and L.get_1d_coord(off) == inverse[off]
                assert cute.idx2crd(L.get_1d_coord(off), L.shape) == c
                assert L(L.get_flat_coord(off)) == off
            assert L.get_hier_coord(off) == pycute.idx2crd(off, L.shape, L.stride)


def test_identity_coshape_and_domain_laws() -> None:
    rng = random.Random(32)
    for _k in range(100):
        L = differential.random_layout(rng, 256)
        assert lo.coshape(L) == cute.cosize(L)
        if L.size():
            assert all(L(i) < lo.coshape(L) for i in range(L.size()))
        ident = lo.make_identity_layout(L.shape)
        got = [as_arithmetic_tuple(ident(i)) for i in range(L.size())]  # a one-leaf coordinate is a basis
        assert got == list(lo.make_coord_iterator(L.shape))
        b = rng.choice((2, 3, 4, 6, 8))
        D = lo.domain_distribute(L.shape, b)
        offs = [D(i) for i in range(D.size())]
        assert offs == sorted(set(offs)) and b % D.size() == 0  # ordered, injective, divides b
        frag = lo.make_fragment_like(L)
        assert frag.shape == L.shape or cute.size(frag) == L.size()
    assert lo.coshape(Layout.parse("(0,3):(1,5)")) == cute.cosize(Layout.parse("(0,3):(1,5)")) == 10


def _with_zero_extents(rng: random.Random, L: Layout) -> Layout:
    """``L`` with some leaf extents replaced by 0 (and some strides negated)."""
    fs = [0 if rng.random() < 0.3 else s for s in flatten(L.shape)]
    fd = [-d if rng.random() < 0.2 else d for d in flatten(L.stride)]
    return Layout(unflatten(fs, L.shape), unflatten(fd, L.shape))


@needs_cpp
def test_cosize_and_coshape_as_cpp_on_empty_layouts() -> None:
    """C++'s cosize is ``size(coshape)`` = ``1 + Σ (s-1)·|d|`` even where an extent is 0 (then
    anything, negative too); ours is the same formula, and coshape is cosize of the sub-layout."""
    rng = random.Random(43)
    cases: list[Case] = []
    for _k in range(60):
        L = _with_zero_extents(rng, differential.random_layout(rng, 256))
        cases.append((f"cosize({L})", lambda L=L: cute.cosize(L), f"cute::cosize({Lx(L)})"))
        cases.append((f"coshape({L})", lambda L=L: lo.coshape(L), f"cute::coshape({Lx(L)})"))
        if L.rank() > 1:
            cases.append((f"coshape<1>({L})", lambda L=L: lo.coshape(L, 1), f"cute::coshape<1>({Lx(L)})"))
    counts = agree(cases)
    assert counts["C++ answers"] == len(cases)


def test_bad_input_is_typed() -> None:
    with pytest.raises(LayoutError, match=r"compact_major: expected 'LayoutLeft' or 'LayoutRight', got"):
        lo.compact_major("LayoutUp", (2, 3))
    with pytest.raises(AlgebraError, match=r"compact_major: mismatched ranks, \(2,3\) and \(1,2,3\)"):
        lo.compact_major("LayoutLeft", (2, 3), (1, 2, 3))
    with pytest.raises(LayoutError, match=r"mode 5 is out of range for \(2,3\):\(1,2\)"):
        lo.replace(Layout.parse("(2,3):(1,2)"), 5, Layout(2, 1))
    with pytest.raises(AlgebraError, match=r"tile_unzip: expected a rank-2 mode at a tiler leaf, got 2"):
        lo.tile_unzip(Layout.parse("(2,3):(1,2)"), (2, 3))
    with pytest.raises(AlgebraError, match=r"idx2crd: division by zero \(extent 2, stride 0\)"):
        Layout.parse("(2,3):(0,2)").get_hier_coord(1)
    with pytest.raises(AlgebraError, match=r"make_int_tuple needs a rank N > 0, got 0"):
        ops.make_int_tuple(0, [1], 1, 0)


@needs_cpp
def test_make_ordered_layout_ties_as_cpp() -> None:
    """Equal orders share a stride start; an order leaf over a sub-shape orders it as one block."""
    rng = random.Random(5)
    cases = []
    for k in range(80):
        shape = differential.random_shape(rng)
        order = unflatten([rng.randint(0, 2) for _j in flatten(shape)], shape)
        if k % 3 == 0 and isinstance(shape, tuple):  # some order leaves cover a whole sub-shape
            order = tuple(rng.randint(0, 3) if rng.random() < 0.5 else o for o in order)
        cases.append((f"make_ordered_layout({shape}, {order})",
                      lambda s=shape, o=order: cute.make_ordered_layout(s, o),
                      f"cute::make_ordered_layout({T(shape)},{T(order)})"))
    agree(cases)


# ---------------------------------------------------------------- CATLASS TLA format checks


def test_tla_is_format_recognises_every_format() -> None:
    """Every format make_format builds passes its own TLA check, for every element width; the
    checks look at the unit stride and fractal pattern only, so some formats pass others' checks
    exactly where TLA's predicates do (a zN of at most 16 rows is also zZ-shaped)."""
    rng = random.Random(41)
    own = {"RowMajor": "RowMajor", "ColumnMajor": "ColumnMajor", "VectorLayout": "VectorLayout",
           "zN": "zN", "zZ": "zZ", "nZ": "nZ"}
    for _k in range(200):
        rows, cols, bits = rng.randint(1, 100), rng.randint(2, 100), rng.choice((4, 8, 16, 32))
        for tag, check in own.items():
            assert tla.is_format(tla.make_format(tag, rows, cols, bits), check, bits), (tag, rows, cols, bits)
        zn = tla.make_format("zN", rows, cols, bits)
        assert tla.is_format(zn, "zZ", bits) == (rows <= 16)  # stride<1,1> = round_up(rows,16)*C0 = F
        assert not tla.is_format(zn, "nZ", bits)  # nZ needs stride<0,0> = 1
        assert not tla.is_format(zn, "RowMajor")
        assert not tla.is_format(tla.make_format("RowMajor", rows, cols), "zN")
        other = 32 if bits != 32 else 16  # the fractal depends on the element width
        assert not tla.is_format(zn, "zN", other)
    unaligned = Layout(((127, 1), (16, 16)), ((16, 2048), (1, 2032)))
    assert tla.is_format(unaligned, "zNUnAlign") and not tla.is_format(unaligned, "zN")
    assert tla.is_format("(4,1):(1,1)", "RowMajor") and tla.is_format("(4,1):(1,1)", "ColumnMajor")
    with pytest.raises(LayoutError, match=r"is_format knows VectorLayout, RowMajor, ColumnMajor, zN,"):
        tla.is_format("(4,8):(8,1)", "nN")


# ---------------------------------------------------------------- junk input


def _arity(fn: Callable[..., Any]) -> int:
    """Required positional parameters (2 for a variadic function)."""
    params = inspect.signature(fn).parameters.values()
    if any(p.kind is p.VAR_POSITIONAL for p in params):
        return 2
    return sum(p.default is p.empty for p in params)


JUNK_API: dict[str, tuple[Callable[..., Any], int]] = {
    **{name: (getattr(m, name), _arity(getattr(m, name))) for m in (ops, lo) for name in m.__all__},
    **{f"{name}/1": (getattr(ops, name), 1) for name in ("max", "min", "gcd")},
    # at most 1000 coordinates: a junk shape of 2**70 is a valid, endless iterator
    "make_coord_iterator": (lambda *a: list(itertools.islice(lo.make_coord_iterator(*a), 1000)), 3),
    "transform_layout/3": (lo.transform_layout, 3),
    "get_hier_coord": (lambda i: Layout.parse("(2,3):(3,1)").get_hier_coord(i), 1),
    "get_flat_coord": (lambda i: Layout.parse("(2,(3,2)):(3,(1,6))").get_flat_coord(i), 1),
    "get_1d_coord": (lambda i: Layout.parse("(2,3):(3,1)").get_1d_coord(i), 1),
    "tla.is_format": (tla.is_format, 3),
}


@pytest.mark.parametrize("name", sorted(JUNK_API))
@given(data=st.data())
@settings(max_examples=60)
def test_junk_raises_only_library_errors(name: str, data: st.DataObject) -> None:
    fn, arity = JUNK_API[name]
    args = [data.draw(JUNK) for _ in range(arity)]
    with contextlib.suppress(TensorLayoutError):
        fn(*args)
