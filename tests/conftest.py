"""Shared test configuration: the data folder, hypothesis profiles and the ``thorough`` marker.

Tests marked ``thorough`` (long differential and fuzz runs) are skipped unless asked for:
``pytest -m thorough``, ``TENSORLAYOUT_THOROUGH=1`` or ``TENSORLAYOUT_FUZZ=thorough``.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

DATA = Path(__file__).parent / "data"

# CI's examples are the same on every run (a failure there reproduces); dev and thorough runs
# draw new ones each time, to keep finding counterexamples
settings.register_profile(
    "ci", max_examples=200, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile("dev", max_examples=100, deadline=None)
# a long run for hunting counterexamples: pytest --hypothesis-profile=thorough
settings.register_profile(
    "thorough", max_examples=3000, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile("ci" if os.environ.get("CI") else "dev")


def thorough(config: pytest.Config) -> bool:
    """Whether this run asked for the long ``thorough`` tests."""
    return ("thorough" in (config.option.markexpr or "") or bool(os.environ.get("TENSORLAYOUT_THOROUGH"))
            or os.environ.get("TENSORLAYOUT_FUZZ") == "thorough")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "thorough: long differential or fuzz run (pytest -m thorough)")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if thorough(config):
        return
    skip = pytest.mark.skip(reason="long run: pytest -m thorough (or TENSORLAYOUT_THOROUGH=1)")
    for item in items:
        if "thorough" in item.keywords:
            item.add_marker(skip)
