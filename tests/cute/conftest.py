"""The inner product a crd2idx test runs on: the C extension ``_dot.c`` or the Python ``_dot``."""

from __future__ import annotations

import pytest

from tensorlayout.cute import coords


def c_dot_built() -> bool:
    """True when the optional C extension was built (so ``_fast_dot`` is its function)."""
    return coords._fast_dot is not coords._dot


@pytest.fixture(params=["c", "python"])
def dot_path(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    mode: str = request.param
    if mode == "c" and not c_dot_built():
        pytest.skip("the C extension tensorlayout.cute._dot was not built (no compiler at install time)")
    if mode == "python":
        monkeypatch.setattr(coords, "_fast_dot", coords._dot)
    return mode
