"""Differential tests of the newer Gluon encodings against Triton 3.9 itself (the wheel, CPU).

Random slice, shared-linear, padded-shared, AMD MFMA/WMMA (and their dot operands), tensor-memory
and CGA cases go through Gluon's builder (Triton's C++ ``toLinearLayout``, in forked children so
an abort is caught) and through ``tensorlayout.triton``: the layouts must be equal, and where
Triton raises or aborts we must raise a typed error. Each case's IR text, as Triton prints it,
must read back through ``parse_layout`` to the same layout. A few hundred cases by default;
``-m thorough`` runs thousands.
"""

from __future__ import annotations

import math
import random
import re
from collections.abc import Callable
from typing import Any

import pytest

from tensorlayout.errors import TensorLayoutError
from tensorlayout.triton import LinearLayout, PaddedSharedLayout, parse_layout
from tests.gpu.gpu2.gluon import build
from tests.triton._oracle import Result, agrees, run_isolated

ttgl = pytest.importorskip("triton.experimental.gluon.language")

DEFAULT, THOROUGH = 60, 600
Case = tuple[dict[str, Any], list[int]]
_BUILDER: list[Any] = []


def _gluon_class(kind: str) -> Any:
    from triton.experimental.gluon.language import amd
    from triton.experimental.gluon.language.nvidia import blackwell

    for module in (ttgl, amd, blackwell):
        if hasattr(module, kind):
            return getattr(module, kind)
    raise KeyError(kind)


def to_gluon(spec: dict[str, Any]) -> Any:
    """The Gluon object for a layout dict (``order`` on a padded layout: ``with_identity_for``)."""
    args = dict(spec)
    kind = args.pop("kind")
    if isinstance(args.get("parent"), dict):
        args["parent"] = to_gluon(args["parent"])
    if kind == "PaddedSharedLayout" and "order" in args:
        return ttgl.PaddedSharedLayout.with_identity_for(args["interval_padding_pairs"], args["shape"],
                                                          args["order"])
    return _gluon_class(kind)(**args)


def ours(spec: dict[str, Any]) -> Any:
    if spec["kind"] == "PaddedSharedLayout" and "order" in spec:
        pairs, shape, order = spec["interval_padding_pairs"], spec["shape"], spec["order"]
        return PaddedSharedLayout.with_identity_for(pairs, shape, order)
    return build(spec)


def _builder() -> Any:
    if not _BUILDER:
        from triton._C.libtriton import gluon_ir, ir

        ctx = ir.context()
        ir.load_dialects(ctx)
        _BUILDER.append((ctx, gluon_ir.GluonOpBuilder(ctx)))
    return _BUILDER[0][1]


def _triton_layout(case: Case) -> Result:
    """Triton's layout as (in dims with bases, shape), or its error."""
    spec, shape = case
    b = _builder()
    got = b.to_linear_layout(to_gluon(spec)._to_ir(b), list(shape))
    if hasattr(got, "rows"):
        return ("ll", [["row", got.rows], ["col", got.cols]], list(shape))
    if hasattr(got, "offset_bases"):
        return ("ll", [["offset", got.offset_bases], ["block", got.block_bases]], list(shape))
    return ("ll", [["register", got.reg_bases], ["lane", got.lane_bases], ["warp", got.warp_bases],
                   ["block", got.block_bases]], list(shape))


def _ir_text(case: Case) -> Result:
    """The type Triton prints for a value of the case's layout and shape."""
    spec, shape = case
    b = _builder()
    layout = to_gluon(spec)._to_ir(b)
    if spec["kind"].startswith("TensorMemory"):
        elem = b.get_int8_ty() if "Scales" in spec["kind"] else b.get_half_ty()
        ty = b.get_tensor_mem_desc_ty(elem, list(shape), layout, list(shape))
    elif "Shared" in spec["kind"]:
        ty = b.get_shared_mem_desc_ty(b.get_half_ty(), list(shape), layout, list(shape))
    else:
        ty = b.get_distributed_ty(b.get_half_ty(), list(shape), layout)
    return ("text", str(ty), None)


