"""The ``thorough`` marker: long fuzz and differential runs, skipped unless asked for.

Run them with ``pytest -m thorough tests/robustness tests/xla`` (or ``TENSORLAYOUT_THOROUGH=1``).
"""

from __future__ import annotations

import os

import pytest


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "thorough: long differential or fuzz run (pytest -m thorough)")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    asked = "thorough" in (config.option.markexpr or "") or os.environ.get("TENSORLAYOUT_THOROUGH")
    if asked:
        return
    skip = pytest.mark.skip(reason="long run: pytest -m thorough")
    for item in items:
        if "thorough" in item.keywords:
            item.add_marker(skip)
