"""XLA's read-coalescing decision (tensorlayout.hlo.read_coalescing) beyond XLA's own tests."""

from __future__ import annotations

import itertools

import pytest

from tensorlayout.errors import HloError
from tensorlayout.hlo import parse_module
from tensorlayout.hlo.read_coalescing import (
    ReadCoalescing,
    bandwidth_utilization_rate,
    emitter_fusion_kind,
    is_indexing_coalesced,
    is_read_coalesced_heuristic,
    read_coalescing,
)
from tensorlayout.hlo.reduction_emitter import reduction_emitter_name
from tensorlayout.indexing import IndexingMap
from tensorlayout.xla.shape import Shape


def _fusion(body: str, params: str, shape: str, kind: str = "kLoop") -> str:
    return (
        f"HloModule m\nf {{\n{body}\n}}\nENTRY e {{\n{params}\n"
        f" ROOT fusion = {shape} fusion({', '.join(f'p{i}' for i in range(params.count('parameter')))}),"
        f" kind={kind}, calls=f\n}}"
    )


def test_strided_slice_is_not_coalesced_unit_slice_is() -> None:
    for stride, expected in ((1, True), (2, False)):
        n = 4096 // stride
        text = _fusion(
            f" p0 = f32[4096] parameter(0)\n ROOT s = f32[{n}] slice(p0), slice={{[0:4096:{stride}]}}",
            " p0 = f32[4096] parameter(0)",
            f"f32[{n}]",
        )
        r = read_coalescing(parse_module(text).entry.root)
        assert (r.kind, r.method, r.per_operand) == ("kLoop", "indexing", (expected,))


def test_layout_decides_a_copy() -> None:
    """The same logical copy reads its operand coalesced or not depending on the operand layout."""
    for layout, expected in (("{1,0}", True), ("{0,1}", False)):
        text = _fusion(
            f" p0 = f32[64,8]{layout} parameter(0)\n ROOT n = f32[64,8]{{1,0}} negate(p0)",
            f" p0 = f32[64,8]{layout} parameter(0)",
            "f32[64,8]{1,0}",
        )
        assert read_coalescing(parse_module(text).entry.root).per_operand == (expected,)


def _reduce(shape: str, out: str, dims: str) -> str:
    add = (
        "HloModule m\nadd {\n a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT s = f32[] add(a, b)\n}\n"
    )
    body = (
        f" p0 = {shape} parameter(0)\n c = f32[] constant(0)\n"
        f" ROOT r = {out} reduce(p0, c), dimensions={{{dims}}}, to_apply=add"
    )
    return add + _fusion(body, f" p0 = {shape} parameter(0)", out, "kInput").replace("HloModule m\n", "")


@pytest.mark.parametrize(
    ("shape", "out", "dims", "emitter"),
    [
        ("f32[100,64,512]", "f32[100,64]", "2", "RowReductionFusion"),
        ("f32[1024,16]", "f32[1024]", "1", "MultiRowReductionFusion"),
        ("f32[64,4096]", "f32[4096]", "0", "ColumnReductionFusion"),
        ("f32[100,64,32]", "f32[100,32]", "1", "SmallColumnReductionFusion"),
    ],
)
def test_reduction_emitters_read_coalesced(shape: str, out: str, dims: str, emitter: str) -> None:
    root = parse_module(_reduce(shape, out, dims)).entry.root
    assert emitter_fusion_kind(root) == "kReduction"
    assert reduction_emitter_name(root.fused_computation.root, 32, 32) == emitter
    assert read_coalescing(root) == ReadCoalescing("kReduction", "indexing", (True,))
    assert is_read_coalesced_heuristic("kReduction", root, root) is False  # two reductions fused


def test_transpose_emitter_falls_back_to_the_heuristic() -> None:
    text = _fusion(
        " p0 = f32[64,128] parameter(0)\n ROOT t = f32[128,64] transpose(p0), dimensions={1,0}",
        " p0 = f32[64,128] parameter(0)",
        "f32[128,64]",
    )
    root = parse_module(text).entry.root
    assert read_coalescing(root) == ReadCoalescing("kTranspose", "heuristic", (True,))
    with pytest.raises(HloError, match="not a fusion"):
        emitter_fusion_kind(root.operands[0])


def test_indexing_decision_against_counted_transactions() -> None:
    """f(thread_x) = c * thread_x over 4-byte elements: coalesced iff 32 reads fit in
    transactions close to the ideal count, counted here by brute force."""
    for c in (1, 2, 3, 4, 32, -1):
        m = IndexingMap.parse(
            f"(d0, d1, d2, d3, d4, d5) -> (d0 * {c}), domain: d0 in [0, 127], "
            "d1 in [0, 0], d2 in [0, 0], d3 in [0, 0], d4 in [0, 0], d5 in [0, 0]"
        )
        addresses = sorted({c * t for t in range(32)})
        runs = 1 + sum(b != a + 1 for a, b in itertools.pairwise(addresses))
        per_run = -(-(len(addresses) // runs) * 4 // 128)
        expected = -(-len(addresses) * 4 // 128) > 0.9 * runs * per_run
        assert is_indexing_coalesced(m, 4) is expected, c


def test_bandwidth_rate_brute_force() -> None:
    shape = Shape.parse("s8[256,16]")
    for rows in range(1, 12):
        contiguous = rows * 16
        expected = contiguous / (64 * -(-contiguous // 64))
        assert bandwidth_utilization_rate(shape, (rows, 16), (1, 1)) == expected
    assert bandwidth_utilization_rate(shape, (4, 8), (1, 1)) == 8 / 64  # partial minor dim stops the run
    assert bandwidth_utilization_rate(shape, (4, 16), (1, 2)) == 1 / 64  # strided minor dim


def test_concatenate_emitter_and_its_hero_through_a_binary_op() -> None:
    body = (
        " p0 = f32[128,64] parameter(0)\n p1 = f32[128,32] parameter(1)\n p2 = f32[128,96] parameter(2)\n"
        " c = f32[128,96] concatenate(p0, p1), dimensions={1}\n ROOT m = f32[128,96] multiply(c, p2)"
    )
    params = " p0 = f32[128,64] parameter(0)\n p1 = f32[128,32] parameter(1)\n p2 = f32[128,96] parameter(2)"
    root = parse_module(_fusion(body, params, "f32[128,96]")).entry.root
    assert emitter_fusion_kind(root) == "kConcatenate"
    assert read_coalescing(root) == ReadCoalescing("kConcatenate", "indexing", (True, True, True))
    wide = _fusion(
        " p0 = f32[8,4] parameter(0)\n c = f32[8,20] concatenate(p0, p0, p0, p0, p0), dimensions={1}\n"
        " ROOT n = f32[8,20] negate(c)",
        " p0 = f32[8,4] parameter(0)",
        "f32[8,20]",
    )
    assert emitter_fusion_kind(parse_module(wide).entry.root) == "kLoop"  # more than 4 operands