def _ours(spec: dict[str, Any], shape: list[int]) -> LinearLayout | TensorLayoutError:
    try:
        return ours(spec).to_linear_layout(shape)
    except TensorLayoutError as e:
        return e


def compare(cases: list[Case]) -> int:
    """Every case agrees with Triton; returns how many Triton answered."""
    answered = 0
    for (spec, shape), result in zip(cases, run_isolated(_triton_layout, cases)):
        answered += agrees(_ours(spec, shape), result, shape, spec)
    return answered


def read_back(cases: list[Case]) -> None:
    """Triton's printed type reads back as the layout the case builds (or fails the same way)."""
    for (spec, shape), (kind, text, _) in zip(cases, run_isolated(_ir_text, cases)):
        if kind != "text":
            continue
        got = _ours(spec, shape)
        if isinstance(got, LinearLayout):
            assert parse_layout(text) == got, (spec, text)
        else:
            with pytest.raises(TensorLayoutError, match=r"\w"):
                parse_layout(text)


# ----- random cases -------------------------------------------------------------------------

def _p2(rng: random.Random, lo: int, hi: int) -> int:
    return 1 << rng.randint(lo, hi)


def _perm_bases(rng: random.Random, sizes: list[int], extra_zero: float = 0.2) -> list[list[int]]:
    """Unit bases covering ``sizes`` in a random order, with a few zero (broadcast) ones."""
    bases = [[p if i == d else 0 for i in range(len(sizes))] for d, n in enumerate(sizes)
             for p in [1 << k for k in range(n.bit_length() - 1)]]
    bases += [[0] * len(sizes) for _ in range(rng.random() < extra_zero)]
    rng.shuffle(bases)
    return bases


def blocked_cga(rng: random.Random) -> Case:
    """Blocked layouts whose CGA bases are random (valid or not, as Triton 3.9 judges them)."""
    rank = rng.randint(1, 2)
    if rng.random() < 0.5:
        cga = _perm_bases(rng, [_p2(rng, 0, 2) for _ in range(rank)])
    else:
        cga = [[rng.choice([0, 0, 1, 1, 2, 4]) for _ in range(rank)] for _ in range(rng.randint(1, 3))]
    spec = {"kind": "BlockedLayout", "size_per_thread": [1] * rank, "cga_layout": cga,
            "threads_per_warp": [32] + [1] * (rank - 1), "warps_per_cta": [1] * rank,
            "order": list(range(rank))}
    return spec, [_p2(rng, 0, 7) for _ in range(rank)]


def _blocked(rng: random.Random, rank: int) -> dict[str, Any]:
    tpw, wpc = [1] * rank, [1] * rank
    for _ in range(5):
        tpw[rng.randrange(rank)] *= 2
    for _ in range(rng.randint(0, 2)):
        wpc[rng.randrange(rank)] *= 2
    order = list(range(rank))
    rng.shuffle(order)
    return {"kind": "BlockedLayout", "size_per_thread": [_p2(rng, 0, 2) for _ in range(rank)],
            "threads_per_warp": tpw, "warps_per_cta": wpc, "order": order}


def _mfma(rng: random.Random, rank: int = 2) -> dict[str, Any]:
    mn = rng.choice([[32, 32], [16, 16], [64, 4], [4, 64]])
    spec: dict[str, Any] = {"kind": "AMDMFMALayout", "version": rng.randint(1, 4),
                            "instr_shape": mn + [rng.choice([4, 8, 16, 32])],
                            "transposed": rng.random() < 0.6,
                            "warps_per_cta": [1] * (rank - 2) + [_p2(rng, 0, 2), _p2(rng, 0, 2)],
                            "element_bitwidth": rng.choice([32, 64])}
    if rng.random() < 0.4:
        spec["tiles_per_warp"] = [1] * (rank - 2) + [_p2(rng, 0, 1), _p2(rng, 0, 1)]
    return spec


