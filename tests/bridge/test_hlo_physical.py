"""Physical HLO indexing (tiling included) and the coalescing report, checked by brute force
against the logical maps and ``linear_index`` of each operand's layout."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from tensorlayout.hlo import output_to_input_indexing, parse_module
from tensorlayout.hlo.coalescing import coalescing_report
from tensorlayout.hlo.physical import linearized_output_to_input
from tensorlayout.xla import linear_index, parse_shape

LAYOUTS = ["{1,0}", "{0,1}", "{1,0:T(2,4)}", "{0,1:T(4,2)}", "{1,0:T(4,4)(2,1)}", "{1,0:T(8,128)}"]


@st.composite
def modules(draw: st.DrawFn) -> str:
    m, n = draw(st.integers(1, 12)), draw(st.integers(1, 12))
    lp, lo = draw(st.sampled_from(LAYOUTS)), draw(st.sampled_from(LAYOUTS))
    op = draw(st.sampled_from(["transpose", "reverse", "slice", "copy"]))
    p = f"f32[{m},{n}]{lp}"
    if op == "transpose":
        body = f"ROOT r = f32[{n},{m}]{lo} transpose(p), dimensions={{1,0}}"
    elif op == "reverse":
        body = f"ROOT r = f32[{m},{n}]{lo} reverse(p), dimensions={{1}}"
    elif op == "slice":
        body = f"ROOT r = f32[{m},{(n + 1) // 2}]{lo} slice(p), slice={{[0:{m}:1], [0:{n}:2]}}"
    else:
        body = f"ROOT r = f32[{m},{n}]{lo} copy(p)"
    return f"HloModule t\nENTRY e {{\n  p = {p} parameter(0)\n  {body}\n}}\n"


@given(modules())
def test_linearized_maps_are_operand_offsets(text: str) -> None:
    root = parse_module(text).entry.root
    operand = root.operands[0].shape
    logical = output_to_input_indexing(root).maps(0)[0]
    physical = linearized_output_to_input(root).maps(0)[0]
    dims = root.shape.dimensions
    for i in range(dims[0]):
        for j in range(dims[1]):
            read = logical.evaluate([i, j])
            assert physical.evaluate([i, j]) == (linear_index(operand, read),)


@given(modules())
def test_coalescing_steps_match_direct_differences(text: str) -> None:
    root = parse_module(text).entry.root
    operand = root.operands[0].shape
    logical = output_to_input_indexing(root).maps(0)[0]
    minor = root.shape.layout.minor_to_major[0]
    dims = root.shape.dimensions
    steps: dict[int, int] = {}
    for i in range(dims[0]):
        for j in range(dims[1]):
            p = [i, j]
            q = list(p)
            q[minor] += 1
            if q[minor] >= dims[minor]:
                continue
            step = linear_index(operand, logical.evaluate(q)) - linear_index(operand, logical.evaluate(p))
            steps[step] = steps.get(step, 0) + 1
    (report,) = coalescing_report(root)
    assert report.exhaustive and dict(report.steps) == steps


def test_broadcast_reads_the_same_element() -> None:
    text = ("HloModule t\nENTRY e {\n  p = f32[8]{0} parameter(0)\n"
            "  ROOT b = f32[8,16]{1,0} broadcast(p), dimensions={0}\n}\n")
    (report,) = coalescing_report(parse_module(text).entry.root)
    assert report.steps == ((0, 8 * 15),)
    assert parse_shape("f32[8]{0}").dimensions == (8,)


def test_every_corpus_instruction_gets_a_report() -> None:
    from tests.conftest import DATA

    files = sorted((DATA / "hlo").glob("*.hlo")) + sorted((DATA / "hlo" / "tpu").glob("*.hlo"))
    assert len(files) > 50
    reports = 0
    for path in files:
        for instr in parse_module(path.read_text()).instructions():
            if instr.operands:
                reports += len(coalescing_report(instr, limit=8))
    assert reports > 5000
