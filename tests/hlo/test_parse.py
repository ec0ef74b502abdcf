"""tensorlayout.hlo.parse_module on the HLO corpus, the indexing vectors and malformed text."""

from __future__ import annotations

import contextlib
import json
import re
from functools import cache
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tensorlayout.errors import HloError, ParseError, TensorLayoutError
from tensorlayout.hlo import (
    ComputationLayout,
    HloModule,
    PaddingDimension,
    SliceDimension,
    WindowDimension,
    input_to_output_indexing,
    operand_utilization,
    output_to_input_indexing,
    parse_attribute,
    parse_literal,
    parse_module,
)
from tensorlayout.xla import parse_shape
from tests.conftest import DATA

HLO_FILES = sorted((DATA / "hlo").glob("*.hlo")) + sorted((DATA / "hlo" / "tpu").glob("*.hlo"))
CASES = [c for c in json.loads((DATA / "indexing_cases.json").read_text()) if "hlo" in c]
_INSTRUCTION_LINE = re.compile(r"(?m)^\s*(?:ROOT )?%?[\w.\-]+ = ")


@cache
def load(name: str):
    path = DATA / "hlo" / name
    return parse_module(path.read_text())


# -- whole corpus ----------------------------------------------------------------------------
def test_corpus_is_present() -> None:
    assert len(HLO_FILES) >= 90
    assert len(CASES) >= 80


@pytest.mark.parametrize("path", HLO_FILES, ids=lambda p: p.name)
def test_corpus_file_parses(path: Path) -> None:
    text = path.read_text()
    module = parse_module(text)
    # shorthand async ops (``slice-start``) add an ``async_wrapped`` computation each, as in XLA
    wrapped = [c for c in module.computations if c.name.startswith("async_wrapped")]
    written = module.instruction_count - sum(len(c) for c in wrapped)
    assert written == len(_INSTRUCTION_LINE.findall(text))
    real = ("copy", "all-gather", "all-reduce", "collective-permute", "async")
    assert len(wrapped) == text.count("-start(") - sum(text.count(f"{op}-start(") for op in real)
    assert module.entry.is_entry and module.name == text.split()[1].rstrip(",")
    for comp in module.computations:
        assert comp.root in comp.instructions
        for inst in comp:
            assert inst.parent is comp
            assert [o.name for o in inst.operands] == list(inst.operand_names)
            for op in inst.operands:
                assert inst in op.users
            if inst.opcode == "fusion":
                assert inst.fused_computation.is_fusion_computation
                assert inst.fusion_kind in ("kLoop", "kInput", "kOutput", "kCustom")
            if inst.opcode == "parameter":
                assert comp.parameter(inst.parameter_number) is inst


@pytest.mark.parametrize("case", CASES, ids=lambda c: c["id"])
def test_embedded_module_parses(case: dict) -> None:
    module = parse_module(case["hlo"])
    assert module.instruction_count == len(_INSTRUCTION_LINE.findall(case["hlo"]))
    instruction = case.get("instruction", "")
    if instruction.startswith("ENTRY root: "):
        assert module.entry.root.name == instruction.split(": ", 1)[1].split(" (")[0]
    if "opcode" in case and instruction.startswith("ENTRY root"):
        assert module.entry.root.opcode == case["opcode"]


# -- spot checks against the text ------------------------------------------------------------
def test_convolution_attributes() -> None:
    m = load("conv2d_strided_dilated_grouped.opt.hlo")
    conv = m.entry.instruction("convolution-window-dilated")
    assert conv.opcode == "convolution" and conv.operand_names == (
        "transpose_copy_fusion.2", "transpose_copy_fusion.1")
    window = conv.attributes["window"]
    assert window.dimensions == (WindowDimension(3, 2, 1, 2, 2, 1), WindowDimension(3, 2, 2, 1, 1, 1))
    dn = conv.attributes["dim_labels"]
    assert (dn.input_batch_dimension, dn.input_feature_dimension) == (0, 3)
    assert dn.input_spatial_dimensions == (1, 2)
    assert (dn.kernel_input_feature_dimension, dn.kernel_output_feature_dimension) == (2, 3)
    assert conv.attributes["feature_group_count"] == 2
    assert m.attributes["is_scheduled"] is True
    layout = m.attributes["entry_computation_layout"]
    assert isinstance(layout, ComputationLayout)
    assert layout.parameters[1] == parse_shape("f32[16,4,3,3]{3,2,1,0}")
    root = m.entry.root
    assert root.name == "transpose_copy_fusion" and root.fused_computation.name == "fused_computation"
    assert root.fused_computation.root.opcode == "copy"
    assert root.raw_attributes["metadata"].startswith('{op_name="jit(')
    transpose = m.computation("%fused_computation.1").instruction("transpose.4")
    assert transpose.attributes["dimensions"] == (2, 3, 1, 0)
    assert str(transpose.shape) == "f32[3,3,4,16]{1,0,2,3}"


