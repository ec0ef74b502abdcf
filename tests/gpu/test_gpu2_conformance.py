"""Every record of ``gpu2_cases.json`` (CuTe C++ 4.2 and Triton 3.9 on today's GPU layouts) replayed
through the public API.

Dispatch is a table keyed on ``(family, kind)``: the record's ``kind``, the ``kind`` of its
``layout`` dict, or the family name for families whose records have neither. New records of a
known family and kind run without code changes; an unknown pair fails, naming itself.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from tests.conftest import DATA
from tests.design import test_triton_conversions as conversions
from tests.gpu.gpu2 import cute_atoms, cute_print, gluon, linear

FAMILIES: dict[str, list[dict[str, Any]]] = json.loads((DATA / "gpu2_cases.json").read_text())["families"]

HANDLERS: dict[tuple[str, str], Callable[[dict[str, Any]], None]] = {
    **cute_atoms.HANDLERS, **cute_print.HANDLERS, **gluon.HANDLERS, **linear.HANDLERS,
    **{(conversions.FAMILY, kind): check for kind, check in conversions.CHECKS.items()},
}

#: Families checked elsewhere, with where.
ELSEWHERE: dict[str, str] = {}

def kind_of(family: str, record: dict[str, Any]) -> str:
    """The dispatch kind of a record: its ``kind``, its layout's ``kind``, else the family."""
    if "kind" in record:
        return str(record["kind"])
    layout = record.get("layout")
    if isinstance(layout, dict) and "kind" in layout:
        return str(layout["kind"])
    return family


RECORDS = [(family, record) for family, records in FAMILIES.items()
           if family not in ELSEWHERE for record in records]


@pytest.mark.parametrize(("family", "record"), RECORDS, ids=[f"{f}:{r['id']}" for f, r in RECORDS])
def test_record(family: str, record: dict[str, Any]) -> None:
    key = (family, kind_of(family, record))
    if key not in HANDLERS:
        raise AssertionError(f"no check for family {family!r}, kind {key[1]!r}: add one to a HANDLERS table")
    HANDLERS[key](record)


def test_tables_name_known_families() -> None:
    unknown = {f for f, _ in HANDLERS} - set(FAMILIES)
    assert not unknown, f"HANDLERS name families absent from the data: {sorted(unknown)}"
    assert not set(ELSEWHERE) - set(FAMILIES)
