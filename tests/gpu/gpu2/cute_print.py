"""gpu2 conformance checks (see ``tests/gpu/gpu2/__init__.py``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

HANDLERS: dict[tuple[str, str], Callable[[dict[str, Any]], None]] = {}
