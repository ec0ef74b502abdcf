"""``tensorlayout show`` on CuTe's scaled-basis layouts, counting tensors and pointer-flag offsets."""

from __future__ import annotations

import json

import pytest

from tensorlayout.cli import main


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _cells(out: str) -> list[list[str]]:
    return [[c.strip() for c in line.split("|")[1:-1]] for line in out.splitlines() if "|" in line]


def test_show_identity_layout_prints_cute_text_and_coordinates(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "show", "(2,3):(_1@0,_1@1)")
    assert code == 0 and out.splitlines()[0] == "(2,3):(_1@0,_1@1)"
    assert _cells(out) == [["(0,0)", "(0,1)", "(0,2)"], ["(1,0)", "(1,1)", "(1,2)"]]
    code, out, _ = run(capsys, "show", "--json", "(_2,_4):(_1@1@0,_1@1)")
    assert json.loads(out)["coordinates"][1][2] == "((_0,1),2)"
    code, out, _ = run(capsys, "show", "(2,3):(_1@0,_1@1)", "--index", "1,2")
    assert out.strip() == "index (1,2): coordinate (1,2)"


def test_show_counting_tensor(capsys: pytest.CaptureFixture[str]) -> None:
    text = "ArithTuple(0,6) o ((_2,_2),_1,_1):((_1@1,_8@0),_0,_0)"
    code, out, _ = run(capsys, "show", text)
    assert code == 0 and out.splitlines()[0] == text
    assert _cells(out) == [["(0,6)"], ["(0,7)"], ["(8,6)"], ["(8,7)"]]


def test_show_smem_ptr_composed_layout(capsys: pytest.CaptureFixture[str]) -> None:
    text = "Sw<3,4,3> o smem_ptr[16b](unset) o (_8,_64):(_64,_1)"
    code, out, _ = run(capsys, "show", "--json", text)
    facts = json.loads(out)
    assert code == 0 and facts["target"] == text
    offsets = facts["offsets"]
    assert all(offsets[m][n] == (lambda x: x ^ ((x & 0x380) >> 3))(64 * m + n)
               for m in range(8) for n in range(64))
    code, out, _ = run(capsys, "show", text)
    assert out.splitlines()[0] == text


def test_show_coordinates_refuse_offset_questions(capsys: pytest.CaptureFixture[str]) -> None:
    code, _out, err = run(capsys, "show", "(2,3):(_1@0,_1@1)", "--offset", "3")
    assert code != 0 and "maps elements to coordinates" in err
    code, _out, err = run(capsys, "show", "(2,3):(_1@0,_1@)")
    assert code != 0 and "column 16" in err and "'@'" in err


def test_render_draws_coordinate_layouts(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "render", "(2,3):(_1@0,_1@1)", "-o", "-")
    assert code == 0 and out.startswith("<svg") and "(2,3):(_1@0,_1@1)" in out
    code, out, _ = run(capsys, "render", "ArithTuple(0,6) o ((_2,_2),_1,_1):((_1@1,_8@0),_0,_0)", "-o", "-")
    assert code == 0 and "slots: coordinates in (9,8)" in out
    for cell in ("54", "63", "62", "71"):  # (m,n) -> m + 9n: the four coordinates thread 3 owns
        assert f">{cell}<" in out
