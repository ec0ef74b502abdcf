"""The command line's shared contract: version, help, stdin/stdout, one JSON schema, widths,
windows, and one error line for every command."""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tensorlayout
from tensorlayout.cli import build_parser, main
from tensorlayout.xla import linear_index, parse_shape

ROOT = Path(__file__).parent.parent.parent


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_version_is_single_sourced(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit, match=r"0") as exc:
        main(["--version"])
    assert exc.value.code == 0 and capsys.readouterr().out == f"tensorlayout {tensorlayout.__version__}\n"
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert re.search(r'^dynamic = \["version"\]', pyproject, re.M)
    assert not re.search(r"^version\s*=\s*\"", pyproject, re.M)  # no literal: only the attr


def _helps() -> list[str]:
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    return [parser.format_help()] + [p.format_help() for p in sub.choices.values()]  # type: ignore[union-attr]


def test_help_has_no_markup_and_lists_every_tla_format() -> None:
    helps = _helps()
    assert len(helps) >= 4
    for text in helps:
        assert "``" not in text and ":func:" not in text and ":class:" not in text
    show = next(h for h in helps if "--index" in h)
    for name in tensorlayout.cute.tla.FORMATS:
        assert name in show


def test_stdin_for_show_render_and_simplify(capsys: pytest.CaptureFixture[str],
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO("f32[3,5]{1,0:T(2,2)}\n"))
    assert run(capsys, "show", "-", "--index", "2,3")[1] == "index (2,3): offset 17\n"
    monkeypatch.setattr("sys.stdin", io.StringIO("(4,8):(8,1)"))
    code, out, _ = run(capsys, "render", "-", "-o", "-")
    assert code == 0 and out.startswith("<svg") and out.endswith("</svg>\n")
    monkeypatch.setattr("sys.stdin", io.StringIO("(d0) -> (d0 mod 42),\ndomain: d0 in [53, 71]\n"))
    assert run(capsys, "simplify", "-")[1] == "(d0) -> (d0 - 42), domain: d0 in [53, 71]\n"


def test_render_to_stdout_html(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "render", "--tla", "zN", "--rows", "8", "--cols", "12", "-o", "-",
                       "--format", "html")
    assert code == 0 and out.lstrip().lower().startswith("<!doctype html")


@pytest.mark.parametrize("argv, notation, rank", [
    (("f32[3,5]{1,0:T(2,2)}",), "xla", 2), (("(2,3):(1,2)",), "cute", 2),
    (("((4,2),(4,3)):((4,16),(1,32))",), "cute", 2), (("8:2",), "cute", 1),
    (("--tla", "nZ", "--rows", "64", "--cols", "40", "--dtype", "f32"), "tla", 2),
    (("f32[2,3,4]",), "xla", 3), (("f32[]",), "xla", 0), (("(2,3,2):(1,2,6)",), "cute", 3),
])
def test_one_json_schema(capsys: pytest.CaptureFixture[str], argv: tuple[str, ...], notation: str,
                         rank: int) -> None:
    code, out, _ = run(capsys, "show", *argv, "--json")
    facts = json.loads(out)
    assert code == 0 and facts["notation"] == notation and len(facts["dimensions"]) == rank
    assert {"target", "slots", "window", "offsets", "memory_order"} <= set(facts)
    offsets = facts["offsets"]
    for n in facts["dimensions"]:  # nested like the dimensions, C order
        assert isinstance(offsets, list) and len(offsets) == n
        offsets = offsets[0]
    assert isinstance(offsets, int)
    assert len(facts["memory_order"]) == min(facts["slots"], 4096)


def test_show_as_json(capsys: pytest.CaptureFixture[str]) -> None:
    facts = json.loads(run(capsys, "show", "f32[3,5]{1,0:T(2,2)}", "--as", "cute", "--json")[1])
    assert facts == {"notation": "xla", "target": "f32[3,5]{1,0:T(2,2)}", "dimensions": [3, 5], "slots": 24,
                     "as": "cute", "text": "((2,2),(2,3)):((2,12),(1,4))"}