def test_gather_dot_slice_pad_window() -> None:
    pre = load("gather_take.pre.hlo")
    gather = pre.find_instruction("gather.3")
    assert gather.attributes["offset_dims"] == (2,)
    assert gather.attributes["collapsed_slice_dims"] == (1,)
    assert gather.attributes["start_index_map"] == (1,)
    assert gather.attributes["operand_batching_dims"] == (0,)
    assert gather.attributes["start_indices_batching_dims"] == (0,)
    assert gather.attributes["index_vector_dim"] == 2
    assert gather.attributes["slice_sizes"] == (1, 1, 16)
    dot = load("int8_matmul.pre.hlo").find_instruction("dot_general.1")
    assert dot.attributes["lhs_contracting_dims"] == (1,) and dot.attributes["rhs_contracting_dims"] == (0,)
    sl = load("transpose_reshape_broadcast.pre.hlo").find_instruction("slice.1")
    assert sl.attributes["slice"] == (SliceDimension(0, 192, 3),)
    pad = load("scatter_add.opt.hlo").find_instruction("pad.1")
    assert pad.attributes["padding"] == (PaddingDimension(0, 0), PaddingDimension(0, 1))
    rw = load("maxpool_avgpool.pre.hlo").find_instruction("reduce_window_max.7")
    assert [d.padding_high for d in rw.attributes["window"].dimensions] == [0, 1, 1, 0]
    assert rw.called_computations[0].name == "region_0.1"
    ds = load("dynamic_slice_scan.pre.hlo").find_instruction("dynamic_slice.4")
    assert ds.attributes["dynamic_slice_sizes"] == (1, 8, 16)
    rp = load("iota_select_clamp_convert.opt.hlo").find_instruction("reduce_precision.0")
    assert rp.opcode == "reduce-precision" and rp.attributes["exponent_bits"] == 5


def test_control_flow_and_skipped_attributes() -> None:
    m = load("while_cond_switch.opt.hlo")
    cond = m.find_instruction("cond.9.clone.3")
    assert [c.name for c in cond.called_computations] == ["region_3.5", "region_4.6", "region_5.7"]
    assert cond.attributes["branch_computations"] == ("region_3.5", "region_4.6", "region_5.7")
    assert cond.shape.is_tuple
    whiles = [i for i in m.instructions() if i.opcode == "while"]
    assert whiles and all({"body", "condition"} <= set(i.attributes) for i in whiles)
    gte = next(i for i in m.instructions() if i.opcode == "get-tuple-element")
    assert isinstance(gte.attributes["index"], int)
    rb = load("random_bits.opt.hlo")
    copy = rb.find_instruction("copy.47")
    assert copy.raw_attributes["control-predecessors"] == "{%copy.39}"
    const = rb.find_instruction("constant.155")
    assert const.literal == "{13, 15, 26, 6}" and parse_literal(const.literal) == (13, 15, 26, 6)
    tuple_op = rb.find_instruction("tuple.69")
    assert tuple_op.operand_names[5] == "copy.45" and len(tuple_op.operands) == 8


def test_tpu_dump() -> None:
    m = load("tpu/transformer_block.v6e.opt.hlo")
    assert len(m.entry.signature[0]) == 7 if m.entry.signature else True
    params = m.attributes["entry_computation_layout"].parameters
    assert len(params) == 7 and str(params[5]) == "f32[128,128]{1,0:T(8,128)}"
    add = m.computation("region_0.1").root
    assert add.raw_attributes["backend_config"].startswith('{"flag_configs"')
    tpu = load("tpu/conv2d_nhwc.v5e.opt.hlo")
    shard = [i for i in tpu.instructions() if "sharding" in i.raw_attributes]
    assert shard and shard[0].raw_attributes["sharding"] == "{replicated}"