def _wmma(rng: random.Random) -> dict[str, Any]:
    pool = [[1, 0], [0, 1], [2, 0], [0, 2]]
    chosen = rng.sample(pool, rng.randint(0, 3)) + [[0, 0]] * (rng.random() < 0.2)
    if rng.random() < 0.2 and chosen:  # a repeated basis: Triton aborts
        chosen.append(chosen[0])
    cut = rng.randint(0, len(chosen))
    return {"kind": "AMDWMMALayout", "version": rng.randint(1, 3), "transposed": rng.random() < 0.5,
            "warp_bases": chosen[:cut], "reg_bases": chosen[cut:],
            "instr_shape": [16, 16, rng.choice([16, 32]) if rng.random() < 0.8 else 4]}


def slice_case(rng: random.Random) -> Case:
    mma = {"kind": "NVMMADistributedLayout", "version": [2, 0], "instr_shape": [16, 8],
           "warps_per_cta": [_p2(rng, 0, 1), _p2(rng, 0, 1)]}
    parent = rng.choice([lambda: _blocked(rng, rng.randint(2, 3)), lambda: _mfma(rng), lambda: mma])()
    rank = len(parent.get("order") or parent["warps_per_cta"])
    return {"kind": "SliceLayout", "dim": rng.randrange(rank), "parent": parent}, \
        [_p2(rng, 0, 7) for _ in range(rank - 1)]


def shared_linear(rng: random.Random) -> Case:
    rank = rng.randint(1, 3)
    sizes = [_p2(rng, 0, 4) for _ in range(rank)]
    bases = _perm_bases(rng, sizes)
    if rng.random() < 0.3 and bases:  # mix a basis into another: still onto, or not
        i, j = rng.randrange(len(bases)), rng.randrange(len(bases))
        bases[i] = [a ^ b if rng.random() < 0.5 else a for a, b in zip(bases[i], bases[j])]
    split = rng.randint(max(1, len(bases) - 2), max(1, len(bases)))
    spec = {"kind": "SharedLinearLayout", "offset_bases": bases[:split] or [[0] * rank],
            "block_bases": bases[split:], "alignment": rng.choice([16, 128])}
    shape = [1 << max([b[d] for b in bases] + [0]).bit_length() for d in range(rank)]
    if rng.random() < 0.1:
        shape[0] *= 2  # not the shape of the bases: Triton asserts
    return spec, shape


def amd_mfma(rng: random.Random) -> Case:
    rank = rng.choice([2, 2, 2, 3])
    spec = _mfma(rng, rank)
    shape = [_p2(rng, 0, 2)] * (rank - 2) + [_p2(rng, 4, 7), _p2(rng, 4, 7)]
    if rng.random() < 0.3:
        parent = dict(spec, transposed=spec["transposed"] or spec["instr_shape"][:2] == [64, 4])
        spec = {"kind": "DotOperandLayout", "operand_index": rng.randint(0, 1), "parent": parent,
                "k_width": rng.choice([4, 8, 16])}
    return spec, shape


def amd_wmma(rng: random.Random) -> Case:
    spec = _wmma(rng)
    shape = [_p2(rng, 4, 7), _p2(rng, 4, 7)]
    if rng.random() < 0.25:  # a batch dim in front
        batch = [[1, 0, 0]] * (rng.random() < 0.3)
        spec = dict(spec, rank=3, warp_bases=[[0, *b] for b in spec["warp_bases"]] + batch,
                    reg_bases=[[0, *b] for b in spec["reg_bases"]])
        shape = [_p2(rng, 0, 2), *shape]
    if rng.random() < 0.3:
        spec = {"kind": "DotOperandLayout", "operand_index": rng.randint(0, 1), "parent": spec,
                "k_width": rng.choice([4, 8, 16])}
    return spec, shape


def with_cga(rng: random.Random) -> Case:
    """MMA layouts over several CTAs, their dot operands and slices."""
    cga = _perm_bases(rng, [_p2(rng, 0, 1), _p2(rng, 0, 1)])
    spec = rng.choice([lambda: _wmma(rng), lambda: dict(_mfma(rng), transposed=True),
                       lambda: {"kind": "NVMMADistributedLayout", "version": [2, 0], "warps_per_cta": [2, 2],
                                "instr_shape": [16, 8]}])()
    spec["cga_layout"] = cga
    if rng.random() < 0.5:
        spec = {"kind": "DotOperandLayout", "operand_index": rng.randint(0, 1), "parent": spec,
                "k_width": rng.choice([8, 16])}
    if rng.random() < 0.3:
        return {"kind": "SliceLayout", "dim": rng.randint(0, 1), "parent": spec}, [_p2(rng, 4, 7)]
    return spec, [_p2(rng, 4, 7), _p2(rng, 4, 7)]


