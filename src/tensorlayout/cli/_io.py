"""Command-line plumbing shared by the commands: `-` for stdin and stdout, usage errors.

>>> write_output("-", "hello")
hello
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import BinaryIO

from tensorlayout.errors import ParseError, TensorLayoutError

__all__ = ["STDIO", "UsageError", "binary_stdout", "file_path", "is_folder", "positive_ints", "read_argument",
           "read_text", "write_binary", "write_output"]

#: The argument that means "standard input" (for an input) or "standard output" (for `-o`).
STDIO = "-"


class UsageError(TensorLayoutError):
    """A command line that names no input, or options that do not go together."""


def file_path(name: str | Path) -> Path:
    """``name`` as a path; an empty name (which ``Path`` reads as ``.``) or a NUL character
    (which no file name holds) is a usage error."""
    if not str(name):
        raise UsageError("not a file name: the name is empty")
    if "\0" in str(name):
        raise UsageError(f"not a file name: {str(name)!r} holds a NUL character")
    return Path(name)


def is_folder(target: str) -> bool:
    """Whether the input `target` names a directory (`-`, stdin, does not).

    >>> is_folder("-"), is_folder("/")
    (False, True)
    """
    return target != STDIO and file_path(target).is_dir()


def read_text(source: str | Path) -> str:
    """The UTF-8 text of the file `source`, or of stdin for `-`; other bytes are a ParseError."""
    if str(source) == STDIO:
        stream = getattr(sys.stdin, "buffer", None)  # a text-only stdin (a test's StringIO) is read as is
        if stream is None:
            return sys.stdin.read()
        data = stream.read()
    else:
        data = file_path(source).read_bytes()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        offset = len(data[: err.start].decode("utf-8", errors="replace"))
        raise ParseError(data.decode("utf-8", errors="replace"), offset, "UTF-8 text") from None


def read_argument(text: str | None, what: str) -> str:
    """A command-line argument given inline, or read from stdin when it is `-`."""
    if text is None:
        raise UsageError(f"expected {what} (or '-' to read it from stdin)")
    value = read_text(STDIO).strip() if text == STDIO else text.strip()
    if not value:
        raise UsageError(f"expected {what}, but got empty text")
    return value


def positive_ints(text: str, flag: str, form: str) -> list[int]:
    """``text``'s comma-separated positive integers; otherwise a usage error saying ``flag`` takes ``form``.

    >>> positive_ints("16,16", "--shape", "dims like 16,16")
    [16, 16]
    """
    try:
        parts = [int(p) for p in text.split(",")]
    except ValueError:
        raise UsageError(f"{flag} takes {form}, but got {text!r}") from None
    if min(parts) < 1:
        raise UsageError(f"{flag} takes positive {form}, but got {text!r}")
    return parts


def write_output(path: str, text: str) -> None:
    """Write `text` to the file `path`, or to stdout for `-` (with a final newline)."""
    if path == STDIO:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
    else:
        file_path(path).write_text(text, encoding="utf-8")


def write_binary(path: str, data: bytes) -> None:
    """Write ``data`` (a PNG or PDF) to the file ``path``, or to stdout for `-`; a stdout that
    takes text only (a notebook's, a test's) is a usage error, not a crash."""
    if path != STDIO:
        file_path(path).write_bytes(data)
        return
    stream = binary_stdout()
    stream.write(data)
    stream.flush()


def binary_stdout() -> BinaryIO:
    """The byte stream under stdout; a stdout that takes text only is a usage error."""
    stream = getattr(sys.stdout, "buffer", None)
    if stream is None:
        raise UsageError("this stdout takes text only, not PNG/PDF bytes: write them to a file "
                         "with -o NAME.png (or .pdf)")
    return stream

