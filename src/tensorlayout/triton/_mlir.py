"""Triton's MLIR text for layout encodings, read into this package's encodings.

Reads the attribute form Triton prints in its IR, with or without the ``ttg.`` (or older
``triton_gpu.``) dialect prefix, optionally inside a tensor type that gives the shape:

* ``#ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [8, 4], warpsPerCTA = [2, 1], order = [1, 0]}>``
* ``#ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [2, 2], instrShape = [16, 8]}>``
* ``#ttg.dot_op<{opIdx = 0, parent = #ttg.nvidia_mma<{...}>, kWidth = 2}>`` (the parent inline)
* ``#ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]}>``
* ``#ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>``
* ``#ttg.linear<{register = [[0, 1]], lane = [[1, 0], ...], warp = [], block = []}>``
* ``tensor<16x16xf16, #ttg.blocked<{...}>>``

CTA fields (``CTAsPerCGA``, ``CTASplitNum``, ``CTAOrder``) are accepted when they describe one
CTA. An alias (``#blocked`` alone) names a definition elsewhere in the module: give the
definition itself.

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
from tensorlayout.errors import LayoutError, UnsupportedError
from tensorlayout.triton.encodings import (
    BlockedLayout,
    DotOperandLayout,
    NVMMADistributedLayout,
    NVMMASharedLayout,
    SwizzledSharedLayout,
)
from tensorlayout.triton.linear_layout import LinearLayout

__all__ = ["is_triton_text", "parse_encoding", "parse_layout", "to_layout"]

_NAME = re.compile(r"#[A-Za-z_][A-Za-z0-9_.]*")
_TYPE = re.compile(r"[A-Za-z][A-Za-z0-9_]*")
_CTA_KEYS = ("CTAsPerCGA", "CTASplitNum", "CTAOrder")
Attrs = dict[str, Any]


def is_triton_text(text: str) -> bool:
    """Whether ``text`` is Triton's (an encoding, a tensor type, or a printed linear layout).

    >>> is_triton_text("#ttg.blocked<{order = [0]}>"), is_triton_text("f32[4]{0}")
    (True, False)
    """
    head = text.lstrip()
    return head.startswith(("#", "tensor<")) or "where out dims are" in text or "(empty layout" in text


def _value(cur: Cursor) -> Any:
    """An attribute value: integer, boolean, list (of values) or a nested encoding."""
    if cur.peek("#"):
        return _encoding(cur)
    if cur.accept("["):
        items: list[Any] = []
        with cur.nested("a list"):
            while not cur.accept("]"):
                if items:
                    cur.expect(",", "',' or ']'")
                items.append(_value(cur))
        return items
    for word, value in (("true", True), ("false", False)):
        if cur.accept(word):
            return value
    return cur.integer("a value (an integer, true/false, a [list] or a #encoding)")


def _encoding(cur: Cursor) -> tuple[str, Attrs, int]:
    """``#dialect.kind<{key = value, ...}>``: the kind, its attributes and where it starts."""
    cur.skip()
    start = cur.pos
    m = cur.match(_NAME)
    if m is None:
        raise cur.error("an encoding such as #ttg.blocked<{...}>")
    kind = m.group()[1:].split(".")[-1]
    if not cur.peek("<"):
        raise cur.error(f"'<{{' after {m.group()} (an alias such as #blocked names a definition "
                        "elsewhere: give the definition itself)")
    cur.expect("<")
    cur.expect("{")
    attrs: Attrs = {}
    with cur.nested("an encoding"):
        while not cur.accept("}"):
            if attrs:
                cur.expect(",", "',' or '}'")
            key = cur.identifier("an attribute name")
            cur.expect("=")
            attrs[key] = _value(cur)
    cur.expect(">")
    return kind, attrs, start


