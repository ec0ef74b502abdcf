"""The stack-frame tables' fast row scan against the careful reader alone, on random texts."""

from __future__ import annotations

import random
import re

import pytest

from tensorlayout._cursor import Cursor
from tensorlayout.errors import ParseError
from tensorlayout.hlo import stack_frames

_PIECES = ["1", "-2", "12", " ", "\n", '"a.py"', '"x\\"y"', "/*c*/", "//c\n", "{", "}", ",",
           "file_name_id=3", "function_name_id=4", "line=5", "end_line=6", "column=7", "end_column=8",
           "file_location_id=1", "parent_frame_id=0", '"', "9" * 1001]
_ROW = {"FileNames": ' 1 "f.py"', "FunctionNames": ' 2 "g"',
        "FileLocations": " 3 {file_name_id=1 function_name_id=1 line=2 end_line=2 column=1 end_column=9}",
        "StackFrames": " 4 {file_location_id=3 parent_frame_id=0}"}


def _read(text: str, fast: bool, monkeypatch: pytest.MonkeyPatch) -> tuple[str, int]:
    with monkeypatch.context() as m:
        if not fast:
            none = re.compile("")  # matches nothing: the careful reader reads every row
            m.setattr(stack_frames, "_FAST_ROWS", dict.fromkeys(stack_frames.SECTIONS, none))
        cur = Cursor(text, comments=True)
        try:
            stack_frames.read_stack_frame_tables(cur)
        except ParseError as e:
            return str(e), -1
        return "ok", cur.pos


def test_fast_rows_read_as_the_careful_reader(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(3)
    for _ in range(4000):
        parts = []
        for section in stack_frames.SECTIONS:
            parts.append(section)
            for _ in range(rng.randint(0, 3)):
                row = _ROW[section]
                if rng.random() < 0.4:
                    k = rng.randrange(len(row) + 1)
                    row = row[:k] + rng.choice(_PIECES) + row[k + rng.randint(0, 3):]
                parts.append(row)
        text = "\n".join(parts) + "\nENTRY"
        assert _read(text, True, monkeypatch) == _read(text, False, monkeypatch), text
