"""``check_block_spec`` against the Pallas TPU lowering itself (jax 0.10.2, lowered for TPU
on CPU): on every case, "illegal" exactly when the lowering raises, and the rule named is
the one its message states. Which rules come from where: ``lanes``/``sublanes`` (rank >= 2)
and ``vector`` (rank 1) are the lowering's ``_check_block_mappings``, checked here; the VMEM
bytes (Mosaic's native ``(8·32/bits, 128)`` tiles) are an estimate the lowering does not
report, checked only by hand below. Rank-1 cases need libtpu (a deviceless TPU device as
the default device); without it they are skipped."""

from __future__ import annotations

import importlib.util
import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

from tensorlayout.cli import main
from tensorlayout.errors import LayoutError
from tensorlayout.jax.blocks import check_block_spec, nearest_legal_blocks

SCRIPT = Path(__file__).parent / "pallas_blocks.py"
HAVE_LIBTPU = importlib.util.find_spec("libtpu") is not None
ARRAYS = [(64, 256), (100, 300), (16, 1000), (3, 5), (4, 64, 256), (2, 24, 384)]
DTYPES = ["float32", "bfloat16", "int8"]


def _cases(rank1: bool, n: int, seed: int) -> list[tuple[list[int | None], list[int], str]]:
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        if rank1:
            array = [rng.choice([1000, 4096, 5000, 300])]
            block: list[int | None] = [rng.choice([100, 128, 256, 512, 1000, 1024, 2048, 3072, array[0]])]
        else:
            array = list(rng.choice(ARRAYS))
            block = [rng.choice([None, 1, 3, 8, 16, 24, 64, 100, 128, 256, a]) for a in array]
            block = [b if b is None or b <= a else a for b, a in zip(block, array)]
        out.append((block, array, rng.choice(DTYPES)))
    return out


def _lowering(cases: list[tuple[list[int | None], list[int], str]], tpu: bool) -> list[str]:
    pytest.importorskip("jax.experimental.pallas")
    run = subprocess.run([sys.executable, str(SCRIPT)] + (["tpu"] if tpu else []),
                         input=json.dumps(cases), capture_output=True, text=True, timeout=240,
                         env={**os.environ, "JAX_PLATFORMS": "cpu"}, check=True)
    answers: list[str] = json.loads(run.stdout.strip().splitlines()[-1])
    return answers


def _agree(cases: list[tuple[list[int | None], list[int], str]], answers: list[str]) -> int:
    illegal = 0
    for (block, array, dtype), answer in zip(cases, answers, strict=True):
        ours = check_block_spec(block, array, dtype)
        assert (ours.verdict == "illegal") == (answer != "ok"), (block, array, dtype, answer)
        if answer != "ok":
            illegal += 1
            words = {"lanes": "divisible by 8 and 128", "sublanes": "divisible by 8 and 128",
                     "vector": "rank 1 block"}
            assert all(words[b.rule] in answer for b in ours.broken), answer
            for near in ours.nearest:
                assert check_block_spec(near, array, dtype).verdict != "illegal"
    return illegal


def test_blocks_of_rank_2_and_3_agree_with_the_pallas_lowering() -> None:
    cases = _cases(False, 160, 29)
    illegal = _agree(cases, _lowering(cases, False))
    assert 20 < illegal < 150


@pytest.mark.skipif(not HAVE_LIBTPU, reason="rank-1 rules need a TPU device kind: libtpu (the tpu extra)")
def test_rank_1_blocks_agree_with_the_pallas_lowering() -> None:
    cases = _cases(True, 40, 7)
    illegal = _agree(cases, _lowering(cases, True))
    assert 3 < illegal < 37


def test_vmem_padding_by_hand() -> None:
    # bf16 packs 2 rows per 32-bit sublane: an (8,128) block fills half of a (16,128) tile
    r = check_block_spec((8, 128), (64, 256), "bfloat16")
    assert (r.verdict, r.vmem_tile) == ("legal with padding", (16, 128))
    assert (r.block_bytes, r.vmem_bytes) == (2048, 4096)
    assert r.nearest[0] == (16, 128)
    assert check_block_spec((32, 256), (64, 256), "int8").verdict == "legal"
    full = check_block_spec((64, 100), (64, 100), "float32")  # the whole array: legal, lanes pad
    assert (full.verdict, full.vmem_bytes) == ("legal with padding", 64 * 128 * 4)
    bad = check_block_spec((2, 4, 100), (4, 64, 256), "float32")
    assert [(b.rule, b.dimension) for b in bad.broken] == [("lanes", 2), ("sublanes", 1)]
    assert nearest_legal_blocks((2, 4, 100), (4, 64, 256), "float32")[0] == (2, 8, 128)
    with pytest.raises(LayoutError, match="block shape of positive ints"):
        check_block_spec((8,), (64, 256), "float32")


def test_cli(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["blocks", "8,100", "64,256", "bf16"]) == 1
    out = capsys.readouterr().out
    assert "illegal" in out and "dim 1: the last block dim (100) must be a multiple of 128" in out
    assert "nearest legal: (16, 128)" in out
    assert main(["blocks", "None,8,128", "4,64,256", "float32", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["verdict"] == "legal"
