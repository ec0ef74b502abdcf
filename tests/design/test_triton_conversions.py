"""Every ``triton_convert_layout`` record of ``gpu2_cases.json`` (what Triton 3.9 compiled for
``cuda:90``: scratch bytes and PTX instruction counts) against
:func:`tensorlayout.design.triton_convert_layout`.

Dispatch is a table keyed on the record's kind (its ``kind``, else its family); an unknown kind
fails, naming itself. Known differences are named by rule in ``UNMODELLED`` with their reason.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from tensorlayout.design import triton_convert_layout
from tensorlayout.errors import LayoutError
from tests.conftest import DATA
from tests.gpu.gpu2.gluon import build

FAMILY = "triton_convert_layout"
RECORDS: list[dict[str, Any]] = json.loads((DATA / "gpu2_cases.json").read_text())["families"][FAMILY]

#: PTX ops the model does not predict, and why: the byte permutes that pack 8-bit values into
#: 32-bit words come from LLVM's lowering of vector inserts/extracts (instruction selection),
#: not from the layout conversion's data path; every other count is compared exactly.
UNMODELLED = {
    "prmt.b32": "8-bit packing chosen by LLVM's instruction selection, not by the conversion's lowering",
}


def predict(record: dict[str, Any]) -> Any:
    """The conversion predicted for a record's layouts, shape, dtype and warps."""
    return triton_convert_layout(build(record["src"]), build(record["dst"]), record["shape"],
                                 record["dtype"], record["num_warps"])


def check_convert(record: dict[str, Any]) -> None:
    """Scratch bytes and every modelled PTX count equal Triton's; the convert survives in TTGIR
    (Gluon runs no layout-removal pass: even a no-op convert stays, and lowers to nothing); the
    shared layout is a bijection and the instructions move every register."""
    got = predict(record)
    assert got.scratch_bytes == record["shared_bytes"]
    want = {op: n for op, n in record["ptx_op_counts"].items() if op not in UNMODELLED}
    assert dict(got.ptx_op_counts) == want
    assert record["convert_kept"]
    if got.shared is not None:
        smem = got.shared.layout
        assert smem.is_invertible()
        for side, ll in ((got.shared.store, got.src), (got.shared.load, got.dst)):
            distinct = sum(1 for b in ll.flattened_bases("register") if b)
            assert side.registers * got.shared.rounds == 1 << distinct
            assert side.per_round * side.vector_bits == side.registers * max(got.bitwidth, 8)


#: Record kind -> check.
CHECKS: dict[str, Callable[[dict[str, Any]], None]] = {FAMILY: check_convert}


def kind_of(record: dict[str, Any]) -> str:
    """A record's dispatch kind: its ``kind``, else the family."""
    return str(record.get("kind", FAMILY))


@pytest.mark.parametrize("record", RECORDS, ids=[r["id"] for r in RECORDS])
def test_record(record: dict[str, Any]) -> None:
    kind = kind_of(record)
    if kind not in CHECKS:
        raise AssertionError(f"no check for {FAMILY} kind {kind!r}: add one to CHECKS")
    CHECKS[kind](record)


def test_unmodelled_ops_are_byte_packing_only() -> None:
    """The only unmodelled counts are byte permutes, and only for 8-bit elements."""
    for record in RECORDS:
        extra = set(record["ptx_op_counts"]) & set(UNMODELLED)
        assert not extra or record["dtype"] == "i8", record["id"]


def test_every_record_is_checked() -> None:
    assert len(RECORDS) >= 36
    assert {kind_of(r) for r in RECORDS} <= set(CHECKS)


def test_same_layout_moves_nothing() -> None:
    rec = RECORDS[0]
    got = triton_convert_layout(build(rec["src"]), build(rec["src"]), rec["shape"], rec["dtype"])
    assert got.path == "none" and got.scratch_bytes == 0 and not got.ptx_op_counts and got.is_free


def test_bad_input_is_a_typed_error() -> None:
    rec = RECORDS[0]
    with pytest.raises(LayoutError, match="unknown element type"):
        triton_convert_layout(build(rec["src"]), build(rec["dst"]), rec["shape"], "f7")
    with pytest.raises(LayoutError, match="num_warps=8"):
        triton_convert_layout(build(rec["src"]), build(rec["dst"]), rec["shape"], "f16", num_warps=8)