def test_inline_operand_shapes_and_multiline_attributes() -> None:
    text = """HloModule m
    ENTRY e {
      p1 = f32[4,4] parameter(0)
      p2 = f32[4,3] parameter(1)
      ROOT out = f32[4,3] triangular-solve(f32[4,4] p1, f32[4,3]{0,1} %p2),
        left_side=true,
        transpose_a=NO_TRANSPOSE
    }"""
    root = parse_module(text).entry.root
    assert root.operand_names == ("p1", "p2")
    assert root.operand_shapes[1] == parse_shape("f32[4,3]{0,1}")
    assert root.attributes["left_side"] is True and root.attributes["transpose_a"] == "NO_TRANSPOSE"


def test_iota_shardings_comments_tables_and_unknowns() -> None:
    # Stack-frame tables: XLA (jaxlib 0.10.2) reads them only before the computations, with all
    # four sections in order (test_xla_text.py has the cases).
    text = """HloModule m, is_scheduled=true, replica_count=4

FileNames
1 "a.py"
FunctionNames
FileLocations
StackFrames
1 {file_location_id=1 parent_frame_id=1}

%c (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(f32[] %a, f32[] %b)
}

ENTRY %e (p: f32[8,4]) -> (f32[8], s32[]) {
  %p = f32[8,4]{1,0} parameter(0), sharding={devices=[4,2]<=[8]}
  %z = f32[] constant(0), sharding={devices=[2,2]<=[4,2]T(1,0) last_tile_dim_replicate}
  %r = f32[8]{0} reduce(%p, /*index=1*/%z), dimensions={1}, to_apply=%c, origin={{"x"}}, foo=[2,2]<=[4]
  %i = s32[] constant(3), frontend_attributes={_x="{"}, backend_config="{\\"a\\": 1}"
  ROOT %t = (f32[8]{0}, s32[]) tuple(%r, %i), control-predecessors={%z}
}
"""
    m = parse_module(text)
    assert m.attributes["replica_count"] == 4
    r = m.entry.instruction("r")
    assert r.operand_names == ("p", "z") and r.attributes["foo"] == "[2,2]<=[4]"
    assert r.called_computations == (m.computation("c"),) and m.computation("c").callers == (r,)
    assert m.entry.instruction("i").raw_attributes["backend_config"] == '"{\\"a\\": 1}"'
    assert m.entry.parameters[0].raw_attributes["sharding"] == "{devices=[4,2]<=[8]}"
    assert not m.computation("c").is_fusion_computation


def test_lookup_helpers_raise_hlo_error() -> None:
    m = load("softmax.pre.hlo")
    with pytest.raises(HloError, match=r"module jit_softmax has no computation 'nope'"):
        m.computation("nope")
    with pytest.raises(HloError, match=r"computation main\.3 has no instruction 'nope'"):
        m.entry.instruction("nope")
    with pytest.raises(HloError, match=r"div\.7 is a divide, not a fusion"):
        m.entry.root.fused_computation  # noqa: B018


def test_attribute_parsers() -> None:
    assert parse_attribute("dimensions", "{}") == ()
    assert parse_attribute("padding", "1_2x3_4_5") == (PaddingDimension(1, 2), PaddingDimension(3, 4, 5))
    w = parse_attribute("window", "{size=2x2 lhs_dilate=1x2 window_reversal=0x1}")
    assert w.dimensions[1] == WindowDimension(size=2, base_dilation=2, window_reversal=True)
    assert parse_attribute("window", "{}").dimensions == ()
    assert parse_attribute("calls", "{%a, %b}") == ("a", "b")
    assert parse_attribute("custom_call_target", '"Foo"') == "Foo"
    assert parse_literal("(1, {2, 3})") == (1, (2, 3)) and parse_literal("true") is True