def nvmma_dot(rng: random.Random) -> Case:
    """Dot operands of ``mma.sync``/``wgmma`` parents whose ``instr_shape`` has any length and any M
    (Triton reads M at ``rank - 2``; M 8 halves the K tile; M below 8 aborts)."""
    rank = rng.choice([2, 2, 3])
    instr = rng.choice([[16, 8], [16, 8, 16], [1, 16, 8], [16, 64, 16], [8, 8], [32, 32], [8, 8, 4]])
    if rng.random() < 0.5:
        instr = [_p2(rng, 0, 5) for _ in range(rng.randint(1, 4))]
    parent = {"kind": "NVMMADistributedLayout", "version": rng.choice([[2, 0], [2, 0], [3, 0]]),
              "warps_per_cta": [_p2(rng, 0, 1) for _ in range(rank)], "instr_shape": instr}
    spec = {"kind": "DotOperandLayout", "operand_index": rng.randint(0, 1), "parent": parent,
            "k_width": rng.choice([1, 2, 4, 8])}
    return spec, [_p2(rng, 0, 2) for _ in range(rank - 2)] + [_p2(rng, 3, 7), _p2(rng, 3, 7)]


def tensor_memory(rng: random.Random) -> Case:
    shape = [_p2(rng, 5, 8), _p2(rng, 2, 9)]
    if rng.random() < 0.25:
        return {"kind": "TensorMemoryScalesLayout", "cga_layout": rng.choice([[], [[1, 0]], [[0, 1]]])}, shape
    two = rng.random() < 0.3
    cga = [[1, 0]] if two else rng.choice([[], [], [[1, 0]], [[0, 1]]])
    stride = rng.choice([1, 2, 4])
    block = [rng.choice([64, 128]), _p2(rng, 3, 8)]
    return {"kind": "TensorMemoryLayout", "block": block, "col_stride": stride, "cga_layout": cga,
            "two_ctas": two, "fp4_padded": stride == 1 and rng.random() < 0.2}, shape


def padded_shared(rng: random.Random) -> Case:
    rank = rng.randint(1, 3)
    shape = [_p2(rng, 0, 5) for _ in range(rank)]
    order = list(range(rank))
    rng.shuffle(order)
    intervals = rng.sample([4, 8, 16, 32, 64, 128], rng.randint(1, 2))
    return {"kind": "PaddedSharedLayout", "interval_padding_pairs": [[i, _p2(rng, 0, 3)] for i in intervals],
            "shape": shape, "order": order}, shape


def nvmma_shared_transposed(rng: random.Random) -> Case:
    """Transposed NVMMA shared layouts of rank 3 and 4 (swizzled: unswizzled ones are not modelled)."""
    rank = rng.choice([3, 3, 4])
    swizzle, bits = rng.choice([32, 64, 128]), rng.choice([8, 16, 32])
    spec = {"kind": "NVMMASharedLayout", "swizzle_byte_width": swizzle, "element_bitwidth": bits,
            "rank": rank, "transposed": True,
            "fp4_padded": swizzle == 128 and bits == 8 and rng.random() < 0.3}
    shape = [_p2(rng, 0, 7)] + [_p2(rng, 0, 2) for _ in range(rank - 3)] + [_p2(rng, 2, 7), _p2(rng, 2, 7)]
    return spec, shape


FAMILIES: dict[str, Callable[[random.Random], Case]] = {
    "nvmma_shared_transposed": nvmma_shared_transposed,
    "cga": blocked_cga, "slice": slice_case, "shared_linear": shared_linear, "amd_mfma": amd_mfma,
    "amd_wmma": amd_wmma, "with_cga": with_cga, "tensor_memory": tensor_memory,
    "padded_shared": padded_shared, "nvmma_dot": nvmma_dot,
}


