"""LinearLayout's wider method set and LayoutUtils: against Triton's binding where it has the method
(run in child processes, as Triton aborts on bad input), else against brute force from the
definitions in Triton's ``LinearLayout.h`` / ``LayoutUtils.h``."""

from __future__ import annotations

import contextlib
import itertools
import math
import random
from typing import Any

import pytest

from tensorlayout.errors import LayoutError, ParseError, TensorLayoutError
from tensorlayout.triton import LinearLayout
from tensorlayout.triton.layout_utils import (
    ColumnAction,
    action_remove_broadcasted_regs,
    reshape_layout,
    square_sublayout_is_identity,
    supremum,
    transpose_linear_layout,
    zeros_like,
)
from tests.triton._oracle import Result, run_isolated

IN_POOL = ["register", "lane", "warp", "block"]
OUT_POOL = ["dim0", "dim1", "dim2"]


def rand_layout(rng: random.Random, ins: list[str] | None = None, outs: list[tuple[str, int]] | None = None,
                max_bits: int = 3) -> LinearLayout:
    ins = ins if ins is not None else [n for n in IN_POOL if rng.random() < 0.6] or ["lane"]
    outs = outs if outs is not None else [(n, 1 << rng.randint(0, 3)) for n in OUT_POOL if rng.random() < 0.6]
    bases = [(n, [[rng.randrange(s) for _, s in outs] for _ in range(rng.randint(0, max_bits))]) for n in ins]
    return LinearLayout.from_bases(bases, [n for n, _ in outs], [s for _, s in outs], False)


def inputs(ll: LinearLayout) -> list[dict[str, int]]:
    names = ll.get_in_dim_names()
    return [dict(zip(names, x)) for x in itertools.product(*(range(ll.get_in_dim_size(n)) for n in names))]


def image(ll: LinearLayout) -> set[tuple[int, ...]]:
    return {tuple(ll.apply(x).values()) for x in inputs(ll)}


def span(cols: list[int]) -> set[int]:
    got = {0}
    for c in cols:
        got |= {x ^ c for x in got}
    return got


LAYOUTS = [rand_layout(random.Random(i)) for i in range(120)]


# ----- against the binding ----------------------------------------------------------------------
def _spec(ll: LinearLayout) -> tuple[Any, list[str], list[int]]:
    return ll.bases, ll.get_out_dim_names(), ll.get_out_dim_sizes()


def _triton_invert_and_compose(case: tuple[Any, Any]) -> Result:
    import triton._C.libtriton.linear_layout as libll

    inner, outer = (libll.LinearLayout.from_bases(b, n, s, False) for b, n, s in case)
    return ("text", str(inner.invert_and_compose(outer)), None)


def _larger_outer(rng: random.Random) -> tuple[LinearLayout, LinearLayout]:
    """An inner layout and a surjective outer one over the same out dims, some of them larger."""
    inner = rand_layout(rng, outs=[(n, 1 << rng.randint(0, 2)) for n in OUT_POOL[: rng.randint(1, 3)]])
    outs = [(n, s << rng.randint(0, 2)) for n, s in inner.out_dims]
    rng.shuffle(outs)
    units = [[(1 << b) if j == i else 0 for j in range(len(outs))]
             for i, (_, s) in enumerate(outs) for b in range(s.bit_length() - 1)]
    rng.shuffle(units)
    units += [[rng.randrange(s) for _, s in outs] for _ in range(rng.randint(0, 2))]
    names = [n for n in ["offset", "lane", "block"] if rng.random() < 0.7] or ["offset"]
    cut = sorted(rng.randint(0, len(units)) for _ in names[1:])
    parts = [units[a:b] for a, b in zip([0, *cut], [*cut, len(units)])]
    outer = LinearLayout.from_bases(list(zip(names, parts)), [n for n, _ in outs], [s for _, s in outs],
                                    False)
    return inner, outer


