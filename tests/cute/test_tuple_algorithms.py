"""Issue 15: every public function of ``tensorlayout.cute`` answers or raises a library error, and
the IntTuple overloads of the Layout accessors (get, take, select, group, flatten, unflatten,
append, prepend, zip, slice, dice, ceil_div) answer as CuTe's C++ does.

The junk walk reads ``cute.__all__``, so a new public function is covered without editing this
file. The C++ cases are static expressions compiled host-only (tests/cute/cpp_oracle.py): where
C++ does not compile a call we must raise, else print what C++ prints.
"""

from __future__ import annotations

import contextlib
import inspect
import io
import itertools
import random
from typing import Any

import numpy as np
import pytest

from tensorlayout import cute
from tensorlayout.cute import Layout, _
from tensorlayout.cute.int_tuple import MAX_DEPTH, flatten
from tensorlayout.errors import LayoutError, ParseError, TensorLayoutError
from tests.cute import cpp_oracle
from tests.cute.test_parity_ops import Case, Lx, T, agree, like, needs_cpp, rand_tuple

#: The survey's values of issue 15, then a few more kinds (a bool, a list, numpy ints, an int
#: past int64, a tuple holding junk, layout text).
JUNK = [5, (1, (2, 3)), Layout((2, (3, 4)), (1, (2, 6))), None, "x", 1.5, (), -3, 0,
        True, [1, 2], np.int64(4), np.arange(3), 2**70, (None,), "(4,2):(1,4)"]


def nested(levels: int) -> Any:
    """``1`` inside ``levels`` 1-tuples."""
    t: Any = 1
    for _k in range(levels):
        t = (t,)
    return t


DEEP = nested(10_000)  # far past Python's recursion limit
PUBLIC = sorted(n for n in (*cute.__all__, *cute.BUILTIN_NAMES)
                if callable(getattr(cute, n)) and n != "IntTuple")


def _call_all(name: str, values: list[Any], keep: Any = None) -> int:
    """Call ``cute.<name>`` with every 1-3 argument combination of ``values`` its signature
    binds (only those holding ``keep``, when given); only library errors may escape. Returns
    the number of calls."""
    fn = getattr(cute, name)
    try:
        sig: inspect.Signature | None = inspect.signature(fn)
    except (TypeError, ValueError):
        sig = None
    calls = 0
    for n in (1, 2, 3):
        for args in itertools.product(values, repeat=n):
            if keep is not None and not any(a is keep for a in args):
                continue
            if sig is not None:
                try:
                    sig.bind(*args)
                except TypeError:
                    continue
            calls += 1
            with contextlib.suppress(TensorLayoutError), contextlib.redirect_stdout(io.StringIO()):
                out = fn(*args)
                if inspect.isgenerator(out):  # make_coord_iterator: a junk shape may be endless
                    list(itertools.islice(out, 100))
    return calls


@pytest.mark.parametrize("name", PUBLIC)
def test_junk_arguments_raise_only_library_errors(name: str) -> None:
    _call_all(name, JUNK)


@pytest.mark.parametrize("name", PUBLIC)
def test_deep_nesting_raises_only_library_errors(name: str) -> None:
    _call_all(name, [DEEP, 5, (2, 3), Layout((2, 3), (1, 2))], keep=DEEP)


@pytest.mark.parametrize("fn", [cute.size, cute.depth, cute.rank, cute.product, cute.prefix_product,
                                cute.flatten, cute.coalesce, cute.make_layout, cute.cosize,
                                lambda t: cute.idx2crd(3, t), lambda t: cute.crd2idx(t, t),
                                lambda t: cute.crd2idx(t, t, t), lambda t: Layout(t, t)])
def test_too_deep_is_a_layout_error(fn: Any) -> None:
    """One rule: an IntTuple nests at most MAX_DEPTH levels, the parser's limit."""
    for t in (DEEP, nested(MAX_DEPTH + 1)):
        with pytest.raises(LayoutError, match=f"at most {MAX_DEPTH} levels"):
            fn(t)
    fn(nested(MAX_DEPTH))  # the deepest accepted


def test_construction_and_text_share_the_depth_limit() -> None:
    for levels in (MAX_DEPTH, MAX_DEPTH + 1):
        text = "(" * levels + "1" + ")" * levels + ":" + "(" * levels + "1" + ")" * levels
        try:
            parsed: Any = Layout.parse(text)
        except ParseError:
            parsed = None
        try:
            built: Any = Layout(nested(levels), nested(levels))
        except LayoutError:
            built = None
        assert (parsed is None) == (built is None) == (levels > MAX_DEPTH)
        assert parsed == built


# ---------------------------------------------------------------- against C++


