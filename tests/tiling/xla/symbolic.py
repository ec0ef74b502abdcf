"""XLA tiling conformance checks (see ``tests/tiling/xla/__init__.py``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

HANDLERS: dict[str, Callable[[dict[str, Any]], None]] = {}
