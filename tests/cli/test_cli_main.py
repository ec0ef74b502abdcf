"""The CLI's shared contract: exit code 2 and no traceback on bad input."""

from __future__ import annotations

import subprocess
import sys

from tensorlayout.cli import main, report
from tensorlayout.errors import ParseError


def test_report_is_one_line_naming_the_position() -> None:
    text = report(ParseError("f32[3,5", 7, "',' or ']'"))
    assert "\n" not in text
    assert text.startswith("tensorlayout: ParseError: expected ',' or ']'")
    assert "line 1, column 8" in text


def test_bad_input_prints_one_line_and_exits_2(tmp_path, capsys) -> None:
    empty = tmp_path / "empty.hlo"
    empty.write_text("")
    for argv in (["show", "f32[3,5]{1,0:T(2,2)"], ["maps", str(empty)], ["simplify", "(d0) -> (d0"],
                 ["show", "(4,2):(1,"]):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and err.startswith("tensorlayout: ") and "Traceback" not in err


def test_unknown_command_exits_2(capsys) -> None:
    try:
        main(["no-such-command"])
    except SystemExit as exc:
        assert exc.code == 2
    assert "Traceback" not in capsys.readouterr().err


def test_module_entry_point_runs() -> None:
    out = subprocess.run([sys.executable, "-m", "tensorlayout", "--help"],
                         capture_output=True, text=True, check=True)
    assert "show" in out.stdout
