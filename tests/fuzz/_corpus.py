"""Seed inputs for the fuzz suite, read from the repository's own ``tests/data``.

Every string found in the JSON case files and every HLO text file is a candidate; a seed
belongs to an entry point when that entry point parses it (checked once, lazily).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from functools import cache
from pathlib import Path
from typing import Any

from tensorlayout import cute, xla
from tensorlayout.errors import TensorLayoutError
from tensorlayout.indexing import IndexingMap

DATA = Path(__file__).resolve().parent.parent / "data"

# A shape inside HLO or prose: element type, dims, optional layout.
_SHAPE_RE = re.compile(r"\b[a-z][a-z0-9]*\[[^\[\]\n]*\](?:\{[^{}\n]*\})?")
_LAYOUT_RE = re.compile(r"\{[0-9][^{}\n]*\}")
_MAP_RE = re.compile(r"\([ds0-9, ]*\)(?:\[[^\]]*\])? -> \([^\n]*")


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


@cache
def hlo_texts() -> tuple[str, ...]:
    """Every HLO module text in tests/data (files and the ``hlo`` fields of the cases)."""
    texts = [p.read_text() for p in sorted(DATA.rglob("*.hlo"))]
    texts += [p.read_text() for p in sorted((DATA / "dumps").rglob("*_optimizations.txt"))]
    texts += [s for s in all_strings() if s.lstrip().startswith("HloModule")]
    return tuple(dict.fromkeys(texts))


@cache
def all_strings() -> tuple[str, ...]:
    """Every string of every JSON case file, in file order, without duplicates."""
    found: list[str] = []
    for path in sorted(DATA.glob("*.json")):
        found.extend(_strings(json.loads(path.read_text())))
    return tuple(dict.fromkeys(s for s in found if len(s) < 20000))


def _parses(parse: Callable[[str], object], text: str) -> bool:
    try:
        parse(text)
    except (TensorLayoutError, RecursionError, ValueError, OverflowError, IndexError, TypeError):
        return False
    return True


def _candidates() -> list[str]:
    pieces: list[str] = list(all_strings())
    for text in (*all_strings(), *hlo_texts()):
        pieces += _SHAPE_RE.findall(text)
        pieces += _LAYOUT_RE.findall(text)
        pieces += _MAP_RE.findall(text)
    pieces += [line.strip() for text in all_strings() for line in text.splitlines()]
    return list(dict.fromkeys(p for p in pieces if 0 < len(p) < 2000))


@cache
def seeds(kind: str) -> tuple[str, ...]:
    """Seed texts that the parser of ``kind`` (shape, layout, cute, map) accepts."""
    parse: Callable[[str], object] = {
        "shape": xla.parse_shape, "layout": xla.parse_layout,
        "cute": cute.Layout.parse, "map": IndexingMap.parse,
    }[kind]
    found = tuple(c for c in _candidates() if _parses(parse, c))
    assert found, f"no {kind} seeds in {DATA}"
    return found
