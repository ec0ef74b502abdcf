"""`show --as` refuses what has no answer (with the reason, exit 2, one line); Triton's
`--as cute-tv`, `--as xla` (saying what its offsets are) and `--hw-view`."""

from __future__ import annotations

import random

import pytest

from tensorlayout.cli import main
from tensorlayout.cute import parse_layout, size
from tensorlayout.triton import get_distributed_view, get_shared_view
from tensorlayout.triton._mlir import parse_layout as parse_triton

BLOCKED = ("tensor<4x16xf16, #ttg.blocked<{sizePerThread = [1, 2], threadsPerWarp = [4, 8], "
           "warpsPerCTA = [1, 1], order = [1, 0]}>>")
SHARED = "#ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>"


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("argv, reason", [
    (("Sw<3,3,3> o _0 o (8,64):(64,1)", "--as", "xla"), "swizzle XORs offset bits"),
    (("Sw<3,3,3> o _0 o (8,64):(64,1)", "--as", "map"), "an indexing map has"),
    (("f32[4]", "--as", "cute-tv"), "Triton distributed layout"),
    ((SHARED, "--shape", "8,8", "--as", "cute-tv"), "--as cute gives it"),
    (("f32[4]", "--hw-view"), "not Triton text"),
])
def test_as_refuses_what_has_no_answer(capsys: pytest.CaptureFixture[str], argv: tuple[str, ...],
                                       reason: str) -> None:
    code, out, err = _run(capsys, "show", *argv)
    assert (code, out) == (2, "") and len(err.splitlines()) == 1 and reason in err
    assert err.startswith("tensorlayout: ")


def test_swizzle_as_cute_and_triton_still_answer(capsys: pytest.CaptureFixture[str]) -> None:
    assert _run(capsys, "show", "Sw<3,3,3> o _0 o (8,64):(64,1)", "--as", "cute")[:2] == \
        (0, "Sw<3,3,3> o _0 o (8,64):(64,1)\n")


def test_triton_as_xla_says_what_its_offsets_and_element_type_are(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "show", SHARED, "--shape", "8,8", "--as", "xla", "--dtype", "bf16")
    assert code == 0 and out.splitlines() == [
        "bf16[8,8]{1,0}", "(offsets: shared-memory offset of each element; element type from --dtype "
        "(default f16; an encoding has none))"]
    code, out, _ = _run(capsys, "show", BLOCKED.replace("xf16", "xi8"), "--as", "xla")
    assert code == 0 and out.startswith("s8[4,16]{1,0}\n") and "from the tensor type" in out


def _random_blocked(rng: random.Random) -> tuple[str, list[int]]:
    """A random #blocked encoding text and a shape it covers exactly once."""
    while True:
        spt = [rng.choice([1, 2, 4]) for _ in range(2)]
        lanes0 = rng.choice([1, 2, 4, 8, 16, 32])
        tpw = [lanes0, 32 // lanes0]
        warps0 = rng.choice([1, 2, 4])
        wpc = [warps0, 4 // warps0] if rng.random() < 0.5 else [warps0, 1]
        order = rng.choice([[1, 0], [0, 1]])
        shape = [spt[d] * tpw[d] * wpc[d] * rng.choice([1, 2]) for d in range(2)]
        text = (f"tensor<{shape[0]}x{shape[1]}xf16, #ttg.blocked<{{sizePerThread = {spt}, threadsPerWarp = "
                f"{tpw}, warpsPerCTA = {wpc}, order = {order}}}>>")
        return text, shape


@pytest.mark.parametrize("seed", range(12))
def test_as_cute_tv_places_each_thread_value_where_triton_does(capsys: pytest.CaptureFixture[str],
                                                                seed: int) -> None:
    """Brute force: CuTe's (t, v) -> dim0 + D0 * dim1 is Triton's (register v, lane, warp of t)."""
    text, shape = _random_blocked(random.Random(seed))
    ll = parse_triton(text)
    code, out, err = _run(capsys, "show", text, "--as", "cute-tv")
    if ll.get_in_dim_size("register") == 1 or ll.get_in_dim_size("lane") * ll.get_in_dim_size("warp") == 1:
        assert code == 2 and "needs threads and values" in err
        return
    assert code == 0, err
    tv = parse_layout(out.strip())
    lanes = ll.get_in_dim_size("lane")
    threads, values = int(size(tv[0])), int(size(tv[1]))
    assert threads == lanes * ll.get_in_dim_size("warp") and values == ll.get_in_dim_size("register")
    for t in range(threads):
        for v in range(values):
            got = ll.apply({"register": v, "lane": t % lanes, "warp": t // lanes, "block": 0})
            assert tv(t, v) == got["dim0"] + shape[0] * got["dim1"], (text, t, v)


def test_hw_view_is_tritons_hardware_view(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "show", BLOCKED, "--hw-view")
    ll = parse_triton(BLOCKED)
    assert code == 0 and get_distributed_view(ll, True).rstrip("\n") in out
    assert get_distributed_view(ll).rstrip("\n") not in out
    code, out, _ = _run(capsys, "show", SHARED, "--shape", "8,8", "--hw-view")
    assert code == 0 and get_shared_view(parse_triton(SHARED, [8, 8]), True).rstrip("\n") in out