# -- errors ----------------------------------------------------------------------------------
_P = "HloModule m\nENTRY e {\n  p = f32[4] parameter(0)\n"
ERRORS = [
    (_P + "  ROOT n = f32[4] negate(q)\n}", 4, 26),
    ("HloModule m\nENTRY e {\n  p = f32[4 parameter(0)\n}", 3, 13),
    (_P + "  ROOT t = f32[4] transpose(p), dimensions={1,x}\n}", 4, 47),
    (_P + "  ROOT t = f32[4] slice(p), slice={[0:4:1}\n}", 4, 42),
    (_P + "  ROOT t = f32[4] fusion(p), calls=nothere\n}", 4, 36),
    (_P + '  ROOT t = f32[4] negate(p), metadata={a="x}\n}', 4, 42),
    # several instructions may share a line, so `junk` starts one; XLA also fails at 5:1
    (_P + "  ROOT t = f32[4] negate(p) junk\n}", 5, 1),
    (_P + "  p = f32[4] negate(p)\n}", 4, 3),
    ("HloModule m\nENTRY e {\n  p = f32[4] parameter(x)\n}", 3, 24),
    (_P + "  ROOT n = f32[4] negate(p)\n", 5, 1),
    ("HloModule m\nENTRY e {\n  p = f32[4] parameter(0), window={size=2 foo=1}\n}", 3, 43),
    # brackets inside skipped values must still match
    (_P + "  ROOT n = f32[4] negate(p), sharding={devices=[4,2]<=[4,2]T(1,0}\n}", 4, 65),
    # backend_config is a JSON dict where only braces nest: this one takes the computation's '}'
    (_P + '  ROOT n = f32[4] negate(p), backend_config={"a":{1,2}\n}', 5, 2),
    (_P + '  ROOT n = f32[4] negate(p), backend_config={"a":{1,2}\n', 4, 45),
]


@pytest.mark.parametrize(("text", "line", "column"), ERRORS)
def test_parse_error_position(text: str, line: int, column: int) -> None:
    with pytest.raises(ParseError, match=r"expected .* at line \d+, column \d+") as info:
        parse_module(text)
    assert (info.value.line, info.value.column) == (line, column), str(info.value)
    assert info.value.found


def test_error_names_offending_text() -> None:
    with pytest.raises(ParseError, match=r"line 4, column 26, but got 'q'"):
        parse_module(ERRORS[0][0])


# -- fuzzing ---------------------------------------------------------------------------------
_SMALL = ([c["hlo"] for c in CASES] + [p.read_text() for p in HLO_FILES[:6]]
          + [p.read_text() for p in HLO_FILES if p.parent.name == "tpu"][:6])
_PIECES = list("{}[]()<>=,:%/*\"\\ \n_x-0123456789") + ["ROOT", "ENTRY", "HloModule", "f32[2]", "%p", "/*"]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from([*_PIECES, "a", "b", "e"]), max_size=40).map("".join))
def test_random_garbage_raises_only_library_errors(text: str) -> None:
    with contextlib.suppress(TensorLayoutError):
        parse_module(text)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(_SMALL), st.lists(st.tuples(st.floats(0, 1), st.integers(0, 2),
                                                   st.sampled_from(_PIECES)), min_size=1, max_size=3))
def test_mutated_modules_raise_only_library_errors(text: str, edits: list) -> None:
    for where, kind, piece in edits:
        p = int(where * len(text))
        text = (text[:p] + piece + text[p:], text[:p] + text[p + 3 :], text[:p])[kind]
    with contextlib.suppress(TensorLayoutError):
        module = parse_module(text)
        _analyse_everything(module)


def _analyse_everything(module: HloModule) -> None:
    """A module that parses (even a mangled one) gets maps or "unknown indexing" everywhere."""
    for instr in module.instructions():
        outputs = len(instr.shape.tuple_shapes) if instr.shape.is_tuple else 1
        for o in range(outputs):
            for physical in (False, True):
                assert len(output_to_input_indexing(instr, o, physical=physical)) == len(instr.operands)
        for k in range(len(instr.operands)):
            str(input_to_output_indexing(instr, k, physical=True))
        operand_utilization(instr, limit=1 << 12)


