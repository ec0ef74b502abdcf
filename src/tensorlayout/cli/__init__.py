"""The `tensorlayout` command: a thin layer over the public API.

Each subcommand lives in its own module with `register(subparsers)`. Every failure prints
one line on stderr, `tensorlayout: <ErrorKind>: <message>`, and exits 2: a library error
names its class (ParseError, LayoutError, ...), a bad command line is a UsageError, an
unreadable file an OSError. A bug prints `InternalError` and exits 3 (set
TENSORLAYOUT_TRACEBACK=1 to see the traceback instead).
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections.abc import Sequence
from importlib import import_module

from tensorlayout import __version__
from tensorlayout.cli._commands import HELP, MODULES
from tensorlayout.cli._io import UsageError
from tensorlayout.errors import TensorLayoutError

__all__ = ["build_parser", "main", "plain", "report"]

#: Exit codes: bad input (any notation, any command) and a bug in tensorlayout.
EXIT_BAD_INPUT = 2
EXIT_INTERNAL = 3


#: reST markup in help texts (patterns compiled by ``re`` when help is first printed, not at start-up)
_REST_ROLE = r":(?:func|class|mod|meth|attr|data):`~?([^`]+)`"
_REST_LITERAL = r"``([^`]+)``"


def plain(text: str) -> str:
    """Help text without reST markup: ``x`` prints as 'x', :func:`f` as f.

    >>> plain("``--physical`` uses :func:`~tensorlayout.hlo.physical`")
    "'--physical' uses tensorlayout.hlo.physical"
    """
    return re.sub(_REST_LITERAL, r"'\1'", re.sub(_REST_ROLE, r"\1", text))


class _Parser(argparse.ArgumentParser):
    """argparse whose usage errors are UsageErrors (one line in the common format) and whose
    help is plain text whatever the docstrings it was given."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(f"{message} (see '{self.prog} --help')")

    def format_help(self) -> str:
        return plain(super().format_help())


def _wanted(argv: Sequence[str] | None) -> tuple[str, ...]:
    """The commands whose modules a command line needs: only its own when it names one (start-up
    imports what that command uses, not the whole package), every one for the whole parser
    (``argv`` None), else none: help, version and usage errors need only :data:`HELP`.

    >>> _wanted(["convert-layout", "x"]), _wanted(["--help"]), len(_wanted(None)) == len(MODULES)
    (('convert-layout',), (), True)
    """
    if argv is None:
        return tuple(MODULES)
    first = next(iter(argv), None)
    return (first,) if first in MODULES else ()


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The parser of the whole command line (every subcommand registered); given the command
    line ``argv``, the parser of the subcommand it names only (one naming none gets each command
    with its one-line help, enough for `--help`, `--version` and usage errors)."""
    parser = _Parser(
        prog="tensorlayout",
        description="Where does element (i, j, ...) of a tensor live? "
        "Read, check, convert and draw XLA, CuTe/TLA layouts and HLO indexing maps.",
    )
    parser.add_argument("--version", action="version", version=f"tensorlayout {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    wanted = _wanted(argv)
    for name in MODULES:
        if name not in wanted:
            if argv is not None and not wanted:
                sub.add_parser(name, help=HELP[name])
            continue
        try:
            module = import_module(f"tensorlayout.cli.{MODULES[name]}")
        except ModuleNotFoundError as exc:  # a pillar not built yet: keep the others usable
            if exc.name and exc.name.startswith("tensorlayout"):
                continue
            raise
        module.register(sub)
    return parser


def report(err: BaseException) -> str:
    """The one line printed for an error: its kind and its message on one line (a parse
    error names line, column and the offending text).

    >>> from tensorlayout.errors import ParseError
    >>> report(ParseError("f32[3,5", 7, "',' or ']'"))
    "tensorlayout: ParseError: expected ',' or ']' at line 1, column 8, but got end of input"
    """
    if isinstance(err, OSError) and err.strerror:
        text = f"{err.strerror}: {err.filename}" if err.filename else err.strerror
    else:
        text = str(err)
    message = " ".join(part.strip() for part in text.splitlines() if part.strip())
    kind = type(err).__name__ if isinstance(err, (TensorLayoutError, OSError)) else "InternalError"
    if kind == "InternalError":
        message = f"{type(err).__name__}: {message} (a bug in tensorlayout; please report it)"
    return f"tensorlayout: {kind}: {message}"


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code (0 ok, 1 a failed --verify, 2 bad input,
    3 a bug)."""
    try:
        if argv is None:
            argv = sys.argv[1:]
        args = build_parser(argv).parse_args(argv)
        return int(args.func(args) or 0)
    except (TensorLayoutError, OSError, MemoryError) as err:
        if isinstance(err, BrokenPipeError):  # e.g. piped into `head`
            return 0
        print(report(err) if not isinstance(err, MemoryError) else
              "tensorlayout: MemoryError: out of memory (the input is too large for this command)",
              file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        return 130
    except Exception as err:
        if os.environ.get("TENSORLAYOUT_TRACEBACK"):
            raise
        print(report(err), file=sys.stderr)
        return EXIT_INTERNAL


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