def test_json_window_of_a_large_layout(capsys: pytest.CaptureFixture[str]) -> None:
    text = "bf16[1024,1024]{1,0:T(8,128)(2,1)}"
    facts = json.loads(run(capsys, "show", text, "--json", "--window", "8:10,126:130")[1])
    assert facts["window"] == [[8, 10], [126, 130]]
    shape = parse_shape(text)
    assert facts["offsets"] == [[linear_index(shape, (i, j)) for j in range(126, 130)] for i in (8, 9)]
    default = json.loads(run(capsys, "show", "f32[1024,1024]", "--json")[1])
    assert default["window"] == [[0, 32], [0, 1024]]


@pytest.mark.parametrize("target", [
    "bf16[16,256]{1,0:T(8,128)(2,1)}", "f32[1024,1024]{1,0:T(8,128)}", "s8[3,5000]",
    "((8,4096),(128,512)):((128,1024),(1,4194304))", "(10000,3):(3,1)", "f32[64,64,8,128]{3,2,1,0:T(8,128)}",
])
def test_max_width_is_respected(capsys: pytest.CaptureFixture[str], target: str) -> None:
    for width in (40, 80, 132):
        code, out, _ = run(capsys, "show", target, "--max-width", str(width))
        lines = out.splitlines()
        assert code == 0 and len(lines) < 120
        prose = (target, "  element", "  memory", "  tiled", "  bytes", "window", "size", "offset of",
                 "memory order", "(", "  (")
        assert all(len(line) <= width for line in lines if not line.startswith(prose)), target


@pytest.mark.parametrize("target", ["f32[0,5]", "f32[3,0]{1,0:T(2,2)}", "0:1", "(2,0):(1,1)", "(4,8):(-1,4)",
                                    "():()", "1:0", "s4[3,5]{1,0:T(2,2)E(4)}", "f32[2,3]{1,0:T(2,2)L(64)}"])
def test_edge_layouts_show_in_every_form(capsys: pytest.CaptureFixture[str], target: str) -> None:
    code, out, err = run(capsys, "show", target, "--max-width", "60")
    assert code == 0 and err == "" and out.startswith(target.split("{")[0][:3])
    code, out, err = run(capsys, "show", target, "--json")
    assert code == 0 and json.loads(out)["target"]


def test_negative_strides_show_their_offsets(capsys: pytest.CaptureFixture[str]) -> None:
    out = run(capsys, "show", "(4,8):(-1,4)")[1]
    assert " 3  | -3 |  1 |  5 |" in out
    assert run(capsys, "show", "(4,8):(-1,4)", "--index", "3,1")[1] == "index (3,1): offset 1\n"


def test_padding_runs_fold(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "show", "pred[]{:T(512)S(6)}")
    assert code == 0 and out.splitlines()[-1] == "  0:() 1..511:." and len(out.splitlines()) < 12


def test_window_selects_and_labels(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "show", "f32[3,5]{1,0:T(2,2)}", "--window", "1:3,2:4")
    lines = out.splitlines()
    assert code == 0 and "window [1:3,2:4] of [3,5] (--window picks another part)" in lines
    at = lines.index("window [1:3,2:4] of [3,5] (--window picks another part)")
    assert lines[at + 1:at + 4] == ["     2  3", "  1  6  7", "  2 16 17"]


@pytest.mark.parametrize("window", ["0:9", "3:1,0:1", "a:b", "0,0,0", "5"])
def test_bad_windows(capsys: pytest.CaptureFixture[str], window: str) -> None:
    code, out, err = run(capsys, "show", "f32[3,5]", "--window", window)
    assert code == 2 and out == "" and err.startswith("tensorlayout: UsageError: ") and err.count("\n") == 1


def test_simplify_json(capsys: pytest.CaptureFixture[str]) -> None:
    text = "(d0) -> (d0 mod 42), domain: d0 in [53, 71]"
    code, out, _ = run(capsys, "simplify", text, "--verify", "--json")
    facts = json.loads(out)
    assert code == 0 and facts["simplified"] == "(d0) -> (d0 - 42), domain: d0 in [53, 71]"
    assert facts["verify"]["equivalent"] is True and facts["verify"]["points_checked"] == 19


