"""gpu2 conformance checks (see ``tests/gpu/gpu2/__init__.py``): the Gluon encodings.

Each record's ``layout`` dict (Gluon's class name as ``kind``, its constructor arguments by
Gluon's field names) is built through ``tensorlayout.triton`` by a table from kind to class;
the linear layout for ``shape`` must equal Triton 3.9's (bases per in dim, out dims, text), and
where Triton refused or aborted a typed error must come. Padded-shared layouts, which Triton
refuses, are checked through their offsets.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from tensorlayout import triton as tt
from tensorlayout.errors import TensorLayoutError

#: Gluon class name -> the tensorlayout class of the same name and fields
CLASSES: dict[str, Any] = {
    name: getattr(tt, name) for name in (
        "BlockedLayout", "NVMMADistributedLayout", "DotOperandLayout", "SliceLayout", "SwizzledSharedLayout",
        "NVMMASharedLayout", "SharedLinearLayout", "PaddedSharedLayout", "AMDMFMALayout", "AMDWMMALayout",
        "TensorMemoryLayout", "TensorMemoryScalesLayout")
}


def build(spec: dict[str, Any]) -> Any:
    """The layout object a record's layout dict describes (nested ``parent`` dicts built first)."""
    args = dict(spec)
    cls = CLASSES[args.pop("kind")]
    if isinstance(args.get("parent"), dict):
        args["parent"] = build(args["parent"])
    return cls(**args)


def _expected(record: dict[str, Any]) -> tt.LinearLayout:
    ll = record["linear_layout"]
    names, sizes = [n for n, _ in ll["out_dims"]], [s for _, s in ll["out_dims"]]
    return tt.LinearLayout.from_bases(ll["in_dims"], names, sizes, require_surjective=False)


def check_linear_layout(record: dict[str, Any]) -> None:
    """The record's linear layout, or a typed error where Triton refused."""
    layout = build(record["layout"])
    if "error" in record:
        with pytest.raises(TensorLayoutError, match=r"\w"):
            layout.to_linear_layout(record["shape"])
        return
    got = layout.to_linear_layout(record["shape"])
    want = record["linear_layout"]
    assert got.bases == [(n, [list(v) for v in vs]) for n, vs in want["in_dims"]]
    assert got.out_dims == [tuple(d) for d in want["out_dims"]]
    assert str(got) == want["text"]
    assert got == _expected(record)


def check_shared_linear(record: dict[str, Any]) -> None:
    """Also the alignment Triton reports with the layout."""
    check_linear_layout(record)
    if "linear_layout" in record:
        assert build(record["layout"]).alignment == record["linear_layout"]["alignment"]


def check_padded_shared(record: dict[str, Any]) -> None:
    """Triton aborts (no linear layout): a typed error; ``with_identity_for`` resolves to the
    recorded offset bases; offsets follow the definition (unpadded order, padding after intervals)."""
    call = record["with_identity_for"]
    pairs, shape, order = call["interval_padding_pairs"], call["shape"], call["order"]
    layout = tt.PaddedSharedLayout.with_identity_for(pairs, shape, order)
    assert layout == build(record["layout"])
    assert record.get("process_aborted") and "no linear layout" in record["error"]
    with pytest.raises(TensorLayoutError, match="no linear layout"):
        layout.to_linear_layout(record["shape"])
    linear = layout.linear_component()
    names = linear.get_out_dim_names()
    offsets = []
    for o in range(linear.get_in_dim_size("offset")):
        coords = linear.apply({"offset": o, "block": 0})
        offsets.append(layout.offset([coords[n] for n in names]))
    pads = [0] * len(offsets)
    for o in range(1, len(offsets)):  # walk the unpadded order: padding after each full interval
        pads[o] = pads[o - 1] + sum(p for i, p in layout.interval_padding_pairs if o % i == 0)
    assert offsets == [o + p for o, p in enumerate(pads)]


FAMILY_KINDS = {
    "triton_slice": ["SliceLayout"],
    "triton_shared_linear": ["SharedLinearLayout"],
    "triton_amd_mfma": ["AMDMFMALayout", "DotOperandLayout"],
    "triton_amd_wmma": ["AMDWMMALayout", "DotOperandLayout"],
    "triton_tensor_memory": ["TensorMemoryLayout", "TensorMemoryScalesLayout"],
}

HANDLERS: dict[tuple[str, str], Callable[[dict[str, Any]], None]] = {
    **{(family, kind): check_linear_layout for family, kinds in FAMILY_KINDS.items() for kind in kinds},
    ("triton_shared_linear", "SharedLinearLayout"): check_shared_linear,
    ("triton_padded_shared", "PaddedSharedLayout"): check_padded_shared,
}
