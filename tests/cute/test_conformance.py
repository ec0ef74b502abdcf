"""Every public CuTe/TLA vector of ``cute_cases.json`` (C++ semantics)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tensorlayout import cute
from tensorlayout.cute import Layout, tla
from tensorlayout.cute.int_tuple import format_int_tuple, parse_int_tuple
from tensorlayout.errors import TensorLayoutError
from tests.conftest import DATA

CASES = json.loads((DATA / "cute_cases.json").read_text())


def _arg(value: Any, kind: str) -> Any:
    if kind == "layout":
        return Layout.parse(value)
    if kind in ("inttuple", "shape"):
        return parse_int_tuple(value) if isinstance(value, str) else value
    if kind == "tiler":
        return tuple("_" if x == "_" else Layout.parse(x) if isinstance(x, str) else x for x in value)
    if kind == "layouts":
        return [Layout.parse(x) for x in value]
    return value


def _text(x: Any) -> Any:
    if isinstance(x, cute.Swizzle):  # the vectors name the C++ type; C++ prints it Sw<B,M,S>
        return f"Swizzle<{x.bits},{x.base},{x.shift}>"
    if isinstance(x, (Layout, tla.TlaLayout)):
        return str(x)
    if isinstance(x, tuple):
        return format_int_tuple(x)
    return x


def run(op: str, args: list[Any]) -> Any:
    """Evaluate one vector's operation; returns what the expected field encodes."""
    if op == "eval_all":
        return [int(v) for v in args[0].offsets()]
    if op == "eval2d":
        return cute.grid_values(args[0]).tolist()
    if op == "crd2idx":
        return args[1](args[0])
    if op == "make_layout":
        return str(cute.make_layout(args[0], args[1]))
    if op == "make_layout_concat":
        return str(cute.make_layout(*args[0]))
    if op in ("get", "select"):
        f = getattr(cute, op)
        return str(f(args[0], args[1] if isinstance(args[1], tuple) else (args[1],)))
    if op == "slice_and_offset":
        layout, offset = cute.slice_and_offset(args[0], args[1])
        return f"{layout}@{offset}"
    if op == "swizzle_eval":
        b, m, s, lo, hi = args
        sw = cute.Swizzle(b, m, s)
        return [sw(i) for i in range(lo, hi)]
    if op == "product":
        return cute.product(args[0])
    if op in ("size", "cosize", "rank", "depth"):
        return getattr(cute, op)(args[0])
    if op == "tla_make_layout":
        bits, tag, rows, cols = args
        t = tla.make_format(tag, rows, cols, bits)
        return {"layout": str(t.layout), "origin_shape": format_int_tuple(t.origin_shape)}
    if op == "tla_make_layout_l0c":
        t = tla.make_layout_l0c(*args)
        return {"layout": str(t.layout), "origin_shape": format_int_tuple(t.origin_shape)}
    if op == "tla_crd2offset":
        return tla.crd2offset(args[0], args[1])
    if op == "tla_get_tile_layout":
        layout, origin, tile, coord = args
        t = tla.get_tile_layout(layout, tile, coord, origin=origin)
        return {"layout": str(t.layout), "origin_shape": format_int_tuple(t.origin_shape)}
    if op == "append":
        return str(cute.append(args[0], args[1]))
    return _text(getattr(cute, op)(*args))


#: What the bad inputs below are refused with (one of these, each a message's start).
MESSAGES = (r"complement: \(2,2\):\(1,1\) is|"
            r"composition: shape")


@pytest.mark.usefixtures("dot_path")
@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_vector(case: dict[str, Any]) -> None:
    args = [_arg(v, k) for v, k in zip(case["args"], case["kinds"])]
    if case["expected"] == "error":
        with pytest.raises(TensorLayoutError, match=MESSAGES):
            run(case["op"], args)
        return
    got = run(case["op"], args)
    assert got == case["expected"], case.get("note", "")
