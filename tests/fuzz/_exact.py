"""Fuzz targets of issue 33: swizzled and composed CuTe text and its offsets, relayout against a
brute-force copy with odd numpy dtypes and strides, TPU default layouts under every spelling of a
generation, pictures in every format, and ``verify_equivalent``.

Each check compares against a reference built from definitions (Python ints, one element at a
time); a typed refusal is allowed only where the definition leaves int64 or a documented limit.
"""

from __future__ import annotations

import random
import re
from typing import Any

import numpy as np

from tensorlayout import cute, relayout, render, xla
from tensorlayout.core.intmath import fits_int64
from tensorlayout.cute.swizzle import ComposedLayout, parse_layout
from tensorlayout.errors import LayoutError, TensorLayoutError
from tensorlayout.indexing import IndexingMap, verify_equivalent
from tensorlayout.relayout import PhysicalTarget
from tensorlayout.xla import tpu
from tests.fuzz import _corpus, _gen
from tests.fuzz._common import RoundTripError, ok_or_library, parse_or_none

SMALL = 4096
_EXTREME = ("0", "1", "-1", "_0", "-128", "96", str(2**31), str(2**62), str(2**63 - 1), str(2**63),
            str(-(2**63)), str(2**64), "4294967295")


# ---------------------------------------------------------------- swizzled / composed text
def _swizzle(rng: random.Random) -> str:
    b = rng.choice((0, 1, 2, 3, 3, 5))
    m = rng.choice((0, 1, 2, 3, 4, 30, 60, 62, 63, 64, 200))
    s = rng.choice((b, b + 1, 3, 4, -b, -3, -61, -62, -64, -128, 61, 62, 128))
    return f"Sw<{b},{m},{s}>"


def _inner(rng: random.Random) -> str:
    if rng.random() < 0.3:
        n = rng.randint(0, 3)
        shape = ",".join(str(rng.choice((1, 2, 3, 4, 8))) for _ in range(n))
        stride = ",".join(rng.choice(("0", "1", "-1", "7", "64", "4294967295", str(2**40), str(2**61)))
                          for _ in range(n))
        return f"({shape}):({stride})"
    return _gen.cute_text(rng)


def composed_text(rng: random.Random) -> str:
    """``A o off o B`` with A a swizzle (sometimes a layout), nested now and then; mutated."""
    depth = rng.choice((1, 1, 1, 2))
    text = _inner(rng)
    for _ in range(depth):
        outer = _swizzle(rng) if rng.random() < 0.8 else _inner(rng)
        text = f"{outer} o {rng.choice(_EXTREME)} o {text}"
    return _gen.mutate(rng, text, 1) if rng.random() < 0.2 else text


def check_composed(text: str) -> None:
    c = parse_or_none(parse_layout, text)
    if c is None:
        return
    again = parse_or_none(parse_layout, str(c)) if len(str(c)) < 20_000 else c
    if again is None or str(again) != str(c):
        raise RoundTripError(f"composed {text!r} prints as {str(c)!r}, which does not re-parse to itself")
    n = c.size()
    if not isinstance(n, int) or n > SMALL:
        if n <= 1 << 20:  # offsets() lists up to 2^28 (2 GiB): past the fuzz memory cap
            ok_or_library(c.offsets)
        return
    try:
        want = [c(i) for i in range(n)]
    except TensorLayoutError:  # c(i) refuses (a zero extent outside): so must offsets()
        ok_or_library(c.offsets)
        return
    try:
        got = c.offsets()
    except LayoutError:
        if all(isinstance(v, int) and fits_int64(v) for v in want):
            raise RoundTripError(f"offsets() of {text!r} refused, but every offset fits int64") from None
        return
    if got.dtype != np.int64 or got.shape != (n,) or got.tolist() != want:
        raise RoundTripError(f"offsets() of {text!r} differs from c(i) on Python ints")
    if isinstance(c, ComposedLayout) and n:
        ok_or_library(render.to_svg, c)


# ---------------------------------------------------------------- relayout by brute force
_DTYPES = (np.bool_, np.int8, np.uint8, np.int16, np.uint16, np.float16, np.int32, np.uint32, np.float32,
           np.int64, np.uint64, np.float64, np.complex64, np.complex128)
_ELEMENT = {1: ("pred", "s8", "u8"), 2: ("s16", "u16", "bf16", "f16"), 4: ("s32", "u32", "f32"),
            8: ("s64", "u64", "f64", "c64"), 16: ("c128",)}


#: the sub-byte element types and their widths: a quarter of the samples pack them (``E(bits)``)
_PACKED = {"s4": 4, "u4": 4, "f4e2m1fn": 4, "s2": 2, "u2": 2, "s1": 1, "u1": 1}
_ANNOTATED = re.compile(r":((?:T(?:\([^)]*\))+)?(?:L\(\d+\))?(?:#\([^)]*\))?(?:\*\([^)]*\))?)(?:E\(\d+\))?")


