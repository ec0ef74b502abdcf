"""Fuzz targets of the bridges: ``convert``, ``relayout`` and ``render``."""

from __future__ import annotations

import math
import random

import numpy as np

from tensorlayout import convert, cute, relayout, render, xla
from tensorlayout.errors import TensorLayoutError
from tensorlayout.indexing import IndexingMap
from tests.fuzz import _corpus, _gen
from tests.fuzz._common import RoundTripError, ok_or_library, parse_or_none, roundtrip

TLA_TAGS = ("RowMajor", "ColumnMajor", "VectorLayout", "zN", "zZ", "nZ", "nN", "L0C", "Weight4BitnZ",
            "zn", "", "Bogus")
TLA_DTYPES = ("f16", "bf16", "f32", "s8", "s4", "u8", 2, 4, 0, -1, "int8", "x")


def make_target(rng: random.Random) -> str:
    """An XLA shape or a CuTe layout (seeds, mutations, grammar)."""
    if rng.random() < 0.5:
        return _gen.from_seeds(rng, _corpus.seeds("shape"), _gen.shape_text)
    return _gen.from_seeds(rng, _corpus.seeds("cute"), _gen.cute_text)


def _extent(rng: random.Random) -> int:
    return int(rng.choice(("0", "1", "7", "16", "40", "72", "-1", "-128", str(2**64), str(2**31), "33")))


def make_tla(rng: random.Random) -> tuple[str, int, int, str | int]:
    return rng.choice(TLA_TAGS), _extent(rng), _extent(rng), rng.choice(TLA_DTYPES)


def _parse_target(text: str) -> xla.Shape | cute.Layout | None:
    parse = xla.parse_shape if convert.is_xla_text(text) else cute.Layout.parse
    return parse_or_none(parse, text)


def check_convert(text: str) -> None:
    value = _parse_target(text)
    if value is None:
        return
    if isinstance(value, xla.Shape):
        out = ok_or_library(convert.xla_to_cute, value)
        if out is not None:
            roundtrip(cute.Layout.parse, out, f"xla_to_cute({text!r})")
    else:
        shape = ok_or_library(convert.cute_to_xla, value)
        if shape is not None:
            roundtrip(xla.parse_shape, shape, f"cute_to_xla({text!r})")
    m = ok_or_library(convert.to_indexing_map, value)
    if m is not None:
        roundtrip(IndexingMap.parse, m, f"to_indexing_map({text!r})")


def check_tla(args: tuple[str, int, int, str | int]) -> None:
    shape = ok_or_library(convert.tla_to_xla, *args)
    if shape is not None:
        roundtrip(xla.parse_shape, shape, f"tla_to_xla{args!r}")


def _logical_size(value: xla.Shape | cute.Layout) -> tuple[int, ...] | None:
    if isinstance(value, xla.Shape):
        return tuple(value.dimensions) if value.is_array else None
    size = cute.size(value)
    return (size,) if isinstance(size, int) else None


def _value_range(value: xla.Shape | cute.Layout) -> int:
    """Values every element type holds: sub-byte types get 0 .. 2^(bits-1)-1 (0 for 1 bit)."""
    bits = value.element_type.bits if isinstance(value, xla.Shape) else 64
    return 1 << max(0, min(bits, 64) - 1) if bits < 8 else 1 << 62


def check_relayout(text: str) -> None:
    value = _parse_target(text)
    if value is None:
        return
    dims = _logical_size(value)
    if (dims is None or len(dims) > 64 or any(not 0 <= d < 2**31 for d in dims)  # numpy: rank <= 64
            or math.prod(d for d in dims if d) > 2**40  # numpy refuses such a shape even when empty
            or int(np.prod(dims, dtype=object)) > 4096):
        ok_or_library(relayout.to_physical, np.zeros((1,), np.float32), text)
        return
    array = np.arange(int(np.prod(dims)), dtype=np.int64).reshape(dims) % _value_range(value)
    try:
        physical = relayout.to_physical(array, text)
        back = relayout.from_physical(physical, text)
    except TensorLayoutError:
        return
    if back.shape != array.shape or not np.array_equal(back, array):
        raise RoundTripError(f"from_physical(to_physical(arange)) != arange for {text!r}")


def check_render(text: str) -> None:
    svg = ok_or_library(render.to_svg, text)
    if svg is not None and not svg.startswith("<svg"):
        raise RoundTripError(f"to_svg({text!r}) is not an SVG document")


def check_render_tla(args: tuple[str, int, int, str | int]) -> None:
    try:
        fmt = cute.tla.make_format(*args)
    except TensorLayoutError:
        return
    ok_or_library(render.to_svg, fmt)
