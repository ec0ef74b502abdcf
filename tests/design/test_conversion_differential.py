"""Differential test of :func:`tensorlayout.design.triton_convert_layout` against the real Triton
3.9 compiler on CPU: random (seeded) pairs of distributed layouts, each compiled as a Gluon kernel
``load(SRC) -> convert_layout(DST) -> store`` for ``cuda:90``; the scratch bytes and the PTX counts
of shared-memory instructions, shuffles and barriers must equal the prediction.

A few pairs run by default (one compile takes about a second); ``pytest -m thorough`` runs more.
"""

from __future__ import annotations

import random
import re
from collections import Counter
from typing import Any

import pytest

from tensorlayout.design import triton_convert_layout
from tests.gpu.gpu2.gluon import build

triton = pytest.importorskip("triton")
gluon = pytest.importorskip("triton.experimental.gluon")
gl = pytest.importorskip("triton.experimental.gluon.language")
runtime = pytest.importorskip("triton.experimental.gluon._runtime")
compiler = pytest.importorskip("triton.backends.compiler")

#: The PTX ops compared (byte permutes, ``prmt``, are not modelled).
OPS = re.compile(r"\b(st\.shared[.\w]*|ld\.shared[.\w]*|ldmatrix[.\w]*|stmatrix[.\w]*|shfl\.sync[.\w]*"
                 r"|bar\.sync|bar\.warp\.sync)")
DTYPES = {"f16": "*fp16", "f32": "*fp32", "i8": "*i8", "f64": "*fp64"}


@gluon.jit
def _convert(x_ptr, y_ptr, M: gl.constexpr, N: gl.constexpr, SRC: gl.constexpr, DST: gl.constexpr):
    rows = gl.arange(0, M, layout=gl.SliceLayout(1, SRC))
    cols = gl.arange(0, N, layout=gl.SliceLayout(0, SRC))
    x = gl.load(x_ptr + rows[:, None] * N + cols[None, :])
    y = gl.convert_layout(x, DST)
    rows2 = gl.arange(0, M, layout=gl.SliceLayout(1, DST))
    cols2 = gl.arange(0, N, layout=gl.SliceLayout(0, DST))
    gl.store(y_ptr + rows2[:, None] * N + cols2[None, :], y)


@gluon.jit
def _convert_1d(x_ptr, y_ptr, M: gl.constexpr, SRC: gl.constexpr, DST: gl.constexpr):
    x = gl.load(x_ptr + gl.arange(0, M, layout=SRC))
    y = gl.convert_layout(x, DST)
    gl.store(y_ptr + gl.arange(0, M, layout=DST), y)


def _gluon(spec: dict[str, Any]) -> Any:
    args = dict(spec)
    cls = getattr(gl, args.pop("kind"))
    if isinstance(args.get("parent"), dict):
        args["parent"] = _gluon(args["parent"])
    return cls(**args)


def compile_counts(src: dict[str, Any], dst: dict[str, Any], shape: list[int],
                   dtype: str) -> tuple[int, Counter]:
    """Triton's scratch bytes and PTX op counts for the conversion (compiled on CPU)."""
    sig = {"x_ptr": DTYPES[dtype], "y_ptr": DTYPES[dtype], "M": "constexpr", "N": "constexpr",
           "SRC": "constexpr", "DST": "constexpr"}
    consts = {"M": shape[0], "N": shape[-1], "SRC": _gluon(src), "DST": _gluon(dst)}
    fn = _convert
    if len(shape) == 1:
        fn = _convert_1d
        del sig["N"], consts["N"]
    kernel = triton.compile(runtime.GluonASTSource(fn, sig, consts),
                            target=compiler.GPUTarget("cuda", 90, 32), options={"num_warps": 4})
    return kernel.metadata.shared, Counter(OPS.findall(kernel.asm["ptx"]))


def _split(rng: random.Random, total: int, n: int = 2) -> list[int]:
    """``total`` (a power of two) split into ``n`` powers of two at random."""
    parts = [1] * n
    for _ in range(total.bit_length() - 1):
        parts[rng.randrange(n)] *= 2
    return parts


