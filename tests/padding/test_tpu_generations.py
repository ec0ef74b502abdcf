"""TPU default layouts per generation, checked against the compiler's choices."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from tensorlayout.errors import UnsupportedError
from tensorlayout.hlo import parse_module
from tensorlayout.xla import array_size, parse_shape
from tensorlayout.xla.tpu import canonical_generation, default_layout, default_shape

TPU = Path(__file__).parent.parent / "data" / "hlo" / "tpu"


def _tsv_rows() -> list[dict[str, str]]:
    with (TPU / "array_sizes.tsv").open() as f:
        return list(csv.DictReader(f, delimiter="\t"))


def test_every_array_sizes_row_matches_the_compiler() -> None:
    rows = _tsv_rows()
    assert len(rows) > 250
    for row in rows:
        chosen = parse_shape(row["layout_chosen_by_tpu_compiler"])
        gen = row["generation"]
        ours = default_shape(chosen.element_type, chosen.dimensions, generation=gen)
        assert ours.to_string(with_layout=True) == chosen.to_string(with_layout=True), row
        assert array_size(ours) == int(row["argument_size_in_bytes"]), row


@pytest.mark.parametrize("generation", ["v5e", "v6e"])
def test_entry_parameters_and_results_of_the_tpu_dumps(generation: str) -> None:
    checked = 0
    for path in sorted(TPU.glob(f"*.{generation}.opt.hlo")):
        module = parse_module(path.read_text())
        signature = module.attributes["entry_computation_layout"]
        for shape in (*signature.parameters, signature.result):
            for leaf in shape.leaves():
                if leaf.is_array:
                    layout = default_layout(leaf.element_type, leaf.dimensions, generation=generation)
                    assert str(layout) == str(leaf.layout), (path.name, leaf)
                    checked += 1
    assert checked > 100


def test_generation_names() -> None:
    assert canonical_generation("TPU v5 lite") == "v5e"
    assert canonical_generation("tpu-v6e") == canonical_generation("Trillium") == "v6e"
    for undocumented in ("v4", "TPU v5p", "v3", "v2"):
        with pytest.raises(UnsupportedError, match="not documented"):
            default_layout("f32", (8, 128), generation=undocumented)
    with pytest.raises(UnsupportedError, match="unknown TPU generation"):
        canonical_generation("v99")


def test_v3_differs_from_v5e_so_it_is_not_guessed() -> None:
    # pytorch/xla 6674 (TPU v3) printed T(4,128)(2,1) for a size-1 bf16 second-minor dim;
    # the v5e rule picks (2,128)(2,1) for it: the rules differ per generation.
    v3 = parse_shape("bf16[2048,1,2048,128]{0,1,3,2:T(4,128)(2,1)}")
    from_v5e = default_layout("bf16", (1, 300))
    assert str(from_v5e) == "{1,0:T(2,128)(2,1)}" and v3.layout is not None
    assert str(v3.layout.tiles[0]) == "(4,128)"
