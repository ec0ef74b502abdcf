"""The API parity table (tests/data/parity.tsv) stays true.

Rules checked, one row per anchor function:

* ``counterpart`` rows: the dotted path imports; the object has a docstring (for a dunder method
  such as ``Layout.__call__`` the owning class's docstring counts); and it is covered by a test --
  a textual check: its final name (for a dunder, the owning class's name) appears as a word in
  some .py/.json/.txt/.md file under tests/ (data-driven tests name what they call) other than
  this table and its renderer, or in a doctest (``>>>`` line) of its module.
* ``n/a`` rows give a reason in the note column.
* ``missing`` rows are allowed, but the named path must NOT import yet: when an owner adds it,
  the row must be changed to ``counterpart`` so the table stays true.
* Counterparts listed in ``KNOWN_GAPS`` (undocumented or untested today) are strict xfails, so
  fixing one forces its removal from the list.
* docs/parity.md equals what tests/parity_render.py renders from the table.
* Every public name read from the anchors' headers (tests/data/parity_headers.json: names per
  header, with the commit they were read at) has a row under that header, so the table cannot
  silently miss a function of a header it covers.
"""

from __future__ import annotations

import importlib
import inspect
import json
import re
import sys
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import parity_render

TESTS = Path(__file__).resolve().parent
ROWS = parity_render.read_rows()
SKIP = {"parity.tsv", "parity_render.py", "test_parity.py", "parity.md", "parity_headers.json"}
HEADERS = json.loads((TESTS / "data" / "parity_headers.json").read_text(encoding="utf-8"))

# Counterparts that exist and behave, but whose owner has not yet documented or tested them (found
# by this test on 2026-11-23). Each is a strict xfail: once fixed, the XPASS fails the run, so the
# entry must be deleted here -- the list can only shrink.
KNOWN_GAPS = {
    "tensorlayout.cute.inverses.max_common_layout": "untested",
    "tensorlayout.cute.int_tuple.suffix_product": "untested",
    "tensorlayout.cute.int_tuple.weakly_congruent": "untested",
    "tensorlayout.cute.layout.Layout.shape": "no docstring",
    "tensorlayout.cute.layout.Layout.stride": "no docstring",
    "tensorlayout.cute.layout.depth": "no docstring",
    "tensorlayout.cute.coalescing.filter_zeros": "untested",
    "tensorlayout.cute.layout.rank": "no docstring",
    "tensorlayout.cute.layout.size": "no docstring",
    "tensorlayout.cute.swizzle.ComposedLayout.inner": "no docstring",
    "tensorlayout.cute.swizzle.ComposedLayout.offset": "no docstring",
    "tensorlayout.cute.swizzle.ComposedLayout.outer": "no docstring",
    "tensorlayout.cute.tla.depth": "no docstring",
    "tensorlayout.cute.tla.make_coord": "no docstring",
    "tensorlayout.cute.tla.make_shape": "no docstring",
    "tensorlayout.cute.tla.make_stride": "no docstring",
    "tensorlayout.cute.tla.shape": "no docstring",
    "tensorlayout.cute.tla.stride": "no docstring",
}


def _resolve(path: str) -> tuple[ModuleType, list[Any]]:
    """Import the longest module prefix of ``path``; return it and the chain of attributes."""
    parts = path.split(".")
    for i in range(len(parts), 0, -1):
        try:
            module = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        chain: list[Any] = [module]
        for name in parts[i:]:
            chain.append(getattr(chain[-1], name))
        return module, chain
    raise ImportError(path)


WORD = re.compile(r"\w+")


@cache
def _test_words() -> frozenset[str]:
    """Identifiers in the test code and test data (data-driven tests name the functions they call)."""
    files = (p for p in TESTS.rglob("*") if p.is_file() and p.suffix in {".py", ".json", ".txt", ".md"})
    return frozenset(w for p in files if p.name not in SKIP
                     for w in WORD.findall(p.read_text(encoding="utf-8", errors="replace")))


@cache
def _doctest_words(module: ModuleType) -> frozenset[str]:
    lines = inspect.getsource(module).splitlines()
    doctest = (line for line in lines if line.lstrip().startswith((">>>", "...")))
    return frozenset(w for line in doctest for w in WORD.findall(line))


def _ids(status: str) -> list[Any]:
    return [pytest.param(r, id=f"{r['anchor']}:{r['cpp_name']}", marks=_gap_mark(r)) for r in ROWS
            if r["status"] == status]


def _gap_mark(row: dict[str, str]) -> list[Any]:
    gap = KNOWN_GAPS.get(row["counterpart"]) if row["status"] == "counterpart" else None
    return [pytest.mark.xfail(reason=f"known gap: {gap}", strict=True)] if gap else []


def test_table_well_formed() -> None:
    assert ROWS, "empty parity table"
    for r in ROWS:
        assert tuple(r) == parity_render.COLUMNS, r
        assert r["anchor"] in parity_render.ANCHORS, r
        assert r["status"] in parity_render.STATUSES, r
        assert r["header"] and r["cpp_name"], r
        if r["status"] != "n/a":
            assert r["counterpart"].startswith("tensorlayout."), r


@pytest.mark.parametrize("row", _ids("counterpart"))
def test_counterpart_exists_documented_tested(row: dict[str, str]) -> None:
    module, chain = _resolve(row["counterpart"])
    obj, final = chain[-1], row["counterpart"].rsplit(".", 1)[1]
    if final.startswith("__"):
        obj, final = chain[-2], row["counterpart"].split(".")[-2]
    doc = inspect.getdoc(obj)
    assert doc and doc.strip(), f"{row['counterpart']} has no docstring"
    assert final in _test_words() or final in _doctest_words(module), (
        f"{final} ({row['counterpart']}) appears in no test and no doctest of {module.__name__}")


@pytest.mark.parametrize("row", _ids("n/a"))
def test_not_applicable_has_reason(row: dict[str, str]) -> None:
    assert len(row["note"].split()) >= 3, f"{row['cpp_name']}: n/a needs a one-line reason"


@pytest.mark.parametrize("row", _ids("missing"))
def test_missing_is_still_missing(row: dict[str, str]) -> None:
    try:
        _resolve(row["counterpart"])
    except (ImportError, AttributeError):
        return
    pytest.fail(f"{row['counterpart']} now exists: mark {row['cpp_name']} as counterpart in parity.tsv")


def test_docs_page_current() -> None:
    expected = parity_render.render(ROWS)
    assert parity_render.DOC.read_text(encoding="utf-8") == expected, (
        "docs/parity.md is stale: run python tests/parity_render.py")


@pytest.mark.parametrize("header", [h for h in HEADERS if not h.startswith("_")])
def test_every_header_name_has_a_row(header: str) -> None:
    names = HEADERS[header]["names"]
    assert len(names) == len(set(names)), f"{header}: duplicate names in parity_headers.json"
    covered = {r["cpp_name"] for r in ROWS if r["header"] == header}
    missing = [n for n in names if n not in covered]
    assert not missing, f"{header}: no parity.tsv row for {missing}"
