"""``tensorlayout show`` for XLA shapes, CuTe layouts and TLA formats."""

from __future__ import annotations

import json

import pytest

from tensorlayout.cli import main


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_show_xla_seed_example(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "show", "f32[3,5]{1,0:T(2,2)}")
    assert code == 0 and "f32[3,5]{1,0:T(2,2)}" in out
    code, out, _ = run(capsys, "show", "--json", "f32[3,5]{1,0:T(2,2)}")
    facts = json.loads(out)
    assert code == 0 and isinstance(facts, dict)
    assert "17" in out  # element (2,3) lives at offset 17


def test_show_cute_grid(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "show", "((4,2),(4,3)):((4,16),(1,32))")
    assert code == 0
    row1 = next(line for line in out.splitlines() if line.startswith(" 1  |"))
    assert row1.split("|")[1:-1] == [f"{v:>3} " for v in (4, 5, 6, 7, 36, 37, 38, 39, 68, 69, 70, 71)]
    code, out, _ = run(capsys, "show", "--json", "(2,3):(1,2)")
    facts = json.loads(out)  # offsets nested like the dimensions, as for XLA shapes
    assert facts["offsets"] == [[0, 2, 4], [1, 3, 5]] and facts["dimensions"] == [2, 3]


def test_show_tla_format(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "show", "--tla", "zN", "--rows", "8", "--cols", "12", "--dtype", "f16")
    assert code == 0 and "((16,1),(16,1)):((16,256),(1,256)) origin (8,12)" in out
    assert "(the origin shape (8,12) of a 16x16 layout: the other slots are padding)" in out
    code, out, _ = run(capsys, "show", "--json", "--tla", "nZ", "--rows", "64", "--cols", "40",
                       "--dtype", "f32")
    assert json.loads(out)["layout"] == "((8,8),(16,3)):((1,384),(8,128))"


@pytest.mark.parametrize("argv", [
    ("show", "(4,2):(1,"), ("show", "f32[3,5"), ("show", "--tla", "qq", "--rows", "2", "--cols", "2"),
    ("show", "--tla", "zN"), ("show",),
])
def test_bad_input_is_one_line_and_exit_2(capsys: pytest.CaptureFixture[str], argv: tuple[str, ...]) -> None:
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    assert err.startswith("tensorlayout: ") and "Traceback" not in err
