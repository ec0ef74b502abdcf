"""What the explorer's input box holds: any notation the library reads, as one :class:`Entry`.

Tried in this order (a rule table): an algebra operation ``logical_divide(A, T)`` (read by
:mod:`tensorlayout.cute.explain`); a TiledMMA ``make_tiled_mma(ATOM, (2,2,1)[, (M,N,K)])``; an
MMA or copy atom by CuTe's name; a Gluon constructor ``BlockedLayout([1,4],[8,4],[2,1],[1,0])``
(its tensor shape from ``to_linear_layout(L, [16,16])`` or the shape field); Triton text (an
encoding or a printed ``LinearLayout``); an XLA indexing map; a TLA format ``zN 40x72 f16``;
else XLA shape or CuTe text (swizzled, scaled-basis and all) as the command line reads it.

>>> e = read("make_tiled_mma(SM80_16x8x16_F16F16F16F16_TN, (2,2,1))")
>>> e.kind, e.obj.tile_size()
('mma', (32, 16, 16))
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from tensorlayout import triton
from tensorlayout.cli._target import TLA_FORMATS, Target, target_from
from tensorlayout.cute import parse_int_tuple
from tensorlayout.cute.explain import OPERATIONS, explain, split_call
from tensorlayout.cute.tla import make_format
from tensorlayout.errors import LayoutError, ParseError, TensorLayoutError
from tensorlayout.gpu import COPY_ATOMS, MMA_ATOMS, copy_atom, mma_atom
from tensorlayout.gpu.tiled import make_tiled_copy_a, make_tiled_mma
from tensorlayout.indexing import IndexingMap
from tensorlayout.triton._mlir import is_triton_text, parse_layout

__all__ = ["GLUON_LAYOUTS", "Entry", "read"]

#: The Gluon layout classes the box reads as constructor calls (Gluon's names).
GLUON_LAYOUTS: dict[str, type] = {name: getattr(triton, name) for name in (
    "BlockedLayout", "SliceLayout", "DotOperandLayout", "NVMMADistributedLayout", "SwizzledSharedLayout",
    "NVMMASharedLayout", "PaddedSharedLayout", "SharedLinearLayout", "AMDMFMALayout", "AMDWMMALayout",
    "TensorMemoryLayout")}
#: Copy atoms are drawn as this MMA's A operand, as CuTe's examples (and `render --copy`) do.
_COPY_MMA = "SM80_16x8x16_F16F16F16F16_TN"


@dataclass(frozen=True)
class Entry:
    """One input: its ``kind`` (op, mma, copy, triton, map, layout), the object the library
    built and a title (the canonical text)."""

    kind: str
    obj: Any
    title: str


def _operation(text: str, shape: Sequence[int] | None) -> Entry | None:
    try:
        name, _args = split_call(text)
    except ParseError:
        return None
    if name not in OPERATIONS:
        return None
    d = explain(text)
    return Entry("op", d, d.expression)


def _tiled_mma(text: str, shape: Sequence[int] | None) -> Entry | None:
    if not text.startswith("make_tiled_mma("):
        return None
    _name, args = split_call(text)
    if not 1 <= len(args) <= 3:
        raise LayoutError("make_tiled_mma(ATOM, (TM,TN,TK)[, (PM,PN,PK)]) takes one to three arguments")
    atom = mma_atom(args[0])
    thr = parse_int_tuple(args[1]) if len(args) > 1 else (1, 1, 1)
    perm = parse_int_tuple(args[2]) if len(args) > 2 else (None, None, None)
    tm = make_tiled_mma(atom, thr if isinstance(thr, tuple) else (thr,),
                        perm if isinstance(perm, tuple) else (perm,))
    return Entry("mma", tm, f"make_tiled_mma({atom.name}, {args[1] if len(args) > 1 else '(1,1,1)'}"
                            f"{', ' + args[2] if len(args) > 2 else ''})")


def _atom(text: str, shape: Sequence[int] | None) -> Entry | None:
    if text in MMA_ATOMS:
        return Entry("mma", make_tiled_mma(mma_atom(text)), text)
    if text in COPY_ATOMS:
        atom = copy_atom(text)
        if atom.val_id is not None:  # tensor memory: drawn as TMEM lanes x columns
            return Entry("copy", atom, text)
        tc = make_tiled_copy_a(atom, 16, make_tiled_mma(mma_atom(_COPY_MMA)))
        return Entry("copy", tc, f"{text} as the A operand of {_COPY_MMA}")
    return None


def _literal(node: ast.expr) -> Any:
    try:
        return ast.literal_eval(node)
    except ValueError:
        raise LayoutError(f"a Gluon layout argument must be a literal or a layout, got "
                          f"{ast.unparse(node)!r}") from None


def _called(node: ast.Call) -> str:
    """The name a call calls, without its module prefixes (``ttgl.amd.AMDMFMALayout``)."""
    return node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")


def _gluon_object(node: ast.expr) -> Any:
    """A call of a Gluon layout class (``ttgl.`` / ``gl.amd.`` prefixes allowed), arguments
    literal or nested layouts."""
    if not isinstance(node, ast.Call):
        return _literal(node)
    name = _called(node)
    cls = GLUON_LAYOUTS.get(name)
    if cls is None:
        raise LayoutError(f"unknown Gluon layout {name!r}; known: {', '.join(GLUON_LAYOUTS)}")
    try:
        return cls(*(_gluon_object(a) for a in node.args),
                   **{k.arg: _gluon_object(k.value) for k in node.keywords if k.arg})
    except TypeError as err:
        raise LayoutError(f"{name}: {err}") from None


def _gluon(text: str, shape: Sequence[int] | None) -> Entry | None:
    head = re.match(r"\s*(?:\w+\.)*(\w+)\s*\(", text)
    if head is None or (head.group(1) not in GLUON_LAYOUTS and head.group(1) != "to_linear_layout"):
        return None
    try:
        node = ast.parse(text.strip(), mode="eval").body
    except SyntaxError as err:
        raise ParseError(text, max((err.offset or 1) - 1, 0), "a Gluon constructor call") from None
    if isinstance(node, ast.Call) and _called(node) == "to_linear_layout":
        if len(node.args) != 2:
            raise LayoutError("to_linear_layout(layout, shape) takes two arguments")
        layout, shape = _gluon_object(node.args[0]), _literal(node.args[1])
    else:
        layout = _gluon_object(node)
    if shape is None:
        raise LayoutError(f"{head.group(1)} needs a tensor shape: write to_linear_layout(layout, [16, 16]) "
                          "or fill in the shape field")
    return Entry("triton", triton.to_linear_layout(layout, list(shape)), text.strip())


def _triton_text(text: str, shape: Sequence[int] | None) -> Entry | None:
    if not is_triton_text(text):
        return None
    return Entry("triton", parse_layout(text, shape), text.strip())


def _map(text: str, shape: Sequence[int] | None) -> Entry | None:
    if not (text.startswith("(") and "->" in text and re.match(r"\(\s*(d\d|\))", text)):
        return None
    m = IndexingMap.parse(text)
    return Entry("map", m, str(m))


_TLA = re.compile(r"(\w+)\s+(\d+)\s*[x,]\s*(\d+)(?:\s+(\w+))?$")


def _tla(text: str, shape: Sequence[int] | None) -> Entry | None:
    m = _TLA.match(text)
    if m is None or m.group(1).lower() not in {f.lower() for f in TLA_FORMATS}:
        return None
    name = next(f for f in TLA_FORMATS if f.lower() == m.group(1).lower())
    rows, cols, dtype = int(m.group(2)), int(m.group(3)), m.group(4) or "f16"
    tla = make_format(name, rows, cols, dtype)
    return Entry("layout", Target("tla", tla, f"{name} {rows}x{cols} {dtype}: {tla}",
                                  (name, rows, cols, dtype)), f"{name} {rows}x{cols} {dtype}")


def _layout(text: str, shape: Sequence[int] | None) -> Entry | None:
    target = target_from(text)
    return Entry("layout", target, target.text)


_READERS: tuple[Callable[[str, Sequence[int] | None], Entry | None], ...] = (
    _operation, _tiled_mma, _atom, _gluon, _triton_text, _map, _tla, _layout)


def read(text: str, shape: Sequence[int] | None = None) -> Entry:
    """The :class:`Entry` ``text`` names (see the module doc); ``shape``: the tensor shape of a
    Triton encoding or Gluon layout given without one. Bad text raises a TensorLayoutError."""
    if not isinstance(text, str) or not text.strip():
        raise LayoutError("type a layout: XLA shape, CuTe layout, Triton or Gluon layout, indexing map, "
                          "atom name or an operation such as logical_divide((8,8):(8,1),(2,4))")
    text = text.strip()
    for reader in _READERS:
        entry = reader(text, shape)
        if entry is not None:
            return entry
    raise TensorLayoutError(f"cannot read {text!r}")  # pragma: no cover - _layout always answers
