"""Bridges from JAX objects, and padding and maps reports of whole HLO modules.

With the optional ``jax`` extra: :func:`shape_of` turns a ``jax.Array`` (dtype, dims and
its ``format`` layout), or a ``Format``/``Layout`` plus dtype and dims, into a tensorlayout
:class:`~tensorlayout.xla.Shape`; :func:`module_of` parses the lowered or compiled HLO of a
jitted function; :func:`report` gives its padding summary and indexing maps in one call.
``jax`` is imported only inside the functions that need it.

Without jax: :func:`module_buffers` lists the buffers of a parsed module (parameters and
instruction results, aliases left out) and :func:`module_padding` reports their padding.

Submodules: :mod:`~tensorlayout.jax.memory` (XLA's dumped buffer assignment and
``memory_analysis()``), :mod:`~tensorlayout.jax.doctor` (each TPU buffer that pads and its
fix as JAX code, verified by a deviceless TPU compile), :mod:`~tensorlayout.jax.blocks`
(Pallas TPU block shapes) and :mod:`~tensorlayout.jax.layouts` (the copies layout
assignment inserted).

>>> from tensorlayout.hlo import parse_module
>>> m = parse_module("HloModule m\\nENTRY e {\\n  p = s32[64,4]{1,0:T(8,128)} parameter(0)\\n"
...                  "  ROOT n = s32[64,4]{1,0:T(8,128)} negate(p)\\n}")
>>> s = module_padding(m)
>>> [b.name for b in s.buffers], s.logical_bytes, s.allocated_bytes
(['n', 'p'], 2048, 65536)
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from tensorlayout.errors import TensorLayoutError, UnsupportedError
from tensorlayout.hlo import parse_module
from tensorlayout.hlo.analysis import output_to_input_indexing
from tensorlayout.hlo.model import HloComputation, HloInstruction, HloModule
from tensorlayout.hlo.physical import linearized_output_to_input
from tensorlayout.xla.layout import Layout, Tile
from tensorlayout.xla.padding import PaddingSummary, buffers_padding, tpu_shape
from tensorlayout.xla.shape import Shape
from tensorlayout.xla.types import element_type

__all__ = [
    "JitReport",
    "compiled_shapes",
    "element_type_of",
    "layout_of",
    "module_buffers",
    "module_of",
    "module_padding",
    "module_text",
    "report",
    "shape_of",
]

#: Results that alias another buffer instead of allocating one.
_ALIASING = frozenset({"bitcast", "get-tuple-element", "tuple", "after-all", "add-dependency",
                       "opt-barrier", "domain"})
#: Opcodes whose called computations run as part of the program (not per element).
_CONTROL_FLOW = frozenset({"while", "conditional", "call", "async-start", "async-update",
                           "async-done"})
_DTYPE_PREFIXES = (("uint", "u"), ("int", "s"), ("float", "f"), ("complex", "c"))


def _program_computations(module: HloModule) -> Iterator[HloComputation]:
    """The entry and every computation it reaches through control flow (not fusions or
    reducers)."""
    seen: set[str] = set()
    todo = [module.entry]
    while todo:
        comp = todo.pop()
        if comp.name in seen:
            continue
        seen.add(comp.name)
        yield comp
        todo += [c for i in comp.instructions if i.opcode in _CONTROL_FLOW
                 for c in i.called_computations]


def module_buffers(module: HloModule) -> list[tuple[str, Shape]]:
    """``(name, shape)`` of the entry parameters and of every instruction result of the
    program's computations, leaving out aliases (bitcast, tuple, get-tuple-element…) and the
    parameters of called computations. This is not XLA's buffer assignment: buffers that
    XLA would share are counted once each."""
    out = []
    for comp in _program_computations(module):
        for instr in comp.instructions:
            if instr.opcode in _ALIASING or (instr.opcode == "parameter" and not comp.is_entry):
                continue
            out.append((instr.name, instr.shape))
    return out


def module_padding(module: HloModule, *, generation: str | None = None, tpu: bool = False,
                   limit: int = 3) -> PaddingSummary:
    """The padding summary of :func:`module_buffers`; ``tpu=True`` first gives every
    untiled buffer the TPU default layout of ``generation`` (what it would cost on a TPU)."""
    buffers = module_buffers(module)
    if tpu:
        buffers = [(name, tpu_shape(shape, generation=generation)) for name, shape in buffers]
    return buffers_padding(buffers, generation=generation, limit=limit)


def element_type_of(dtype: Any) -> str:
    """The XLA element type name of a numpy/JAX dtype (or dtype name).

    >>> element_type_of("bfloat16"), element_type_of("uint4"), element_type_of("float8_e4m3fn")
    ('bf16', 'u4', 'f8e4m3fn')
    """
    name = str(getattr(dtype, "name", dtype))
    text = {"bool": "pred", "bfloat16": "bf16"}.get(name)
    if text is None:
        text = name.replace("_", "")
        for long, short in _DTYPE_PREFIXES:
            if text.startswith(long):
                text = short + text[len(long):]
                break
    return element_type(text).name


def layout_of(layout: Any) -> Layout:
    """A tensorlayout :class:`Layout` from a ``jax`` ``Layout`` or ``Format`` (or any object
    with ``major_to_minor``, ``tiling`` and ``sub_byte_element_size_in_bits``)."""
    layout = getattr(layout, "layout", layout)  # a Format holds its Layout
    m2m = getattr(layout, "major_to_minor", None)
    if m2m is None:
        raise UnsupportedError(f"expected a concrete JAX Layout or Format, but got {layout!r}")
    tiles = tuple(Tile(tuple(int(d) for d in t)) for t in (getattr(layout, "tiling", None) or ()))
    bits = int(getattr(layout, "sub_byte_element_size_in_bits", 0) or 0)
    return Layout(tuple(reversed(tuple(int(d) for d in m2m))), tiles, element_size_in_bits=bits)


def shape_of(x: Any, dtype: Any = None, dims: Sequence[int] | None = None) -> Shape:
    """The tensorlayout shape of a ``jax.Array``, ``ShapeDtypeStruct`` or abstract value (its
    format's layout when it has one, else the default layout), or of a ``Format``/``Layout``
    together with ``dtype`` and ``dims``."""
    if dtype is None:
        if not (hasattr(x, "dtype") and hasattr(x, "shape")):
            raise TensorLayoutError(f"expected an array with a dtype and a shape, but got {x!r}")
        dtype, dims = x.dtype, tuple(x.shape)
        fmt = getattr(x, "format", None) or getattr(x, "layout", None)
        layout = layout_of(fmt) if fmt is not None and _concrete(fmt) else None
    else:
        layout = layout_of(x)
    if dims is None:
        raise TensorLayoutError("shape_of needs dims together with a dtype")
    return Shape.array(element_type_of(dtype), tuple(dims), layout or "default")


def compiled_shapes(compiled: Any) -> tuple[tuple[Shape, ...], tuple[Shape, ...]]:
    """The argument and result shapes of a compiled JAX function (``jax.jit(f).lower(...)
    .compile()``), layouts from its ``input_formats`` and ``out_info``, arguments flattened
    in pytree order."""
    import jax

    avals = jax.tree_util.tree_leaves(compiled.in_avals)
    formats = jax.tree_util.tree_leaves(compiled.input_formats, is_leaf=_concrete)
    if len(formats) != len(avals):
        raise UnsupportedError(f"{len(avals)} arguments but {len(formats)} input formats")
    args = tuple(shape_of(f, a.dtype, tuple(a.shape)) if _concrete(f)
                 else shape_of(a) for a, f in zip(avals, formats, strict=True))
    results = tuple(shape_of(o) for o in jax.tree_util.tree_leaves(compiled.out_info))
    return args, results


def _concrete(fmt: Any) -> bool:
    return getattr(getattr(fmt, "layout", fmt), "major_to_minor", None) is not None


def module_text(fn: Callable[..., Any], *args: Any, compiled: bool = True) -> str:
    """The HLO text of ``jax.jit(fn)`` on ``args``: after optimizations (``compiled``, with
    the backend's layouts) or as lowered."""
    import jax

    lowered = (fn if hasattr(fn, "lower") else jax.jit(fn)).lower(*args)
    return str(lowered.compile().as_text() if compiled else lowered.as_text(dialect="hlo"))


def module_of(fn: Callable[..., Any], *args: Any, compiled: bool = True) -> HloModule:
    """The parsed HLO module of ``jax.jit(fn)`` on ``args`` (see :func:`module_text`)."""
    return parse_module(module_text(fn, *args, compiled=compiled))


@dataclass(frozen=True, slots=True)
class JitReport:
    """A jitted function's module, its padding summary and each instruction's maps."""

    module: HloModule
    padding: PaddingSummary
    maps: dict[str, tuple[str, ...]]
    linearized: dict[str, tuple[str, ...]]


def _maps(instr: HloInstruction, linear: bool) -> tuple[str, ...]:
    ix = linearized_output_to_input(instr) if linear else output_to_input_indexing(instr)
    return tuple(str(m) if not m.is_undefined else "unknown indexing"
                 for group in ix.indexing_maps for m in group)


def report(fn: Callable[..., Any], *args: Any, generation: str | None = None,
           tpu: bool = False) -> JitReport:
    """One call: the compiled module of ``jax.jit(fn)(*args)``, its padding (``tpu=True``:
    as if on a TPU of ``generation``) and the output-to-input and linearized maps of every
    instruction (keyed by instruction name)."""
    module = module_of(fn, *args)
    instrs = list(module.instructions())
    return JitReport(module, module_padding(module, generation=generation, tpu=tpu),
                     {i.name: _maps(i, False) for i in instrs},
                     {i.name: _maps(i, True) for i in instrs})
