"""The CLI's shared contract: exit code 2 and no traceback on bad input."""

from __future__ import annotations

import subprocess
import sys

from tensorlayout.cli import main, report
from tensorlayout.errors import ParseError


def test_report_puts_caret_under_error() -> None:
    text = report(ParseError("f32[3,5", 7, "',' or ']'"))
    lines = text.splitlines()
    assert lines[0].startswith("tensorlayout: ParseError: expected ',' or ']'")
    assert lines[-1].index("^") == lines[-2].index("f") + 7


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
