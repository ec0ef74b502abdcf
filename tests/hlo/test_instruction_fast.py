"""The one-regex instruction fast path against the careful reader alone, on random lines around
the forms it takes (tuple shapes, ``/*index=5*/`` comments in shapes and operand lists)."""

from __future__ import annotations

import random

import pytest

from tensorlayout.errors import ParseError
from tensorlayout.hlo import parser_instruction
from tensorlayout.hlo.parser_instruction import InstructionReader

_LINES = [
    "%t = (f32[2]{0}, s32[]) tuple(%a, %b)",
    "ROOT %t.1 = (f32[8,16]{1,0:T(8,128)S(1)}, s32[]{:T(128)}, f32[2], f32[2], f32[2], /*index=5*/s8[]) "
    "tuple(%a, %b, %c, %d, %e, /*index=5*/%f), metadata={op_name=\"x\"}",
    "%w = (s32[], f32[2]{0}) while(%t), condition=%c, body=%b",
    "%p = (s32[], f32[2]{0}) parameter(0)",
    "%e = () tuple()",
    "%g = s32[] get-tuple-element(%t), index=0",
    "%c = (f32[2]{0}, u32[]{:S(2)}) copy-start(f32[2]{0} %a)",
]
_PIECES = ["(", ")", ", ", ",", " ", "/*index=5*/", "/*x*/", "{0}", "f32[2]", "%", "s32[]", "\n", "((", "))",
           "T(8,128)", "=", "ROOT ", "tuple", "/*index=", "*/", "\t", ", %x", ",\t%y "]


def _read(line: str, fast: bool, monkeypatch: pytest.MonkeyPatch) -> object:
    with monkeypatch.context() as m:
        if not fast:
            m.setattr(InstructionReader, "_instruction_fast", lambda self, pos: None)
        try:
            i = InstructionReader(line).instruction()
        except ParseError as e:
            return str(e)
        return (i.name, i.opcode, i.shape, i.shape.to_string(with_layout=True), i.operand_names,
                i.operand_shapes, dict(i.attributes), dict(i.raw_attributes), i.called_computation_names,
                i.is_root, i.literal, i.parameter_number, i.offset)


def test_the_fast_path_takes_flat_tuples_and_index_comments() -> None:
    for line in _LINES[:6]:
        assert InstructionReader(line)._instruction_fast(0) is not None, line
    assert parser_instruction._OPERAND_NAME.findall("a, /*index=5*/%f") == ["a", "f"]


def test_fast_path_reads_as_the_careful_reader(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(5)
    for _ in range(3000):
        line = rng.choice(_LINES)
        for _ in range(rng.randint(0, 2)):
            k = rng.randrange(len(line) + 1)
            line = line[:k] + rng.choice(_PIECES) + line[k + rng.randint(0, 2):]
        assert _read(line, True, monkeypatch) == _read(line, False, monkeypatch), line