TRICKY = """HloModule tricky, input_output_alias={ {0}: (0, {}, may-alias) }, buffer_donor={ (0, {}) }

%add (x: f32[], y: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %a = f32[] add(%x, %y)
}, execution_thread="host"

%wrapped (p: f32[<=4,?]) -> f32[<=4,?] {
  %p = f32[<=4,?] parameter(0)
  ROOT %n = f32[<=4,?] negate(%p)
}

ENTRY %main (p0: f32[4,8], p1: (f32[], (s32[2], token[]))) -> f32[4] {
  %p0 = f32[4,8]{1,0} parameter(0), sharding={{maximal device=0}, {replicated}}
  %p1 = (f32[], (s32[2]{0}, token[])) parameter(1), parameter_replication={false,true}
  %c = f32[2,2]{1,0} constant({ { 1, 2 }, { 3, 4 } })
  %c2 = (f32[], s32[]) constant((1.5, 2))
  %c3 = f32[] constant(1e+10)
  %st = ((f32[4,8]{1,0}), f32[4,8]{1,0}, u32[]) async-start(%p0), calls=%wrapped
  %cc = f32[4]{0} custom-call(f32[4,8]{1,0} %p0), custom_call_target="foo", backend_config="{\\"k\\":[1,{2}]}"
  %cmp = pred[4]{0} compare(%cc, %cc), direction=LT, type=TOTALORDER
  %ar = f32[4]{0} all-reduce(%cc), replica_groups=[2,2]<=[4], use_global_device_ids=true, to_apply=%add
  ROOT %r = f32[4]{0} reduce(%p0, %c3), dimensions={1}, to_apply=%add, statistics={visualizing_index=1}
}
"""


def test_less_common_syntax() -> None:
    m = parse_module(TRICKY)
    assert m.attributes["buffer_donor"] == "{ (0, {}) }"
    assert str(m.computation("wrapped").root.shape) == "f32[<=4,?]{1,0}"
    e = m.entry
    assert str(e.instruction("p1").shape) == "(f32[], (s32[2]{0}, token[]))"
    assert parse_literal(e.instruction("c").literal) == ((1, 2), (3, 4))
    assert parse_literal(e.instruction("c2").literal) == (1.5, 2)
    assert e.instruction("st").called_computations == (m.computation("wrapped"),)
    assert e.instruction("cc").attributes["custom_call_target"] == "foo"
    assert e.instruction("cmp").attributes["direction"] == "LT"
    assert e.instruction("cmp").attributes["type"] == "TOTALORDER"
    assert e.instruction("ar").attributes["replica_groups"] == "[2,2]<=[4]"
    assert [u.name for u in e.instruction("cc").users] == ["cmp", "ar"]
    assert len(m.computation("add").callers) == 2


DUMP_SYNTAX = (Path(__file__).parent / "dump_syntax.hlo").read_text()


def test_dump_syntax_of_recent_jax_and_tpu_modules() -> None:
    """Index comments in tuple shapes and operand lists, memory-space layouts, nested
    attribute values with parentheses, async collectives and all four stack-frame tables."""
    m = parse_module(DUMP_SYNTAX)
    layout = m.attributes["entry_computation_layout"]
    assert len(layout.result.tuple_shapes) == 6
    assert m.attributes["allow_spmd_sharding_propagation_to_output"] == (True,)
    e = m.entry
    assert e.signature is not None and len(e.signature[1].tuple_shapes) == 6
    cc = e.instruction("cc")
    assert cc.raw_attributes["output_to_operand_aliasing"] == "{{0}: (0, {})}"
    assert cc.raw_attributes["result_accuracy"] == "{tolerance={atol=0 rtol=0 ulps=1}}"
    assert str(cc.shape.tuple_shapes[1]) == "u32[]{:S(2)}"
    assert e.instruction("agd").operands == (e.instruction("ags"),)
    assert e.instruction("sl").raw_attributes["statistics"] == "{visualizing_index=1,stat-index-0=0.5}"
    root = e.root
    assert root.operand_names[5] == "sl" and len(root.shape.tuple_shapes) == 6
    assert root.raw_attributes["control-predecessors"] == "{%agd}"
    assert str(output_to_input_indexing(e.instruction("sl"))) == (
        "operand id = 0 (d0) -> (d0), domain: d0 in [0, 7]\n")