def test_invert_and_compose_with_larger_outer_out_dims_matches_triton() -> None:
    pytest.importorskip("triton._C.libtriton.linear_layout")
    rng = random.Random(26)
    cases = [_larger_outer(rng) for _ in range(300)]
    assert sum(any(o.get_out_dim_size(n) > s for n, s in i.out_dims) for i, o in cases) > 200
    results = run_isolated(_triton_invert_and_compose, [(_spec(i), _spec(o)) for i, o in cases])
    agreed = 0
    for (inner, outer), (kind, text, _) in zip(cases, results):
        assert kind == "text", (inner, outer, text)
        try:
            got = inner.invert_and_compose(outer)
        except LayoutError:
            with pytest.raises(ParseError, match="expected"):  # Triton's lstsq precondition broke
                LinearLayout.parse(text)
            continue
        assert str(got) == text, (inner, outer)
        for x in inputs(inner):
            assert outer.apply(got.apply(x)) == inner.apply(x)
        agreed += 1
    assert agreed > 250


def _triton_1d(args: tuple[str, int, int]) -> Result:
    import triton._C.libtriton.linear_layout as libll

    ctor, size, x = args
    ll = libll.LinearLayout
    made = {"strided_1d": lambda: ll.strided_1d(size, x, "in", "out"),
            "identity_1d": lambda: ll.identity_1d(size, "in", "out"),
            "zeros_1d": lambda: ll.zeros_1d(size, "in", "out", x)}[ctor]()
    return ("text", str(made), None)


def test_1d_constructors_match_triton() -> None:
    pytest.importorskip("triton._C.libtriton.linear_layout")
    cases = [(ctor, size, x) for ctor in ("strided_1d", "identity_1d", "zeros_1d")
             for size in (0, 1, 2, 8, 64) for x in (1, 2, 4, 16)]
    ours = {"strided_1d": lambda s, x: LinearLayout.strided_1d(s, x, "in", "out"),
            "identity_1d": lambda s, x: LinearLayout.identity_1d(s, "in", "out"),
            "zeros_1d": lambda s, x: LinearLayout.zeros_1d(s, "in", "out", x)}
    for (ctor, size, x), (kind, text, _) in zip(cases, run_isolated(_triton_1d, cases)):
        assert kind == "text", (ctor, size, x, text)
        assert str(ours[ctor](size, x)) == text, (ctor, size, x)


# ----- brute force from the header's definitions ---------------------------------------------------
@pytest.mark.parametrize("ll", LAYOUTS[:60], ids=range(60))
def test_free_variables_are_the_columns_spanned_by_earlier_ones(ll: LinearLayout) -> None:
    cols = ll.flattened_bases()
    free = [c in span(cols[:j]) for j, c in enumerate(cols)]
    masks = ll.get_free_variable_masks()
    at = 0
    for name in ll.get_in_dim_names():
        k = ll.get_in_dim_size_log2(name)
        assert masks[name] == sum(1 << i for i in range(k) if free[at + i]), name
        at += k
    assert (sum(masks.values()) == 0) == ll.is_injective()


@pytest.mark.parametrize("seed", range(40))
def test_divide_left_and_right_undo_the_product(seed: int) -> None:
    rng = random.Random(seed)
    outs = [(n, 1 << rng.randint(0, 2)) for n in OUT_POOL[: rng.randint(1, 3)]]
    b_outs = [d for d in outs if rng.random() < 0.6] or outs[-1:]  # any subset, not only a prefix
    b = rand_layout(rng, ins=[n for n in ["register", "lane"] if rng.random() < 0.8], outs=b_outs)
    c = rand_layout(rng, ins=IN_POOL[:3], outs=outs)
    assert (b * c).divide_left(b) == c
    assert (c * b).divide_right(b) == c
    other = rand_layout(rng, ins=IN_POOL[:3], outs=outs)
    for got, rebuild in ((other.divide_left(b), lambda x: b * x), (other.divide_right(b), lambda x: x * b)):
        assert got is None or rebuild(got) == other


@pytest.mark.parametrize("ll", LAYOUTS[:60], ids=range(60))
def test_num_consecutive_in_out_is_the_largest_run(ll: LinearLayout) -> None:
    if ll.num_out_dims == 0:
        assert ll.get_num_consecutive_in_out() == 1
        return
    first, out0 = ll.get_in_dim_names()[0], ll.get_out_dim_names()[0]
    best = 1
    for k in range(ll.get_in_dim_size_log2(first) + 1):
        v = 1 << k
        ok = True
        for x in inputs(ll):
            if x[first] % v == 0:
                base = ll.apply(x)
                for i in range(v):
                    want = {n: o + (i if n == out0 else 0) for n, o in base.items()}
                    ok = ok and ll.apply({**x, first: x[first] + i}) == want
        if ok:
            best = v
    assert ll.get_num_consecutive_in_out() == best


