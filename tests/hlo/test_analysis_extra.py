"""Analysis API beyond the vectors: epilogue, grouping, physical mode, unknown ops, utilization, CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tensorlayout.cli import main
from tensorlayout.errors import HloError
from tensorlayout.hlo import (
    FusionAdaptor,
    epilogue_input_to_output_indexing,
    grouped_output_to_input_indexing,
    input_to_output_indexing,
    output_to_input_indexing,
    parse_module,
)
from tensorlayout.hlo.utilization import operand_utilization

CORPUS = Path(__file__).resolve().parents[1] / "data" / "hlo"


def norm(text: str) -> str:
    return "".join(text.split())


EPILOGUE = """HloModule m
f {
  p0 = f32[1000, 1000] parameter(0)
  t = f32[1000, 1000]{0, 1} transpose(p0), dimensions={1, 0}
  a0 = f32[1000000] bitcast(t)
  ROOT log = f32[1000000] log(a0)
}
ENTRY e {
  p0 = f32[1000, 1000] parameter(0)
  ROOT fusion = f32[1000000] fusion(p0), kind=kLoop, calls=f
}"""


def test_epilogue_input_to_output() -> None:
    m = parse_module(EPILOGUE)
    comp = m.computation("f")
    got = epilogue_input_to_output_indexing(comp.instruction("t"), comp.root)
    assert norm(str(got)) == norm("(d0, d1) -> (d1 * 1000 + d0), domain: d0 in [0, 999], d1 in [0, 999]")


def test_grouped_from_computation_and_fusion_input_to_output_unknown() -> None:
    m = parse_module(EPILOGUE)
    fusion = m.entry.root
    adaptor = FusionAdaptor.for_instruction(fusion)
    groups = grouped_output_to_input_indexing(adaptor, adaptor.roots[0])
    names = {i.name for i in groups}
    assert {"log", "a0", "t", "p0"} <= names
    assert input_to_output_indexing(fusion, 0).is_unknown


def test_unknown_ops_never_raise() -> None:
    m = parse_module("""HloModule m
ENTRY e {
  p0 = f32[4,4] parameter(0)
  p1 = s32[2] parameter(1)
  c = f32[4,4] custom-call(p0), custom_call_target="foo"
  t = f32[4,4] transpose(p0)
  s = (f32[4,4], s32[2]) sort(p0, p1), dimensions={0}
  ROOT tup = (f32[4,4], f32[4,4]) tuple(c, t)
}""")
    for instr in m.entry.instructions:
        r = output_to_input_indexing(instr)
        assert len(r) == len(instr.operands)
        if instr.opcode in ("custom-call", "transpose", "sort", "tuple"):
            assert r.is_unknown
            assert "unknown indexing" in str(r)


def test_physical_mode_operand_permutation() -> None:
    m = parse_module("""HloModule m
ENTRY e {
  p0 = f32[10, 20, 30]{1, 0, 2} parameter(0)
  ROOT add0 = f32[10, 20, 30] exponential(p0)
}""")
    got = output_to_input_indexing(m.entry.root, physical=True)
    want = "operand id = 0 (d0, d1, d2) -> (d2, d0, d1), domain: d0 in [0, 9], d1 in [0, 19], d2 in [0, 29]"
    assert norm(str(got)) == norm(want)


def test_utilization_counts() -> None:
    m = parse_module("""HloModule m
ENTRY e {
  p0 = f32[100] parameter(0)
  i = s32[] parameter(1)
  ds = f32[10] dynamic-slice(p0, i), dynamic_slice_sizes={10}
  big = f32[512,512] parameter(2)
  ROOT s = f32[256,512] slice(big), slice={[0:512:2], [0:512]}
}""")
    ds = m.entry.instruction("ds")
    u = operand_utilization(ds)
    assert u[0].read == 100 and not u[0].exact and "runtime" in u[0].method
    s = operand_utilization(m.entry.root, limit=1000)[0]
    assert not s.exact and s.read == 256 * 512 and s.method.startswith("upper bound")
    exact = operand_utilization(m.entry.root)[0]
    assert exact.exact and exact.read == 256 * 512 and exact.fraction == 0.5


def test_cli_text_json_and_errors(capsys: pytest.CaptureFixture[str],
                                  monkeypatch: pytest.MonkeyPatch) -> None:
    path = str(CORPUS / "softmax.opt.hlo")
    assert main(["maps", path]) == 0
    out = capsys.readouterr().out
    assert "instructions got maps" in out.splitlines()[-1]
    assert main(["maps", path, "--json", "--utilization"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["summary"]["instructions"] == len(data["instructions"])
    assert any("utilization" in r for r in data["instructions"])
    assert main(["maps", path, "--instruction", "no_such_instruction"]) == 2
    assert "no instruction" in capsys.readouterr().err
    import tensorlayout.cli.maps as maps_cli

    monkeypatch.setattr(maps_cli, "PROGRESS_THRESHOLD", 1)
    assert main(["maps", path]) == 0
    assert "instructions" in capsys.readouterr().err


def test_cli_physical(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["maps", str(CORPUS / "softmax.opt.hlo"), "--input-to-output", "--physical"]) == 0
    assert "instructions got maps" in capsys.readouterr().out


def test_producer_consumer_of_two_fusions_walks_into_the_producer() -> None:
    m = parse_module("""HloModule m
