"""The layout core tested directly, by brute force from its definition.

``offset(x) = post(base + Σ stride · ((source(x) // block) mod extent))``: every law below
is checked against that sum evaluated element by element, on seeded random layouts (CuTe-style
modes, XLA tilings with padding and merges, swizzles, bases, broadcasts).
"""

from __future__ import annotations

import itertools
import random

import numpy as np
import pytest

from tensorlayout.core.digits import Digit, Merge, XorSwizzle, c_order_indices
from tensorlayout.core.layout import CoreLayout
from tensorlayout.errors import LayoutError
from tensorlayout.xla.lowering import lower_shape

SEEDS = range(60)


def _value(source: object, idx: tuple[int, ...]) -> int:
    if isinstance(source, Merge):
        out = 0
        for p in source.parts:
            out = out * p.extent + (_value(p.source, idx) // p.block) % p.extent
        return out
    assert isinstance(source, int)
    return idx[source] if source >= 0 else 0


def brute_offset(lay: CoreLayout, idx: tuple[int, ...]) -> int:
    """The module doc's sum, written out once more without the library's helpers."""
    out = lay.base + sum(d.stride * ((_value(d.source, idx) // d.block) % d.extent) for d in lay.digits)
    if lay.post is not None:
        sw = lay.post
        mask = ((1 << sw.bits) - 1) << (sw.base + max(0, sw.shift))
        moved = out & mask
        out ^= moved >> sw.shift if sw.shift >= 0 else moved << -sw.shift
    return out


def brute_offsets(lay: CoreLayout) -> list[int]:
    return [brute_offset(lay, idx) for idx in itertools.product(*map(range, lay.shape))]


def random_modes(rng: random.Random) -> CoreLayout:
    """A CuTe-style layout: per dim 1-3 modes of random extents and strides (maybe 0 or shared)."""
    rank = rng.randint(1, 3)
    strides = [0, 1, 2, 3, 4, 6, 8, 12, 24]
    modes = [[(rng.randint(1, 4), rng.choice(strides)) for _ in range(rng.randint(1, 3))]
             for _ in range(rank)]
    shape = [max(1, np.prod([e for e, _ in m]) - rng.randint(0, 1)) for m in modes]  # maybe padded
    swizzled = rng.random() < 0.3
    post = XorSwizzle(rng.randint(1, 2), rng.randint(0, 2), rng.choice([2, 3, -2])) if swizzled else None
    return CoreLayout.from_modes(shape, modes, base=rng.choice([0, 0, 5]), post=post)


def random_xla(rng: random.Random) -> CoreLayout:
    """An XLA tiled layout: random dims, minor_to_major, one or two tiles (``*`` merges too)."""
    rank = rng.randint(1, 3)
    dims = [rng.randint(1, 9) for _ in range(rank)]
    m2m = list(range(rank))
    rng.shuffle(m2m)
    tiles = rng.choice(["", ":T(2,2)", ":T(4)", ":T(2,3)(2,1)", ":T(3,2)(2)", ":T(*,2)", ":T(4)(3)"])
    if rank == 1 and "," in tiles:
        tiles = ":T(4)"
    return lower_shape(f"f32[{','.join(map(str, dims))}]{{{','.join(map(str, m2m))}{tiles}}}")


def layouts() -> list[CoreLayout]:
    out = []
    for seed in SEEDS:
        rng = random.Random(seed)
        out += [random_modes(rng), random_xla(rng)]
    return out


LAYOUTS = layouts()


@pytest.mark.parametrize("lay", LAYOUTS, ids=lambda lay: lay.name or str(lay.shape))
def test_offsets_are_the_definition(lay: CoreLayout) -> None:
    want = brute_offsets(lay)
    assert lay.offsets().tolist() == want
    idx = c_order_indices(lay.shape)
    assert lay.offsets_at(idx).tolist() == want
    assert [lay.offset(tuple(r)) for r in idx.tolist()] == want


@pytest.mark.parametrize("lay", LAYOUTS, ids=lambda lay: lay.name or str(lay.shape))
def test_index_of_inverts_offsets(lay: CoreLayout) -> None:
    offs = brute_offsets(lay)
    cells = list(itertools.product(*map(range, lay.shape)))
    top = max(max(offs) + 2, lay.slots)
    for k in range(-1, top):
        holders = tuple(c for c, o in zip(cells, offs) if o == k)
        assert lay.indices_at(k) == holders
        found = lay.index_of(k)
        assert (found is None) if not holders else found in holders


@pytest.mark.parametrize("lay", LAYOUTS, ids=lambda lay: lay.name or str(lay.shape))
def test_owners_are_the_first_holder(lay: CoreLayout) -> None:
    offs = brute_offsets(lay)
    n = max(offs) + 3
    want = [next((p for p, o in enumerate(offs) if o == k), -1) for k in range(n)]
    assert lay.owners(n).tolist() == want
    assert lay.owners(0).tolist() == []


@pytest.mark.parametrize("lay", LAYOUTS, ids=lambda lay: lay.name or str(lay.shape))
def test_injective_and_dense_by_enumeration(lay: CoreLayout) -> None:
    offs = brute_offsets(lay)
    assert lay.is_injective() == (len(set(offs)) == len(offs))
    digits = [d for d in lay.simple_digits() if d.extent > 1]
    box = [sum(d.stride * v for d, v in zip(digits, vals))
           for vals in itertools.product(*(range(d.extent) for d in digits))]
    assert lay.is_dense() == (sorted(box) == list(range(len(box))))


@pytest.mark.parametrize("lay", LAYOUTS, ids=lambda lay: lay.name or str(lay.shape))
def test_padding_slots_hold_no_element(lay: CoreLayout) -> None:
    offs = brute_offsets(lay)
    if lay.post is None and lay.base == 0 and all(d.stride >= 0 for d in lay.digits):
        assert max(offs) < lay.slots
    if lay.is_injective() and lay.post is None:
        unused = [k for k in range(lay.slots) if lay.index_of(k) is None]
        assert len(unused) == lay.slots - len(set(o for o in offs if 0 <= o < lay.slots))


@pytest.mark.parametrize("lay", LAYOUTS, ids=lambda lay: lay.name or str(lay.shape))
def test_contiguous_tiles_are_runs(lay: CoreLayout) -> None:
    """A tile (the cells sharing ``i // split``) is one run ``[k·t, (k+1)·t)`` when the core says
    its tiles are contiguous: distinct tiles, distinct runs."""
    t, split = lay.contiguous_tile(), lay.tile_split()
    if t is None or split is None or lay.post is not None or lay.base or lay.per_dim_digits() is None \
            or lay.tile_elements is not None:
        return  # (a re-split digit's tiles are XLA's own count; the split is read off exact radices)
    runs: dict[tuple[int, ...], set[int]] = {}
    for idx in itertools.product(*map(range, lay.shape)):
        runs.setdefault(tuple(i // s for i, s in zip(idx, split)), set()).add(brute_offset(lay, idx) // t)
    assert all(len(r) == 1 for r in runs.values())
    if lay.is_injective():
        assert len({next(iter(r)) for r in runs.values()}) == len(runs)


def test_swizzle_is_a_post_op_and_one_to_one() -> None:
    plain = CoreLayout.from_modes((8, 8), [[(8, 8)], [(8, 1)]])
    for sw in (XorSwizzle(3, 0, 3), XorSwizzle(2, 1, 3), XorSwizzle(2, 1, -3), XorSwizzle(3, 1, 1)):
        lay = CoreLayout.from_modes((8, 8), [[(8, 8)], [(8, 1)]], post=sw)
        assert lay.offsets().tolist() == [sw(o) for o in plain.offsets().tolist()]
        assert lay.is_injective() and sorted(lay.offsets().tolist()) == list(range(64))


def test_merge_source_is_row_major_over_its_parts() -> None:
    m = Merge((Digit(0, 1, 3), Digit(1, 1, 4)))
    lay = CoreLayout((3, 4), (Digit(m, 1, 12, 1),), 12)
    assert lay.offsets().tolist() == [i * 4 + j for i in range(3) for j in range(4)]
    assert lay.per_dim_digits() is None and lay.tile_split() is None


def test_the_issue_31_layout_has_no_contiguous_tile() -> None:
    lay = CoreLayout.from_modes((4, 6), [[(2, 1), (2, 24)], [(2, 4), (3, 8)]])
    assert lay.tile_split() == (2, 2) and lay.contiguous_tile() is None
    assert CoreLayout.from_modes((4, 6), [[(2, 2), (2, 12)], [(2, 1), (3, 4)]]).contiguous_tile() == 4


def test_size_is_the_old_name_of_slots() -> None:
    lay = CoreLayout.from_modes((3,), [[(4, 1)]], size=9)
    assert lay.slots == lay.size == 9 and lay.elements == 3


def test_too_many_offsets_is_a_typed_error() -> None:
    lay = CoreLayout.from_modes((1 << 15, 1 << 15), [[(1 << 15, 0)], [(1 << 15, 0)]])
    with pytest.raises(LayoutError, match="listing every offset is limited"):
        lay.is_injective()
