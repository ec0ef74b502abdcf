"""Global-memory coalescing, checked against a plain-loop reading of the definition: per warp and
per vector of values, the distinct 32-byte sectors of the bytes the 32 threads touch."""

from __future__ import annotations

import itertools
import random

import pytest

from tensorlayout.cute import Layout, make_layout
from tensorlayout.errors import LayoutError
from tensorlayout.gpu import TVLayout, make_tiled_copy, universal_copy
from tensorlayout.gpu.coalescing import coalescing, offsets_table
from tensorlayout.triton.encodings import BlockedLayout


def _by_definition(table: list[list[int]], nbytes: int) -> tuple[int, list[int]]:
    """(vector, sectors of every request) with loops: the widest power-of-two width <= 16 bytes
    that keeps every group of consecutive values contiguous and aligned, then per warp request."""
    values = len(table[0])
    vec = 1
    for w in (2, 4, 8, 16):
        if w * nbytes > 16 or values % w:
            break
        if all(row[g + j] == row[g] + j and row[g] % w == 0
               for row in table for g in range(0, values, w) for j in range(w)):
            vec = w
        else:
            break
    sectors = []
    for w0 in range(0, len(table), 32):
        for g in range(0, values, vec):
            touched = {(row[g + j] * nbytes + b) // 32
                       for row in table[w0:w0 + 32] for j in range(vec) for b in range(nbytes)}
            sectors.append(len(touched))
    return vec, sectors


def _random_global(rng: random.Random, m: int, n: int) -> Layout:
    pad = rng.choice((0, 0, 1, 8, 64))
    return Layout((m, n), (n + pad, 1)) if rng.random() < 0.5 else Layout((m, n), (1, m + pad))


def test_copies_and_blocked_layouts_as_the_definition_counts() -> None:
    rng = random.Random(7)
    cases = 0
    for _k in range(40):
        bits = rng.choice((8, 16, 32))
        thr = rng.choice(((16, 8), (32, 4), (8, 16)))
        vals = rng.choice(((1, 8), (1, 4), (2, 2), (4, 1)))
        thr_layout = Layout(thr, (thr[1], 1)) if rng.random() < 0.5 else make_layout(thr)
        atom_bits = bits * vals[0] * vals[1] if bits * vals[0] * vals[1] in (8, 16, 32, 64, 128) else bits
        try:
            tc = make_tiled_copy(universal_copy(atom_bits), bits, thr_layout, make_layout(vals))
        except LayoutError:
            continue
        m, n = tc.tiler
        g = _random_global(rng, m, n)
        rep = coalescing(tc, g, bits)
        vec, sectors = _by_definition(offsets_table(tc, g).tolist(), bits // 8)
        assert (rep.vector, rep.sectors_per_request) == (vec, (min(sectors), max(sectors)))
        cases += 1
    for spt, tpw, order in itertools.product(((1, 1), (1, 4), (2, 8), (4, 1)), ((4, 8), (8, 4), (32, 1)),
                                             ((1, 0), (0, 1))):
        ll = BlockedLayout(list(spt), list(tpw), [2, 2], list(order)).to_linear_layout([64, 64])
        rep = coalescing(ll, None, 16)
        vec, sectors = _by_definition(offsets_table(ll).tolist(), 2)
        assert (rep.vector, rep.sectors_per_request) == (vec, (min(sectors), max(sectors)))
        cases += 1
    assert cases > 40


def test_known_answers() -> None:
    ll = BlockedLayout([1, 8], [4, 8], [4, 1], [1, 0]).to_linear_layout([64, 64])
    rep = coalescing(ll, None, 16)  # 8 halfs (16 bytes) a thread, a warp 4 rows of 128 bytes, 4 times
    assert (rep.vector, rep.requests, rep.sectors_per_request, rep.ideal_sectors) == (8, 4, (16, 16), 16)
    assert rep.efficiency == 1.0 and "16 bytes" in str(rep)
    col = BlockedLayout([1, 8], [4, 8], [4, 1], [1, 0]).to_linear_layout([64, 64])
    rep = coalescing(col, Layout((64, 64), (1, 64)), 16)  # the same threads over a column-major tensor
    assert rep.vector == 1 and rep.sectors_per_request == (8, 8) and rep.efficiency == 0.25
    tv = TVLayout(Layout((32, 4), (1, 32)), (32, 4))
    assert coalescing(tv, Layout((32, 4), (4, 1)), 32).sectors_per_request == (16, 16)


def test_bad_arguments_raise_typed_errors() -> None:
    tv = TVLayout(Layout((32, 4), (1, 32)), (32, 4))
    with pytest.raises(LayoutError, match="element_bits is 8, 16, 32 or 64"):
        coalescing(tv, None, 12)
    with pytest.raises(LayoutError, match="has 16 elements; the tile has 128"):
        coalescing(tv, Layout(16, 1), 16)
    with pytest.raises(LayoutError, match="a TVLayout, a TiledCopy or a Triton LinearLayout"):
        coalescing("tv", None, 16)  # type: ignore[arg-type]
