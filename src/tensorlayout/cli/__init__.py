"""The ``tensorlayout`` command: a thin layer over the public API.

Each subcommand lives in its own module with ``register(subparsers)``; errors from the
library become one line on stderr and exit code 2.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from importlib import import_module

from tensorlayout.errors import TensorLayoutError

__all__ = ["main"]

# Subcommand modules, in the order ``--help`` lists them.
_COMMANDS = ("show", "simplify", "maps", "render", "padding")


class _Parser(argparse.ArgumentParser):
    """argparse that exits 2 with one line (argparse's own convention) on usage errors."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"{self.prog}: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="tensorlayout",
        description="Where does element (i, j, ...) of a tensor live? "
        "Read, check, convert and draw XLA, CuTe/TLA layouts and HLO indexing maps.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    for name in _COMMANDS:
        try:
            module = import_module(f"tensorlayout.cli.{name}")
        except ModuleNotFoundError as exc:  # a pillar not built yet: keep the others usable
            if exc.name and exc.name.startswith("tensorlayout"):
                continue
            raise
        module.register(sub)
    return parser


def report(err: TensorLayoutError) -> str:
    """The one line printed for a library error (a parse error names line, column and the
    offending text; ``ParseError.caret()`` draws it, for callers that want a picture).

    >>> from tensorlayout.errors import ParseError
    >>> report(ParseError("f32[3,5", 7, "',' or ']'"))
    "tensorlayout: ParseError: expected ',' or ']' at line 1, column 8, but got end of input"
    """
    message = " ".join(part.strip() for part in str(err).splitlines() if part.strip())
    return f"tensorlayout: {type(err).__name__}: {message}"


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code (0 ok, 2 bad input)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except TensorLayoutError as err:
        print(report(err), file=sys.stderr)
        return 2
    except BrokenPipeError:  # e.g. piped into `head`
        return 0
    except MemoryError:
        print("tensorlayout: error: out of memory (the input is too large for this command)",
              file=sys.stderr)
        return 2
    except OSError as err:  # unreadable input file and the like
        print(f"tensorlayout: error: {err.strerror or err}: {err.filename or ''}".rstrip(": "),
              file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
