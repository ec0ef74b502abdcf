"""The copy engine a relayout test runs on: the C kernel (cached or streamed stores) or the
numpy path, each with the thread pool on from the first byte."""

from __future__ import annotations

import pytest

import tensorlayout.relayout._copy as engine


@pytest.fixture(params=["kernel", "kernel-streamed", "numpy"])
def engine_mode(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    mode: str = request.param
    if mode != "numpy" and not engine.kernel_available():
        pytest.skip("the C copy kernel was not built (no compiler at install time)")
    monkeypatch.setattr(engine, "USE_KERNEL", mode != "numpy")
    monkeypatch.setattr(engine, "STREAM_MIN_BYTES", 1 if mode == "kernel-streamed" else 1 << 60)
    monkeypatch.setattr(engine, "THREAD_MIN_BYTES", 1)
    monkeypatch.setattr(engine, "ONE_THREAD_SMALL_BYTES", 1)  # (threads=1 calls too)
    return mode