@pytest.mark.parametrize("argv", [
    ("show", "f32[3,5"), ("show", "(4,2):(1,"), ("show", "zN"),
    ("show", "--tla", "zQ", "--rows", "2", "--cols", "2"),
    ("show", "f32[3,5]", "--max-width", "x"), ("show",), ("show", "--tla", "zN", "--rows", "2"),
    ("show", "f32[3]", "--tla", "zN", "--rows", "2", "--cols", "2"), ("show", "f32[3]", "--rows", "2"),
    ("simplify", "(d0) -> (d0"), ("simplify", ""), ("render", "f32[3]", "-o", "x.gif"), ("render", "(4,8"),
    ("render", "f32[3]"), ("maps", "/no/such/file.hlo"), ("no-such-command",), (), ("show", "--no-such-flag"),
])
def test_every_command_reports_one_line(capsys: pytest.CaptureFixture[str], argv: tuple[str, ...]) -> None:
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    assert re.fullmatch(r"tensorlayout: [A-Za-z]+Error: [^\n]+\n", err), err


def test_tla_name_as_target_hints(capsys: pytest.CaptureFixture[str]) -> None:
    err = run(capsys, "show", "zn")[2]
    assert "--tla zN --rows R --cols C" in err and "make_format('zN'" in err


def test_a_bug_is_one_line_and_exit_3(capsys: pytest.CaptureFixture[str],
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(args: object) -> int:
        raise RuntimeError("boom")

    monkeypatch.setattr("tensorlayout.cli.show.run", broken)
    monkeypatch.delenv("TENSORLAYOUT_TRACEBACK", raising=False)
    code, _, err = run(capsys, "show", "f32[3]")
    assert code == 3
    assert err == ("tensorlayout: InternalError: RuntimeError: boom "
                   "(a bug in tensorlayout; please report it)\n")


def test_console_entry_point() -> None:
    out = subprocess.run([sys.executable, "-m", "tensorlayout", "--version"], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == f"tensorlayout {tensorlayout.__version__}"


ALPHABET = "()[]{},:*_0123456789fsTES<=?@ -"


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(target=st.text(alphabet=ALPHABET, min_size=1, max_size=20),
       extra=st.sampled_from([(), ("--index", "1,2"), ("--offset", "3"), ("--window", "0:2,1:3"), ("--json",),
                              ("--as", "cute"), ("--max-width", "20")]))
def test_random_targets_never_crash(capsys: pytest.CaptureFixture[str], target: str,
                                    extra: tuple[str, ...]) -> None:
    code, _, err = run(capsys, "show", target, *extra)
    assert code in (0, 2), err
    assert code == 0 or re.fullmatch(r"tensorlayout: [A-Za-z]+Error: [^\n]+\n", err), err


def test_show_tpu_gives_the_tpu_default_layout(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["show", "bf16[16,256]", "--tpu", "v6e"]) == 0
    assert capsys.readouterr().out.splitlines()[0] == "bf16[16,256]{1,0:T(8,128)(2,1)}"
    assert main(["show", "bf16[16,256]", "--tpu", "v4"]) == 2
    assert capsys.readouterr().err.startswith("tensorlayout: UnsupportedError:")


def test_simplify_prints_either_spelling_of_floor_division(capsys: pytest.CaptureFixture[str]) -> None:
    text = "(d0, d1) -> (d0 floordiv 8, d1 mod 16), domain: d0 in [0, 63], d1 in [0, 15]"
    assert main(["simplify", text, "--floordiv"]) == 0
    out = capsys.readouterr().out
    assert out == "(d0, d1) -> (d0 floordiv 8, d1), domain: d0 in [0, 63], d1 in [0, 15]\n"
    assert main(["simplify", text]) == 0
    assert capsys.readouterr().out == "(d0, d1) -> (d0 / 8, d1), domain: d0 in [0, 63], d1 in [0, 15]\n"
