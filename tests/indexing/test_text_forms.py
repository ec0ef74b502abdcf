"""Indexing-map text in every form XLA (and MLIR) prints, and printing ``floordiv`` or ``/``."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from tensorlayout.errors import ArgumentTypeError, ParseError
from tensorlayout.indexing import (
    IndexingMap,
    SymbolicMap,
    indexing_map_from_symbolic_map,
    parse_expr,
    parse_indexing_map,
    parse_instruction_indexing,
    parse_symbolic_expr_and_advance,
    parse_symbolic_map,
    parse_symbolic_map_and_advance,
    to_variable_type,
)
from tensorlayout.indexing.parse import ParsedOperandIndexing
from tests.conftest import DATA

MAP = "(d0, d1) -> (d0 / 4, d1), domain: d0 in [0, 15], d1 in [0, 7], d0 mod 4 in [0, 0]"


@pytest.mark.parametrize("text", [
    f'#xla.indexing_map<"{MAP}">',
    f"#xla.indexing_map<{MAP}>",
    f'#xla_gpu.indexing_map<"{MAP}">',
    f'#indexing_map1 = #xla.indexing_map<"{MAP}">',
    f'  #xla.indexing_map < "{MAP}" >  ',
])
def test_mlir_attribute_form(text: str) -> None:
    assert IndexingMap.parse(text) == IndexingMap.parse(MAP)


@pytest.mark.parametrize("text", ['#xla.indexing_map<"(d0) -> (d0)', '#xla.indexing_map<"(d0) -> (d0)>'])
def test_mlir_attribute_form_errors(text: str) -> None:
    with pytest.raises(ParseError, match=r"at line 1, column"):
        IndexingMap.parse(text)


@pytest.mark.parametrize("text", [
    MAP + ", is_simplified: true",
    MAP + ", is_simplified: false",
    MAP + "\nis_simplified: false",
    # the newline-separated form of XLA before September 2024
    "(d0, d1) -> (d0 floordiv 4, d1)\ndomain:\nd0 in [0, 15]\nd1 in [0, 7]\nd0 mod 4 in [0, 0]\n",
    "(d0, d1) -> (d0 floordiv 4, d1)\ndomain:\nd0 in [0, 15]\nd1 in [0, 7]\nd0 mod 4 in [0, 0]\n"
    "is_simplified: true\n",
])
def test_older_xla_forms(text: str) -> None:
    assert IndexingMap.parse(text) == IndexingMap.parse(MAP)


@pytest.mark.parametrize("text", [MAP + ", is_simplified: maybe", MAP + ", is_simplified true",
                                  MAP + " is_simplified: true"])
def test_trailer_errors(text: str) -> None:
    with pytest.raises(ParseError, match=r"at line 1, column"):
        IndexingMap.parse(text)


def test_maps_without_variables_keep_constant_results() -> None:
    m = IndexingMap.parse("() -> (0, 0, 0)")  # XLA prints analysis maps of scalars like this
    assert (m.num_dims, m.num_results, str(m)) == (0, 3, "() -> (0, 0, 0)")
    assert m.evaluate([]) == (0, 0, 0)
    with pytest.raises(ParseError, match=r"expected a declared variable name at line 1, column 8, but"):
        IndexingMap.parse("() -> (d0)")


def test_map_without_domain_has_unbounded_variables() -> None:
    m = IndexingMap.parse("(d0, d1)[s0] -> (d1, d0 + s0)")
    assert all(v.bounds == (-(2**63), 2**63 - 1) for v in m.all_vars())
    assert IndexingMap.parse(str(m)) == m
    assert m.evaluate([3, 4], [5]) == (4, 8)


def test_operand_block_with_one_map() -> None:
    m = IndexingMap.parse("operand id = 0 " + MAP + "\n")
    assert m == IndexingMap.parse(MAP)
    with pytest.raises(ParseError, match="parse_instruction_indexing"):
        IndexingMap.parse(f"operand id = 0 {MAP}\noperand id = 1 {MAP}\n")


def test_operand_blocks_several_maps_runtime_vars_replica() -> None:
    text = (
        "operand id = 0 (d0) -> (d0), domain: d0 in [0, 9](d0) -> (d0 + 1), domain: d0 in [0, 8]\n"
        "operand id = 1 (d0){rt0} -> (d0 + rt0), domain: d0 in [0, 9], rt0 in [0, 90]\n"
        "runtime variables:\n\nrt0: constant(99); (d0) -> (), domain: d0 in [0, 9]\n"
        "replica id:\n(d0) -> (d0 / 4), domain: d0 in [0, 9]\n"
        "operand id = 2 unknown indexing\n"
    )
    blocks = parse_instruction_indexing(text)
    assert [len(blocks[k]) for k in (0, 1, 2)] == [2, 1, 1]
    assert str(blocks[0][1].map) == "(d0) -> (d0 + 1), domain: d0 in [0, 8]"
    rt = blocks[1][0]
    assert isinstance(rt, ParsedOperandIndexing)
    assert rt.runtime_vars[0][0] == "constant(99)"
    assert str(rt.runtime_vars[0][1]) == "(d0) -> (), domain: d0 in [0, 9]"
    assert str(rt.replica_map) == "(d0) -> (d0 / 4), domain: d0 in [0, 9]"
    assert blocks[2][0].map.is_undefined


def _xla_text(blocks: dict[int, list[ParsedOperandIndexing]]) -> str:
    """``HloInstructionIndexing::ToString`` of parsed blocks (spec §1.3)."""
    out = []
    for k, group in blocks.items():
        body = ""
        for p in group:
            if p.map.is_undefined:
                body += "unknown indexing"
                continue
            body += str(p.map)
            if p.runtime_vars:
                body += "\nruntime variables:\n"
                body += "".join(f"\nrt{i}: {label}; {m}" for i, (label, m) in enumerate(p.runtime_vars))
            if p.replica_map is not None:
                body += f"\nreplica id:\n{p.replica_map}"
        out.append(f"operand id = {k} {body}\n")
    return "".join(out)


def _xla_expectations() -> list[str]:
    cases = json.loads((DATA / "indexing_cases.json").read_text())
    return [v for c in cases for v in c.values() if isinstance(v, str) and "operand id" in v]


def test_every_operand_block_in_xlas_tests_reads_back_exactly() -> None:
    """XLA's expected ``operand id`` texts (multi-line, with runtime variables) parse and print back.

    XLA compares these with all whitespace removed (ApproximateMatch); so do we.
    """
    texts = _xla_expectations()
    assert len(texts) >= 60
    for text in texts:
        got = _xla_text(parse_instruction_indexing(text))
        assert re.sub(r"\s+", "", got) == re.sub(r"\s+", "", text)


@pytest.mark.parametrize("text", [
    "operand id = (d0) -> (d0)",
    "operand id = 0 (d0) -> (d0), domain: d0",
    "operand id = 0 (d0) -> (d0), domain: d0 in [0, 1]\nruntime variables:\nrt0 x",
])
def test_operand_block_errors(text: str) -> None:
    with pytest.raises(ParseError,
        match=r"expected '\(' to start the|expected 'in' at line 1,|expected an operand number at"):
        parse_instruction_indexing(text)


def test_print_floordiv_or_slash() -> None:
    m = IndexingMap.parse("(d0)[s0] -> ((d0 + s0) / 4 / 2, d0 ceildiv 3), domain: d0 in [0, 9], "
                          "s0 in [0, 3], d0 / 2 in [1, 3]")
    old = m.to_string(floordiv=True)
    assert old == ("(d0)[s0] -> ((d0 + s0) floordiv 4 floordiv 2, d0 ceildiv 3), domain: d0 in [0, 9], "
                   "s0 in [0, 3], d0 floordiv 2 in [1, 3]")
    assert IndexingMap.parse(old) == m
    assert "floordiv" not in m.to_string() and str(m) == m.to_string(floordiv=False)
    assert parse_expr("v0 / 3 * 2").to_string(floordiv=True) == "(v0 floordiv 3) * 2"


_TEXT_READERS = {
    "expression text": [parse_expr, parse_symbolic_expr_and_advance,
                        lambda x: IndexingMap.parse(MAP).parse_expr(x)],
    "symbolic map text": [parse_symbolic_map, parse_symbolic_map_and_advance, SymbolicMap.parse],
    "indexing map text": [IndexingMap.parse, parse_indexing_map],
    "instruction indexing text": [parse_instruction_indexing],
    "a SymbolicMap or its text": [lambda x: IndexingMap.from_symbolic_map(x, []),
                                  lambda x: indexing_map_from_symbolic_map(x, [])],
    "a variable name": [to_variable_type],
}


@pytest.mark.parametrize(("what", "read"), [(w, r) for w, rs in _TEXT_READERS.items() for r in rs])
@pytest.mark.parametrize("bad", [5, None, b"(d0) -> (d0)", ["d0"]])
def test_a_reader_given_no_text_raises_argument_type_error(what: str, read: Any, bad: object) -> None:
    # not a ParseError of str(bad): bytes or a list would parse as their repr
    message = rf"^expected {re.escape(what)} \(a str\), but got {type(bad).__name__}$"
    with pytest.raises(ArgumentTypeError, match=message):
        read(bad)