@pytest.mark.parametrize("ll", LAYOUTS[:60], ids=range(60))
def test_contiguous_elems_along_output_dim_is_the_image_prefix(ll: LinearLayout) -> None:
    for i, name in enumerate(ll.get_out_dim_names()):
        seen = {p[i] for p in image(ll)}
        n = 0
        while n in seen:
            n += 1
        assert ll.contiguous_elems_along_output_dim(name) == n


def _trivial(ll: LinearLayout, dims: list[str]) -> bool:
    """isTrivialOver from the header: the identity on ``dims`` (in the same relative order among in
    and out dims, Triton flattening both), mapping no other dim onto them nor them onto others."""
    if [n for n in ll.get_in_dim_names() if n in dims] != [n for n in ll.get_out_dim_names() if n in dims]:
        return False
    for name in ll.get_in_dim_names():
        for i in range(ll.get_in_dim_size_log2(name)):
            out = ll.apply({n: (1 << i if n == name else 0) for n in ll.get_in_dim_names()})
            want = {n: (1 << i if n == name else 0) for n in out} if name in dims else None
            if (want is not None and out != want) or (name not in dims and any(out[d] for d in dims)):
                return False
    return all(ll.get_in_dim_size(d) == ll.get_out_dim_size(d) for d in dims)


@pytest.mark.parametrize("seed", range(60))
def test_is_trivial_over_and_quotient(seed: int) -> None:
    rng = random.Random(seed)
    rest = rand_layout(rng, ins=["register", "lane"], outs=[("dim0", 4), ("dim1", 2)])
    ident = LinearLayout.identity_1d(1 << rng.randint(0, 2), "warp", "warp")
    ll = ident * rest if rng.random() < 0.5 else rest * ident
    if rng.random() < 0.4:  # spoil it
        bases = ll.bases
        _name, vs = bases[rng.randrange(len(bases))]
        if vs:
            vs[rng.randrange(len(vs))][rng.randrange(3)] = 0
        ll = LinearLayout.from_bases(bases, ll.get_out_dim_names(), ll.get_out_dim_sizes(), False)
    assert ll.is_trivial_over(["warp"]) == _trivial(ll, ["warp"])
    q = ll.quotient(["warp"])
    assert (q is None) == (not _trivial(ll, ["warp"]))
    if q is not None:
        assert q == ll.sublayout(["register", "lane"], ["dim0", "dim1"])
    assert not ll.is_trivial_over(["nowhere"])
    with pytest.raises(LayoutError, match="both an in dim and an out dim"):
        ll.is_trivial_over(["lane"])


@pytest.mark.parametrize("ll", LAYOUTS[:40], ids=range(40))
def test_reshaping_methods_keep_the_map(ll: LinearLayout) -> None:
    flat = ll.flatten_ins().flatten_outs()
    sizes_in = [ll.get_in_dim_size(n) for n in ll.get_in_dim_names()]
    sizes_out = ll.get_out_dim_sizes()
    in_strides = list(itertools.accumulate([1, *sizes_in[:-1]], lambda a, b: a * b))
    out_strides = list(itertools.accumulate([1, *sizes_out[:-1]], lambda a, b: a * b))
    for x in inputs(ll):
        index = sum(v * s for v, s in zip(x.values(), in_strides))
        y = sum(v * s for v, s in zip(ll.apply(x).values(), out_strides))
        if flat.num_in_dims and flat.num_out_dims:
            assert list(flat.apply({flat.get_in_dim_names()[0]: index}).values()) == [y]
    name = ll.get_in_dim_names()[0]
    renamed = ll.rename_in_dim(name, "other")
    assert renamed.get_in_dim_names() == ["other", *ll.get_in_dim_names()[1:]]
    assert renamed.bases[0][1] == ll.bases[0][1]
    grown = ll.resize_in_dim(name, 2 * ll.get_in_dim_size(name))
    assert grown.bases[0][1] == ll.bases[0][1] + [[0] * ll.num_out_dims]
    assert grown.resize_in_dim(name, ll.get_in_dim_size(name)) == ll
    stripped = ll.remove_zero_bases_along_dim(name)
    assert [v for v in ll.bases[0][1] if any(v)] == stripped.bases[0][1]
    assert image(stripped) == image(ll)
    assert zeros_like(ll).bases == [(n, [[0] * ll.num_out_dims for _ in vs]) for n, vs in ll.bases]


