"""Linear layouts <-> CuTe layouts: point-by-point agreement, round trips, and the SM80 atoms."""

from __future__ import annotations

import itertools
import random

import pytest

from tensorlayout.cute import Layout
from tensorlayout.errors import LayoutError, UnsupportedError
from tensorlayout.triton import (
    DotOperandLayout,
    LinearLayout,
    NVMMADistributedLayout,
    SwizzledSharedLayout,
    from_cute,
    to_cute,
)


def _cute_like(rng: random.Random) -> LinearLayout:
    """Bases that each set one distinct output bit (or none)."""
    sizes = [1 << rng.randint(0, 3) for _ in range(rng.randint(1, 3))]
    total = sum(s.bit_length() - 1 for s in sizes)
    bits = list(range(total))
    rng.shuffle(bits)
    names, bases = ["register", "lane", "warp"][: rng.randint(1, 3)], []
    for name in names:
        vecs = []
        for _ in range(rng.randint(0, 3)):
            flat = 1 << bits.pop() if bits and rng.random() < 0.8 else 0
            vec, rest = [], flat
            for s in sizes:
                vec.append(rest % s)
                rest //= s
            vecs.append(vec)
        bases.append((name, vecs))
    names_out = [f"dim{i}" for i in range(len(sizes))]
    return LinearLayout.from_bases(bases, names_out, sizes, require_surjective=False)


def _index(ll: LinearLayout, point: dict[str, int]) -> int:
    index, scale = 0, 1
    for value, size in zip(ll.apply(point).values(), ll.get_out_dim_sizes()):
        index += value * scale
        scale *= size
    return index


@pytest.mark.parametrize("seed", range(40))
def test_to_cute_agrees_at_every_point(seed: int) -> None:
    ll = _cute_like(random.Random(seed))
    cute = to_cute(ll)
    names = ll.get_in_dim_names()
    for coords in itertools.product(*(range(ll.get_in_dim_size(n)) for n in names)):
        point = dict(zip(names, coords))
        assert cute(*coords) == _index(ll, point)
    assert from_cute(cute, names, ll.out_dims) == ll


def test_sm80_fragments_are_cutes_mma_atoms() -> None:
    """Triton's mma.sync layouts, read as (thread, value) -> column-major tile index, are CuTe's
    SM80_16x8x16 C, A and B TV layouts (cute/atom/mma_traits_sm80.hpp)."""
    mma = NVMMADistributedLayout([2, 0], [1, 1], [16, 8])
    c = mma.to_linear_layout([16, 8])
    assert str(to_cute(c, ["lane", "register"])) == "((4,8),(2,2)):((32,1),(16,8))"
    a = DotOperandLayout(0, mma, 2).to_linear_layout([16, 16])
    assert str(to_cute(a, ["lane", "register"])) == "((4,8),(2,2,2)):((32,1),(16,8,128))"
    b = DotOperandLayout(1, mma, 2).to_linear_layout([16, 8]).transpose_outs(["dim1", "dim0"])
    assert str(to_cute(b, ["lane", "register"])) == "((4,8),(2,2)):((16,1),(8,64))"


def test_swizzles_and_xor_overlaps_are_not_cute_layouts() -> None:
    swizzled = SwizzledSharedLayout(2, 1, 4, [1, 0]).to_linear_layout([4, 8])
    with pytest.raises(UnsupportedError, match="several output bits"):
        to_cute(swizzled)
    overlap = LinearLayout.from_bases([("lane", [[1], [1]])], ["dim0"])
    with pytest.raises(UnsupportedError, match="both set output bit 0"):
        to_cute(overlap)
    with pytest.raises(UnsupportedError, match="not a power of two"):
        from_cute(Layout(3, 1), ["lane"], [("dim0", 4)])
    with pytest.raises(UnsupportedError, match="stride 3"):
        from_cute(Layout(2, 3), ["lane"], [("dim0", 4)])
    with pytest.raises(UnsupportedError, match="two strides"):
        from_cute(Layout((2, 2), (1, 1)), ["lane", "warp"], [("dim0", 4)])
    with pytest.raises(LayoutError, match="exceeds"):
        from_cute(Layout(4, 2), ["lane"], [("dim0", 4)])
    with pytest.raises(LayoutError, match="each in dim"):
        to_cute(overlap, ["warp"])
