"""Every instruction of every corpus module gets maps or "unknown indexing", never an error."""

from __future__ import annotations

from pathlib import Path

import pytest

from tensorlayout.hlo import input_to_output_indexing, output_to_input_indexing, parse_module
from tensorlayout.hlo.utilization import operand_utilization

DATA = Path(__file__).resolve().parents[1] / "data" / "hlo"
FILES = sorted([*DATA.glob("*.hlo"), *(DATA / "tpu").glob("*.hlo")])


def test_corpus_present() -> None:
    assert len(FILES) >= 40


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(DATA)))
def test_every_instruction_has_indexing(path: Path) -> None:
    module = parse_module(path.read_text())
    known = 0
    total = 0
    for instr in module.instructions():
        outputs = len(instr.shape.tuple_shapes) if instr.shape.is_tuple else 1
        for o in range(outputs):
            for physical in (False, True):
                result = output_to_input_indexing(instr, o, physical=physical)
                assert len(result) == len(instr.operands)
                str(result)
            total += 1
            known += not result.is_unknown
        for k in range(len(instr.operands)):
            str(input_to_output_indexing(instr, k))
    assert known >= total // 2


@pytest.mark.parametrize("path", FILES[:6], ids=lambda p: p.name)
def test_corpus_utilization_is_sane(path: Path) -> None:
    module = parse_module(path.read_text())
    for instr in module.entry.instructions:
        for u in operand_utilization(instr, limit=1 << 16):
            assert 0 <= u.read <= max(u.elements, 1) or not u.elements
