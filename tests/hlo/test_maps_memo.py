"""The remembered maps (per module, by value, per composed pair) equal the maps computed afresh.

``output_to_input_indexing`` remembers each instruction's maps in its module, the maps of
shape-only rules by value across instructions, and a fusion's walk remembers compositions of
map pairs. Here every instruction of the corpus is analysed twice: in text order with every
memo warm (as the benchmark does), and alone with every memo emptied first; and every fusion's
walk is checked against the walk as first defined (each pair composed and simplified afresh).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tensorlayout.errors import ArgumentTypeError, HloError, ParseError, TensorLayoutError
from tensorlayout.hlo import analysis, parse_module
from tensorlayout.hlo.fusion import FusionAdaptor, group_by_producers
from tensorlayout.hlo.model import HloInstruction
from tensorlayout.hlo.operand_indexing import OperandIndexing, OrderedSet, compose_operand_indexing
from tensorlayout.hlo.ops._common import identity_map, output_shape
from tensorlayout.hlo.parser_instruction import InstructionReader

DATA = Path(__file__).resolve().parents[1] / "data" / "hlo"
FILES = sorted([*DATA.glob("*.hlo"), *(DATA / "tpu").glob("*.hlo")])


def _outputs(instr: HloInstruction) -> range:
    return range(max(1, len(instr.shape.tuple_shapes)) if instr.shape.is_tuple else 1)


def _text(result: analysis.HloInstructionIndexing) -> list[list[str]]:
    return [[oi.to_string() for oi in group] for group in result.indexing_maps]


def test_corpus_maps_warm_equal_maps_afresh() -> None:
    analysis.clear_caches()
    for path in FILES:
        module = parse_module(path.read_text())
        warm = {(i, o): analysis.output_to_input_indexing(i, o)
                for i in module.instructions() for o in _outputs(i)}
        for (instr, o), got in warm.items():
            instr.graph.memo.clear()
            analysis.clear_caches()
            fresh = analysis.output_to_input_indexing(instr, o)
            assert _text(got) == _text(fresh), (path.name, instr.name, o)
            assert _sets_equal(got, fresh), (path.name, instr.name, o)


def _sets_equal(a: analysis.HloInstructionIndexing, b: analysis.HloInstructionIndexing) -> bool:
    return all(list(x) == list(y) for x, y in zip(a.indexing_maps, b.indexing_maps, strict=True))


def _walk_as_first_defined(adaptor: FusionAdaptor, target: HloInstruction
                           ) -> dict[HloInstruction, OrderedSet]:
    """group_by_producers before the memos: every (consumer, producer) pair composed afresh."""
    groups = {adaptor.resolve(target): OrderedSet([OperandIndexing(identity_map(
        output_shape(target, 0).dimensions))])}
    start = adaptor.resolve(target)
    for instr in reversed(adaptor.post_order):
        if instr not in groups or instr in adaptor.parameters or (
                instr.opcode == "parameter" and instr is not start):
            continue
        walk_output = {"async-start": 1, "async-update": 1}.get(instr.opcode, 0)
        producers = analysis.output_to_input_indexing(instr, walk_output)
        for k, maps in enumerate(producers.indexing_maps[:len(instr.operands)]):
            bucket = groups.setdefault(adaptor.resolve(instr.operands[k]), OrderedSet())
            for p in maps:
                for c in list(groups[instr]):
                    bucket.add(compose_operand_indexing(c, p).simplify())
    return groups


@pytest.mark.parametrize("path", FILES[::3], ids=lambda p: str(p.relative_to(DATA)))
def test_fusion_walks_equal_the_walk_as_first_defined(path: Path) -> None:
    module = parse_module(path.read_text())
    fusions = [i for i in module.instructions() if i.opcode == "fusion"]
    for instr in fusions:
        adaptor = FusionAdaptor.for_instruction(instr)
        for root in adaptor.roots:
            try:
                expected = _walk_as_first_defined(adaptor, root)
            except TensorLayoutError:
                continue  # the fusion rule gives unknown indexing there
            got = group_by_producers(adaptor, root, analysis.output_to_input_indexing)
            assert list(got) == list(expected), instr.name
            for key, maps in expected.items():
                assert [str(m) for m in got[key]] == [str(m) for m in maps], (instr.name, key.name)


def test_a_changed_result_does_not_change_the_remembered_maps() -> None:
    module = parse_module("HloModule m\nENTRY e {\n p = f32[4] parameter(0)\n ROOT n = f32[4] negate(p)\n}")
    first = analysis.output_to_input_indexing(module.entry.root)
    first.indexing_maps[0].add(OperandIndexing.undefined())
    again = analysis.output_to_input_indexing(module.entry.root)
    assert len(again[0]) == 1 and not again.is_unknown


def test_a_bad_output_id_is_refused_even_when_remembered() -> None:
    module = parse_module("HloModule m\nENTRY e {\n p = f32[4] parameter(0)\n ROOT n = f32[4] negate(p)\n}")
    analysis.output_to_input_indexing(module.entry.root, 0)
    with pytest.raises(HloError, match=r"expected an output id in \[0, 0\] of n, but got True"):
        analysis.output_to_input_indexing(module.entry.root, True)


@pytest.mark.parametrize("value", [5, None, b"HloModule m", ["HloModule m"]])
def test_parse_module_of_a_non_str_is_an_argument_type_error(value: object) -> None:
    with pytest.raises(ArgumentTypeError, match=r"expected HLO module text \(a str\), but got \w+") as info:
        parse_module(value)  # type: ignore[arg-type]
    assert isinstance(info.value, TypeError) and not isinstance(info.value, ParseError)


def test_instruction_reader_of_a_non_str_is_an_argument_type_error() -> None:
    with pytest.raises(ArgumentTypeError, match=r"expected HLO text \(a str\), but got bytes"):
        InstructionReader(b"t = f32[] parameter(0)")  # type: ignore[arg-type]


def test_maps_shared_across_element_types_and_layouts_only_where_rules_ignore_them() -> None:
    """Rules that read only dimensions share maps between ``f32[4,6]{1,0}`` and ``s8[4,6]{0,1}``;
    a bitcast (whose map follows the layouts) does not."""
    text = """HloModule m
ENTRY %e {
  %a = f32[4,6]{1,0} parameter(0)
  %b = s8[4,6]{0,1} parameter(1)
  %ta = f32[6,4]{1,0} transpose(%a), dimensions={1,0}
  %tb = s8[6,4]{0,1} transpose(%b), dimensions={1,0}
  %ba = f32[6,4]{1,0} bitcast(%a)
  %bb = s8[6,4]{1,0} bitcast(%b)
  ROOT %t = (f32[6,4]{1,0}, s8[6,4]{0,1}, f32[6,4]{1,0}, s8[6,4]{1,0}) tuple(%ta, %tb, %ba, %bb)
}
"""
    analysis.clear_caches()
    warm = {i.name: _text(analysis.output_to_input_indexing(i)) for i in parse_module(text).instructions()}
    afresh = {}
    for i in parse_module(text).instructions():
        analysis.clear_caches()
        afresh[i.name] = _text(analysis.output_to_input_indexing(i))
    assert warm == afresh
    assert warm["ta"] == warm["tb"]
    assert warm["ba"] != warm["bb"]  # (0,1) layout: the bitcast of %b transposes
