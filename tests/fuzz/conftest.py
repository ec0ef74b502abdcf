"""Fuzz-suite options: the ``thorough`` marker.

The default run checks a few hundred inputs per entry point. ``TENSORLAYOUT_FUZZ=thorough``
(or ``pytest -m thorough``, or ``TENSORLAYOUT_THOROUGH=1`` as in tests/cute) runs the
thorough tests: 100,000 inputs per entry point and at least 2,000 bad CLI invocations.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent


def thorough(config: pytest.Config) -> bool:
    return (os.environ.get("TENSORLAYOUT_FUZZ") == "thorough" or bool(os.environ.get("TENSORLAYOUT_THOROUGH"))
            or "thorough" in (config.option.markexpr or ""))


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "thorough: a long run (here: >= 100,000 fuzz inputs per entry point); "
        "TENSORLAYOUT_FUZZ=thorough or pytest -m thorough",
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if thorough(config):
        return
    skip = pytest.mark.skip(reason="thorough fuzz run: TENSORLAYOUT_FUZZ=thorough or pytest -m thorough")
    for item in items:
        if "thorough" in item.keywords and HERE in Path(str(item.path)).resolve().parents:
            item.add_marker(skip)
