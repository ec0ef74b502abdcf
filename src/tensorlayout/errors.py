"""One error family for the whole library.

Every failure on user input raises a :class:`TensorLayoutError` (a ``ValueError``), so
callers can catch one type. Subclasses say which kind of rule was broken.

>>> from tensorlayout.errors import ParseError
>>> err = ParseError("f32[3,5", offset=7, expected="',' or ']'")
>>> print(err)
expected ',' or ']' at line 1, column 8, but got end of input
>>> print(err.caret())
f32[3,5
       ^
"""

from __future__ import annotations

__all__ = [
    "AlgebraError",
    "ArgumentTypeError",
    "HloError",
    "IndexingError",
    "LayoutError",
    "ParseError",
    "TensorLayoutError",
    "UnsupportedError",
    "ValidationError",
]


class TensorLayoutError(ValueError):
    """Base class of every error the library raises on bad input."""


class ParseError(TensorLayoutError):
    """Text that does not follow a notation's grammar.

    Carries the whole ``text``, the 0-based ``offset`` of the problem, the 1-based
    ``line`` and ``column`` derived from it, what was ``expected`` and what was ``found``.
    """

    def __init__(
        self,
        text: str,
        offset: int,
        expected: str,
        found: str | None = None,
        *,
        context: str | None = None,
    ) -> None:
        offset = max(0, min(offset, len(text)))
        self.text = text
        self.offset = offset
        self.expected = expected
        if found is None:
            found = _describe_found(text, offset)
        self.found = found
        self.context = context
        self.line = text.count("\n", 0, offset) + 1
        self.column = offset - (text.rfind("\n", 0, offset) + 1) + 1
        where = f"line {self.line}, column {self.column}"
        msg = f"expected {expected} at {where}, but got {found}"
        if context:
            msg = f"{context}: {msg}"
        super().__init__(msg)

    def caret(self) -> str:
        """The offending source line with a ``^`` under the error position."""
        start = self.text.rfind("\n", 0, self.offset) + 1
        end = self.text.find("\n", self.offset)
        line = self.text[start : end if end >= 0 else len(self.text)]
        return f"{line}\n{' ' * (self.column - 1)}^"


def _describe_found(text: str, offset: int) -> str:
    if offset >= len(text):
        return "end of input"
    snippet = text[offset : offset + 12].split("\n", 1)[0]
    return repr(snippet) if snippet else repr(text[offset])


class LayoutError(TensorLayoutError):
    """A shape or layout that violates a rule (not a permutation, bad tile, padding slot…)."""


ValidationError = LayoutError


class ArgumentTypeError(LayoutError, TypeError):
    """A value of the wrong Python type for a public function (a number where text is read, a
    float where an int goes): a :class:`LayoutError`, and a ``TypeError`` as Python's own
    checks raise, so either ``except`` catches it.

    >>> isinstance(ArgumentTypeError("expected layout text (a str), but got int"), TypeError)
    True
    """


def expect_text(text: object, what: str) -> str:
    """``text`` itself when it is a ``str``; else the :class:`ArgumentTypeError` naming ``what``.

    >>> expect_text(5, "shape text")
    Traceback (most recent call last):
    tensorlayout.errors.ArgumentTypeError: expected shape text (a str), but got int
    """
    if not isinstance(text, str):
        raise ArgumentTypeError(f"expected {what} (a str), but got {type(text).__name__}")
    return text


class AlgebraError(TensorLayoutError):
    """A layout-algebra operation whose admissibility condition fails (CuTe/TLA)."""


class IndexingError(TensorLayoutError):
    """An indexing map or expression that is malformed or used outside its domain."""


class HloError(TensorLayoutError):
    """An HLO module or instruction that is malformed or inconsistent."""


class UnsupportedError(TensorLayoutError):
    """A well-formed input that this library (or the notation asked for) cannot express."""
