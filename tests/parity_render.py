"""Render tests/data/parity.tsv (the API parity table) as docs/parity.md.

Run ``python tests/parity_render.py`` to rewrite docs/parity.md; tests/test_parity.py checks the file
is current.
"""

from __future__ import annotations

import csv
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TABLE = ROOT / "tests" / "data" / "parity.tsv"
DOC = ROOT / "docs" / "parity.md"
ANCHORS = {"xla": "XLA", "cute": "CuTe", "tla": "CATLASS TLA"}
STATUSES = ("counterpart", "n/a", "missing")
COLUMNS = ("anchor", "header", "cpp_name", "counterpart", "status", "note")


def read_rows(path: Path = TABLE) -> list[dict[str, str]]:
    """Rows of the parity table as dicts keyed by :data:`COLUMNS`."""
    with path.open(newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh, delimiter="\t"))


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def _code(text: str) -> str:
    return f"`{text}`" if text else ""


def _summary(rows: list[dict[str, str]]) -> list[str]:
    counts = Counter((r["anchor"], r["status"]) for r in rows)
    lines = ["| anchor | " + " | ".join(STATUSES) + " |", "|---|" + "---|" * len(STATUSES)]
    for key, label in ANCHORS.items():
        lines.append(f"| {label} | " + " | ".join(str(counts[key, s]) for s in STATUSES) + " |")
    return lines


def render(rows: list[dict[str, str]]) -> str:
    """The Markdown page: a summary of counts, then one table per header, in table order."""
    out = [
        "# API parity with XLA, CuTe and CATLASS TLA",
        "",
        "Generated from `tests/data/parity.tsv` by `tests/parity_render.py`; do not edit by hand.",
        "Status `counterpart`: the tensorlayout function does what the anchor's does (the note gives",
        "the option or difference); `n/a`: does not apply (reason given); `missing`: not yet written",
        "(the path is the name it will have).",
        "",
        *_summary(rows),
    ]
    header = None
    for r in rows:
        if r["header"] != header:
            header = r["header"]
            out += ["", f"## {ANCHORS[r['anchor']]}: `{header}`", "",
                    "| C++ | tensorlayout | status | note |", "|---|---|---|---|"]
        out.append(f"| {_code(_cell(r['cpp_name']))} | {_code(r['counterpart'])} | {r['status']} "
                   f"| {_cell(r['note'])} |")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    DOC.parent.mkdir(exist_ok=True)
    DOC.write_text(render(read_rows()), encoding="utf-8")
