"""MkDocs hook: a line `<!-- tensorlayout-help: show -->` becomes the text of
`tensorlayout show --help` (an empty name: the top-level help), so the CLI reference is the
parser's own help at build time and cannot drift from it."""

from __future__ import annotations

import os
import re
from typing import Any

from tensorlayout.cli import build_parser, plain

MARKER = re.compile(r"^<!-- tensorlayout-help: ?(\S*) -->$", re.M)
WIDTH = "100"  # argparse wraps at $COLUMNS


def help_text(command: str) -> str:
    """`tensorlayout [COMMAND] --help`, wrapped at `WIDTH` columns."""
    os.environ["COLUMNS"] = WIDTH
    parser = build_parser()
    if not command:
        return plain(parser.format_help())
    sub = next(a for a in parser._actions if a.dest == "command")
    return plain(sub.choices[command].format_help())  # type: ignore[index]


def on_page_markdown(markdown: str, **kwargs: Any) -> str:
    return MARKER.sub(lambda m: "```text\n" + help_text(m.group(1)).rstrip() + "\n```", markdown)
