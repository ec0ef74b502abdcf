"""``tensorlayout show --coalescing``: vector width and sectors per warp request."""

from __future__ import annotations

import json

import pytest

from tensorlayout.cli import main

BLOCKED = ("#ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], "
           "order = [1, 0]}>")
F16 = ("--coalescing", "--dtype", "f16")


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_triton_layout_over_row_and_column_major(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "show", BLOCKED, "--shape", "64,64", *F16, "--json")
    assert code == 0 and json.loads(out) == {"vector": 8, "vector_bytes": 16, "requests": 4,
                                             "sectors_per_request": [16, 16], "ideal_sectors": 16,
                                             "efficiency": 1.0}
    code, out, _ = run(capsys, "show", BLOCKED, "--shape", "64,64", *F16, "--global", "(64,64):(1,64)")
    assert code == 0
    assert out.startswith("vector: 1 elements (2 bytes) per thread; 32 request(s) per warp, 8 sectors")


def test_cute_tv_layout_needs_the_global_tensor(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "show", "((8,16),8):((128,1),16)", "--coalescing", "--dtype", "f16",
                       "--global", "(16,64):(64,1)")
    assert code == 0 and "16 sectors" in out and "100%" in out
    code, _out, err = run(capsys, "show", "((8,16),8):((128,1),16)", "--coalescing")
    assert code != 0 and "--global giving the M x N tensor" in err
    code, _out, err = run(capsys, "show", "(4,8):(8,1)", "--global", "(4,8):(8,1)")
    assert code != 0 and "--global gives the global tensor of --coalescing" in err
