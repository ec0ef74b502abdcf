"""TPU layouts and sizes against what the real TPU compiler (libtpu, v5e/v6e) chose."""

from __future__ import annotations

import csv
import re

import pytest

from tensorlayout.xla import parse_shape
from tensorlayout.xla.sizes import array_size
from tensorlayout.xla.tpu import default_layout, tile_rows
from tests.conftest import DATA

ROWS = list(csv.DictReader((DATA / "hlo/tpu/array_sizes.tsv").open(), delimiter="\t"))


@pytest.mark.parametrize("row", ROWS, ids=[f"{r['generation']}-{r['shape_dtype']}" for r in ROWS])
def test_array_size_equals_bytes_the_tpu_compiler_allocated(row: dict[str, str]) -> None:
    shape = parse_shape(row["layout_chosen_by_tpu_compiler"])
    assert array_size(shape) == int(row["argument_size_in_bytes"])


@pytest.mark.parametrize("row", ROWS, ids=[f"{r['generation']}-{r['shape_dtype']}" for r in ROWS])
def test_default_layout_matches_the_compilers_choice(row: dict[str, str]) -> None:
    shape = parse_shape(row["layout_chosen_by_tpu_compiler"])
    assert default_layout(shape.element_type, shape.dimensions) == shape.layout


PARAMETER = re.compile(r"=\s*(\S+\[[^\]]*\]\{[^}]*\})\s+parameter\(")


def parameter_shapes() -> list[str]:
    found = []
    for path in sorted((DATA / "hlo/tpu").glob("*.hlo")):
        found += PARAMETER.findall(path.read_text())
    return found


def test_default_layout_match_rate_on_hlo_parameters() -> None:
    """Fusion parameters (often in VMEM) get op-specific layouts; most still match."""
    shapes = [parse_shape(t) for t in parameter_shapes()]
    matched = sum(default_layout(s.element_type, s.dimensions)
                  == s.layout.replace(memory_space=0) for s in shapes if s.layout)
    assert len(shapes) > 500
    assert matched / len(shapes) >= 0.85


def test_seed_tiling_formats() -> None:
    assert str(default_layout("f32", (64, 256))) == "{1,0:T(8,128)}"
    assert str(default_layout("f32", (2, 256))) == "{1,0:T(2,128)}"
    assert str(default_layout("f32", (3, 256))) == "{1,0:T(4,128)}"
    assert str(default_layout("bf16", (64, 256))) == "{1,0:T(8,128)(2,1)}"
    # the seed's 8-bit format; libtpu switches to native (32,128) tiles when 32 | rows
    assert str(default_layout("s8", (40, 256))) == "{1,0:T(8,128)(4,1)}"
    assert str(default_layout("s8", (64, 256))) == "{1,0:T(32,128)(4,1)}"
    assert str(default_layout("s4", (8, 128))) == "{1,0:T(8,128)(8,1)E(4)}"
    assert str(default_layout("bf16", ())) == "{:T(256)}"
    assert tile_rows("pred", 2) == 4