def _tensor(cur: Cursor) -> tuple[list[int], tuple[str, Attrs, int]]:
    """``tensor<AxBxT, #encoding>``: the shape and the encoding."""
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
    enc = _encoding(cur)
    cur.expect(">")
    return shape, enc


def parse_encoding(text: str) -> tuple[tuple[str, Attrs, int], list[int] | None]:
    """The encoding ``(kind, attributes, position)`` written in ``text`` and the tensor shape
    when the text is a tensor type (else None)."""
    cur = Cursor(text)
    if cur.peek("tensor<"):
        shape, enc = _tensor(cur)
        cur.expect_end()
        return enc, shape
    enc = _encoding(cur)
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


def _blocked(a: Attrs, shape: list[int]) -> Any:
    return BlockedLayout(*_need("blocked", a, ("sizePerThread", "threadsPerWarp", "warpsPerCTA", "order")))


def _mma(a: Attrs, shape: list[int]) -> Any:
    major, minor, warps, instr = _need("nvidia_mma", a, ("versionMajor", "versionMinor", "warpsPerCTA",
                                                         "instrShape"))
    return NVMMADistributedLayout([major, minor], warps, instr)


def _dot(a: Attrs, shape: list[int]) -> Any:
    index, parent, k_width = _need("dot_op", a, ("opIdx", "parent", "kWidth"))
    if not isinstance(parent, tuple):
        raise LayoutError("#dot_op's parent must be an encoding written inline (#ttg.nvidia_mma<{...}>)")
    return DotOperandLayout(index, _encoding_object(parent, shape), k_width)


def _swizzled(a: Attrs, shape: list[int]) -> Any:
    return SwizzledSharedLayout(*_need("swizzled_shared", a, ("vec", "perPhase", "maxPhase", "order")))


def _nvmma_shared(a: Attrs, shape: list[int]) -> Any:
    keys = ("swizzlingByteWidth", "transposed", "elementBitWidth")
    width, transposed, bits = _need("nvmma_shared", a, keys, ("fp4Padded",))
    return NVMMASharedLayout(width, bits, len(shape), transposed, bool(a.get("fp4Padded", False)))


#: the encodings read, by kind
KINDS: dict[str, Callable[[Attrs, list[int]], Any]] = {
    "blocked": _blocked, "nvidia_mma": _mma, "dot_op": _dot, "swizzled_shared": _swizzled,
    "nvmma_shared": _nvmma_shared,
}


def _encoding_object(enc: tuple[str, Attrs, int], shape: list[int]) -> Any:
    kind, attrs, _ = enc
    if kind not in KINDS:
        raise UnsupportedError(f"#{kind} is not read; known encodings: {', '.join([*KINDS, 'linear'])}")
    return KINDS[kind](attrs, shape)


def to_layout(enc: tuple[str, Attrs, int], shape: Sequence[int]) -> LinearLayout:
    """The linear layout of a parsed encoding over a tensor of ``shape``."""
    kind, attrs, _ = enc
    if kind == "linear":
        bases = [(name, attrs[name]) for name in attrs]
        return LinearLayout.from_bases(bases, [f"dim{k}" for k in range(len(shape))], list(shape))
    return _encoding_object(enc, list(shape)).to_linear_layout(list(shape))


def parse_layout(text: str, shape: Sequence[int] | None = None) -> LinearLayout:
    """A linear layout from Triton text: a printed ``LinearLayout`` or an encoding (its shape
    from the tensor type around it, else ``shape``)."""
    if not text.lstrip().startswith(("#", "tensor<")):
        return LinearLayout.parse(text)
    enc, inner = parse_encoding(text)
    if inner is not None and shape is not None and list(shape) != inner:
        raise LayoutError(f"the tensor type says shape {inner}, the shape given is {list(shape)}")
    dims = inner if inner is not None else shape
    if dims is None:
        raise LayoutError(f"#{enc[0]} needs a tensor shape: write tensor<AxBxT, ...> or give the shape")
    return to_layout(enc, dims)
