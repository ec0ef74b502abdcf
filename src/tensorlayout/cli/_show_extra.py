"""`show`'s answers other than the offsets of an XLA, CuTe or TLA layout: Triton text, CuTe's
coordinate layouts, `--coalescing` and `--banks`. `show` loads this module when one of them comes,
so showing a shape loads none of it.

>>> import argparse
>>> from tensorlayout.cli._target import target_from
>>> args = argparse.Namespace(index=["1,1"], offset=None, window=None, tpu=None, as_=None, json=False)
>>> _ = show_coords(target_from("(2,2):(1@0,1@1)"), args)
index (1,1): coordinate (1,1)
"""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING, Any

from tensorlayout._lazy import lazy_modules
from tensorlayout.cli import _triton
from tensorlayout.cli._io import UsageError, read_argument
from tensorlayout.cli._target import Target, target_of
from tensorlayout.errors import TensorLayoutError

if TYPE_CHECKING:
    from tensorlayout.triton import LinearLayout

__all__ = ["show_banks", "show_coalescing", "show_coords", "show_triton"]

#: modules only some of these answers need, loaded when used
_LAZY = {"banks": "tensorlayout.cli._banks", "coalescing": "tensorlayout.gpu.coalescing",
         "tv": "tensorlayout.gpu.tv", "grid": "tensorlayout.cute.grid", "cute": "tensorlayout.cute",
         "locate": "tensorlayout.cli._locate"}
_lazy = lazy_modules(_LAZY)


def show_triton(ll: LinearLayout, args: argparse.Namespace) -> int:
    """Triton text: the layout, its facts and Triton's picture; --as cute/xla converts it."""
    for flag in ("index", "offset", "window", "tpu"):
        if getattr(args, flag):
            raise UsageError(f"--{flag} is for XLA, CuTe and TLA layouts, not Triton text")
    if args.as_:
        if args.as_ not in _triton.NOTATIONS:
            raise UsageError(f"--as {args.as_}: a Triton layout converts to {' or '.join(_triton.NOTATIONS)}")
        text = _triton.converted(ll, args.as_, args.dtype, args.target)
        print(json.dumps({"notation": "triton", "as": args.as_, "text": text}) if args.json else text)
        return 0
    if args.json:
        print(json.dumps({"notation": "triton", "text": str(ll), "in_dims": ll.get_in_dim_names(),
                          "out_dims": [list(d) for d in ll.out_dims], "injective": ll.is_injective(),
                          "surjective": ll.is_surjective()}))
        return 0
    print(_triton.show_text(ll, None, args.hw_view))
    return 0


def show_coords(target: Target, args: argparse.Namespace) -> int:
    """A scaled-basis layout or counting tensor: CuTe's text and each element's coordinate."""
    cute = _lazy("cute")
    lay = target.layout
    assert isinstance(lay, (cute.CoordLayout, cute.CountingTensor))
    for flag in ("offset", "window", "tpu", "as_"):
        if getattr(args, flag):
            raise UsageError(f"--{flag.rstrip('_')} needs offsets: {target.text} maps elements "
                             "to coordinates")
    inner = lay.layout if isinstance(lay, cute.CountingTensor) else lay
    dims = [int(cute.size(m)) for m in inner.shape] if isinstance(inner.shape, tuple) else [inner.size()]
    if args.index:
        parse_index = _lazy("locate").parse_index
        found = {text: cute.basis.format_value(lay(*parse_index(text, dims))) for text in args.index}
        if args.json:
            print(json.dumps({"notation": "cute", "target": target.text,
                              "lookups": [{"index": k, "coordinate": v} for k, v in found.items()]}))
        else:
            print("\n".join(f"index ({k}): coordinate {v}" for k, v in found.items()))
        return 0
    if args.json:
        print(json.dumps({"notation": "cute", "target": target.text, "dimensions": dims,
                          "coordinates": [row for row in _lazy("grid").coord_cells(lay, max_cells=1 << 16)]}))
        return 0
    print(cute.format_grid(lay, title=f"{target.text}\nsize {inner.size()}, rank {inner.rank()}, "
                                 f"depth {inner.depth()}: the coordinate of each element "
                                 "(rows = mode 0, columns = the other modes)"))
    return 0


def show_coalescing(ll: LinearLayout | None, args: argparse.Namespace) -> int:
    """--coalescing: vector width and sectors per warp request over the global layout."""
    cute = _lazy("cute")
    glay = None
    if args.global_layout is not None:
        parsed = cute.parse_layout(args.global_layout)
        if not isinstance(parsed, cute.Layout):
            raise UsageError(f"--global takes a plain CuTe layout shape:stride, got {args.global_layout!r}")
        glay = parsed
    if ll is not None:
        source: Any = ll
    else:
        tv = target_of(args, missing=TensorLayoutError).layout
        if not isinstance(tv, cute.Layout) or glay is None or glay.rank() != 2:
            raise UsageError("--coalescing reads a Triton distributed layout, or a CuTe thread-value "
                             "layout (thread, value) -> m + M*n with --global giving the M x N tensor")
        source = _lazy("tv").TVLayout(tv, (int(cute.size(glay[0])), int(cute.size(glay[1]))))
    rep = _lazy("coalescing").coalescing(source, glay, cute.tla.element_bits(args.dtype))
    if args.json:
        print(json.dumps({"vector": rep.vector, "vector_bytes": rep.vector_bytes, "requests": rep.requests,
                          "sectors_per_request": list(rep.sectors_per_request),
                          "ideal_sectors": rep.ideal_sectors, "efficiency": rep.efficiency}))
    else:
        print(rep)
    return 0


def show_banks(args: argparse.Namespace) -> int:
    """--banks BITS: warp 0's --access to TARGET as shared memory, phase by phase."""
    if args.target is None:
        raise UsageError("--banks reads TARGET, a CuTe shared-memory layout: give one")
    for flag in ("index", "offset", "window", "tpu", "as_", "coalescing", "hw_view"):
        if getattr(args, flag):
            name = flag.rstrip("_").replace("_", "-")
            raise UsageError(f"--banks prints a bank report; it takes no --{name}")
    smem = read_argument(args.target, "a shared-memory layout")
    banks = _lazy("banks")
    print(json.dumps(banks.bank_facts(smem, args.banks, args.access)) if args.json else
          banks.bank_text(smem, args.banks, args.access))
    return 0