def make_relayout(rng: random.Random) -> tuple[str, str, int, int]:
    """(shape text, numpy dtype name, stride pattern, seed) for one brute-force relayout."""
    dtype = np.dtype(rng.choice(_DTYPES))
    et = rng.choice(_ELEMENT[dtype.itemsize])
    shape = _gen.from_seeds(rng, _corpus.seeds("shape"), _gen.shape_text)
    if "[" in shape and rng.random() < 0.25:
        et = rng.choice(sorted(_PACKED))
        dtype = np.dtype(rng.choice((np.int8, np.uint8, np.int16, np.int64)))
        shape = _packed(et + shape[shape.index("["):], _PACKED[et])
    elif "[" in shape:  # keep the fuzzed dims and layout, with an element type of this size
        shape = et + shape[shape.index("["):]
    return shape, dtype.name, rng.randint(0, 3), rng.randint(0, 2**31)


def _packed(text: str, bits: int) -> str:
    """``text`` with ``E(bits)`` in its layout, where XLA's annotation order puts it.

    >>> _packed("s4[3,5]{1,0:T(8,128)(8,1)S(1)}", 4), _packed("u1[9]{0}", 1)
    ('s4[3,5]{1,0:T(8,128)(8,1)E(4)S(1)}', 'u1[9]{0:E(1)}')
    """
    if "{" not in text:
        return text
    head, layout = text.split("{", 1)
    if ":" in layout:
        return head + "{" + _ANNOTATED.sub(lambda m: f":{m.group(1)}E({bits})", layout, count=1)
    return f"{head}{{{layout.rstrip('}')}:E({bits})}}" + layout[len(layout.rstrip("}")) + 1:]


def _strided(a: np.ndarray, pattern: int) -> np.ndarray:
    """``a`` as a non-contiguous view of equal values: reversed, transposed twice, or padded."""
    if pattern == 0 or not a.size or not a.ndim:
        return a
    if pattern == 1:
        return a[::-1][::-1]
    if pattern == 2:
        return np.ascontiguousarray(a.T).T
    big = np.zeros(tuple(2 * d for d in a.shape), a.dtype)
    view = big[tuple(slice(None, None, 2) for _ in a.shape)]
    view[...] = a
    return view


def check_relayout(args: tuple[str, str, int, int]) -> None:
    text, dtype_name, pattern, seed = args
    t = parse_or_none(PhysicalTarget.from_xla, text)
    if t is None or len(t.logical_shape) > 8 or int(np.prod(t.logical_shape, dtype=object)) > SMALL \
            or any(d >= 2**31 for d in t.logical_shape) \
            or t.physical_elements > 1 << 16:
        return
    if t.packed_bits:
        _check_packed(t, text, np.dtype(dtype_name), pattern, seed)
        return
    dtype = np.dtype(dtype_name)
    rng = np.random.default_rng(seed)
    raw = rng.integers(0, 256, size=int(np.prod(t.logical_shape)) * dtype.itemsize, dtype=np.uint8)
    a = raw.view(dtype).reshape(t.logical_shape) if dtype != np.bool_ else (raw % 2).astype(bool).reshape(
        t.logical_shape)
    try:
        got = relayout.to_physical(_strided(a, pattern), text)
    except TensorLayoutError:
        return
    want = np.zeros(t.physical_elements, dtype)
    want[np.asarray(t.offsets, dtype=np.int64)] = a.reshape(-1)
    if got.dtype != dtype or got.view(np.uint8).tobytes() != want.view(np.uint8).tobytes():
        raise RoundTripError(f"to_physical({text!r}) of {dtype} (pattern {pattern}) differs from brute force")
    back = relayout.from_physical(_strided(got, pattern), text)
    if back.reshape(-1).view(np.uint8).tobytes() != a.reshape(-1).view(np.uint8).tobytes():
        raise RoundTripError(f"from_physical(to_physical(a)) != a for {text!r} of {dtype}")


