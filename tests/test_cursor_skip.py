"""Cursor.skip (one regex) against the character loop it replaced, on random texts."""

from __future__ import annotations

import random

from tensorlayout._cursor import Cursor
from tensorlayout.errors import ParseError

_PIECES = [" ", "\t", "\n", "\r", "\v", "\f", "/*", "*/", "//", "/", "*", "a", "\u00a0", "x\n"]


def _loop_skip(text: str, pos: int, comments: bool) -> int | str:
    while pos < len(text):
        if text[pos] in " \t\n\r\v\f":
            pos += 1
        elif comments and text.startswith("/*", pos):
            end = text.find("*/", pos + 2)
            if end < 0:
                return f"unclosed at {pos}"
            pos = end + 2
        elif comments and text.startswith("//", pos):
            end = text.find("\n", pos)
            pos = len(text) if end < 0 else end
        else:
            break
    return pos


def test_skip_moves_as_the_character_loop() -> None:
    rng = random.Random(9)
    for _ in range(20000):
        text = "".join(rng.choice(_PIECES) for _ in range(rng.randint(0, 10)))
        for comments in (False, True):
            cur = Cursor(text, comments=comments)
            try:
                cur.skip()
                got: int | str = cur.pos
            except ParseError as e:
                assert "'*/' to close the comment" in str(e)
                got = f"unclosed at {cur.pos}"
            assert got == _loop_skip(text, 0, comments), (text, comments)
