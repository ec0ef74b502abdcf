"""HLO text as XLA reads it: opcode names, names, definition order, digits, nesting, lines.

Each case says what XLA's own parser does; where jaxlib is installed the differential test
asks it directly (``jaxlib._hlo.hlo_module_from_text``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tensorlayout.errors import HloError, ParseError
from tensorlayout.hlo import (
    ELEMENTWISE_OPCODES,
    FusionAdaptor,
    grouped_output_to_input_indexing,
    output_to_input_indexing,
    parse_module,
)
from tensorlayout.hlo.analysis import INPUT_TO_OUTPUT, OUTPUT_TO_INPUT
from tensorlayout.hlo.ops.compute import convolution_o2i
from tensorlayout.hlo.parser import MAX_TUPLE_DEPTH, RESERVED_NAMES

DATA = Path(__file__).resolve().parents[1] / "data"


def xla_opcodes() -> set[str]:
    rows = [r.split("\t") for r in (DATA / "hlo_opcodes.tsv").read_text().splitlines()]
    return {r[1] for r in rows[1:] if not r[0].startswith("#") and r[0] != "enum"}


def test_opcode_list_is_complete_data() -> None:
    ops = xla_opcodes()
    assert len(ops) == 136 and "count-leading-zeros" in ops and "clz" not in ops


@pytest.mark.parametrize("table", ["elementwise", "output_to_input", "input_to_output"])
def test_opcode_tables_use_xla_names(table: str) -> None:
    names = {"elementwise": ELEMENTWISE_OPCODES, "output_to_input": set(OUTPUT_TO_INPUT),
             "input_to_output": set(INPUT_TO_OUTPUT)}[table]
    assert sorted(set(names) - xla_opcodes()) == []


def _module(body: str, before: str = "") -> str:
    return f"HloModule m\n{before}ENTRY e {{\n{body}\n}}"


def test_count_leading_zeros_gets_elementwise_maps() -> None:
    m = parse_module(_module(" p = s32[4] parameter(0)\n ROOT n = s32[4] count-leading-zeros(p)"))
    assert str(output_to_input_indexing(m.entry.root)).startswith("operand id = 0 (d0) -> (d0)")


_REV = " p = f32[4] parameter(0)\n ROOT t = f32[4] reverse(p)"



def _signed(params: str) -> str:
    return f"HloModule m\nENTRY e {params} -> f32[4] {{\n{_REV}, dimensions={{0}}\n}}"


def _window(window: str) -> str:
    return ("HloModule m\nadd {\n a = f32[] parameter(0)\n b = f32[] parameter(1)\n"
            " ROOT s = f32[] add(a, b)\n}\nENTRY e {\n p = f32[4,4] parameter(0)\n z = f32[] constant(0)\n"
            f" ROOT r = f32[2,2] reduce-window(p, z), window={window}, to_apply=add\n}}")


_FRAMES = ('FileNames\n1 "a.py"\nFunctionNames\n1 "f"\nFileLocations\n1 {file_name_id=1 '
           'function_name_id=1 line=2 end_line=2 column=2 end_column=3}\nStackFrames\n'
           '1 {file_location_id=1 parent_frame_id=1}\n')
_BODY = "ENTRY e {\n p = f32[4] parameter(0)\n ROOT n = f32[4] negate(p)\n}\n"


_NEGATE_F = "f {\n x = f32[4] parameter(0)\n ROOT n = f32[4] negate(x)\n}\n"


# what jaxlib's parser does with each rank-0 constant
_SCALARS = [
    ("f32", "0.5", True), ("f32", "1e+5", True), ("f32", "1.", True), ("f32", ".5", False),
    ("f32", "-.5", True), ("f32", "+1", False), ("f32", "0x10", False), ("f32", "-nan", True),
    ("f32", "nan(0x1)", True),
    ("s32", "1.5", False), ("pred", "2", True), ("c64", "(1, 2)", True), ("c64", "1", False),
    ("f32", "1 2", False), ("f32", "-", False), ("f32", "1_", False), ("u8", "300", False),
    ("s8", "-129", False), ("s32", "-0", True), ("f32", "1/*c*/", True), ("f32", "INF", False),
    ("s32", "1e5", False), ("f16", "65504", True), ("f16", "65520", False), ("f32", "3.4028235e38", True),
    ("f32", "3.5e38", False), ("f64", "1e999", False), ("f32", "0.001302-08337", False),
]

# what jaxlib's parser does with each metadata value
_METADATA = [
    ("{}", True), ('{op_name="a" source_line=3}', True), ('{op_name="a", source_line=3}', True),
    ('{op_name="a",source_line=3,}', False), ('{op_name="a" op_name="b"}', False), ("{op_name=a}", False),
    ('{source_line="3"}', False), ("{source_line=-3}", True), ("{source_line=2147483648}", False),
    ("{profile_type={1,2}}", True), ("{profile_type=1}", False), ("{op_type='x'}", True),
    ('{op_name="x"/*c*/ source_line=1}', True), ("{preserve_layout=true}", False), ('{op_name= "x"}', True),
    ('{op_name ="x"}', False), ("{source_line=1.5}", False), ("{metadata_payload=1}", False), ("{,}", False),
    ('{,op_name="a"}', True), ('{op_name="a",,source_line=1}', False), ('{source_line=1op_name="a"}', True),
    ('{0p_name="x"}', False), ('{op_name="x" stack_fr/*c*/me_id=4}', False),
]


def _conv(dim_labels: str) -> str:
    return _module(" x = f32[1,8,20,20] parameter(0)\n w = f32[16,4,3,3] parameter(1)\n ROOT c = "
                   "f32[1,16,10,11] convolution(x, w), window={size=3x3 stride=2x2 pad=1_2x2_1 "
                   f"rhs_dilate=2x1}}, dim_labels={dim_labels}, feature_group_count=2")


# what jaxlib's parser does with each (a spatial digit at or past the part's length is refused;
# one past the count of spatial labels, or a missing role letter, is not)
_DIM_LABELS = {
    "bf01_oi01->bf01": True, "bf0?_oi01->bf01": False, "bf01_oi0?->bf01": False, "bf0_oi01->bf01": False,
    "b?01_oi01->bf01": True, "bf04_oi01->bf01": False, "bf4_oi01->bf01": False, "bf01_oi23->bf01": True,
    "fb01_io10->10bf": True, "bf01x_oi01->bf01": False, "bf_oi->bf": True, "b_o->b": False, "01_01->01": True,
    "bf0f_oi01->bf01": False, "bfi0_oi01->bf01": False, "?f01_oi01->bf01": True, "bf01_o01->bf01": True,
    "b01_oi01->bf01": True, "bf02_oi01->bf01": True, "b??1_oi01->bf01": False, "bf01_??->bf01": False,
}


def _frames(tables: str, after: str = "") -> str:
    return f"HloModule m\n\n{tables}{_BODY}{after}"


# (name, module text, accepted by XLA?) -- each checked against jaxlib 0.10.2's parser.
CASES = [
    ("basic", _module(" p = f32[4] parameter(0)\n ROOT n = f32[4] negate(p)"), True),
    ("two_per_line", _module(" p = f32[4] parameter(0) ROOT n = f32[4] negate(p)"), True),
    ("three_per_line", _module(" p = f32[4] parameter(0) q = f32[4] negate(p) ROOT n = f32[4] negate(q)"),
     True),
    ("name_tuple", _module(" tuple = f32[4] parameter(0)\n ROOT n = f32[4] negate(tuple)"), True),
    ("name_s1x", _module(" s1x = f32[4] parameter(0)\n ROOT n = f32[4] negate(s1x)"), True),
    ("name_s1", _module(" s1 = f32[4] parameter(0)\n ROOT n = f32[4] negate(s1)"), False),
    ("name_pct_s1", _module(" %s1 = f32[4] parameter(0)\n ROOT n = f32[4] negate(%s1)"), False),
    ("name_f32", _module(" f32 = f32[4] parameter(0)\n ROOT n = f32[4] negate(f32)"), False),
    ("name_token", _module(" token = f32[4] parameter(0)\n ROOT n = f32[4] negate(token)"), False),
    ("name_true", _module(" true = f32[4] parameter(0)\n ROOT n = f32[4] negate(true)"), False),
    ("name_inf", _module(" inf = f32[4] parameter(0)\n ROOT n = f32[4] negate(inf)"), False),
    ("use_before_def", _module(" p = f32[4] parameter(0)\n ROOT n = f32[4] negate(q)\n"
                               " q = f32[4] negate(p)"), False),
    ("self_call", _module(" p = f32[4] parameter(0)\n ROOT n = f32[4] call(p), to_apply=f",
                          "f {\n a = f32[4] parameter(0)\n ROOT c = f32[4] call(a), to_apply=f\n}\n"), False),
    ("callee_after_caller", "HloModule m\nENTRY e {\n p = f32[4] parameter(0)\n"
     " ROOT n = f32[4] call(p), to_apply=f\n}\nf {\n a = f32[4] parameter(0)\n ROOT c = f32[4] negate(a)\n}",
     False),
    ("callee_before_caller", _module(" p = f32[4] parameter(0)\n ROOT n = f32[4] call(p), to_apply=f",
                                     "f {\n a = f32[4] parameter(0)\n ROOT c = f32[4] negate(a)\n}\n"), True),
    ("unicode_digit", _module(" p = f32[4] parameter(\u00b2)\n ROOT n = f32[4] negate(p)"), False),
    ("negative_parameter", _module(" p = f32[4] parameter(-1)\n ROOT n = f32[4] negate(p)"), False),
    ("junk_after_instruction", _module(" p = f32[4] parameter(0)\n ROOT n = f32[4] negate(p) junk"), False),
    # XLA lexes `name=` as one attribute-name token
    ("name_eq_adjacent", _module(" p= f32[4] parameter(0)\n ROOT n = f32[4] negate(p)"), False),
    ("name_newline_eq", _module(" p\n= f32[4] parameter(0)\n ROOT n = f32[4] negate(p)"), True),
    ("signature_colon", _signed("(a: f32[4])"), True),
    ("signature_no_colon", _signed("(a f32[4])"), True),
    ("signature_spaced_colon", _signed("(a : f32[4])"), False),
    ("pct_name_eq_adjacent", _module(" %p= f32[4] parameter(0)\n ROOT n = f32[4] negate(p)"), True),
    ("name_colon", _module(" p: = f32[4] parameter(0)\n ROOT n = f32[4] negate(p)"), True),
    ("name_colon_eq", _module(" p:= f32[4] parameter(0)\n ROOT n = f32[4] negate(p)"), True),
    ("pct_name_colon", _module(" %p: = f32[4] parameter(0)\n ROOT n = f32[4] negate(p)"), False),
    ("name_spaced_colon", _module(" p : = f32[4] parameter(0)\n ROOT n = f32[4] negate(p)"), False),
    ("operands_empty_items", _module(" p = f32[4] parameter(0)\n ROOT n = f32[4] add(,p,,p,)"), True),
    ("operands_missing_comma", _module(" p = f32[4] parameter(0)\n ROOT n = f32[4] add(p p)"), False),
    ("attr_space_eq", _module(_REV + ", dimensions ={0}"), False),
    ("attr_eq_space", _module(_REV + ", dimensions= {0}"), True),
    ("attr_eq_newline", _module(_REV + ", dimensions=\n{0}"), True),
    ("string_spans_lines", _module(_REV + ', dimensions={0}, metadata={op_name="a\nb"}'), True),
    # comments between a window's tokens, not inside one (XLA lexes 0_0x0_0 as one token)
    ("window_comment_between_fields", _window("{size=2x2 /*c*/ stride=2x2}"), True),
    ("window_comment_after_eq", _window("{size=/*c*/2x2 stride=2x2}"), True),
    ("window_comment_after_brace", _window("{/*c*/size=2x2 stride=2x2 /*d*/}"), True),
    ("window_pad_comment_after_eq", _window("{size=2x2 stride=2x2 pad=/*c*/0_0x0_0}"), True),
    ("window_line_comment", _window("{size=2x2 // c\n stride=2x2}"), True),
    ("window_comment_inside_token", _window("{size=2/*c*/x2 stride=2x2}"), False),
    ("window_comment_inside_pad", _window("{size=2x2 stride=2x2 pad=0_/*c*/0x0_0}"), False),
    ("window_space_inside_pad", _window("{size=2x2 stride=2x2 pad=0_ 0x0_0}"), False),
    # stack-frame tables: token based; all four, once, in order, before the computations
    ("frames", _frames(_FRAMES), True),
    ("frames_row_split", _frames(_FRAMES.replace("line=2 end_line", "line=2\nend_line")), True),
    ("frames_id_own_line", _frames(_FRAMES.replace('1 "a.py"', '1\n"a.py"')), True),
    ("frames_comments", _frames(_FRAMES.replace('1 "f"', '/* c */ 1 "f" // x')), True),
    ("frames_same_line", _frames(_FRAMES.replace("FileNames\n1", "FileNames 1")), True),
    ("frames_comma_and_order", _frames(_FRAMES.replace("1 line=2", "1, line=2").replace(
        "file_name_id=1 function_name_id=1", "function_name_id=1 file_name_id=1")), True),
    ("frames_empty_sections", _frames("FileNames FunctionNames FileLocations StackFrames\n"), True),
    ("frames_name_row_without_name", _frames(_FRAMES.replace('1 "a.py"', '1 "a.py" 7 8')), True),
    ("frames_two_names_one_id", _frames(_FRAMES.replace('1 "a.py"', '1 "a.py" "b.py"')), False),
    ("frames_trailing_comma", _frames(_FRAMES.replace("parent_frame_id=1}", "parent_frame_id=1,}")), False),
    ("frames_leading_comma", _frames(_FRAMES.replace("{file_location_id", "{,file_location_id")), True),
    ("frames_after_entry", _frames("", _FRAMES), False),
    ("frames_twice", _frames(_FRAMES + _FRAMES), False),
    ("frames_only_one_section", _frames("FileNames\n"), False),
    ("frames_out_of_order", _frames("FunctionNames\nFileNames\nFileLocations\nStackFrames\n"), False),
    ("frames_missing_key", _frames(_FRAMES.replace(" column=2 end_column=3", "")), False),
    ("frames_unknown_key", _frames(_FRAMES.replace("line=2", "line=2 foo=3")), False),
    ("frames_repeated_key", _frames(_FRAMES.replace("line=2", "line=2 line=3")), False),
    ("frames_space_before_eq", _frames(_FRAMES.replace("line=2", "line = 2")), False),
    ("frames_garbage_row", _frames(_FRAMES.replace('1 "f"', "1 junk")), False),
    # a layout with spaces or a line break inside is still the instruction's layout
    ("layout_space_in_layout", _module(" p = f32[2,3]{1 ,0} parameter(0)\n ROOT n = f32[2,3] negate(p)"),
     True),
    ("layout_newline_in_layout", _module(" p = f32[2,3] parameter(0)\n ROOT n = f32[2,3]{1,\n0} negate(p)"),
     True),
    # dim_labels as XLA reads them: one lexer token; roles may be missing, `?` is unlabelled
    *[(f"dim_labels_{labels}", _conv(labels), accepted) for labels, accepted in _DIM_LABELS.items()],
    # metadata: XLA's keys, each once, values of their kind, at most one ',' before each
    *[(f"metadata_{k}", _module(" ROOT a = f32[] parameter(0), metadata=" + text), accepted)
      for k, (text, accepted) in enumerate(_METADATA)],
    # a rank-0 constant is one scalar of its type (jaxlib's verdicts)
    *[(f"scalar_{ty}_{lit}", _module(f" ROOT c = {ty}[] constant({lit})"), accepted)
      for ty, lit, accepted in _SCALARS],
    # a computation's result shape must be compatible with its root's (layouts and `?` aside)
    ("root_shape_incompatible", _signed("(a: f32[4])").replace("-> f32[4]", "-> f32[2,2]"), False),
    ("root_type_incompatible", _signed("(a: f32[4])").replace("-> f32[4]", "-> bf16[4]"), False),
    ("root_layout_differs", _signed("(a: f32[4])").replace("-> f32[4]", "-> f32[4]{0:T(2)}"), True),
    ("root_unbounded_dim", _signed("(a: f32[4])").replace("-> f32[4]", "-> f32[?]"), True),
    ("parameter_number_twice", _module(" p = f32[] parameter(0)\n q = f32[] parameter(0)\n ROOT a = f32[] "
                                       "add(p, q)"), False),
    ("parameter_numbers_out_of_order", _module(" q = f32[] parameter(1)\n p = f32[] parameter(0)\n ROOT a = "
                                               "f32[] add(p, q)"), True),
    # an operand written with a shape must name an instruction of a compatible shape
    ("operand_shape_differs", _module(" p = f32[2] parameter(0)\n ROOT n = f32[2] negate(f32[3] p)"), False),
    ("operand_type_differs", _module(" p = f32[2] parameter(0)\n ROOT n = f32[2] negate(bf16[2] p)"), False),
    ("operand_shape_glued", _module(" p = f32[2] parameter(0)\n ROOT n = f32[2] negate(f32[2]p)"), True),
    ("operand_shape_unbounded", _module(" p = f32[2] parameter(0)\n ROOT n = f32[2] negate(f32[?] p)"), True),
    ("operand_name_colon", _module(" p = f32[2] parameter(0)\n ROOT n = f32[2] negate(p:)"), True),
    ("operand_pct_name_colon", _module(" p = f32[2] parameter(0)\n ROOT n = f32[2] negate(%p:)"), False),
    # comments may sit between any two tokens
    ("comment_after_root", _module(" p = f32[2] parameter(0)\n ROOT/*c*/ n = f32[2] negate(p)"), True),
    ("comment_in_int_list", _module(_REV + ", dimensions={/*c*/0}"), True),
    # module attributes: XLA's list, each once
    ("module_attribute_unknown", "HloModule m, replica_cnt=1\n" + _module(_REV + ", dimensions={0}")[12:],
     False),
    ("module_attribute_twice", "HloModule m, replica_count=1, replica_count=1\n"
     + _module(_REV + ", dimensions={0}")[12:], False),
    ("module_attribute_known", "HloModule m, replica_count=1, num_partitions=1\n"
     + _module(_REV + ", dimensions={0}")[12:], True),
    # enumerated attribute values and braced bool lists are checked, as XLA does
    ("direction_lowercase", _module(" p = f32[4] parameter(0)\n ROOT c = pred[4] compare(p, p), "
                                    "direction=lt"), False),
    ("direction_mangled", _module(" p = f32[4] parameter(0)\n ROOT c = pred[4] compare(p, p), "
                                  "direction=L-T"), False),
    ("fusion_kind_unknown", _module(" p = f32[4] parameter(0)\n ROOT c = f32[4] fusion(p), kind=kLo, "
                                    "calls=f", _NEGATE_F), False),
    ("fusion_kind_input", _module(" p = f32[4] parameter(0)\n ROOT c = f32[4] fusion(p), kind=kInput, "
                                  "calls=f", _NEGATE_F), True),
    ("spmd_bool_list_bad", "HloModule m, allow_spmd_sharding_propagation_to_output={ttrue}\n"
     + _module(_REV + ", dimensions={0}")[12:], False),
    ("spmd_bool_list_spaced", "HloModule m, allow_spmd_sharding_propagation_to_output={ true , false }\n"
     + _module(_REV + ", dimensions={0}")[12:], True),
    ("spmd_bool_bare", "HloModule m, allow_spmd_sharding_propagation_to_parameters=true\n"
     + _module(_REV + ", dimensions={0}")[12:], True),
    ("spmd_bool_list_trailing_comma", "HloModule m, allow_spmd_sharding_propagation_to_output={true,}\n"
     + _module(_REV + ", dimensions={0}")[12:], False),
    # backend_config is a string or a JSON dict, where only braces outside "strings" nest
    ("backend_config_unbalanced_square", _module(_REV + ', dimensions={0}, backend_config={"a":[1,2}'), True),
    ("backend_config_unbalanced_paren", _module(_REV + ', dimensions={0}, backend_config={ "x" : ( }'), True),
    ("backend_config_brace_in_string", _module(_REV + ', dimensions={0}, backend_config={"a":"}{"}'), True),
    ("backend_config_single_quoted", _module(_REV + ", dimensions={0}, backend_config='x'"), True),
    ("backend_config_single_quote_in_dict", _module(_REV + ", dimensions={0}, backend_config={'}'}"), False),
    ("backend_config_bare_word", _module(_REV + ", dimensions={0}, backend_config=x"), False),
    ("backend_config_unclosed", _module(_REV + ', dimensions={0}, backend_config={"a":{}'), False),
    ("backend_config_open_string", _module(_REV + ', dimensions={0}, backend_config={"a}'), False),
    ("custom_config_unbalanced", _module(_REV + ', dimensions={0}, custom_config={"a":[1}'), False),
    # an attribute value ends at its closing bracket: the next instruction may follow at once
    ("sharding_glued_to_name", _module(" p = f32[2] parameter(0), sharding={devices=[2]0,1}q = f32[2] "
                                       "negate(p)\n ROOT n = f32[2] negate(q)"), True),
    ("dims_glued_to_name", _module(" p = f32[2] parameter(0)\n q = f32[2] reverse(p), dimensions={0}r = "
                                   "f32[2] negate(q)\n ROOT n = f32[2] negate(r)"), True),
    ("backend_config_glued_to_name", _module(' p = f32[2] parameter(0), backend_config={"a":[}q = f32[2] '
                                             "negate(p)\n ROOT n = f32[2] negate(q)"), True),
    ("index_glued_to_name", _module(" p = (f32[2], s32[]) parameter(0)\n q = f32[2] get-tuple-element(p), "
                                    "index=0c = s32[] constant(1)\n ROOT n = f32[2] negate(q)"), True),
    ("index_glued_to_root", _module(" p = (f32[2], s32[]) parameter(0)\n q = f32[2] get-tuple-element(p), "
                                    "index=0ROOT n = f32[2] negate(q)"), True),
    ("calls_glued_to_pct_name", _module(" p = f32[4] parameter(0)\n q = f32[4] fusion(p), kind=kLoop, "
                                        "calls=%f%r = f32[4] negate(q)\n ROOT n = f32[4] negate(r)",
                                        _NEGATE_F), True),
    ("dim_labels_glued_to_name", _module(" x = f32[1,8,4] parameter(0)\n w = f32[3,8,8] parameter(1)\n c = "
                                         "f32[1,6,8] convolution(x, w), window={size=3}, "
                                         "dim_labels=b0f_0io->b0fn = f32[1,6,8] negate(c)\n "
                                         "ROOT r = f32[1,6,8] negate(n)"), True),
    ("index_with_letters", _module(" p = (f32[2], s32[]) parameter(0)\n ROOT q = f32[2] "
                                   "get-tuple-element(p), index=0c"), False),
    ("replica_groups_iota_then_name", _module(
        " p = f32[4] parameter(0)\n ROOT a = f32[4] all-reduce(p), replica_groups=[2,2]<=[2,2]T(1,0), "
        "to_apply=s",
        "s {\n x = f32[] parameter(0)\n y = f32[] parameter(1)\n ROOT z = f32[] add(x, y)\n}\n"), True),
]


@pytest.mark.parametrize(("name", "text", "accepted"), CASES, ids=[c[0] for c in CASES])
def test_accepts_what_xla_accepts(name: str, text: str, accepted: bool) -> None:
    if accepted:
        parse_module(text)
    else:
        with pytest.raises(ParseError, match=r"expected .* at line \d+, column \d+"):
            parse_module(text)


@pytest.mark.parametrize(("name", "text", "accepted"), CASES, ids=[c[0] for c in CASES])
def test_cases_agree_with_jaxlib(name: str, text: str, accepted: bool) -> None:
    hlo = pytest.importorskip("jaxlib._hlo")
    try:
        hlo.hlo_module_from_text(text)
        xla_accepts = True
    except Exception:  # jaxlib raises its own status errors
        xla_accepts = False
    assert xla_accepts == accepted


def test_reserved_names_are_types_and_keywords() -> None:
    assert {"s1", "f32", "bf16", "pred", "token", "opaque", "true", "ROOT"} <= RESERVED_NAMES
    assert "tuple" not in RESERVED_NAMES


def test_self_call_error_names_the_computation() -> None:
    with pytest.raises(ParseError, match="defined only after this call"):
        parse_module(CASES[12][1])


@pytest.mark.parametrize("newline", ["", "\n"])
def test_deep_tuple_nesting_is_a_parse_error(newline: str) -> None:
    deep = "(" + newline
    shape = deep * 2000 + "f32[4]" + ")" * 2000
    for body in (f" p = {shape} parameter(0)\n ROOT n = f32[4] negate(p)",
                 f" p = f32[4] parameter(0)\n ROOT n = f32[4] negate({shape} p)"):
        with pytest.raises(ParseError, match=f"nested at most {MAX_TUPLE_DEPTH} deep"):
            parse_module(_module(body))


def test_nesting_within_the_limit_parses() -> None:
    shape = "(" * 8 + "f32[4]" + ")" * 8
    m = parse_module(_module(f" p = {shape} parameter(0)\n ROOT n = f32[] constant(1)"))
    assert m.entry.instructions[0].shape.is_tuple


def test_unicode_digit_error_is_typed_and_located() -> None:
    with pytest.raises(ParseError, match=r"ASCII digits\) at line 3, column 23"):
        parse_module(CASES[15][1])


def test_many_instructions_on_one_line_link_like_separate_lines() -> None:
    one = parse_module(CASES[2][1])
    assert [i.name for i in one.entry.instructions] == ["p", "q", "n"]
    assert one.entry.root.operands[0].operands[0].name == "p"
    # a comma is not an instruction separator (XLA: "expects attribute name")
    with pytest.raises(ParseError, match=r"expected '=' right after attribute name q at line 3"):
        parse_module(CASES[2][1].replace(" q =", ", q ="))


# -- shorthand async ops ----------------------------------------------------------------------
_ASYNC = """HloModule m
f {
  a = f32[8] parameter(0)
  ROOT n = f32[8] negate(a)
}
ENTRY e {
  p = f32[8] parameter(0)
  ss = ((f32[8]), f32[4], s32[]) slice-start(f32[8] p), slice={[1:8:2]}
  su = ((f32[8]), f32[4], s32[]) slice-update(ss)
  sd = f32[4] slice-done(su)
  cs = ((f32[8]), f32[8], s32[]) call-start(p), async_execution_thread="thread", to_apply=f
  cd = f32[8] call-done(cs)
  ROOT t = (f32[4], f32[8]) tuple(sd, cd)
}"""


def test_shorthand_async_ops_are_modeled_as_xla_does() -> None:
    m = parse_module(_ASYNC)
    e = m.entry
    assert [e.instruction(n).opcode for n in ("ss", "su", "sd", "cs", "cd")] == [
        "async-start", "async-update", "async-done", "async-start", "async-done"]
    wrapped = e.instruction("ss").called_computations[0]
    assert [(i.name, i.opcode) for i in wrapped] == [("async_param", "parameter"), ("slice", "slice")]
    assert wrapped.root.attributes["slice"][0].stride == 2 and "slice" not in e.instruction("ss").attributes
    call = e.instruction("cs").called_computations[0].root
    assert call.opcode == "call" and call.called_computations[0].name == "f"
    assert e.instruction("cs").raw_attributes["async_execution_thread"] == "\"thread\""
    assert [c.name for c in m.computations] == ["f", "async_wrapped", "async_wrapped.1", "e"]


def test_maps_go_through_an_async_pair() -> None:
    e = parse_module(_ASYNC).entry
    start = output_to_input_indexing(e.instruction("ss"), 1)
    assert str(start).startswith("operand id = 0 (d0) -> (d0 * 2 + 1), domain: d0 in [0, 3]")
    assert str(output_to_input_indexing(e.instruction("sd"))).startswith("operand id = 0 (d0) -> (d0)")
    assert output_to_input_indexing(e.instruction("ss"), 0).is_unknown  # the operands element
    assert output_to_input_indexing(e.instruction("cs"), 1).is_unknown  # `call` has no rule, as in XLA


def test_grouped_maps_walk_through_an_async_pair() -> None:
    e = parse_module(_ASYNC).entry
    done = e.instruction("sd")
    groups = grouped_output_to_input_indexing(FusionAdaptor.for_computation(e), done)
    assert [str(oi) for oi in groups[e.instruction("p")]] == ["(d0) -> (d0 * 2 + 1), domain: d0 in [0, 3]"]
    assert [str(oi) for oi in groups[e.instruction("ss")]] == ["(d0) -> (d0), domain: d0 in [0, 3]"]


def test_async_shorthand_needs_xla_tuple_shape() -> None:
    with pytest.raises(ParseError, match="operand shapes"):
        parse_module(_module(" p = f32[8] parameter(0)\n ROOT s = f32[4] slice-start(p), slice={[0:4]}"))


def test_async_module_agrees_with_jaxlib() -> None:
    hlo = pytest.importorskip("jaxlib._hlo")
    theirs = hlo.hlo_module_from_text(_ASYNC)
    ours = parse_module(_ASYNC)
    assert sorted(c.name for c in theirs.computations()) == sorted(c.name for c in ours.computations)
    for comp in theirs.computations():
        got = [(i.name, i.opcode) for i in ours.computation(comp.name)]
        want = [(i.name, str(i.opcode)) for i in comp.instructions()]
        assert [n for n, _ in got] == [n for n, _ in want]
        want_ops = [o.removeprefix("HloOpcode.k").lower() for _, o in want]
        assert [o.replace("-", "") for _, o in got] == want_ops


def test_unknown_opcode_is_a_parse_error() -> None:
    with pytest.raises(ParseError, match="opcode XLA knows"):
        parse_module(_module(" p = s32[4] parameter(0)\n ROOT n = s32[4] clz(p)"))


def test_fixed_arity_is_checked_at_parse() -> None:
    with pytest.raises(ParseError, match="2 operand"):
        parse_module(_module(" p = f32[4] parameter(0)\n ROOT n = f32[4] add(p)"))


def _xla_structure(module: object, enum_to_name: dict[str, str]) -> dict[str, list[tuple[str, str]]]:
    return {c.name: [(i.name, enum_to_name[str(i.opcode).removeprefix("HloOpcode.")])
                     for i in c.instructions()] for c in module.computations()}  # type: ignore[attr-defined]


def test_corpus_parses_to_the_same_structure_as_jaxlib() -> None:
    """Every corpus module XLA accepts: same computations, instruction names and opcodes."""
    hlo = pytest.importorskip("jaxlib._hlo")
    rows = [r.split("\t") for r in (DATA / "hlo_opcodes.tsv").read_text().splitlines()]
    enum_to_name = {r[0]: r[1] for r in rows if not r[0].startswith("#") and r[0] != "enum"}
    checked = 0
    for path in sorted(DATA.rglob("*.hlo")):
        text = path.read_text()
        try:
            theirs = hlo.hlo_module_from_text(text)
        except Exception:  # XLA rejects it (none of the corpus today)
            with pytest.raises(ParseError, match=r"expected .* at line \d+, column \d+"):
                parse_module(text)
            continue
        ours = parse_module(text)
        want = _xla_structure(theirs, enum_to_name)
        assert {c.name: [(i.name, i.opcode) for i in c] for c in ours.computations} == want, path.name
        checked += 1
    assert checked >= 90


def test_empty_operand_items_are_skipped_as_in_xla() -> None:
    m = parse_module(_module(" p = f32[4] parameter(0)\n ROOT n = (f32[4], f32[4]) tuple(,p,,p,)"))
    assert m.entry.root.operand_names == ("p", "p")


@pytest.mark.parametrize("labels", ["bf01_o01->bf01", "b?01_oi01->bf01", "bf02_oi01->bf01", "01_01->01"])
def test_degenerate_dim_labels_parse_but_have_no_indexing(labels: str) -> None:
    """XLA parses these (roles default to dimension 0, a digit past the spatial count is left
    unset); they name no permutation of the operand dims, so the analysis refuses them."""
    root = parse_module(_conv(labels)).entry.root
    with pytest.raises(HloError, match="dim_labels"):
        convolution_o2i(root, 0)
    assert "unknown indexing" in str(output_to_input_indexing(root))


@pytest.mark.parametrize("numbers", [(0, 2), (1,), (0, 1, 3)])
def test_parameter_number_out_of_range_is_a_parse_error(numbers: tuple[int, ...]) -> None:
    """XLA aborts on these (``param_no < parameter_count`` CHECK), so jaxlib is not asked here."""
    body = "".join(f" p{n} = f32[] parameter({n})\n" for n in numbers)
    with pytest.raises(ParseError, match="parameter number"):
        parse_module(_module(body + f" ROOT t = (f32[]) tuple(p{numbers[0]})"))


def test_reshape_changing_the_element_count_is_a_parse_error() -> None:
    """XLA aborts on it (a CHECK in CreateReshape), so jaxlib is not asked here."""
    with pytest.raises(ParseError, match="reshape to f32"):
        parse_module(_module(" p = f32[4,8] parameter(0)\n ROOT r = f32[33] reshape(p)"))
    parse_module(_module(" p = f32[4,8] parameter(0)\n ROOT r = f32[32] reshape(p)"))
    parse_module(_module(" p = f32[4,?] parameter(0)\n ROOT r = f32[33] reshape(p)"))  # `?`: unchecked
