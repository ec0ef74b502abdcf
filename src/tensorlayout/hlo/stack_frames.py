"""The stack-frame tables XLA prints at the top of an HLO module, read as XLA's parser reads them.

::

    tables   ::= 'FileNames' names 'FunctionNames' names 'FileLocations' locs 'StackFrames' frames
    names    ::= (INT [STRING])*
    locs     ::= (INT '{' attrs '}')*       keys: file_name_id function_name_id line end_line
                                                  column end_column, each once
    frames   ::= (INT '{' attrs '}')*       keys: file_location_id parent_frame_id, each once
    attrs    ::= ([','] KEY '=' INT)*       (``key=`` is one token: no space before '=')

Rules found by asking jaxlib 0.10.2's parser: all four sections, once, in this order, before the
first computation (sections may be empty); tokens may be split across lines and separated by
comments; ids may be any integers (they are not cross-checked); a missing, repeated or unknown
key is an error. The tables carry no layout information, so they are checked and skipped.

>>> from tensorlayout._cursor import MAX_INTEGER_DIGITS, Cursor
>>> cur = Cursor('FileNames 1 "a.py" FunctionNames FileLocations StackFrames\\n1 {file_location_id=1 '
...              'parent_frame_id=0}\\nENTRY', comments=True)
>>> read_stack_frame_tables(cur), cur.text[cur.pos:].strip()
(True, 'ENTRY')
"""

from __future__ import annotations

import re
from collections.abc import Callable

from tensorlayout._cursor import MAX_INTEGER_DIGITS, Cursor

__all__ = ["SECTIONS", "read_stack_frame_tables"]

#: The sections, in the order XLA requires.
SECTIONS = ("FileNames", "FunctionNames", "FileLocations", "StackFrames")
_LOCATION_KEYS = frozenset({"file_name_id", "function_name_id", "line", "end_line", "column", "end_column"})
_FRAME_KEYS = frozenset({"file_location_id", "parent_frame_id"})
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-]*", re.A)
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.S)
_KEY = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)=", re.A)


def _at_word(cur: Cursor, word: str) -> bool:
    """The next token is exactly ``word`` (not a longer name); does not consume."""
    cur.skip()
    m = _WORD.match(cur.text, cur.pos)
    return m is not None and m.group() == word


# row ::= [STRING]    (in FileNames and FunctionNames; jaxlib reads `1 "a.py" 7 8` as three rows)
def _string_row(cur: Cursor) -> None:
    cur.match(_STRING)


def _attribute_row(keys: frozenset[str]) -> Callable[[Cursor], None]:
    """A reader of ``'{' (key=INT [','])* '}'`` that needs each of ``keys`` exactly once."""
    listed = ", ".join(sorted(keys))

    def read(cur: Cursor) -> None:
        cur.expect("{", "'{' after the row id")
        seen: set[str] = set()
        while True:
            comma = cur.accept(",")  # XLA: at most one ',' before each item, none before '}'
            if not comma and cur.accept("}"):
                break
            m = cur.match(_KEY)
            if not m or m.group(1) not in keys or m.group(1) in seen:
                raise cur.error(f"one of {listed}= (each once)" + ("" if comma else " or '}'"))
            seen.add(m.group(1))
            cur.integer(f"an integer for {m.group(1)}")
        if seen != keys:
            raise cur.error(f"all of {listed} in the row", context=f"missing {sorted(keys - seen)}")

    return read


# An integer as Cursor.integer reads it (at most MAX_INTEGER_DIGITS digits, not one more).
_INT = r"-?[0-9]{1," + str(MAX_INTEGER_DIGITS) + r"}(?![0-9])"


def _attribute_rows(keys: tuple[str, ...]) -> re.Pattern[str]:
    """Rows ``id {k1=INT k2=INT ...}`` with ``keys`` in this order, one space between."""
    return re.compile(r"(?:\s*" + _INT + r"\s*\{" + " ".join(k + "=" + _INT for k in keys) + r"\})*", re.A)


# Rows as XLA prints them (keys in its order, one space between): many rows in one match. Every
# row these take, the careful readers below take the same way; they go on where these stop.
# (a name row is taken only when neither a comment nor a '"' follows it: the careful reader
# reads a comment between a row's id and its string, and a string right after an id)
_NAME_ROWS = re.compile(r"(?:\s*" + _INT + r'\s*(?:"[^"\\]*(?:\\.[^"\\]*)*")?(?!\s*["/]))*', re.S | re.A)
_FAST_ROWS: dict[str, re.Pattern[str]] = {
    "FileNames": _NAME_ROWS, "FunctionNames": _NAME_ROWS,
    "FileLocations": _attribute_rows(("file_name_id", "function_name_id", "line", "end_line", "column",
                                      "end_column")),
    "StackFrames": _attribute_rows(("file_location_id", "parent_frame_id")),
}


_ROW_READERS: dict[str, Callable[[Cursor], None]] = {
    "FileNames": _string_row, "FunctionNames": _string_row,
    "FileLocations": _attribute_row(_LOCATION_KEYS), "StackFrames": _attribute_row(_FRAME_KEYS),
}


def read_stack_frame_tables(cur: Cursor) -> bool:
    """Read the four tables if the text at ``cur`` starts with them; False (nothing read) if not."""
    if not _at_word(cur, SECTIONS[0]):
        return False
    for section in SECTIONS:
        if not _at_word(cur, section):
            raise cur.error(f"the {section} table (stack-frame tables come in the order "
                            f"{', '.join(SECTIONS)})")
        rows = _FAST_ROWS[section].match(cur.text, cur.pos + len(section))
        cur.pos = rows.end() if rows else cur.pos + len(section)
        while cur.try_integer() is not None:
            _ROW_READERS[section](cur)
    return True
