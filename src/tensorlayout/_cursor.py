"""A tiny shared cursor for the library's recursive-descent parsers.

Every notation (XLA shapes, CuTe layouts, indexing maps, HLO modules) parses with a
:class:`Cursor`, so all parse errors carry the same position information.

>>> c = Cursor("  (4, 2)")
>>> c.expect("(")
>>> c.integer()
4
>>> c.accept(",")
True
>>> c.integer(), c.accept(")"), c.at_end()
(2, True, True)

Digits and whitespace are ASCII only (as XLA's lexer reads them); integer literals longer than
:data:`MAX_INTEGER_DIGITS` digits and nesting deeper than :data:`MAX_DEPTH` raise a
:class:`~tensorlayout.errors.ParseError` at the offending position.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TypeVar

from tensorlayout.errors import ParseError

__all__ = ["MAX_DEPTH", "MAX_INTEGER_DIGITS", "Cursor", "parsed_as", "read_braced", "read_whole"]

#: Deepest nesting (tuples, parentheses) a parser reads before it refuses the text.
MAX_DEPTH = 64
#: Longest integer literal read; no notation here needs more than 64-bit values, and Python
#: refuses to convert literals of over 4,300 digits.
MAX_INTEGER_DIGITS = 1000

_INT = re.compile(r"-?[0-9]+")
_UINT = re.compile(r"[0-9]+")
#: The whitespace C's ``isspace`` knows in the "C" locale (XLA's lexer); no Unicode spaces.
#: What skip() moves past: ASCII whitespace; and ``/*...*/`` (closed) and ``//...`` comments.
_SPACES = re.compile(r"[ \t\n\r\v\f]*")
_SPACES_AND_COMMENTS = re.compile(r"(?:[ \t\n\r\v\f]+|/\*.*?\*/|//[^\n]*)*", re.S)
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-]*")


class Cursor:
    """A position in a text; skips whitespace (and, if asked, ``/*…*/`` comments)."""

    __slots__ = ("comments", "depth", "max_depth", "pos", "text")

    def __init__(self, text: str, pos: int = 0, *, comments: bool = False,
                 max_depth: int = MAX_DEPTH) -> None:
        self.text = text
        self.pos = pos
        self.comments = comments
        self.depth = 0
        self.max_depth = max_depth

    @contextmanager
    def nested(self, what: str) -> Iterator[None]:
        """Count one level of nesting while the body reads ``what``; refuse past ``max_depth``.

        >>> c = Cursor("((1))", max_depth=1)
        >>> with c.nested("a tuple"):  # doctest: +ELLIPSIS
        ...     with c.nested("a tuple"):
        ...         pass
        Traceback (most recent call last):
        tensorlayout.errors.ParseError: expected a tuple nested at most 1 deep at line 1, ...
        """
        if self.depth >= self.max_depth:
            raise self.error(f"{what} nested at most {self.max_depth} deep")
        self.depth += 1
        try:
            yield
        finally:
            self.depth -= 1

    def skip(self) -> None:
        """Move past whitespace (and comments when enabled); a ``/*`` never closed is an error."""
        if not self.comments:
            self.pos = _SPACES.match(self.text, self.pos).end()  # type: ignore[union-attr]
            return
        self.pos = _SPACES_AND_COMMENTS.match(self.text, self.pos).end()  # type: ignore[union-attr]
        if self.text.startswith("/*", self.pos):
            raise self.error("'*/' to close the comment")

    def at_end(self) -> bool:
        self.skip()
        return self.pos >= len(self.text)

    def peek(self, literal: str) -> bool:
        """True if the next token starts with ``literal`` (does not consume)."""
        self.skip()
        return self.text.startswith(literal, self.pos)

    def accept(self, literal: str) -> bool:
        """Consume ``literal`` if it comes next."""
        if self.peek(literal):
            self.pos += len(literal)
            return True
        return False

    def expect(self, literal: str, what: str | None = None) -> None:
        """Consume ``literal`` or raise a :class:`ParseError` naming it."""
        if not self.accept(literal):
            raise self.error(what or repr(literal))

    def integer(self, what: str = "an integer") -> int:
        """Read ``-?[0-9]+`` (ASCII digits, at most :data:`MAX_INTEGER_DIGITS` of them)."""
        value = self.try_integer()
        if value is None:
            raise self.error(what)
        return value

    def try_integer(self) -> int | None:
        """Read an integer if one comes next, else None (too long a literal is an error)."""
        self.skip()
        m = _INT.match(self.text, self.pos)
        return None if m is None else self._take_integer(m)

    def unsigned(self, what: str = "a non-negative integer") -> int:
        """Read ``[0-9]+`` (ASCII digits, at most :data:`MAX_INTEGER_DIGITS` of them).

        >>> Cursor(" 12)").unsigned()
        12
        """
        self.skip()
        m = _UINT.match(self.text, self.pos)
        if m is None:
            raise self.error(what)
        return self._take_integer(m)

    def _take_integer(self, m: re.Match[str]) -> int:
        """The literal ``m`` matched here, consumed; too long a literal is an error."""
        digits = len(m.group()) - m.group().startswith("-")
        if digits > MAX_INTEGER_DIGITS:
            raise self.error(f"an integer of at most {MAX_INTEGER_DIGITS} digits "
                             f"(this one has {digits})")
        self.pos = m.end()
        return int(m.group())

    def identifier(self, what: str = "an identifier", pattern: re.Pattern[str] = _IDENT) -> str:
        self.skip()
        m = pattern.match(self.text, self.pos)
        if not m:
            raise self.error(what)
        self.pos = m.end()
        return m.group()

    def match(self, pattern: re.Pattern[str]) -> re.Match[str] | None:
        """Consume and return a regex match at the cursor, or None."""
        self.skip()
        m = pattern.match(self.text, self.pos)
        if m:
            self.pos = m.end()
        return m

    def expect_end(self, what: str = "end of input") -> None:
        if not self.at_end():
            raise self.error(what)

    def error(
        self, expected: str, *, at: int | None = None, context: str | None = None
    ) -> ParseError:
        """A ParseError at the cursor (or at ``at``) saying what was expected."""
        return ParseError(self.text, self.pos if at is None else at, expected, context=context)