def _check_packed(t: PhysicalTarget, text: str, dtype: np.dtype, pattern: int, seed: int) -> None:
    """A packed layout against its definition: slot ``o`` holds the low ``bits`` of the element
    at offset ``o`` (padding slots ``pad_value``'s, slots past the end 0), ``8 // bits`` slots a
    byte from the least significant bits up; reading back sign-extends for signed types."""
    bits, rng = t.packed_bits, np.random.default_rng(seed)
    info = np.iinfo(dtype)
    a = rng.integers(info.min, info.max, size=t.logical_shape, endpoint=True).astype(dtype)
    low_pad = -(1 << (bits - 1)) if t.signed else 0
    pad = int(rng.integers(low_pad, low_pad + (1 << bits)))
    try:
        got = relayout.to_physical(_strided(a, pattern), text, pad_value=pad)
    except TensorLayoutError:
        return
    per, mask = 8 // bits, (1 << bits) - 1
    slots = np.full(-(-t.physical_elements // per) * per, pad & mask, dtype=np.int64)
    slots[t.physical_elements:] = 0
    slots[np.asarray(t.offsets, dtype=np.int64)] = a.reshape(-1).astype(np.int64) & mask
    want = (slots.reshape(-1, per) << (np.arange(per, dtype=np.int64) * bits)).sum(axis=1)
    if got.dtype != np.uint8 or got.tolist() != want.tolist():
        raise RoundTripError(f"to_physical({text!r}, pad_value={pad}) of {dtype} (pattern {pattern}) "
                             "differs from the packed definition")
    low = a.reshape(-1).astype(np.int64) & mask
    if t.signed:
        low -= (low >> (bits - 1)) << bits
    back = relayout.from_physical(_strided(got, pattern), text)
    if back.reshape(-1).astype(np.int64).tolist() != low.tolist():
        raise RoundTripError(f"from_physical(to_physical(a)) of {text!r} is not a's low {bits} bits")


# ---------------------------------------------------------------- TPU default layouts
_SPELLINGS = (None, "v5e", "V5E", "TPU v5 lite", "v5litepod", "v5elitepod", "tpu_v5e", "v6e", "TPU v6 lite",
              "trillium", "v6lite", "v4", "v5p", "v7x", "ironwood", "tpuv9", "", "v5 e", "TPU-v6e")
_TYPES = ("pred", "s4", "u4", "s8", "u8", "bf16", "f16", "s32", "f32", "u32", "s64", "f64", "c64", "c128",
          "f8e4m3fn", "token", "tuple")


def make_tpu(rng: random.Random) -> tuple[str, tuple[int, ...], str | None]:
    rank = rng.choice((0, 1, 2, 2, 3, 4, 6))
    sizes = (0, 1, 2, 7, 8, 64, 127, 128, 129, 1000, 2**31, 2**40, 2**62)
    dims = tuple(rng.choice(sizes) for _ in range(rank))
    return rng.choice(_TYPES), dims, rng.choice(_SPELLINGS)


def check_tpu(args: tuple[str, tuple[int, ...], str | None]) -> None:
    t, dims, generation = args
    shape = ok_or_library(lambda: tpu.default_shape(t, dims, generation=generation))
    if shape is None:
        return
    found = xla.problems(shape)
    if found:
        raise RoundTripError(f"default_shape{args} = {shape} breaks XLA's rules: {found}")
    if str(xla.parse_shape(str(shape))) != str(shape):
        raise RoundTripError(f"default_shape{args} = {shape} does not re-parse to itself")


# ---------------------------------------------------------------- pictures in every format
_FORMATS = ("svg", "html", "tikz")


def make_picture(rng: random.Random) -> tuple[str, str, tuple[tuple[int, int], ...] | None]:
    text = composed_text(rng) if rng.random() < 0.4 else _gen.from_seeds(
        rng, _corpus.seeds("shape" if rng.random() < 0.5 else "cute"), _gen.shape_text)
    window = None if rng.random() < 0.5 else tuple(
        (a, a + rng.choice((0, 1, 3, 64))) for a in (rng.choice((0, 1, 5, 2**40)) for _ in range(2)))
    return text, rng.choice(_FORMATS), window


def check_picture(args: tuple[str, str, tuple[tuple[int, int], ...] | None]) -> None:
    text, fmt, window = args
    draw = {"svg": render.to_svg, "html": render.to_html, "tikz": render.to_tikz}[fmt]
    kwargs: dict[str, Any] = {} if window is None else {"window": [range(a, b) for a, b in window]}
    out = ok_or_library(lambda: draw(text, **kwargs))
    if out is not None and not isinstance(out, str):
        raise RoundTripError(f"to_{fmt}({text!r}) returned {type(out).__name__}, not text")


# ---------------------------------------------------------------- verify_equivalent
def check_verify(text: str) -> None:
    m = parse_or_none(IndexingMap.parse, text)
    if m is None:
        return
    same = ok_or_library(lambda: verify_equivalent(m, m, limit=2000, samples=200))
    if same is not None and (not same.equivalent or not str(same)):
        raise RoundTripError(f"verify_equivalent of {text!r} with itself: {same}")
    simple = ok_or_library(lambda: m.simplify(exact=True))  # XLA's own rewrites may change undefined points
    if simple is not None:
        verdict = ok_or_library(lambda: verify_equivalent(m, simple, limit=2000, samples=200))
        if verdict is not None and not verdict.equivalent:
            raise RoundTripError(f"{text!r} and its simplify(exact=True) differ: {verdict}")


def make_map(rng: random.Random) -> str:
    return _gen.from_seeds(rng, _corpus.seeds("map"), _gen.map_text)


def cute_offsets_text(rng: random.Random) -> str:
    """Plain CuTe text too: its offsets go through the same int64 checks."""
    return _gen.from_seeds(rng, _corpus.seeds("cute"), _gen.cute_text)


def check_cute_offsets(text: str) -> None:
    lay = parse_or_none(cute.Layout.parse, text)
    if lay is None or lay.size() > SMALL:
        return
    want = [lay(i) for i in range(lay.size())]
    try:
        got = lay.offsets().tolist()
    except LayoutError:
        if all(fits_int64(v) for v in want):
            raise RoundTripError(f"offsets() of {text!r} refused, but every offset fits int64") from None
        return
    if got != want:
        raise RoundTripError(f"offsets() of {text!r} differs from L(i) on Python ints")
