"""Griffe extension: the package's reST-flavoured docstrings read as Markdown.

Doctest examples (`>>>` lines and their output) become `pycon` code blocks, reST literals
(double backquotes) and roles (`:func:`, `:class:`, ...) become code spans; the docstrings
themselves stay as they are (they are also the doctests the test suite runs).
"""

from __future__ import annotations

import re
from typing import Any

import griffe

ROLE = re.compile(r":(?:func|class|mod|meth|attr|data|obj|exc):`~?([^`]+)`")
LITERAL = re.compile(r"``([^`]+)``")


def _fence_doctests(text: str) -> str:
    out: list[str] = []
    inside = False
    for line in text.splitlines():
        starts = line.lstrip().startswith(">>>")
        if starts and not inside:
            out.append("```pycon")
            inside = True
        elif inside and not line.strip():
            out.append("```")
            inside = False
        out.append(line.strip() if inside else line)
    if inside:
        out.append("```")
    return "\n".join(out)


def markdown(text: str) -> str:
    """`text` (a docstring) with doctests fenced and reST markup as code spans."""
    pieces = re.split(r"(```pycon\n.*?\n```)", _fence_doctests(text), flags=re.S)
    return "".join(p if p.startswith("```pycon") else LITERAL.sub(r"`\1`", ROLE.sub(r"`\1`", p))
                   for p in pieces)


class RestToMarkdown(griffe.Extension):
    """Rewrites every docstring griffe loads (see the module docstring)."""

    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = markdown(obj.docstring.value)