def _run(family: str, n: int, seed: int) -> None:
    rng = random.Random(seed)
    n = n // 4 if family == "padded_shared" else n  # each one aborts Triton: a fresh child apiece
    cases = [FAMILIES[family](rng) for _ in range(n)]
    answered = compare(cases)
    if family != "padded_shared":  # Triton answers none of those
        assert answered >= n // 4, f"only {answered} of {n} {family} cases ran in Triton"
    read_back(cases)


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_matches_triton(family: str) -> None:
    _run(family, DEFAULT, seed=sum(map(ord, family)))


@pytest.mark.thorough
@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_matches_triton_thorough(family: str) -> None:
    _run(family, THOROUGH, seed=1000 + sum(map(ord, family)))


def test_padded_offsets_brute_force() -> None:
    """Offsets from the definition: walk the elements in the linear component's order, inserting
    each interval's padding after every full interval; the resolved bases match Gluon's."""
    rng = random.Random(5)
    cases = [case for case in (padded_shared(rng) for _ in range(100)) if math.prod(case[1]) <= 256][:15]
    for spec, _ in cases:
        layout = ours(spec)
        assert layout.offset_bases == to_gluon(spec).offset_bases
        linear = layout.linear_component()
        position = 0
        for o in range(linear.get_in_dim_size("offset")):
            if o:
                position += 1 + sum(p for i, p in layout.interval_padding_pairs if o % i == 0)
            coords = linear.apply({"offset": o, "block": 0})
            assert layout.offset([coords[n] for n in linear.get_out_dim_names()]) == position


def test_refusals_name_the_reason() -> None:
    """Inputs Triton 3.9 aborts on get typed errors that say why."""
    blocked = {"kind": "BlockedLayout", "size_per_thread": [1], "threads_per_warp": [32],
               "warps_per_cta": [1], "order": [0]}
    with pytest.raises(TensorLayoutError, match="not surjective"):
        build(dict(blocked, cga_layout=[[2]])).to_linear_layout([128])
    with pytest.raises(TensorLayoutError, match="permutation matrix"):
        build(dict(blocked, cga_layout=[[1], [1]])).to_linear_layout([128])
    mfma = {"kind": "AMDMFMALayout", "version": 3, "instr_shape": [64, 4, 4], "transposed": False,
            "warps_per_cta": [1, 1]}
    with pytest.raises(TensorLayoutError, match="64x4 mfma must be transposed"):
        build(mfma).to_linear_layout([64, 64])
    wmma = {"kind": "AMDWMMALayout", "version": 1, "transposed": False, "warp_bases": [[0, 1]],
            "reg_bases": [[0, 1]]}
    with pytest.raises(TensorLayoutError, match="permutation matrix"):
        build(wmma).to_linear_layout([32, 32])
    mma = {"kind": "NVMMADistributedLayout", "version": [2, 0], "warps_per_cta": [1, 1, 1],
           "instr_shape": [16]}
    with pytest.raises(TensorLayoutError, match="does not match rank"):
        build(mma).to_linear_layout([16, 16, 16])
    with pytest.raises(TensorLayoutError, match="has no M"):  # Triton reads past the end of instr_shape
        build({"kind": "DotOperandLayout", "operand_index": 0, "parent": mma, "k_width": 2}
              ).to_linear_layout([16, 16, 16])
    with pytest.raises(TensorLayoutError, match="no linear layout"):
        ours({"kind": "PaddedSharedLayout", "interval_padding_pairs": [[4, 1]], "shape": [8], "order": [0]}
             ).to_linear_layout([8])


def test_ir_text_names_the_kinds() -> None:
    """The spellings read are the ones Triton prints (checked against a live print)."""
    spec = {"kind": "SliceLayout", "dim": 1, "parent": _blocked(random.Random(1), 2)}
    text = run_isolated(_ir_text, [(spec, [8])])[0][1]
    assert re.search(r"#ttg\.slice<\{dim = 1, parent = #ttg\.blocked<", text), text