def random_layout(rng: random.Random) -> dict[str, Any]:
    """A random 2-D distributed layout for 4 warps: blocked, MMA v2/v3 or an MMA v2 operand."""
    kind = rng.choice(["blocked", "blocked", "mma2", "mma3", "dot"])
    if kind == "blocked":
        spt = [rng.choice([1, 2, 4, 8]), rng.choice([1, 2, 4, 8])]
        return {"kind": "BlockedLayout", "size_per_thread": spt,
                "threads_per_warp": _split(rng, 32), "warps_per_cta": _split(rng, 4),
                "order": rng.choice([[1, 0], [0, 1]])}
    mma2 = {"kind": "NVMMADistributedLayout", "version": [2, 0], "warps_per_cta": _split(rng, 4),
            "instr_shape": [16, 8]}
    if kind == "mma2":
        return mma2
    if kind == "mma3":
        return {"kind": "NVMMADistributedLayout", "version": [3, 0], "warps_per_cta": [4, 1],
                "instr_shape": [16, rng.choice([16, 32, 64]), 16]}
    return {"kind": "DotOperandLayout", "operand_index": rng.randrange(2), "parent": mma2, "k_width": 2}


def _cases(seed: int, n: int) -> list[tuple[dict[str, Any], dict[str, Any], list[int], str]]:
    rng = random.Random(seed)
    return [(random_layout(rng), random_layout(rng), [rng.choice([16, 32, 64]), rng.choice([16, 32, 64])],
             rng.choice(sorted(DTYPES))) for _ in range(n)]


def known_difference(got: Any, counts: Counter) -> str | None:
    """The one difference seen and not modelled: a source broadcast over warps whose data the
    destination's warps index differently. ``minimalCvtLayout`` as published keeps the warp
    dimension (shared memory), but Triton 3.9 stays inside the warp (shuffles)."""
    src_warps_free = got.src.get_free_variable_masks()["warp"] != 0
    if src_warps_free and got.path == "shared" and any(op.startswith("shfl") for op in counts):
        return "source broadcast over warps: Triton 3.9 shuffles within the warp (not modelled)"
    return None


def _warp_local_cases(seed: int, n: int) -> list[tuple[dict[str, Any], dict[str, Any], list[int], str]]:
    """Blocked pairs with the same warps: mostly shuffles or register permutations."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        warps = _split(rng, 4)
        src, dst = ({"kind": "BlockedLayout", "size_per_thread": [rng.choice([1, 2, 4]) for _ in range(2)],
                     "threads_per_warp": _split(rng, 32), "warps_per_cta": warps,
                     "order": rng.choice([[1, 0], [0, 1]])} for _ in range(2))
        shape = [rng.choice([16, 32, 64]), rng.choice([16, 32, 64])]
        out.append((src, dst, shape, rng.choice(sorted(DTYPES))))
    return out


def _slice_cases(seed: int, n: int) -> list[tuple[dict[str, Any], dict[str, Any], list[int], str]]:
    """Pairs of slices of random 2-D layouts (1-D tensors)."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        src, dst = ({"kind": "SliceLayout", "dim": rng.randrange(2), "parent": random_layout(rng)}
                    for _ in range(2))
        out.append((src, dst, [rng.choice([16, 32, 64, 128])], rng.choice(sorted(DTYPES))))
    return out


def check_case(src: dict[str, Any], dst: dict[str, Any], shape: list[int], dtype: str) -> None:
    shared, counts = compile_counts(src, dst, shape, dtype)
    got = triton_convert_layout(build(src), build(dst), shape, dtype)
    if (got.scratch_bytes, dict(got.ptx_op_counts)) != (shared, dict(counts)):
        reason = known_difference(got, counts)
        if reason:
            pytest.xfail(reason)
    assert (got.scratch_bytes, dict(got.ptx_op_counts)) == (shared, dict(counts)), (src, dst, shape, dtype)


@pytest.mark.parametrize("case", _cases(27, 4))
def test_random_pairs(case: tuple[Any, ...]) -> None:
    check_case(*case)


@pytest.mark.parametrize("case", _warp_local_cases(5, 2))
def test_random_warp_local_pairs(case: tuple[Any, ...]) -> None:
    check_case(*case)


@pytest.mark.parametrize("case", _slice_cases(3, 1))
def test_random_slice_pairs(case: tuple[Any, ...]) -> None:
    check_case(*case)


@pytest.mark.thorough
@pytest.mark.parametrize("case", _cases(2027, 60) + _warp_local_cases(2027, 30) + _slice_cases(2027, 30))
def test_random_pairs_thorough(case: tuple[Any, ...]) -> None:
    check_case(*case)
