"""The ``thorough`` marker: long fuzz runs, skipped unless selected with ``-m thorough``."""

from __future__ import annotations

import pytest


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "thorough: long fuzz run (select with -m thorough)")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if "thorough" in (config.option.markexpr or ""):
        return
    skip = pytest.mark.skip(reason="long fuzz run: select with -m thorough")
    for item in items:
        if "thorough" in item.keywords:
            item.add_marker(skip)
