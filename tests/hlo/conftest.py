"""The ``thorough`` marker for tests/hlo: long differential runs, skipped unless asked for.

Run them with ``pytest -m thorough tests/hlo`` (or ``TENSORLAYOUT_THOROUGH=1``).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "thorough: long differential or fuzz run (pytest -m thorough)")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if "thorough" in (config.option.markexpr or "") or os.environ.get("TENSORLAYOUT_THOROUGH"):
        return
    skip = pytest.mark.skip(reason="long run: pytest -m thorough")
    for item in items:
        if "thorough" in item.keywords and HERE in Path(str(item.fspath)).resolve().parents:
            item.add_marker(skip)
