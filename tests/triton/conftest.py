"""Triton tests: the ``thorough`` marker for the long differential runs.

``pytest -m thorough tests/triton`` (or ``TENSORLAYOUT_THOROUGH=1``) runs them; the default run
skips them so it stays short.
"""

from __future__ import annotations

import os

import pytest


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "thorough: long differential runs (select with -m thorough)")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    wanted = "thorough" in (config.getoption("markexpr", "") or "") or os.environ.get("TENSORLAYOUT_THOROUGH")
    if wanted:
        return
    skip = pytest.mark.skip(reason="thorough run: select with -m thorough or TENSORLAYOUT_THOROUGH=1")
    for item in items:
        if "thorough" in item.keywords:
            item.add_marker(skip)
