"""Gluon layout dicts (as the conformance JSON stores them) to tensorlayout.triton objects."""

from __future__ import annotations

from typing import Any

from tensorlayout import triton as tt

_KINDS: dict[str, Any] = {
    "BlockedLayout": tt.BlockedLayout,
    "NVMMADistributedLayout": tt.NVMMADistributedLayout,
    "SwizzledSharedLayout": tt.SwizzledSharedLayout,
    "NVMMASharedLayout": tt.NVMMASharedLayout,
}


def build(spec: dict[str, Any]) -> Any:
    """The tensorlayout encoding for one JSON layout spec."""
    spec = dict(spec)
    kind = spec.pop("kind")
    if kind == "DotOperandLayout":
        return tt.DotOperandLayout(spec["operand_index"], build(spec["parent"]), spec["k_width"])
    return _KINDS[kind](**spec)


def layout_of(record: dict[str, Any]) -> tt.LinearLayout:
    """The LinearLayout a JSON record (in_dims/out_dims) describes."""
    names = [n for n, _ in record["out_dims"]]
    sizes = [s for _, s in record["out_dims"]]
    return tt.LinearLayout.from_bases(record["in_dims"], names, sizes, require_surjective=False)


def make(spec: dict[str, Any]) -> tt.LinearLayout:
    """A from_bases call recorded in linear_layout_ops (sizes None: inferred)."""
    if spec["out_dim_sizes"] is None:
        return tt.LinearLayout.from_bases(spec["bases"], spec["out_dim_names"])
    return tt.LinearLayout.from_bases(spec["bases"], spec["out_dim_names"], spec["out_dim_sizes"],
                                      spec["require_surjective"])
