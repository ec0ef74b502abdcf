"""Differential tests against CuTe's C++ (compiled host-only from the nvidia-cutlass wheel's
headers) and pycute, on seeded random layouts.

Who is right is decided by the definitions (``differential.correct``): where C++'s answer holds
we must print the same layout; where C++ static-asserts or its answer breaks the definition we
must raise. Set ``CXX`` to choose the compiler.
"""

from __future__ import annotations

import random

import pytest

from tensorlayout import cute
from tensorlayout.cute import Layout
from tensorlayout.cute.int_tuple import flatten, unflatten
from tensorlayout.errors import AlgebraError, TensorLayoutError
from tests.cute import cpp_oracle, differential

needs_cpp = pytest.mark.skipif(not cpp_oracle.available(), reason="needs g++ and the nvidia-cutlass headers")


def check_against_cpp(seed: int, n: int) -> dict[str, int]:
    cases = differential.random_cases(seed, n)
    answers = cpp_oracle.run(cases)
    counts: dict[str, int] = {}
    for (op, args), cpp in zip(cases, answers):
        mine = differential.ours(op, args)
        what = f"{op}({', '.join(map(str, args))})"
        if cpp is None:
            kind = "C++ rejects"
            assert isinstance(mine, TensorLayoutError), f"C++ rejects {what} at compile time, we give {mine}"
        elif not differential.correct(op, args, Layout.parse(cpp)):
            kind = "C++ wrong"
            assert isinstance(mine, AlgebraError), f"C++'s {cpp} for {what} is wrong, we give {mine}"
        else:
            kind = "C++ right"
            assert not isinstance(mine, Exception), f"C++ answers {what} = {cpp}, we raise {mine}"
            assert str(mine) == cpp.replace("_", ""), f"{what}: C++ {cpp}, ours {mine}"
        counts[kind] = counts.get(kind, 0) + 1
    return counts


def _tied_layout(rng: random.Random) -> Layout:
    """A random layout whose strides repeat often and may be negative."""
    shape = differential.random_shape(rng)
    strides = [rng.choice((0, 1, 1, 2, 2, 4, 6, 8, -1, -2)) for _k in flatten(shape)]
    return Layout(shape, unflatten(strides, shape))


@needs_cpp
def test_inverses_with_tied_and_negative_strides_as_cpp() -> None:
    """C++ sorts the signed strides with an exchange sort (not stable), so tied strides are
    visited in its order; right_inverse never extends by a negative stride, and left_inverse of a
    layout with one has a negative extent in C++ (we raise)."""
    rng = random.Random(11)
    cases = [(op, (_tied_layout(rng),)) for _k in range(150) for op in ("right_inverse", "left_inverse")]
    counts: dict[str, int] = {}
    for (op, args), cpp in zip(cases, cpp_oracle.run(cases)):
        mine = differential.ours(op, args)
        try:
            right = cpp is not None and differential.correct(op, args, Layout.parse(cpp))
        except TensorLayoutError:  # a negative extent
            right = False
        if right:
            assert cpp is not None and str(mine) == cpp.replace("_", ""), f"{op}{args[0]}: C++ {cpp}, {mine}"
        else:
            assert isinstance(mine, AlgebraError), f"C++'s {cpp} for {op}({args[0]}) is wrong, we give {mine}"
        key = f"{op} C++ {'right' if right else 'wrong'}"
        counts[key] = counts.get(key, 0) + 1
    assert counts["right_inverse C++ right"] == 150 and counts["left_inverse C++ wrong"] > 20, counts
    tied = Layout.parse("((4),(2,8,2),4):((1),(6,1,4),0)")
    assert str(cute.right_inverse(tied)) == "8:8"  # C++ visits the second stride 1 first
    assert str(cute.right_inverse(Layout.parse("4:-1"))) == "1:0"


@needs_cpp
def test_cases_from_the_issue() -> None:
    """Each class of issue 15 once, against C++ itself."""
    L = Layout.parse
    cases = [("composition", (L("(3,2):(2,1)"), L("2:2"))), ("left_inverse", (L("(4,10):(6,6)"),)),
             ("zipped_divide", (L("((4,2),8):((1,4),8)"), (cute._, 4))),
             ("zipped_divide", (L("6:1"), (cute._,))), ("composition", (L("(4,3):(3,1)"), L("6:1")))]
    answers = cpp_oracle.run(cases)
    assert answers[:3] == ["_2:_4", "(_6,_10):(_0,_4)", "((_4,_4),(_2,_2)):((_1,_8),(_4,_32))"]
    assert answers[3:] == [None, None]  # C++ static-asserts (rank-2 mode under `_`, shape divisibility)
    assert str(cute.composition(*cases[0][1])) == "2:4"
    assert str(cute.left_inverse(*cases[1][1])) == "(6,10):(0,4)"
    for op, args in cases[3:]:
        with pytest.raises(AlgebraError,
            match=r"composition: shape divisibilit|zip2_by: the mode 6:1 under a"):
            getattr(cute, op)(*args)


@needs_cpp
def test_random_cases_agree_with_cpp() -> None:
    counts = check_against_cpp(seed=15, n=80)
    assert counts.get("C++ right", 0) > 40, counts


@needs_cpp
@pytest.mark.thorough
@pytest.mark.parametrize("seed", range(100, 106))
def test_random_cases_agree_with_cpp_long(seed: int) -> None:
    check_against_cpp(seed=seed, n=300)


PYCUTE_OPS = ("composition", "complement", "right_inverse", "left_inverse")


def check_against_pycute(seed: int, n: int) -> dict[str, int]:
    """Where we answer, the answer holds by the definition; where pycute's holds too and the
    operation has one answer on the domain, both are the same function."""
    pycute = pytest.importorskip("pycute")
    counts: dict[str, int] = {}
    for op, args in differential.random_cases(seed, n):
        if op not in PYCUTE_OPS:
            continue
        mine = differential.ours(op, args)
        py_args = [pycute.Layout(a.shape, a.stride) if isinstance(a, Layout) else a for a in args]
        try:
            theirs = getattr(pycute, op)(*py_args)
            py_layout: Layout | None = Layout(theirs.shape, theirs.stride)
        except Exception:  # pycute asserts or fails on inputs it does not handle
            py_layout = None
        py_ok = py_layout is not None and differential.correct(op, args, py_layout)
        if isinstance(mine, Exception):
            kind = "we raise, pycute right" if py_ok else "we raise, pycute wrong or raises"
        else:
            assert differential.correct(op, args, mine), f"{op}{tuple(map(str, args))} = {mine} is wrong"
            kind = "both right" if py_ok else "pycute wrong or raises"
            if py_ok and op == "composition":  # inverses of non-injective layouts are not unique
                assert py_layout is not None
                assert differential.values(mine).tolist() == differential.values(py_layout).tolist()
        counts[kind] = counts.get(kind, 0) + 1
    return counts


def test_random_cases_against_pycute() -> None:
    counts = check_against_pycute(seed=16, n=400)
    assert counts.get("both right", 0) > 50, counts


@pytest.mark.thorough
def test_random_cases_against_pycute_long() -> None:
    check_against_pycute(seed=160, n=84_000)  # issue 15's size (about two minutes)
