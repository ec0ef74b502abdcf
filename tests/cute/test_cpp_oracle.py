"""Differential tests against CuTe's C++ (compiled host-only from the nvidia-cutlass wheel's
headers) and pycute, on seeded random layouts.

Who is right is decided by the definitions (``differential.correct``): where C++'s answer holds
we must print the same layout; where C++ static-asserts or its answer breaks the definition we
must raise. Set ``CXX`` to choose the compiler.
"""

from __future__ import annotations

import pytest

from tensorlayout import cute
from tensorlayout.cute import Layout
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
        with pytest.raises(AlgebraError):
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