def _slicer(rng: random.Random, t: Any) -> Any:
    """A slice coordinate for ``t``: ``_`` or an int per part, now and then a whole mode."""
    if isinstance(t, tuple) and rng.random() < 0.75:
        return tuple(_slicer(rng, x) for x in t)
    return _ if rng.random() < 0.5 else rng.randint(0, 3)


def _slicer_expr(c: Any) -> str:
    if isinstance(c, tuple):
        return "cute::make_tuple(" + ",".join(_slicer_expr(x) for x in c) + ")"
    return "cute::_" if c is _ else f"cute::Int<{c}>{{}}"


def _rand_layout(rng: random.Random) -> Layout:
    shape = rand_tuple(rng, hi=4)
    return Layout(shape, like_exact(rng, shape))


def like_exact(rng: random.Random, t: Any) -> Any:
    return cute.int_tuple.unflatten([rng.randint(0, 9) for _k in flatten(t)], t)


def _index(rng: random.Random, n: int) -> int:
    """An index below ``n``, now and then one past it."""
    return rng.randrange(n) if rng.random() < 0.9 else n


def tuple_algorithm_cases(seed: int, n: int) -> list[Case]:
    """Random calls of each overload on IntTuples and on Layouts, with their C++ expressions."""
    rng = random.Random(seed)
    cases: list[Case] = []

    def add(label: str, ours: Any, cpp: str) -> None:
        cases.append((label, ours, cpp))

    for _k in range(n):
        t, x = rand_tuple(rng), rand_tuple(rng)
        L, X = _rand_layout(rng), _rand_layout(rng)
        for arg, ex in ((t, T(t)), (L, Lx(L))):
            r = cute.rank(arg)  # indices mostly in range: C++ rejects the rest one by one
            path = [_index(rng, r)] + ([rng.randint(0, 1)] if rng.random() < 0.3 else [])
            b, e = sorted((_index(rng, r + 1), _index(rng, r + 1)))
            e = -1 if rng.random() < 0.2 else e
            modes = [_index(rng, r) for _j in range(rng.randint(1, 3))]
            ps = ",".join(map(str, path))
            add(f"get({arg}, {path})", lambda a=arg, p=path: cute.get(a, *p), f"cute::get<{ps}>({ex})")
            add(f"take({arg}, {b}, {e})", lambda a=arg, b=b, e=e: cute.take(a, b, e),
                f"cute::take<{b},{e}>({ex})")
            add(f"select({arg}, {modes})", lambda a=arg, m=modes: cute.select(a, m),
                f"cute::select<{','.join(map(str, modes))}>({ex})")
            add(f"group({arg}, {b}, {e})", lambda a=arg, b=b, e=e: cute.group(a, b, e),
                f"cute::group<{b},{e}>({ex})")
            add(f"flatten({arg})", lambda a=arg: cute.flatten(a), f"cute::flatten({ex})")
            c = _slicer(rng, arg.shape if isinstance(arg, Layout) else arg)
            add(f"slice({c}, {arg})", lambda c=c, a=arg: cute.slice(c, a),
                f"cute::slice({_slicer_expr(c)},{ex})")
            add(f"dice({c}, {arg})", lambda c=c, a=arg: cute.dice(c, a),
                f"cute::dice({_slicer_expr(c)},{ex})")
        rank_n = rng.randint(0, 4)
        add(f"append({t}, {x})", lambda t=t, x=x: cute.append(t, x), f"cute::append({T(t)},{T(x)})")
        add(f"prepend({t}, {x})", lambda t=t, x=x: cute.prepend(t, x), f"cute::prepend({T(t)},{T(x)})")
        add(f"append({t}, {x}, {rank_n})", lambda t=t, x=x, r=rank_n: cute.append(t, x, r),
            f"cute::append<{rank_n}>({T(t)},{T(x)})")
        add(f"prepend({t}, {x}, {rank_n})", lambda t=t, x=x, r=rank_n: cute.prepend(t, x, r),
            f"cute::prepend<{rank_n}>({T(t)},{T(x)})")
        add(f"append({L})", lambda L=L: cute.append(L), f"cute::append({Lx(L)})")
        add(f"prepend({L}, {X}, {rank_n})", lambda L=L, X=X, r=rank_n: cute.prepend(L, X, r),
            f"cute::prepend<{rank_n}>({Lx(L)},{Lx(X)})")
        y = like(rng, t) if rng.random() < 0.7 else x
        add(f"zip({t}, {y})", lambda t=t, y=y: cute.zip_layouts(t, y), f"cute::zip({T(t)},{T(y)})")
        add(f"zip({L}, {X})", lambda L=L, X=X: cute.zip_layouts(L, X), f"cute::zip({Lx(L)},{Lx(X)})")
        flat = tuple(flatten(x)) if rng.random() < 0.8 else x
        profile = like(rng, x)
        add(f"unflatten({flat}, {profile})", lambda f=flat, p=profile: cute.unflatten(f, p),
            f"cute::unflatten({T(flat)},{T(profile)})")
        a, d = rng.randint(-20, 20), rng.choice([-5, -3, -2, -1, 1, 2, 3, 7])
        add(f"ceil_div({a}, {d})", lambda a=a, d=d: cute.ceil_div(a, d),
            f"cute::ceil_div(cute::Int<{a}>{{}},cute::Int<{d}>{{}})")
    return cases


