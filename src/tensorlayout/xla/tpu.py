"""TPU tiling formats: the layout the TPU compiler proposes for an array, per generation.

Rules (the seed's "examples of tiling formats", refined against what libtpu chose for
every row of ``array_sizes.tsv`` (v5e) and every entry parameter of the v5e and v6e
dumps in ``tests/data/hlo/tpu``, which agree):

* tile rows by element width, for second-minor size ``s``: 32/64-bit ``(1|2|4|8,128)``
  for ``s`` ≤ 1/2/4/else; 16-bit ``(2|4|8,128)(2,1)`` for ``s`` ≤ 2/4/else; 8-bit and
  pred ``(4|8,128)(4,1)`` for ``s`` ≤ 4/else, or ``(32,128)(4,1)`` when 32 divides ``s``;
  4-bit ``(8,128)(8,1)E(4)``, or ``(64,128)(8,1)E(4)`` when 64 divides ``s``; 2-bit
  ``(16,128)(16,1)E(2)``, or ``(128,128)(16,1)E(2)`` when 128 divides ``s`` (what libtpu
  0.0.42 chose for ``s2``/``u2`` arrays of rank 2 and 3 on v5e and v6e);
* rank 1: one tile of ``128·(32/bits)`` elements (at least), grown to a power of two up
  to 1024, re-tiled to ``(128)`` and packed like the 2-D tile; scalars: ``T(128·32/bits)``;
* 2-bit arrays of rank 0 and 1 and 1-bit arrays have no rule: the compiler gave no
  layout for them (it stopped compiling 2-bit vectors; JAX has no 1-bit type), so they
  raise :class:`UnsupportedError` rather than print a guess;
* the minor and second-minor dims are the pair whose padded array is smallest (ties
  keep XLA's default order); the other dims stay in default (descending) order.

Other generations raise :class:`UnsupportedError`: their rules are not documented, and
they differ (TPU v3 gave ``bf16[2048,1,2048,128]`` the tile ``(4,128)(2,1)`` for a size-1
second-minor dim in pytorch/xla issue 6674, where v5e picks ``(2,128)(2,1)``).

>>> str(default_layout("bf16", (8, 1, 1280, 16384)))
'{3,2,1,0:T(8,128)(2,1)}'
>>> str(default_layout("f32", (256, 1))), str(default_layout("s8", (1000,), generation="v6e"))
('{0,1:T(1,128)}', '{0:T(1024)(128)(4,1)}')
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from tensorlayout.core.intmath import prod, round_up
from tensorlayout.errors import LayoutError, UnsupportedError, expect_text
from tensorlayout.xla.layout import Layout, Tile
from tensorlayout.xla.shape import Shape, problems
from tensorlayout.xla.types import PrimitiveType, element_type

__all__ = [
    "DEFAULT_GENERATION",
    "GENERATIONS",
    "canonical_generation",
    "default_layout",
    "default_shape",
    "packing",
    "tile_rows",
    "tiled_layout",
]

LANES = 128
#: Generations whose default-layout rule is known (checked against the compiler's choices).
GENERATIONS = ("v5e", "v6e")
#: The generation used when none is given.
DEFAULT_GENERATION = "v5e"
#: Other spellings of a generation (``jax.Device.device_kind`` and marketing names).
_ALIASES = {
    "v5lite": "v5e", "v5litepod": "v5e", "v5elitepod": "v5e",
    "v6lite": "v6e", "trillium": "v6e",
}
#: Generations XLA targets whose rule is not documented: a clear error, not a guess.
_UNDOCUMENTED = ("v2", "v3", "v4", "v4i", "v5p", "v5", "v7", "v7x", "ironwood")


def canonical_generation(name: str | None) -> str:
    """The canonical generation name (``v5e``, ``v6e``) for ``name``; ``None`` = the default.

    Accepts ``jax.Device.device_kind`` text such as ``"TPU v5 lite"``.

    >>> canonical_generation("TPU v6 lite"), canonical_generation(None), canonical_generation("V5E")
    ('v6e', 'v5e', 'v5e')
    """
    if name is None:
        return DEFAULT_GENERATION
    expect_text(name, "a TPU generation name")
    key = re.sub(r"[\s_\-]+", "", name.lower())
    key = key[3:] if key.startswith("tpu") else key
    key = _ALIASES.get(key, key)
    if key in GENERATIONS:
        return key
    known = ", ".join(GENERATIONS)
    if key in _UNDOCUMENTED:
        raise UnsupportedError(f"the default TPU layout rule of {name!r} is not documented "
                               f"(known: {known})")
    raise UnsupportedError(f"unknown TPU generation {name!r} (known: {known})")


def _bits(t: PrimitiveType) -> int:
    if not t.is_array:
        raise LayoutError(f"expected an array element type, but got {t.name}")
    if t.kind != "pred" and t.bit_width < 2:
        raise UnsupportedError(f"no TPU default layout is known for {t.name} ({t.bit_width}-bit): "
                               "no compiler output backs one")
    return 8 if t.kind == "pred" else min(t.bit_width, 32)


def packing(t: str | PrimitiveType) -> int:
    """How many elements share one 32-bit word: 1 (32/64-bit), 2 (16), 4 (8, pred), 8 (4-bit),
    16 (2-bit).

    >>> packing("bf16"), packing("pred"), packing("s4"), packing("u2")
    (2, 4, 8, 16)
    """
    return 32 // _bits(element_type(t))


def tile_rows(t: str | PrimitiveType, second_minor: int) -> int:
    """Rows of the first 2-D tile for a second-minor dim of size ``second_minor``.

    >>> tile_rows("f32", 3), tile_rows("bf16", 1), tile_rows("s8", 160), tile_rows("s8", 16)
    (4, 2, 32, 8)
    """
    p = packing(t)
    if p >= 8:  # 4-bit (2-bit): native (64,128) ((128,128)) tiles when they add no padding
        return 8 * p if second_minor and second_minor % (8 * p) == 0 else p
    for rows in (1, 2, 4):
        if rows >= p and second_minor <= rows:
            return rows
    if p == 4 and second_minor and second_minor % 32 == 0:
        return 32  # 8-bit: native (32,128) tiles when they add no padding
    return 8


def _sub_tiles(p: int) -> tuple[Tile, ...]:
    return (Tile((p, 1)),) if p > 1 else ()


def _rank1_tile(p: int, n: int) -> int:
    size = LANES * p
    while size < n and size < 1024:
        size *= 2
    return max(size, LANES * p) if p < 8 else 1024


def _check_dims(dims: Sequence[int]) -> tuple[int, ...]:
    if isinstance(dims, (str, bytes)) or not all(
            isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in dims):
        raise LayoutError(f"expected non-negative integer dims, but got {dims!r}")
    return tuple(dims)


def tiled_layout(t: str | PrimitiveType, dims: Sequence[int], minor_to_major: Sequence[int],
                 *, generation: str | None = None) -> Layout:
    """The layout a TPU gives ``dims`` when the dim order is fixed to ``minor_to_major``.

    The tiles follow the second-minor dim (see the module rules).

    >>> str(tiled_layout("f32", (2048, 4), (0, 1)))
    '{0,1:T(4,128)}'
    """
    canonical_generation(generation)  # every known generation shares this rule
    et = element_type(t)
    dims = _check_dims(dims)
    return _valid(et, dims, _proposed(et, dims, minor_to_major))


def _valid(et: PrimitiveType, dims: tuple[int, ...], layout: Layout) -> Layout:
    """``layout`` once XLA's validator accepts it on ``dims`` (a LayoutError naming what fails,
    e.g. a tiled size past int64)."""
    found = problems(Shape.array(et, dims, layout))
    if found:
        raise LayoutError(f"no TPU layout for {et.name}[{','.join(map(str, dims))}]: {'; '.join(found)}")
    return layout


def _proposed(et: PrimitiveType, dims: tuple[int, ...], minor_to_major: Sequence[int]) -> Layout:
    p = packing(et)
    e_bits = 32 // p if p >= 8 else 0
    m2m = tuple(minor_to_major)
    if sorted(m2m) != list(range(len(dims))):
        raise LayoutError(f"minor_to_major {m2m} is not a permutation of the {len(dims)} dims")
    if len(dims) < 2 and p > 8:
        raise UnsupportedError(f"no TPU default layout is known for {et.name} arrays of rank "
                               f"{len(dims)}: no compiler output backs one")
    if not dims:
        return Layout((), (Tile((LANES * p,)),), element_size_in_bits=e_bits)
    if len(dims) == 1:
        size = _rank1_tile(p, dims[0])
        tiles = (Tile((size,)),) + ((Tile((LANES,)),) + _sub_tiles(p) if p > 1 else ())
        return Layout((0,), tiles, element_size_in_bits=e_bits)
    rows = tile_rows(et, dims[m2m[1]])
    return Layout(m2m, (Tile((rows, LANES)),) + _sub_tiles(p), element_size_in_bits=e_bits)


def _pair_cost(et: PrimitiveType, dims: tuple[int, ...], a: int, b: int) -> int:
    """Padded element count with ``a`` minor and ``b`` second-minor (first tile only)."""
    rows = tile_rows(et, dims[b])
    rest = prod(d for i, d in enumerate(dims) if i not in (a, b))
    return round_up(dims[a], LANES) * round_up(dims[b], rows) * rest


def default_layout(t: str | PrimitiveType, dims: Sequence[int], *,
                   generation: str | None = None) -> Layout:
    """The TPU layout proposed for an array of element type ``t`` and ``dims``.

    >>> str(default_layout("s32", (2048, 1, 128, 128, 4)))
    '{3,4,2,1,0:T(4,128)}'
    """
    et = element_type(t)
    dims = _check_dims(dims)
    rank = len(dims)
    if rank < 2:
        return tiled_layout(et, dims, tuple(range(rank)), generation=generation)
    default = list(range(rank - 1, -1, -1))
    pairs = [(a, b) for a in default for b in default if a != b]
    a, b = min(pairs, key=lambda ab: (_pair_cost(et, dims, *ab), default.index(ab[0]),
                                      default.index(ab[1])))
    m2m = (a, b) + tuple(d for d in default if d not in (a, b))
    return tiled_layout(et, dims, m2m, generation=generation)


def default_shape(t: str | PrimitiveType, dims: Sequence[int], *,
                  generation: str | None = None) -> Shape:
    """An array shape with :func:`default_layout` attached.

    >>> str(default_shape("bf16", (16, 256)).to_string(with_layout=True))
    'bf16[16,256]{1,0:T(8,128)(2,1)}'
    """
    return Shape.array(element_type(t), tuple(dims), default_layout(t, dims, generation=generation))
