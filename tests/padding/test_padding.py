"""Padding advice: the three user reports of issue 13, exact bytes, per-dimension facts."""

from __future__ import annotations

import itertools
import json
import random

import pytest

from tensorlayout.cli import main
from tensorlayout.core.intmath import prod
from tensorlayout.errors import LayoutError
from tensorlayout.xla import array_size, byte_size_of_elements, parse_shape
from tensorlayout.xla.padding import (
    buffers_padding,
    dimension_padding,
    human_bytes,
    padding_alternatives,
    padding_report,
    tpu_shape,
)
from tensorlayout.xla.tpu import default_shape, tiled_layout

# (shape as the report printed it, logical bytes, allocated bytes, padded logical dims)
USER_REPORTS = {
    # jax issue 7502 (take_along_axis): 32x
    "jax-7502": ("s32[2048,1,128,128,4]{4,3,2,0,1:T(8,128)}", 536870912, 17179869184, (4,)),
    # pytorch/xla issue 6674 "How to minimize padding during sharding" (TPU v3): 4x
    "pytorch-xla-6674": ("bf16[2048,1,2048,128]{0,1,3,2:T(4,128)(2,1)}", 1 << 30, 4 << 30, (1,)),
    # tensorflow issue 30803 (TF 1.13 printed no tiles; TPUs then tiled 32-bit arrays
    # T(8,128)): "Size: 8.00G ... Unpadded size: 128.00M ... (64.0x expansion)"
    "tensorflow-30803": ("f32[256,512,128,2]{3,2,1,0:T(8,128)}", 128 << 20, 8 << 30, (3,)),
}


@pytest.mark.parametrize("case", sorted(USER_REPORTS))
def test_user_reports_reproduce(case: str) -> None:
    text, logical, allocated, padded = USER_REPORTS[case]
    r = padding_report(text)
    assert (r.logical_bytes, r.allocated_bytes, r.padded_dimensions) == (logical, allocated, padded)
    assert r.alternatives and all(a.allocated_bytes == logical for a in r.alternatives[:3])
    assert {a.kind for a in r.alternatives} == {"layout", "transpose", "reshape"}


def test_report_sizes_match_xla_human_readable_numbers() -> None:
    # the sizes as the three reports print them (HumanReadableNumBytes)
    assert [human_bytes(n) for n in (8 << 30, 128 << 20, 4 << 30, 1 << 30, 3 << 30)] == [
        "8.00G", "128.00M", "4.00G", "1.00G", "3.00G"]
    assert human_bytes(6 * 2**30 - 48 * 2**20) == "5.95G"  # pytorch/xla 1965
    assert (human_bytes(64 * 1024), human_bytes(1536), human_bytes(1023)) == ("64.0K", "1.5K", "1023B")


def test_done_when_cli_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["padding", "s32[2048,1,128,128,4]{4,3,2,0,1:T(8,128)}", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert (data["logical_bytes"], data["allocated_bytes"]) == (536870912, 17179869184)
    assert data["padded_dimensions"] == [4]
    dim4 = next(d for d in data["dimensions"] if d["dimension"] == 4)
    assert (dim4["size"], dim4["padded_size"], dim4["tile_size"]) == (4, 128, 128)
    for alt in data["alternatives"]:
        assert alt["logical_bytes"] == 536870912
        assert alt["allocated_bytes"] == array_size(parse_shape(alt["shape"]))


def test_cli_text_names_the_padding_tile(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["padding", "f32[256,512,128,2]{3,2,1,0:T(8,128)}"]) == 0
    out = capsys.readouterr().out
    assert "dim 3 (size 2): tile 128, pads it to 128 (64x)" in out
    assert "64.0x" in out and "8.00G" in out
    assert main(["padding", "bf16[16,256]", "--tpu", "v6e"]) == 0  # no layout: TPU default
    assert "bf16[16,256]{1,0:T(8,128)(2,1)}" in capsys.readouterr().out
    assert main(["padding", "f32[8]", "--tpu", "v4"]) == 2
    assert "not documented" in capsys.readouterr().err


def _random_tpu_shapes(n: int) -> list[str]:
    rng = random.Random(13)
    types = ["f32", "bf16", "s8", "pred", "s4", "f64"]
    out = []
    for _ in range(n):
        dims = tuple(rng.choice([1, 2, 3, 4, 7, 8, 16, 33, 128, 130]) for _ in range(rng.randint(0, 4)))
        perm = list(range(len(dims)))
        rng.shuffle(perm)
        layout = tiled_layout(rng.choice(types), dims, perm) if dims else None
        t = rng.choice(types)
        shape = default_shape(t, dims) if layout is None else \
            parse_shape(f"{t}[{','.join(map(str, dims))}]").with_layout(tiled_layout(t, dims, perm))
        out.append(shape.to_string(with_layout=True))
    return out


@pytest.mark.parametrize("text", _random_tpu_shapes(60))
def test_dimension_padding_and_alternatives_are_exact(text: str) -> None:
    shape = parse_shape(text)
    dims = dimension_padding(shape)
    # the padded dims multiply to the elements the first tile allocates (ArraySize's count)
    bits = shape.layout.element_size_in_bits or shape.element_type.byte_width * 8
    assert -(-prod(d.padded_size for d in dims) * bits // 8) == array_size(shape)
    r = padding_report(shape)
    assert r.allocated_bytes == array_size(shape)
    assert r.logical_bytes == byte_size_of_elements(shape)
    for alt in padding_alternatives(shape, limit=50):
        assert alt.allocated_bytes == array_size(alt.shape) < r.allocated_bytes
        assert prod(alt.shape.dimensions) == prod(shape.dimensions)
        assert alt.shape.element_type == shape.element_type


def test_alternatives_cover_every_minor_pair_by_brute_force() -> None:
    # the cheapest layout over all minor_to_major permutations (TPU tiles) is found
    shape = parse_shape("f32[3,130,2,9]{0,1,2,3:T(4,128)}")
    best = min(array_size(shape.with_layout(tiled_layout("f32", shape.dimensions, perm)))
               for perm in itertools.permutations(range(4)))
    layouts = [a for a in padding_alternatives(shape, limit=100) if a.kind == "layout"]
    assert layouts[0].allocated_bytes == best < array_size(shape)


def test_tpu_shape_and_buffers() -> None:
    assert tpu_shape("f32[8,2]{1,0:T(8,128)}").to_string(with_layout=True) == "f32[8,2]{1,0:T(8,128)}"
    assert tpu_shape("(f32[], s8[4])").to_string(with_layout=True) == \
        "(f32[]{:T(128)}, s8[4]{0:T(512)(128)(4,1)})"
    s = buffers_padding([("t", parse_shape("(f32[8,2]{1,0:T(8,128)}, token[])"))])
    assert [b.name for b in s.buffers] == ["t{0}"]
    with pytest.raises(LayoutError,
        match=r"expected an array shape, but got \(f32\[2\]\{0\}, f32\[3\]\{0\}\)"):
        padding_report("(f32[2], f32[3])")
    assert padding_report("f32[<=9,4]{1,0:T(8,128)}").alternatives == ()  # dynamic: no advice