fp {
  a = f32[4,8] parameter(0)
  ROOT t = f32[8,4] transpose(a), dimensions={1,0}
}
fc {
  x = f32[8,4] parameter(0)
  ROOT s = f32[4,4] slice(x), slice={[0:8:2], [0:4]}
}
ENTRY e {
  p0 = f32[4,8] parameter(0)
  prod = f32[8,4] fusion(p0), kind=kLoop, calls=fp
  ROOT cons = f32[4,4] fusion(prod), kind=kLoop, calls=fc
}""")
    adaptor = FusionAdaptor.for_producer_consumer(m.entry.instruction("prod"), m.entry.root)
    groups = grouped_output_to_input_indexing(adaptor, adaptor.roots[0])
    p0 = m.entry.instruction("p0")
    assert [norm(str(oi)) for oi in groups[p0]] == [
        norm("(d0, d1) -> (d1, d0 * 2), domain: d0 in [0, 3], d1 in [0, 3]")]


def test_linearized_physical_offsets_with_tiles() -> None:
    from tensorlayout.convert import to_indexing_map
    from tensorlayout.hlo.physical import linearized_output_to_input

    m = parse_module("""HloModule m
ENTRY e {
  p0 = f32[3,5]{1,0:T(2,2)} parameter(0)
  ROOT t = f32[5,3] transpose(p0), dimensions={1,0}
}""")
    got = next(iter(linearized_output_to_input(m.entry.root)[0])).map
    offsets = to_indexing_map(m.entry.instruction("p0").shape)
    for i in range(5):
        for j in range(3):
            assert got.evaluate([i, j]) == offsets.evaluate([j, i])


@pytest.mark.parametrize(("content", "kind"), [
    (b"HloModule m\nENTRY e {\n  p = f32[4] parameter(0)\n  ROOT n = f32[4] negate(q)\n}\n", "ParseError"),
    (b"HloModule m\nENTRY e {\n  ROOT p = f32[4] parameter(0) \xff\n}\n", "ParseError"),
    (b"", "ParseError"),
])
def test_cli_bad_input_is_one_line_and_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                              content: bytes, kind: str) -> None:
    path = tmp_path / "bad.hlo"
    path.write_bytes(content)
    assert main(["maps", str(path)]) == 2
    captured = capsys.readouterr()
    lines = captured.err.splitlines()
    assert lines[0].startswith(f"tensorlayout: {kind}: ") and "line" in lines[0]
    assert len(lines) == 1 or b"\n" not in content  # the shared report adds a caret to one-line texts
    assert captured.out == ""


def test_cli_summary_names_the_opcodes_without_maps(capsys: pytest.CaptureFixture[str]) -> None:
    path = str(CORPUS / "scatter_add.opt.hlo")
    assert main(["maps", path]) == 0
    last = capsys.readouterr().out.splitlines()[-1]
    assert "instructions got maps; unknown indexing for:" in last and "scatter (" in last
    assert main(["maps", path, "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)["summary"]
    assert summary["unknown_by_opcode"]["scatter"] >= 1
    assert summary["with_maps"] + sum(summary["unknown_by_opcode"].values()) == summary["instructions"]


def test_malformed_ops_get_unknown_indexing_and_bad_ids_raise() -> None:
    """Maps of the wrong arity (HLO XLA's verifier would reject) become "unknown indexing";
    asking for an output or operand the instruction does not have is a caller error."""
    m = parse_module("""HloModule m
ENTRY e {
  p = f32[8] parameter(0)
  b = f32[8,16] broadcast(p)
  s = f32[4] slice(p), slice={[0:8:2], [0:1]}
  l = f32[8,2]{0,3} broadcast(p), dimensions={0}
  ROOT n = f32[8,16] negate(b)
}""")
    e = m.entry
    for name in ("b", "s"):
        assert str(output_to_input_indexing(e.instruction(name))) == "operand id = 0 unknown indexing\n"
    assert not output_to_input_indexing(e.instruction("l")).is_unknown
    assert output_to_input_indexing(e.instruction("l"), physical=True).is_unknown  # bad layout
    with pytest.raises(HloError, match="output id"):
        output_to_input_indexing(e.root, 1)
    with pytest.raises(HloError, match="operand id"):
        input_to_output_indexing(e.root, 3)
