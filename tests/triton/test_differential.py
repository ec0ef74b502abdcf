"""Differential tests against Triton itself (the ``triton`` wheel, CPU only).

Random encodings of each family go through Gluon's ``to_linear_layout`` (Triton's C++
``ttg::toLinearLayout``) and through ``tensorlayout.triton``; the two linear layouts must be
equal (same bases, so they agree at every point). Where Triton rejects or aborts, we must raise
a typed error. Random ``LinearLayout`` operations are compared with Triton's C++ class by
their printed text. The default run does a few hundred cases per family; ``-m thorough`` does
two thousand.
"""

from __future__ import annotations

import random
import zlib
from typing import Any

import pytest

from tensorlayout.errors import TensorLayoutError
from tensorlayout.triton import LinearLayout
from tests.triton import _random
from tests.triton._cases import build
from tests.triton._oracle import Gluon, Result, run_isolated

ttgl = pytest.importorskip("triton.experimental.gluon.language")
libll = pytest.importorskip("triton._C.libtriton.linear_layout")

DEFAULT, THOROUGH = 300, 2000
_GLUON: list[Gluon] = []


def _gluon() -> Gluon:
    if not _GLUON:
        _GLUON.append(Gluon())
    return _GLUON[0]


def _to_gluon(spec: dict[str, Any]) -> Any:
    spec = dict(spec)
    kind = spec.pop("kind")
    if kind == "DotOperandLayout":
        spec["parent"] = _to_gluon(spec["parent"])
    return getattr(ttgl, kind)(**spec)


def _triton_layout(case: tuple[dict[str, Any], list[int]]) -> Result:
    spec, shape = case
    return _gluon().to_linear_layout(_to_gluon(spec), shape)


def _ours(spec: dict[str, Any], shape: list[int]) -> LinearLayout | TensorLayoutError:
    try:
        return build(spec).to_linear_layout(shape)
    except TensorLayoutError as e:
        return e


def _compare_family(family: str, n: int, seed: int) -> None:
    rng = random.Random(seed)
    cases = [_random.FAMILIES[family](rng) for _ in range(n)]
    results = run_isolated(_triton_layout, cases)
    agreed = rejected = 0
    for (spec, shape), (kind, bases, _) in zip(cases, results):
        ours = _ours(spec, shape)
        if kind != "ll":
            assert isinstance(ours, TensorLayoutError), (spec, shape, kind, bases)
            rejected += 1
            continue
        assert isinstance(ours, LinearLayout), (spec, shape, ours)
        names = [f"dim{i}" for i in range(len(shape))]
        expected = LinearLayout.from_bases(bases, names, shape, require_surjective=False)
        assert ours == expected, (spec, shape, str(ours), str(expected))
        agreed += 1
    assert agreed >= n // 2, f"only {agreed} of {n} {family} cases ran in Triton ({rejected} rejected)"


@pytest.mark.parametrize("family", sorted(_random.FAMILIES))
def test_encodings_match_triton(family: str) -> None:
    _compare_family(family, DEFAULT, seed=zlib.crc32(family.encode()))


@pytest.mark.thorough
@pytest.mark.parametrize("family", sorted(_random.FAMILIES))
def test_encodings_match_triton_thorough(family: str) -> None:
    _compare_family(family, THOROUGH, seed=10_000 + zlib.crc32(family.encode()))