_T = TypeVar("_T")


def read_whole(text: str, read: Callable[[Cursor], _T], end: str = "end of input", *,
               comments: bool = False) -> _T:
    """Run the reader ``read`` over all of ``text``: a ParseError unless it reads everything.

    >>> read_whole("42", lambda cur: cur.integer())
    42
    """
    cur = Cursor(text, comments=comments)
    out = read(cur)
    cur.expect_end(end)
    return out


def parsed_as(out: object, kind: type[_T], text: str, expected: str) -> _T:
    """``out`` (what a general parser read from ``text``) when it is a ``kind``; otherwise a
    ParseError at the start of ``text`` saying ``expected``.

    >>> parsed_as(42, int, "42", "an integer")
    42
    """
    if not isinstance(out, kind):
        raise ParseError(text, 0, expected)
    return out


def read_braced(cur: Cursor, read: Callable[[Cursor], _T], start: str, between: str,
                brackets: str = "{}") -> list[_T]:
    """``{item, item, ...}`` (``{}`` is empty; no comma after the last item; other ``brackets``
    such as ``"()"`` likewise), each item read by ``read``; ``start`` and ``between`` say what was
    expected where the opening bracket or a ``,`` is missing.

    >>> read_braced(Cursor("{1, 2}"), Cursor.integer, "'{' to start a list", "',' or '}' in a list")
    [1, 2]
    """
    cur.expect(brackets[0], start)
    items: list[_T] = []
    if not cur.accept(brackets[1]):
        while True:
            items.append(read(cur))
            if cur.accept(brackets[1]):
                break
            cur.expect(",", between)
    return items
