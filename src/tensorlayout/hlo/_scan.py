"""Bracket-balanced scanning of HLO attribute values and constant literals.

Values the analysis does not read (metadata, backend configs, shardings) are only skipped, so
the parser needs their end, not their meaning: strings (which, as in XLA, may span lines),
``/*…*/`` comments and nested
``[]{}()`` are matched; a regex handles the common one-line forms first.

>>> scan_value('x={a, "}"}, y=1', 2)
10
"""

from __future__ import annotations

import re

from tensorlayout.errors import ParseError

__all__ = ["json_dict_end", "literal_end", "scan_value", "string_or_json_dict_end"]

# Attribute values that need no bracket matching: a bare token, a one-line ``{...}`` without
# nested brackets outside its strings, or a string. Everything else takes scan_value's stack.
# A string, "unrolled": runs of plain characters between escapes (one regex step per run, and
# no two ways to match a text, so no backtracking blow-up on a failed match).
_STRING = r'"[^"\\]*(?:\\.[^"\\]*)*"'
_SIMPLE_VALUE = re.compile(
    r'[^\s,{}()\[\]"/]+(?=[\s,})\]]|\Z)'
    r'|\{[^{}"\n/\[\]()]*\}'
    r'|\{[^{}"\\\n\[\]()]*(?:' + _STRING + r'[^{}"\\\n\[\]()]*)*\}'
    r"|" + _STRING,
    re.A,
)
_SCAN = re.compile(r'"(?:[^"\\]|\\.)*"|[\[{(]|[\]})]|,|\s+|/\*.*?\*/|[^\[\]{}()"\s,]+', re.S | re.A)
_CLOSER = {"[": "]", "{": "}", "(": ")"}
# What may follow a top-level ``]`` inside one value: an iota list goes on (``[2,2]<=[4]T(1,0)``).
_AFTER_SQUARE = re.compile(r"<=|T\(")
_JSON_DICT = re.compile(r'"(?:[^"\\]|\\.)*"|[{}]|[^"{}]+', re.S)
#: ``_STRING`` with possessive runs: a failed match gives up at once instead of backtracking
_STRING_POSSESSIVE = r'"[^"\\]*+(?:\\.[^"\\]*+)*+"'


def _json_dict_pattern(depth: int, string: str = _STRING_POSSESSIVE) -> str:
    """A JSON dict with dicts nested in it at most ``depth`` levels deep, strings unrolled; every
    run possessive (no text matches two ways, so this only saves the backtracking)."""
    inner = string if depth == 0 else "(?:" + string + "|" + _json_dict_pattern(depth - 1, string) + ")"
    return r'\{[^{}"]*+(?:' + inner + r'[^{}"]*+)*+\}'


# a JSON dict nested at most four deep, in one match (the loop below reads any depth)
_JSON_DICT_4 = re.compile(_json_dict_pattern(3), re.S)
#: the same for strings without escapes (1.5-2.5x faster); where its match holds no backslash,
#: the two match the same text
_JSON_DICT_4_PLAIN = re.compile(_json_dict_pattern(3, '"[^"]*+"'), re.S)
_QUOTED = re.compile(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'', re.S)


def scan_value(text: str, pos: int) -> int:
    """End of the attribute value starting at ``pos``: balanced brackets, strings, bare tokens.

    >>> scan_value('backend_config={"a":{"b":[1,2]}}, x=1', 15)
    32
    """
    m = _SIMPLE_VALUE.match(text, pos)
    if m:
        return m.end()
    stack: list[str] = []
    start = pos
    while True:
        m = _SCAN.match(text, pos)
        if m is None:
            if pos >= len(text):
                if stack:
                    raise ParseError(text, pos, f"{stack[-1]!r} to close the attribute value")
                break
            raise ParseError(text, pos, "a closing '\"' for the string")
        tok = m.group()
        c = tok[0]
        if c in "[{(":
            stack.append(_CLOSER[c])
        elif c in "]})":
            if not stack:
                break
            if stack.pop() != c:
                raise ParseError(text, pos, "a matching closing bracket")
            if not stack and not (c == "]" and _AFTER_SQUARE.match(text, m.end())):
                return m.end()  # the value is whole: what follows (`}b = ...`) is the next token
        elif (c == "," or c.isspace()) and not stack:
            break
        pos = m.end()
    if pos == start:
        raise ParseError(text, pos, "an attribute value")
    return pos


def literal_end(text: str, pos: int) -> int:
    """End of a constant payload (balanced brackets) that starts at ``pos``: its closing ``)``.

    >>> literal_end("constant({1, 2}), x=1", 9)
    15
    """
    stack: list[str] = []
    while True:
        m = _SCAN.match(text, pos)
        if m is None:
            raise ParseError(text, pos, "')' to end the constant literal")
        c = m.group()[0]
        if c in "[{(":
            stack.append(_CLOSER[c])
        elif c in "]})":
            if not stack:
                return pos
            if stack.pop() != c:
                raise ParseError(text, pos, "a matching closing bracket in the literal")
        pos = m.end()


def json_dict_end(text: str, pos: int) -> int:
    """End of the ``{...}`` at ``pos`` as XLA's lexer reads a JSON dict: only braces outside
    double-quoted strings count (brackets, single quotes and comments are plain text).

    >>> json_dict_end('{"a":[1}, x=1', 0)
    8
    """
    m = _JSON_DICT_4_PLAIN.match(text, pos)
    if m and text.find("\\", pos, m.end()) < 0:
        return m.end()
    m = _JSON_DICT_4.match(text, pos)
    if m:
        return m.end()
    depth, at = 0, pos
    while at < len(text):
        m = _JSON_DICT.match(text, at)
        if m is None:  # a '"' that no closing '"' ends
            break
        tok, at = m.group(), m.end()
        if tok in "{}":
            depth += 1 if tok == "{" else -1
            if depth == 0:
                return at
    raise ParseError(text, pos, "a JSON dict (braces closed outside closed \"strings\")")


def string_or_json_dict_end(text: str, pos: int) -> int:
    """End of a value XLA reads as a string (``"..."`` or ``'...'``) or a JSON dict
    (``backend_config``).

    >>> string_or_json_dict_end("'x', y=1", 0)
    3
    """
    if text.startswith("{", pos):
        return json_dict_end(text, pos)
    m = _QUOTED.match(text, pos)
    if m is None:
        raise ParseError(text, pos, "a string or a JSON dict")
    return m.end()
