"""Triton's MLIR text for layout encodings, read into this package's encodings.

Reads the attribute form Triton prints in its IR, with or without the ``ttg.`` (or older
``triton_gpu.``) dialect prefix, optionally inside a tensor type that gives the shape:

* ``#ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [8, 4], warpsPerCTA = [2, 1], order = [1, 0]}>``
* ``#ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [2, 2], instrShape = [16, 8]}>``
* ``#ttg.dot_op<{opIdx = 0, parent = #ttg.nvidia_mma<{...}>, kWidth = 2}>`` (the parent inline)
* ``#ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]}>``
* ``#ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>``
* ``#ttg.linear<{register = [[0, 1]], lane = [[1, 0], ...], warp = [], block = []}>``
* ``#ttg.slice<{dim = 1, parent = #ttg.blocked<{...}>}>``
* ``#ttg.shared_linear<{offset = [[1, 0], [0, 1]], block = []}, alignment = 16>``
* ``#ttg.padded_shared<[64:+8] {order = [1, 0], shape = [64, 64]}>`` (or ``{offset = ..., block = ...}``)
* ``#ttg.amd_mfma<{version = 3, warpsPerCTA = [2, 2], instrShape = [32, 32, 8], isTransposed = true}>``
* ``#ttg.amd_wmma<{version = 2, isTranspose = false, ctaLayout = {warp = [[0, 1], [1, 0]]}}>``
* ``#ttng.tensor_memory_encoding<blockM = 128, blockN = 128, colStride = 1>`` and
  ``#ttng.tensor_memory_scales_encoding<>``
* ``tensor<16x16xf16, #ttg.blocked<{...}>>`` and ``!ttg.memdesc<64x64xf16, #ttg.swizzled_shared<{...}>, ...>``
* any of these after alias definitions as Triton prints them at the top of a module
  (``#mma = #ttg.nvidia_mma<{...}>`` on its own line, then ``#ttg.dot_op<{..., parent = #mma, ...}>``);
  other definition lines (``#loc = loc(unknown)``, ``#smem = #ttg.shared_memory``) are skipped.

Several CTAs are read from ``CGALayout = [[...], ...]`` (Triton 3.9's form, the encodings'
``cga_layout``); the older fields ``CTAsPerCGA``, ``CTASplitNum``, ``CTAOrder`` are accepted
when they describe one CTA. An alias used without its definition is an error that says so.

>>> enc, shape = parse_encoding("tensor<4x16xf16, #ttg.blocked<{sizePerThread = [1, 2], "
...     "threadsPerWarp = [4, 8], warpsPerCTA = [1, 1], order = [1, 0]}>>")
>>> shape, to_layout(enc, shape).apply({"register": 1, "lane": 9, "warp": 0, "block": 0})
([4, 16], {'dim0': 1, 'dim1': 3})
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from tensorlayout._cursor import Cursor
from tensorlayout.errors import LayoutError, UnsupportedError, expect_text
from tensorlayout.triton._bases import MAX_DIM_SIZE
from tensorlayout.triton._sniff import STARTS, TYPES, is_triton_text
from tensorlayout.triton.encodings import (
    BlockedLayout,
    DotOperandLayout,
    NVMMADistributedLayout,
    SliceLayout,
    SwizzledSharedLayout,
)
from tensorlayout.triton.encodings_amd import AMDMFMALayout, AMDWMMALayout
from tensorlayout.triton.encodings_shared import NVMMASharedLayout, PaddedSharedLayout, SharedLinearLayout
from tensorlayout.triton.encodings_tmem import TensorMemoryLayout, TensorMemoryScalesLayout
from tensorlayout.triton.linear_layout import LinearLayout

__all__ = ["is_triton_text", "parse_encoding", "parse_layout", "to_layout"]

_NAME = re.compile(r"#[A-Za-z_][A-Za-z0-9_.]*")
_TYPE = re.compile(r"[A-Za-z][A-Za-z0-9_]*")
_DEFINITION = re.compile(r"#[A-Za-z_][A-Za-z0-9_.]*[ \t]*=")
_CTA_KEYS = ("CTAsPerCGA", "CTASplitNum", "CTAOrder")
Attrs = dict[str, Any]
Encoding = tuple[str, Attrs, int]
Aliases = dict[str, Encoding]


def _value(cur: Cursor, aliases: Aliases) -> Any:
    """An attribute value: integer, boolean, list (of values), ``{key = value, ...}`` or a nested
    encoding."""
    if cur.peek("#"):
        return _encoding(cur, aliases)
    if cur.peek("{"):
        return _dictionary(cur, aliases)
    if cur.accept("["):
        items: list[Any] = []
        with cur.nested("a list"):
            while not cur.accept("]"):
                if items:
                    cur.expect(",", "',' or ']'")
                items.append(_value(cur, aliases))
        return items
    for word, value in (("true", True), ("false", False)):
        if cur.accept(word):
            return value
    return cur.integer("a value (an integer, true/false, a [list] or a #encoding)")


def _encoding(cur: Cursor, aliases: Aliases) -> Encoding:
    """``#dialect.kind<{key = value, ...}>`` or a defined alias: the kind, its attributes and
    where it starts."""
    cur.skip()
    start = cur.pos
    m = cur.match(_NAME)
    if m is None:
        raise cur.error("an encoding such as #ttg.blocked<{...}>")
    kind = m.group()[1:].split(".")[-1]
    if not cur.peek("<"):
        if m.group() in aliases:
            return aliases[m.group()]
        raise cur.error(f"'<{{' after {m.group()} (an alias such as #blocked names a definition: "
                        "give the definition itself, or its line '#blocked = #ttg.blocked<{...}>' first)",
                        at=cur.pos)
    cur.expect("<")
    attrs: Attrs = {}
    with cur.nested("an encoding"):
        first = True
        while not cur.accept(">"):
            if not first:
                cur.accept(",")
            first = False
            _item(cur, aliases, attrs)
    return kind, attrs, start


def _dictionary(cur: Cursor, aliases: Aliases) -> Attrs:
    """``{key = value, ...}``."""
    cur.expect("{")
    attrs: Attrs = {}
    with cur.nested("an attribute dictionary"):
        while not cur.accept("}"):
            if attrs:
                cur.expect(",", "',' or '}'")
            key = cur.identifier("an attribute name")
            cur.expect("=")
            attrs[key] = _value(cur, aliases)
    return attrs


def _item(cur: Cursor, aliases: Aliases, attrs: Attrs) -> None:
    """One part of an encoding's body, added to ``attrs``: a ``{...}`` dictionary (merged), the
    ``[interval:+padding, ...]`` list of ``#ttg.padded_shared`` (as ``intervals``), or ``key = value``
    (``#ttng.tensor_memory_encoding<blockM = 128, ...>``, ``alignment = 16`` after a dictionary)."""
    if cur.peek("{"):
        attrs.update(_dictionary(cur, aliases))
    elif cur.accept("["):
        pairs: list[list[int]] = []
        with cur.nested("the [interval:+padding] list"):
            while not cur.accept("]"):
                if pairs:
                    cur.expect(",", "',' or ']'")
                interval = cur.integer("an interval")
                cur.expect(":+", "':+' between an interval and its padding")
                pairs.append([interval, cur.integer("a padding")])
        attrs["intervals"] = pairs
    else:
        key = cur.identifier("an attribute name")
        cur.expect("=")
        attrs[key] = _value(cur, aliases)


def _definitions(cur: Cursor) -> Aliases:
    """Leading ``#name = #ttg.kind<{...}>`` lines; other definition lines are skipped."""
    aliases: Aliases = {}
    while (m := cur.match(_DEFINITION)) is not None:
        name = m.group()[:-1].strip()
        end = cur.text.find("\n", cur.pos)
        line_end = len(cur.text) if end < 0 else end
        if re.match(r"[ \t]*#[A-Za-z_][A-Za-z0-9_.]*<", cur.text[cur.pos:line_end]):
            aliases[name] = _encoding(cur, aliases)
        else:
            cur.pos = line_end  # not a layout (#loc = loc(...), #smem = #ttg.shared_memory)
    return aliases


def _tensor(cur: Cursor, aliases: Aliases) -> tuple[list[int], Encoding]:
    """``tensor<AxBxT, #encoding>`` or ``!ttg.memdesc<AxBxT, #encoding, ...>``: the shape and
    the encoding."""
    memdesc = cur.accept("!ttg.memdesc<")
    if not memdesc:
        cur.expect("tensor<")
    shape = [cur.integer("a dimension")]
    while cur.accept("x"):
        dim = cur.try_integer()
        if dim is None:
            break  # the element type follows the last 'x'
        shape.append(dim)
    if cur.match(_TYPE) is None:
        raise cur.error("an element type such as f16")
    cur.expect(",")
    enc = _encoding(cur, aliases)
    while memdesc and cur.accept(","):  # the memory space and 'mutable'
        if cur.peek("#"):
            cur.match(_NAME)
        else:
            cur.identifier("a memdesc field")
    cur.expect(">")
    return shape, enc


def parse_encoding(text: str) -> tuple[Encoding, list[int] | None]:
    """The encoding ``(kind, attributes, position)`` written in ``text`` (after any alias
    definitions) and the tensor shape when it is a tensor or memdesc type (else None)."""
    cur = Cursor(text)
    aliases = _definitions(cur)
    if any(cur.peek(t) for t in TYPES):
        shape, enc = _tensor(cur, aliases)
        cur.expect_end()
        return enc, shape
    enc = _encoding(cur, aliases)
    cur.expect_end()
    return enc, None


def _one_cta(kind: str, attrs: Attrs) -> None:
    """CTA fields must describe one CTA (CTAOrder says nothing then)."""
    for key in _CTA_KEYS[:2]:
        if key in attrs and (not isinstance(attrs[key], list) or any(v != 1 for v in attrs[key])):
            raise UnsupportedError(f"#{kind} with {key} = {attrs[key]}: several CTAs are read from "
                                   "the Python encodings' cga_layout, not from this text")


def _need(kind: str, attrs: Attrs, keys: Sequence[str], optional: Sequence[str] = ()) -> list[Any]:
    unknown = set(attrs) - set(keys) - set(optional) - set(_CTA_KEYS)
    if unknown:
        raise UnsupportedError(f"#{kind}: attributes {sorted(unknown)} are not read (known: "
                               f"{', '.join([*keys, *optional])})")
    missing = [k for k in keys if k not in attrs]
    if missing:
        raise LayoutError(f"#{kind} needs the attributes {missing}")
    _one_cta(kind, attrs)
    return [attrs[k] for k in keys]


def _cga(a: Attrs) -> Any:
    """The CTA bases Triton prints as ``CGALayout`` (none: one CTA)."""
    return a.get("CGALayout", [])


def _blocked(a: Attrs, shape: list[int]) -> Any:
    keys = ("sizePerThread", "threadsPerWarp", "warpsPerCTA", "order")
    spt, tpw, wpc, order = _need("blocked", a, keys, ("CGALayout",))
    return BlockedLayout(spt, tpw, wpc, order, cga_layout=_cga(a))


def _mma(a: Attrs, shape: list[int]) -> Any:
    keys = ("versionMajor", "versionMinor", "warpsPerCTA", "instrShape")
    major, minor, warps, instr = _need("nvidia_mma", a, keys, ("CGALayout",))
    return NVMMADistributedLayout([major, minor], warps, instr, cga_layout=_cga(a))


def _dot(a: Attrs, shape: list[int]) -> Any:
    index, parent, k_width = _need("dot_op", a, ("opIdx", "parent", "kWidth"))
    if not isinstance(parent, tuple):
        raise LayoutError("#dot_op's parent must be an encoding written inline (#ttg.nvidia_mma<{...}>)")
    return DotOperandLayout(index, _encoding_object(parent, shape), k_width)


def _swizzled(a: Attrs, shape: list[int]) -> Any:
    keys = ("vec", "perPhase", "maxPhase", "order")
    vec, per_phase, max_phase, order = _need("swizzled_shared", a, keys, ("CGALayout",))
    return SwizzledSharedLayout(vec, per_phase, max_phase, order, cga_layout=_cga(a))


def _nvmma_shared(a: Attrs, shape: list[int]) -> Any:
    keys = ("swizzlingByteWidth", "transposed", "elementBitWidth")
    width, transposed, bits = _need("nvmma_shared", a, keys, ("fp4Padded", "rank", "CGALayout"))
    rank = a.get("rank", len(shape))  # Triton prints it when it is not 2
    fp4 = bool(a.get("fp4Padded", False))
    return NVMMASharedLayout(width, bits, rank, transposed, fp4, cga_layout=_cga(a))


def _slice(a: Attrs, shape: list[int]) -> Any:
    dim, parent = _need("slice", a, ("dim", "parent"))
    if not isinstance(parent, tuple) or not isinstance(dim, int):
        raise LayoutError("#slice needs an integer dim and a parent encoding written inline")
    return SliceLayout(dim, _encoding_object(parent, shape[:dim] + [1] + shape[dim:]))


def _shared_linear(a: Attrs, shape: list[int]) -> Any:
    (offset,) = _need("shared_linear", a, ("offset",), ("block", "alignment"))
    return SharedLinearLayout(offset, a.get("block", []), a.get("alignment", 16))


def _padded_shared(a: Attrs, shape: list[int]) -> Any:
    """The identity form ``[I:+P] {order = ..., shape = ...}`` or the explicit ``{offset, block}``."""
    (pairs,) = _need("padded_shared", a, ("intervals",), ("order", "shape", "offset", "block"))
    if "order" in a:
        return PaddedSharedLayout.with_identity_for(pairs, a.get("shape", shape), a["order"], _cga(a))
    if "offset" not in a:
        raise LayoutError("#padded_shared needs {order = [...], shape = [...]} or "
                          "{offset = [...], block = [...]}")
    return PaddedSharedLayout(pairs, a["offset"], a.get("block", []), a.get("shape", shape))


def _amd_mfma(a: Attrs, shape: list[int]) -> Any:
    keys = ("version", "warpsPerCTA", "instrShape", "isTransposed")
    optional = ("elementBitWidth", "tilesPerWarp", "CGALayout")
    version, warps, instr, transposed = _need("amd_mfma", a, keys, optional)
    return AMDMFMALayout(version, instr, transposed, warps, a.get("elementBitWidth"), a.get("tilesPerWarp"),
                         _cga(a))


def _amd_wmma(a: Attrs, shape: list[int]) -> Any:
    optional = ("ctaLayout", "instrShape", "CGALayout")
    version, transposed = _need("amd_wmma", a, ("version", "isTranspose"), optional)
    cta = a.get("ctaLayout", {})
    if not isinstance(cta, dict) or set(cta) - {"register", "warp"}:
        raise LayoutError(f"#amd_wmma's ctaLayout holds register and warp bases, got {cta!r}")
    warps, regs = cta.get("warp", []), cta.get("register", [])
    rank = len((warps + regs)[0]) if warps + regs else len(shape)
    return AMDWMMALayout(version, transposed, warps, regs, a.get("instrShape"), _cga(a), rank)


def _tensor_memory(a: Attrs, shape: list[int]) -> Any:
    keys = ("blockM", "blockN", "colStride")
    block_m, block_n, stride = _need("tensor_memory_encoding", a, keys, ("CGALayout", "twoCTAs", "fp4Padded"))
    return TensorMemoryLayout([block_m, block_n], stride, _cga(a), bool(a.get("twoCTAs", False)),
                              bool(a.get("fp4Padded", False)))


def _tensor_memory_scales(a: Attrs, shape: list[int]) -> Any:
    _need("tensor_memory_scales_encoding", a, (), ("CGALayout",))
    return TensorMemoryScalesLayout(_cga(a))


#: the encodings read, by kind
KINDS: dict[str, Callable[[Attrs, list[int]], Any]] = {
    "blocked": _blocked, "nvidia_mma": _mma, "dot_op": _dot, "swizzled_shared": _swizzled,
    "nvmma_shared": _nvmma_shared, "slice": _slice, "shared_linear": _shared_linear,
    "padded_shared": _padded_shared, "amd_mfma": _amd_mfma, "amd_wmma": _amd_wmma,
    "tensor_memory_encoding": _tensor_memory, "tensor_memory_scales_encoding": _tensor_memory_scales,
}


def _encoding_object(enc: Encoding, shape: list[int]) -> Any:
    kind, attrs, _ = enc
    if kind not in KINDS:
        raise UnsupportedError(f"#{kind} is not read; known encodings: {', '.join([*KINDS, 'linear'])}")
    return KINDS[kind](attrs, shape)


def to_layout(enc: Encoding, shape: Sequence[int]) -> LinearLayout:
    """The linear layout of a parsed encoding over a tensor of ``shape`` (each dim an out dim:
    at most ``MAX_DIM_SIZE``, as the printed form re-reads)."""
    for d in shape:
        if type(d) is int and d > MAX_DIM_SIZE:
            raise LayoutError(f"tensor dim {d} is past 2**30, the largest out-dim size of a linear layout")
    kind, attrs, _ = enc
    if kind == "linear":
        bases = [(name, attrs[name]) for name in attrs]
        return LinearLayout.from_bases(bases, [f"dim{k}" for k in range(len(shape))], list(shape))
    return _encoding_object(enc, list(shape)).to_linear_layout(list(shape))


def parse_layout(text: str, shape: Sequence[int] | None = None) -> LinearLayout:
    """A linear layout from Triton text: a printed ``LinearLayout`` or an encoding (its shape
    from the tensor type around it, else ``shape``)."""
    if not expect_text(text, "Triton layout text").lstrip().startswith(STARTS):
        return LinearLayout.parse(text)
    enc, inner = parse_encoding(text)
    if inner is not None and shape is not None and list(shape) != inner:
        raise LayoutError(f"the tensor type says shape {inner}, the shape given is {list(shape)}")
    dims = inner if inner is not None else shape
    if dims is None:
        raise LayoutError(f"#{enc[0]} needs a tensor shape: write tensor<AxBxT, ...> or give the shape")
    return to_layout(enc, dims)
