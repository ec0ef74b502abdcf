"""Every vector of ``xla_tiling_cases.json`` (one per XLA test of ``xla/codegen/tiling/**`` and
``coalescing_analysis_test.cc``) replayed through tensorlayout's tiling analysis.

Dispatch is a table keyed on the vector's ``kind`` (its XLA test file); each kind's check
dispatches on the vector's calls through its own table. An unknown kind or call fails, naming it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from tests.conftest import DATA
from tests.tiling.xla import coalescing, experimental, symbolic

VECTORS: list[dict[str, Any]] = json.loads((DATA / "xla_tiling_cases.json").read_text())["cases"]

HANDLERS: dict[str, Callable[[dict[str, Any]], None]] = {
    **symbolic.HANDLERS, **experimental.HANDLERS, **coalescing.HANDLERS,
}

@pytest.mark.parametrize("vector", VECTORS, ids=[v["id"] for v in VECTORS])
def test_vector(vector: dict[str, Any]) -> None:
    kind = vector["kind"]
    if kind not in HANDLERS:
        raise AssertionError(f"no check for kind {kind!r}: add one to a HANDLERS table")
    HANDLERS[kind](vector)
