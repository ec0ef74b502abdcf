"""``tensorlayout simplify``: prints the simplified map; ``--verify`` checks it against the input."""

from __future__ import annotations

import io

import pytest

from tensorlayout.cli import main

NEG_DIV = "(d0)[s0] -> (d0), domain: d0 in [0, 99], s0 in [-99, 99], s0 / -3 in [-11, -5]"


def test_simplify_prints_the_simplified_map(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["simplify", "(d0) -> (d0 mod 42), domain: d0 in [53, 71]"]) == 0
    assert capsys.readouterr().out == "(d0) -> (d0 - 42), domain: d0 in [53, 71]\n"


def test_verify_reports_enumeration(capsys: pytest.CaptureFixture[str]) -> None:
    text = "(d0, d1) -> (d0 + d1 floordiv 16, d1 mod 16), domain: d0 in [0, 6], d1 in [0, 14]"
    assert main(["simplify", text, "--verify"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out == ["(d0, d1) -> (d0, d1), domain: d0 in [0, 6], d1 in [0, 14]",
                   "verify: equivalent (all 105 points checked)"]


def test_verify_catches_xlas_negative_divisor_rewrite(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["simplify", NEG_DIV, "--verify"]) == 1
    out = capsys.readouterr().out
    assert "s0 in [15, 35]" in out and "NOT equivalent at (0, 13)" in out
    assert main(["simplify", NEG_DIV, "--verify", "--exact"]) == 0
    assert "s0 in [13, 33]" in capsys.readouterr().out


def test_verify_says_when_it_samples(capsys: pytest.CaptureFixture[str]) -> None:
    text = "(d0, d1) -> (d0 * 1000 + d1), domain: d0 in [0, 999], d1 in [0, 999]"
    assert main(["simplify", text, "--verify", "--limit", "1000"]) == 0
    out = capsys.readouterr().out
    assert "random points checked: the box of 1000000 points exceeds the limit of 1000" in out


def test_preserve_remove_unused_and_stdin(capsys: pytest.CaptureFixture[str],
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    assert main(["simplify", "(d0) -> (d0), domain: d0 in [5, 5]", "--preserve"]) == 0
    assert capsys.readouterr().out == "(d0) -> (d0), domain: d0 in [5, 5]\n"
    monkeypatch.setattr("sys.stdin", io.StringIO("(d0)[s0] -> (d0),\ndomain:\nd0 in [0, 9],\ns0 in [0, 3]\n"))
    assert main(["simplify", "-", "--remove-unused", "--verify"]) == 0
    assert capsys.readouterr().out.splitlines()[0] == "(d0) -> (d0), domain: d0 in [0, 9]"


def test_bad_map_exits_2_with_position(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["simplify", "(d0) -> (d0 mod ), domain: d0 in [0, 9]"]) == 2
    err = capsys.readouterr().err
    assert "ParseError" in err and "column 17" in err