@needs_cpp
@pytest.mark.parametrize("seed", [1, 2])
def test_tuple_algorithms_agree_with_cpp(seed: int) -> None:
    counts = agree(tuple_algorithm_cases(seed, 40))
    assert counts["C++ answers"] > 500 and counts["C++ rejects"] > 30, counts


def test_known_answers() -> None:
    """C++'s answers (read from the oracle) for the quirks: what each overload does at its edges."""
    L = Layout.parse("(2,3,4):(1,2,6)")
    assert cute.flatten(((1, 2), 3)) == (1, 2, 3) and cute.flatten(5) == 5
    assert cute.group(5, 0, 1) == ((5,),) and cute.group((2, 3, 4), 1, 1) == (2, 3, 4)
    assert str(cute.group(Layout(5, 1), 0, 0)) == "(5):(1)"
    assert cute.take(5, 0, 0) == () and cute.take((2, 3, 4), 1, -1) == (3, 4)
    assert cute.append(5, 7, 3) == (5, 7, 7) and cute.append(5, 7, 1) == 5
    assert cute.prepend(5, (1, 2)) == ((1, 2), 5)
    assert cute.zip_layouts(5, (3, 4)) == ((5, (3, 4)),)
    assert str(cute.zip_layouts(Layout(5, 1), Layout((3, 4), (1, 3)))) == "((5,(3,4))):((1,(1,3)))"
    assert cute.slice(_, L) == L and cute.dice(3, L) == L
    assert cute.ceil_div((7, 9), 2) == (4, 9) and cute.ceil_div(-7, 3) == -1  # C++ rounds (a+b-1)/b
    with pytest.raises(LayoutError, match=r"take: \[1,1\) is not a non-empty range of the modes of"):
        cute.take(L, 1, 1)  # a Layout's take<B,E> wants B < E
    with pytest.raises(LayoutError, match=r"zip needs equal ranks, got \(3,4\) and 5"):
        cute.zip_layouts((3, 4), 5)
    with pytest.raises(LayoutError, match="int64"):  # numpy's overflow, as a library error
        Layout((2, 3), (1, 2))((np.arange(3), 2**70))


@needs_cpp
def test_cpp_reads_the_deepest_accepted_layout() -> None:
    """C++ (g++'s default template depth) compiles a MAX_DEPTH-level layout: the limit refuses
    nothing C++ answers at that depth."""
    L = Layout(nested(MAX_DEPTH), nested(MAX_DEPTH))
    got = cpp_oracle.run_exprs([f"cute::coalesce({Lx(L)})", f"cute::flatten({Lx(L)})"])
    assert [g.replace("_", "") if g else g for g in got] == [str(cute.coalesce(L)), str(cute.flatten(L))]


def test_flatten_and_slice_agree_with_pycute_on_tuples() -> None:
    """pycute's ``flatten`` and ``slice_`` (``None`` as ``_``) on random tuples; at the top level
    pycute wraps where C++ does not (``flatten(5)`` and ``slice(_, t)``): C++ is right by its own
    print (the oracle: ``flatten(Int<5>)`` prints ``_5``), and we follow C++."""
    pycute = pytest.importorskip("pycute")
    rng = random.Random(7)
    for _k in range(300):
        t = rand_tuple(rng)
        if isinstance(t, tuple):
            assert cute.flatten(t) == pycute.flatten(t)
            c = _slicer(rng, t)
            if isinstance(c, tuple):
                none = _none_for_wild(c)
                assert cute.slice(none, t) == cute.slice(c, t) == pycute.slice_(none, t)
        else:
            assert cute.flatten(t) == t and pycute.flatten(t) == (t,)
    assert cute.slice(None, (2, 3)) == (2, 3) and pycute.slice_(None, (2, 3)) == ((2, 3),)


def _none_for_wild(c: Any) -> Any:
    if isinstance(c, tuple):
        return tuple(_none_for_wild(x) for x in c)
    return None if c is _ else c