@pytest.mark.parametrize("ll", LAYOUTS[40:80], ids=range(40))
def test_resize_out_dim_zeroes_values_past_the_new_size(ll: LinearLayout) -> None:
    for name, size in ll.out_dims:
        small = ll.resize_out_dim(name, max(1, size // 2))
        i = ll.get_out_dim_names().index(name)
        assert small.bases == [(n, [[0 if j == i and x >= max(1, size // 2) else x for j, x in enumerate(v)]
                                    for v in vs]) for n, vs in ll.bases]
        with pytest.raises(LayoutError, match="only shrink"):
            ll.resize_out_dim(name, 2 * size)


def test_concat_and_squeeze() -> None:
    a = LinearLayout.from_bases([("lane", [[1, 0], [0, 1]])], ["x", "y"])
    b = LinearLayout.from_bases([("warp", [[1, 1]])], ["x", "y"], [2, 2], False)
    both = a.concat_ins(b)
    assert both.apply({"lane": 1, "warp": 1}) == {"x": 0, "y": 1}
    assert both.sublayout(["warp"], ["x", "y"]) == b
    z = LinearLayout.from_bases([("lane", [[1], [0]])], ["z"])
    assert a.concat_outs(z).apply({"lane": 3}) == {"x": 1, "y": 1, "z": 1}
    with pytest.raises(LayoutError, match="different in dims"):
        a.concat_ins(a)
    with pytest.raises(LayoutError, match="same in dims"):
        a.concat_outs(b)
    one = LinearLayout.from_bases([("lane", [[1, 0]]), ("warp", [])], ["x", "y"], [2, 1], False)
    assert one.squeeze_ins("warp").get_in_dim_names() == ["lane"]
    assert one.squeeze_outs("y").out_dims == [("x", 2)]
    with pytest.raises(LayoutError, match="not 1"):
        one.squeeze_ins("lane")
    assert a.equal_ignoring_out_dim_sizes(LinearLayout.from_bases(a.bases, ["x", "y"], [4, 2], False))
    assert not a.equal_ignoring_out_dim_sizes(a.transpose_outs(["y", "x"]))


# ----- LayoutUtils ------------------------------------------------------------------------------
@pytest.mark.parametrize("seed", range(30))
def test_reshape_layout_keeps_row_major_order(seed: int) -> None:
    rng = random.Random(seed)
    ll = rand_layout(rng, outs=[("dim0", 1 << rng.randint(0, 2)), ("dim1", 1 << rng.randint(0, 2))])
    total = ll.get_total_out_dim_size()
    shape = [1] * rng.randint(1, 3)
    for _ in range(total.bit_length() - 1):
        shape[rng.randrange(len(shape))] *= 2
    new = reshape_layout(ll, shape)
    for x in inputs(ll):
        old = ll.apply(x)
        flat = old["dim0"] * ll.get_out_dim_size("dim1") + old["dim1"]
        got = new.apply(x)
        assert sum(got[f"dim{i}"] * math.prod(shape[i + 1:]) for i in range(len(shape))) == flat


@pytest.mark.parametrize("seed", range(30))
def test_transpose_linear_layout_permutes_components(seed: int) -> None:
    rng = random.Random(seed)
    outs = [("dim0", 4), ("dim1", 2), ("dim2", 2)]
    ll = rand_layout(rng, outs=outs, max_bits=4)
    order = [0, 1, 2]
    rng.shuffle(order)
    try:
        t = transpose_linear_layout(ll, order)
    except LayoutError:
        assert not LinearLayout.from_bases([(n, [[v[i] for i in order] for v in vs]) for n, vs in ll.bases],
                                           ll.get_out_dim_names(), [outs[i][1] for i in order],
                                           False).is_surjective()
        return
    for x in inputs(ll):
        out = list(ll.apply(x).values())
        assert list(t.apply(x).values()) == [out[i] for i in order]


def test_supremum_examples_from_the_header() -> None:
    assert supremum(["a", "b"], ["a", "c"]) == ["a", "b", "c"]
    assert supremum(["a", "b"], ["b", "c"]) == ["a", "b", "c"]
    assert supremum(["lane", "block"], ["register", "block"]) == ["lane", "register", "block"]


def test_square_sublayout_is_identity_examples() -> None:
    l1 = LinearLayout.from_bases([("in1", [[1, 1], [2, 2], [4, 4]]), ("in2", [[2, 1], [1, 2]])],
                                 ["in1", "in2"], [8, 8], False)
    assert square_sublayout_is_identity(l1, ["in1"])
    assert not square_sublayout_is_identity(l1, ["in2"])
    l3 = LinearLayout.identity_1d(4, "in1", "in1") * LinearLayout.identity_1d(8, "in2", "in2")
    assert square_sublayout_is_identity(l3, ["in1", "in2"])
    assert square_sublayout_is_identity(l3, [])


def test_column_action_from_the_header() -> None:
    act = ColumnAction((2, 0, 1), "register", 3)
    ll = LinearLayout.from_bases([("register", [[1], [2], [4]])], ["x"])
    assert act.apply(ll).bases == [("register", [[4], [1], [2]])]
    assert ColumnAction((2, 0), "register", 3).apply(
        LinearLayout.from_bases([("register", [[1], [4], [2]])], ["x"])).bases == [("register", [[2], [1]])]
    values = list(range(8))
    assert act.apply_values(values) == [0, 4, 1, 5, 2, 6, 3, 7]
    assert act.inverse().apply_values(act.apply_values(values)) == values
    assert act.left_compose(act.inverse()).is_identity()
    assert str(act) == "ColumnAction([2, 0, 1], register, 3)"
    with pytest.raises(LayoutError, match="below in_size_log2"):
        ColumnAction((3,), "register", 3)
    with pytest.raises(LayoutError, match="not a permutation"):
        ColumnAction((0,), "register", 3).inverse()


@pytest.mark.parametrize("ll", LAYOUTS[80:], ids=range(40))
def test_action_remove_broadcasted_regs(ll: LinearLayout) -> None:
    if ll.get_in_dim_names()[0] != "register":
        with pytest.raises(LayoutError, match="register"):
            action_remove_broadcasted_regs(ll)
        return
    act = action_remove_broadcasted_regs(ll)
    kept = act.apply(ll)
    assert all(any(v) for v in kept.bases[0][1])
    assert image(kept) == image(ll)


@pytest.mark.parametrize("junk", [None, "x", [1.5], [-1], LinearLayout.empty()])
def test_layout_utils_reject_junk_with_typed_errors(junk: Any) -> None:
    ll = LinearLayout.identity_1d(4, "register", "dim0")
    for call in (lambda: reshape_layout(ll, junk), lambda: transpose_linear_layout(ll, junk),
                 lambda: zeros_like(junk), lambda: supremum(junk, ["a"]), lambda: ColumnAction(junk, "r", 2)):
        with contextlib.suppress(TensorLayoutError):
            call()


@pytest.mark.parametrize("ll", LAYOUTS + [rand_layout(random.Random(99), max_bits=5)], ids=range(121))
def test_apply_all_and_apply_batch_match_apply(ll: LinearLayout) -> None:
    names = ll.get_in_dim_names()
    sizes = [ll.get_in_dim_size(n) for n in names]
    table = ll.apply_all()
    assert table.shape == (ll.get_total_in_dim_size(), ll.num_out_dims)
    points = []
    for i in range(ll.get_total_in_dim_size()):
        x, rest = {}, i
        for n, s in zip(names, sizes):
            x[n], rest = rest % s, rest // s
        points.append(x)
        assert table[i].tolist() == list(ll.apply(x).values())
    batch = ll.apply_batch({n: [p[n] for p in points] for n in names})
    assert [batch[n].tolist() for n in ll.get_out_dim_names()] == [table[:, j].tolist()
                                                                  for j in range(ll.num_out_dims)]


def test_apply_batch_rejects_bad_input() -> None:
    ll = LinearLayout.identity_1d(4, "lane", "dim0")
    with pytest.raises(LayoutError, match="exactly the in dims"):
        ll.apply_batch({"warp": [0]})
    with pytest.raises(LayoutError, match="integer arrays"):
        ll.apply_batch({"lane": [0.5]})
