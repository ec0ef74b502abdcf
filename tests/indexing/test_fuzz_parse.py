"""Seeded fuzzing of ``IndexingMap.parse``: mutated XLA map texts and generated maps.

Properties: only :class:`TensorLayoutError` escapes; a parsed map prints, and its text parses
back to a map that prints the same (in both the ``/`` and the ``floordiv`` spelling) and means
the same; a second trip gives the same structure; ``simplify(exact=True)`` keeps the meaning.

XLA's printer drops the parentheses of a right-nested sum (``a + (b + c)`` prints
``a + b + c``), so a map built that way re-parses to a left-nested, equal-valued structure:
the first trip is checked for equal text and value, structure from the second trip on.

The default run is short; ``pytest tests/indexing -m thorough`` runs 100,000 inputs.
"""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

from tensorlayout.errors import TensorLayoutError
from tensorlayout.indexing import IndexingMap, simplify, verify_equivalent
from tests.conftest import DATA
from tests.fuzz._common import parse_or_none
from tests.indexing.test_properties import maps


def _strings(x: object) -> list[str]:
    if isinstance(x, str):
        return [x]
    if isinstance(x, dict):
        x = list(x.values())
    return [s for y in x for s in _strings(y)] if isinstance(x, list) else []


def _seed_texts() -> list[str]:
    """The map texts of XLA's tests (and our extra cases), one map each."""
    found = set()
    for name in ("indexing_cases.json", "indexing_extra_cases.json", "hlo_indexing_extra_cases.json"):
        for text in _strings(json.loads((DATA / name).read_text())):
            found.update(m.strip() for m in re.split(r"operand id = \d+|\n\s*\n", text) if "->" in m)
    return sorted(found)


SEEDS = _seed_texts()
PIECES = [*"()[]{},:+-*/ 0123456789dsrtv\n#<>\"", "mod", "floordiv", "ceildiv", "max(", "min(", " in [",
          ", domain: ", "->", "9223372036854775807", "-9223372036854775808", "9" * 30, "²",
          ", is_simplified: true", "operand id = 0 ", "#xla.indexing_map<\"", "UNDEFINED", "KNOWN EMPTY",
          "runtime variables:\nrt0: parameter(1); ", "unknown indexing", "(" * 50]


@st.composite
def mutated(draw: st.DrawFn) -> str:
    """A seed text (an XLA test map, or a printed random map) with a few random edits."""
    base = draw(st.one_of(st.sampled_from(SEEDS), maps().map(str)))
    chars = list(base)
    for _ in range(draw(st.integers(0, 4))):
        i = draw(st.integers(0, len(chars)))
        op = draw(st.integers(0, 2))
        if op == 0 and chars:
            del chars[min(i, len(chars) - 1)]
        elif op == 1:
            chars.insert(i, draw(st.sampled_from(PIECES)))
        elif chars:
            chars[min(i, len(chars) - 1)] = draw(st.sampled_from(PIECES))
    return "".join(chars)


TEXTS = st.one_of(mutated(), st.text(max_size=60))


def check_round_trip(text: str) -> None:
    m = parse_or_none(IndexingMap.parse, text)
    if m is None:
        return
    printed = str(m)
    again = IndexingMap.parse(printed)
    assert str(again) == printed
    assert IndexingMap.parse(m.to_string(floordiv=True))._struct_key() == again._struct_key()
    if m.is_known_empty or m.is_undefined:  # printed without variables: only the kind survives
        assert (again.is_known_empty, again.is_undefined) == (m.is_known_empty, m.is_undefined)
        return
    assert IndexingMap.parse(str(again))._struct_key() == again._struct_key()
    same = verify_equivalent(m, again, limit=2000)
    assert same.equivalent or not same.exhaustive, same.detail


def check_exact_simplify(text: str) -> None:
    try:
        m = IndexingMap.parse(text)
        s = simplify(m, exact=True)
    except TensorLayoutError:
        return
    same = verify_equivalent(m, s, limit=2000)
    assert same.equivalent or not same.exhaustive, f"{m} -> {s}: {same.detail}"
    assert str(IndexingMap.parse(str(s))) == str(s)  # the simplified map prints parseable text


@seed(20261123)
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(TEXTS)
def test_parse_fuzz(text: str) -> None:
    check_round_trip(text)


@seed(20261124)
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated())
def test_exact_simplify_fuzz(text: str) -> None:
    check_exact_simplify(text)


@pytest.mark.thorough
@seed(1)
@settings(max_examples=100_000, deadline=None, suppress_health_check=list(HealthCheck))
@given(TEXTS)
def test_parse_fuzz_thorough(text: str) -> None:
    check_round_trip(text)
    check_exact_simplify(text)


@pytest.mark.parametrize("text", [
    "(d0) -> (d0 * 4611686018427387904 * 4), domain: d0 in [0, 1]",  # folds outside int64
    "(d0) -> (-9223372036854775808 - 16), domain: d0 in [0, 1]",
    # each constant fits, but simplifying would fold them to 2**63
    "(d0) -> (d0 * 4611686018427387904 + d0 * 4611686018427387904), domain: d0 in [0, 1]",
    "(d0, d1) -> (d0), domain: d0 in [0, 1], d1 in [0, 5], "
    "d0 * 4611686018427387904 + d0 * 4611686018427387904 + d1 in [0, 1]",
    "() -> (0, 0, 0)",  # XLA prints scalar analysis maps so
    "(d0) -> (d0), domain: d0 in [0, 7], d0 mod -2 in [-8, 7]",
    "(d0) -> (d0), domain: d0 in [0, 7], (d0 + 12) mod -2 in [-8, 7]",
    "(d0) -> (d0), domain: d0 in [0, 7], d0 mod 0 in [0, 0]",
    "(d0) -> (d0 mod 0), domain: d0 in [0, 7]",
    # d0 * 2 - 2**63 overflows int64 at d0 = -2 (no value there), so exact keeps it
    "(d0) -> (max(d0 * 2 - 9223372036854775808 + d0 + d0, 0) mod 8), domain: d0 in [-2, 16]",
    "(d0)[s0, s1] -> (s0 * 8 + s1 - (s1 * -4 - 32)), domain: d0 in [0, 1], s0 in [0, 31], s1 in [0, 7]",
    "(d0) -> (d0)" + ", d0 in [0, 1]" * 3,
    "(" * 3000 + "d0" + ")" * 3000,
])
def test_regressions(text: str) -> None:
    check_round_trip(text)
    check_exact_simplify(text)
    try:
        m = IndexingMap.parse(text)
    except TensorLayoutError:
        return
    s = simplify(m)  # XLA's simplification prints parseable text too
    assert str(IndexingMap.parse(str(s))) == str(s)


def test_exact_keeps_constraints_on_undefined_expressions() -> None:
    """``d0 mod -2`` and ``d0 mod 0`` have no value (SafeEvaluate), so no point satisfies them."""
    for c in ("d0 mod -2 in [-8, 7]", "d0 mod 0 in [0, 0]"):
        m = IndexingMap.parse(f"(d0) -> (d0), domain: d0 in [0, 7], {c}")
        assert simplify(m, exact=True) == m
        assert str(simplify(m)) == "(d0) -> (d0), domain: d0 in [0, 7]"  # XLA drops them
