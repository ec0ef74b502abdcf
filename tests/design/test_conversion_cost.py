"""Conversion cost for any two thread-value layouts (Triton encodings, LinearLayouts, CuTe TV
layouts), the ``convert-layout`` command and the source -> shared -> destination picture.

Brute-force checks from definitions: a CuTe TV layout describing the same mapping as a Triton
encoding costs the same; the swizzled scratch layout puts every element at a distinct address in
each round; the bank model's wavefronts for ld/st.shared sides are measured, not assumed.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from itertools import product

import pytest

from tensorlayout.cli import main
from tensorlayout.cute import Layout
from tensorlayout.design import conversion_cost, triton_convert_layout, tv_linear_layout
from tensorlayout.errors import LayoutError
from tensorlayout.render._conversion import conversion_svg, scratch_offsets
from tensorlayout.triton import BlockedLayout, LinearLayout, NVMMADistributedLayout

ROWS = Layout(((32, 4), 8), ((1, 32), 128))  # thread t holds row t of a 128x8 tile
COLS = Layout(((8, 16), 8), ((128, 1), 16))  # thread (a, b) holds column a, rows b + 16v
BLOCKED = ("#ttg.blocked<{sizePerThread = [1, 2], threadsPerWarp = [2, 16], warpsPerCTA = [1, 4], "
           "order = [1, 0]}>")
MMA = "#ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [2, 2], instrShape = [16, 8]}>"


def _tv_of(ll: LinearLayout, shape: list[int]) -> Layout:
    """The CuTe TV layout (thread, value) -> column-major element of a distributed layout."""
    regs, threads = ll.get_in_dim_size("register"), ll.get_in_dim_size("lane") * ll.get_in_dim_size("warp")
    m = shape[0]
    offs = []
    for t, v in product(range(threads), range(regs)):
        p = ll.apply({"register": v, "lane": t % 32, "warp": t // 32, "block": 0})
        offs.append(p["dim0"] + m * p["dim1"])
    # strides of the power-of-two modes: the images of each bit
    t_strides = tuple(offs[(1 << i) * regs] for i in range(threads.bit_length() - 1))
    v_strides = tuple(offs[1 << i] for i in range(regs.bit_length() - 1))
    return Layout(((2,) * len(t_strides), (2,) * len(v_strides)), (t_strides, v_strides))


def test_cute_tv_layouts_cost_what_the_same_triton_layouts_cost() -> None:
    src = BlockedLayout([1, 4], [8, 4], [4, 1], [1, 0]).to_linear_layout([32, 32])
    dst = NVMMADistributedLayout([2, 0], [2, 2], [16, 8]).to_linear_layout([32, 32])
    assert tv_linear_layout(_tv_of(src, [32, 32]), [32, 32]) == src
    a = conversion_cost(_tv_of(src, [32, 32]), _tv_of(dst, [32, 32]), [32, 32], "f16").as_dict()
    b = conversion_cost(src, dst, [32, 32], "f16").as_dict()
    assert a == b


def test_a_layout_against_itself_is_free() -> None:
    cost = conversion_cost(ROWS, ROWS, [128, 8], "f32")
    assert cost.free and cost.path == "none" and not cost.instructions and cost.bytes_through_shared == 0


def test_a_register_permutation_is_free() -> None:
    ll = BlockedLayout([2, 2], [8, 4], [2, 2], [1, 0]).to_linear_layout([32, 16])
    bases = dict(ll.bases)
    swapped = LinearLayout.from_bases([("register", bases["register"][::-1])] +
                                      [(n, bases[n]) for n in ("lane", "warp", "block")], ["dim0", "dim1"])
    cost = conversion_cost(ll, swapped, [32, 16], "f16")
    assert cost.path == "registers" and cost.free and not cost.instructions


def test_rows_to_columns_goes_through_shared_memory_without_conflicts() -> None:
    cost = conversion_cost(ROWS, COLS, [128, 8], "f32")
    assert cost.path == "shared" and cost.scratch_bytes == 128 * 8 * 4
    assert cost.wavefronts == {"store": 1}
    assert cost.bytes_through_shared == 2 * 128 * 8 * 4


@pytest.mark.parametrize("dtype", ["i8", "f16", "f32"])
def test_each_round_puts_every_element_at_its_own_address(dtype: str) -> None:
    c = triton_convert_layout(BLOCKED, MMA, [64, 64], dtype)
    offsets, rounds = scratch_offsets(c)
    assert c.shared is not None
    pairs = set(zip(offsets.ravel().tolist(), rounds.ravel().tolist()))
    assert len(pairs) == offsets.size
    assert int(offsets.max()) + 1 == c.shared.scratch_bytes * 8 // c.bitwidth
    assert int(rounds.max()) + 1 == c.shared.rounds


def test_tv_layout_needs_two_modes_and_whole_warps() -> None:
    with pytest.raises(LayoutError, match="two modes"):
        tv_linear_layout(Layout(8, 1), [8])
    with pytest.raises(LayoutError, match="multiple of 32 threads"):
        tv_linear_layout(Layout((16, 2), (2, 1)), [32])


def test_picture_has_three_panels() -> None:
    c = triton_convert_layout(BLOCKED, MMA, [32, 64], "f16")
    svg = conversion_svg(c)
    assert svg.count('class="cell"') == 3 * 32 * 32 and "top-left 32x32 of 32x64" in svg
    assert "source" in svg and "destination" in svg and "data-bank" in svg
    assert ET.fromstring(svg).tag.endswith("svg")


def test_cli_text_and_json(capsys: pytest.CaptureFixture[str], tmp_path) -> None:
    assert main(["convert-layout", BLOCKED, MMA, "--shape", "32x64", "--dtype", "f16"]) == 0
    out = capsys.readouterr().out
    assert "ldmatrix.sync.aligned.m8n8.x4.shared.b16 x2" in out and "scratch: 4096 bytes" in out
    svg = tmp_path / "c.svg"
    assert main(["convert-layout", BLOCKED, MMA, "--shape", "32,64", "--json", "--svg", str(svg)]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["path"] == "shared" and data["scratch_bytes"] == 4096 and data["swizzle"]["vector"]
    assert svg.read_text().startswith("<svg")


def test_cli_reads_cute_tv_layouts(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["convert-layout", "((32,4),8):((1,32),128)", "((8,16),8):((128,1),16)", "--shape", "128x8",
                 "--dtype", "f32", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert (data["shape"], data["bits"]) == ([128, 8], 32)
    assert data["path"] == "shared" and data["wavefronts"] == {"store": 1}


@pytest.mark.parametrize("argv", [
    ["((32,4),8):((1,32),128)", "((8,16),8):((128,1),16)"],  # a TV layout without a shape
    [BLOCKED, MMA],                                     # no shape
    [BLOCKED, MMA, "--shape", "32xq"],                  # bad shape
    [BLOCKED, MMA, "--shape", "32x64", "--dtype", "f7"],  # unknown dtype
    [BLOCKED, MMA, "--shape", "32x64", "--num-warps", "8"],  # wrong warps
    ["#ttg.blocked<{sizePerThread = [1, 2]", MMA, "--shape", "32x64"],  # broken text
])
def test_cli_bad_input_is_one_line_and_exit_2(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["convert-layout", *argv]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("tensorlayout: ") and "Traceback" not in err
