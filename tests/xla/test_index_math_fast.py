"""The prepared per-call index math (``linear_index`` / ``multi_index``) against the core's general
code on random tiled shapes: same offsets, same indices, same errors (padding, range, types)."""

from __future__ import annotations

import itertools
import random

import numpy as np
import pytest

from tensorlayout.errors import LayoutError, TensorLayoutError
from tensorlayout.xla import linear_index, linear_indices, multi_index, parse_shape
from tensorlayout.xla.lowering import lower_shape
from tensorlayout.xla.tiling import allocated_elements

_TILES = ["", ":T(2,2)", ":T(8,128)", ":T(8,128)(2,1)", ":T(4)", ":T(32,128)(4,1)", ":T(2,4)(2,1)",
          ":T(8)(2,1)", ":T(1,128)", ":T(4,2)(2,1)"]
_TYPES = ["f32", "bf16", "s8", "s4", "pred", "f64"]


def _shapes(rng: random.Random, count: int) -> list[str]:
    out = []
    while len(out) < count:
        rank = rng.randint(1, 3)
        dims = [rng.choice((1, 2, 3, 5, 8, 9, 17, 130)) for _ in range(rank)]
        perm = rng.sample(range(rank), rank)
        layout = ",".join(map(str, perm)) + rng.choice(_TILES)
        text = f"{rng.choice(_TYPES)}[{','.join(map(str, dims))}]{{{layout}}}"
        try:
            lower_shape(parse_shape(text))
        except TensorLayoutError:  # a tile this rank or type cannot take: not a case
            continue
        out.append(text)
    return out


def _slow_multi(text: str, offset: object) -> object:
    shape = parse_shape(text)
    total = allocated_elements(shape)
    if isinstance(offset, bool) or not isinstance(offset, (int, np.integer)) or not 0 <= offset < total:
        return "expected an offset in"
    found = lower_shape(shape).index_of(int(offset))
    return "padding" if found is None else found


def test_prepared_index_math_matches_the_core() -> None:
    rng = random.Random(5)
    for text in _shapes(rng, 60):
        shape = parse_shape(text)
        lay = lower_shape(shape)
        offsets = linear_indices(shape).reshape(-1).tolist()
        for k, idx in enumerate(itertools.product(*map(range, shape.dimensions))):
            assert linear_index(shape, idx) == lay.checked_offset(idx) == offsets[k], (text, idx)
            assert linear_index(text, list(idx)) == offsets[k]
        total = allocated_elements(shape)
        sample = [*range(min(total, 300)), *rng.sample(range(total), min(total, 200))]
        for off in [*sample, -1, total, total + 5]:
            want = _slow_multi(text, off)
            if isinstance(want, tuple):
                assert multi_index(shape, off) == want and multi_index(shape, np.int64(off)) == want
            else:
                with pytest.raises(LayoutError, match=want):
                    multi_index(shape, off)


def test_off_path_arguments_get_the_core_errors() -> None:
    s = parse_shape("f32[3,5]{1,0:T(2,2)}")
    with pytest.raises(LayoutError, match="out of bounds"):
        linear_index(s, (3, 0))
    with pytest.raises(LayoutError, match="expected an index of 2 integers"):
        linear_index(s, (True, 0))
    assert linear_index(s, (np.int64(2), 3)) == 17
    with pytest.raises(LayoutError, match="expected an offset in"):
        multi_index(s, True)
    with pytest.raises(LayoutError, match="padding slot"):
        multi_index(s, 9)
    with pytest.raises(LayoutError, match="expected an XLA Shape"):
        linear_index(3, (0, 0))  # type: ignore[arg-type]
