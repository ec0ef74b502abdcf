"""The thread-partition picture: the cells thread T owns are its values in the tiled object's own
TV layouts (a separate path through the library from CuTe's partition_* steps)."""

from __future__ import annotations

import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest

from tensorlayout.errors import TensorLayoutError
from tensorlayout.gpu import copy_atom, make_tiled_copy_a, make_tiled_mma, mma_atom
from tensorlayout.gpu.tiled import TiledCopy, TiledMMA
from tensorlayout.render import partition_svg, thread_coords

NS = "{http://www.w3.org/2000/svg}"
MMA = "SM80_16x8x16_F32F16F16F32_TN"


def _owned(svg: str) -> dict[tuple[int, int], int]:
    cells = [g for g in ET.fromstring(svg).iter(f"{NS}g") if g.get("class") == "cell"]
    out = {}
    for g in cells:
        v = int(g.get("data-value", ""))
        texts = [t.text for t in g.iter(f"{NS}text")]
        assert texts == ([f"V{v}"] if v >= 0 else [])
        if v >= 0:
            out[(int(g.get("data-m", "")), int(g.get("data-n", "")))] = v
    return out


def _tiled(name: str) -> TiledMMA | TiledCopy:
    tm = make_tiled_mma(mma_atom(MMA), (2, 2, 1))
    return tm if name == "mma" else make_tiled_copy_a(copy_atom("SM75_U32x4_LDSM_N"), 16, make_tiled_mma(
        mma_atom("SM80_16x8x16_F16F16F16F16_TN")))


@pytest.mark.parametrize(("name", "operand", "thread"), [
    ("mma", "c", 0), ("mma", "c", 37), ("mma", "a", 5), ("mma", "a", 100), ("mma", "b", 66),
    ("copy", "s", 3), ("copy", "d", 31),
])
def test_owned_cells_are_the_threads_tv_values(name: str, operand: str, thread: int) -> None:
    tiled = _tiled(name)
    tv = getattr(tiled, f"tv_{operand}")()
    owned = _owned(partition_svg(tiled, thread, operand))
    assert set(owned) == {tv.coord(thread, v) for v in range(tv.num_values)}
    coords = thread_coords(tiled, thread, operand)[2]
    assert owned == {mn: coords.index(mn) for mn in owned}  # each cell labelled with its value index


def test_single_atom_c_values_in_tv_order() -> None:
    tm = make_tiled_mma(mma_atom(MMA))
    c = tm.tv_c()
    owned = _owned(partition_svg(tm, 9, "c"))
    assert owned == {c.coord(9, v): v for v in range(c.num_values)}


def test_errors() -> None:
    tm = make_tiled_mma(mma_atom(MMA))
    with pytest.raises(TensorLayoutError, match="operands a, b, c, not 's'"):
        partition_svg(tm, 0, "s")
    with pytest.raises(TensorLayoutError, match="thread index"):
        partition_svg(tm, 32, "c")


def _cli(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tensorlayout", "render", *argv], capture_output=True,
                          text=True, check=False)


def test_cli(tmp_path: object) -> None:
    out = f"{tmp_path}/p.svg"
    ok = _cli("--mma", MMA, "--thread", "5", "--operand", "a", "-o", out)
    assert ok.returncode == 0, ok.stderr
    with open(out) as f:
        assert len(_owned(f.read())) == 8
    bad = _cli("--mma", MMA, "--thread", "500", "-o", out)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "LayoutError: a thread index" in bad.stderr
    alone = _cli("(8,8):(1,8)", "--thread", "1", "-o", out)
    assert alone.returncode == 2 and "UsageError: --thread" in alone.stderr
