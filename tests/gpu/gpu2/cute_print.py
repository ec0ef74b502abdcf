"""gpu2 conformance checks (see ``tests/gpu/gpu2/__init__.py``): CuTe's identity layouts and the
thread partitions of identity tensors, through the public API only.

``identity_layout``: the printed layout reads back to the same text, every ``coords[i]`` is CuTe's
print of ``layout(i)``, and the C++ ``expr`` rebuilt from the Python constructors prints the same.
``identity_partition``: ``get_slice(tiled_mma, thread).partition_{A,B,C}(make_identity_tensor(shape))``
prints CuTe's ``ArithTuple(..) o layout`` and gives every coordinate the thread owns.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from tensorlayout.cute import (
    CoordLayout,
    CountingTensor,
    E,
    Int,
    Layout,
    make_identity_layout,
    make_identity_tensor,
    parse_layout,
)
from tensorlayout.cute.basis import format_value
from tensorlayout.gpu import make_tiled_mma, mma_atom
from tensorlayout.gpu.partition import ThrMMA, get_slice

FAMILY = "cute_identity_layout"


def _make_layout(shape: Any, stride: Any) -> Layout | CoordLayout:
    """C++'s ``make_layout(shape, stride)`` for strides that may hold bases."""
    return parse_layout(f"{format_value(shape)}:{format_value(stride)}")  # type: ignore[return-value]


#: The C++ constructors the records' ``expr`` uses, as the Python API spells them.
CPP_NAMES: dict[str, Callable[..., Any]] = {
    "make_shape": lambda *xs: tuple(xs), "make_stride": lambda *xs: tuple(xs),
    "make_identity_layout": make_identity_layout, "make_layout": _make_layout, "E": E, "Int": Int,
}


def _cpp_expr(expr: str) -> Any:
    """Evaluate a record's C++ constructor expression with the Python API (``_4{}`` is ``Int(4)``,
    ``E<0,1>{}`` is ``E(0, 1)``); an unknown function fails naming itself."""
    py = re.sub(r"E<([0-9, ]*)>\{\}", r"E(\1)", expr)
    py = re.sub(r"\b_(-?[0-9]+)\{\}", r"Int(\1)", py)
    for name in re.findall(r"([A-Za-z_]\w*)\(", py):
        assert name in CPP_NAMES, f"{expr}: no Python spelling of {name} in CPP_NAMES"
    return eval(py, {"__builtins__": {}}, CPP_NAMES)  # the names are limited to CPP_NAMES


def check_identity_layout(r: dict[str, Any]) -> None:
    layout = parse_layout(r["text"])
    assert isinstance(layout, CoordLayout), r["text"]
    assert str(layout) == r["text"]
    assert str(_cpp_expr(r["expr"])) == r["text"], r["expr"]
    assert r["n"] == len(r["coords"]) <= layout.size()  # the first n indices
    got = [format_value(layout(i)) for i in range(r["n"])]
    assert got == r["coords"]


def _tiled_mma(expr: str) -> Any:
    """``make_tiled_mma(ATOM{}[, Layout<Shape<_a,_b,_c>>{}])`` through the Python API."""
    m = re.fullmatch(r"make_tiled_mma\((\w+)\{\}(?:, Layout<Shape<([_0-9,]+)>>\{\})?\)", expr)
    assert m is not None, f"a tiled_mma expression this check cannot read: {expr}"
    thr = tuple(int(x.lstrip("_")) for x in m.group(2).split(",")) if m.group(2) else (1, 1, 1)
    return make_tiled_mma(mma_atom(m.group(1)), thr)


def _shape(text: str) -> tuple[int, ...]:
    """``_16{},_8{}`` (static) or ``16,8`` (dynamic) extents."""
    return tuple(Int(int(x[1:-2])) if x.startswith("_") else int(x) for x in text.split(","))


#: operand -> the ThrMMA method that partitions it.
PARTITIONS: dict[str, Callable[[ThrMMA, CountingTensor], Any]] = {
    "A": ThrMMA.partition_a, "B": ThrMMA.partition_b, "C": ThrMMA.partition_c,
}


def check_identity_partition(r: dict[str, Any]) -> None:
    thr = get_slice(_tiled_mma(r["tiled_mma"]), r["thread"])
    assert isinstance(thr, ThrMMA)
    part = PARTITIONS[r["operand"]](thr, make_identity_tensor(_shape(r["shape"])))
    assert isinstance(part, CountingTensor)
    assert str(part) == r["text"]
    assert str(parse_layout(r["text"])) == r["text"]
    assert [format_value(c) for c in part.coords()] == r["coords"]


HANDLERS: dict[tuple[str, str], Callable[[dict[str, Any]], None]] = {
    (FAMILY, "identity_layout"): check_identity_layout,
    (FAMILY, "identity_partition"): check_identity_partition,
}
