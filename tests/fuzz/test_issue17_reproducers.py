"""Issue 17's reproducers, one test each: a typed error or the right answer, never a crash.

Cases whose cause is still open in src/ are xfailed strictly (the reason quotes the
reproducer), so that the fix turns them into an XPASS to be unmarked.
"""

from __future__ import annotations

import signal
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import pytest

from tensorlayout import cli, convert, cute, gpu, hlo, relayout, render, xla
from tensorlayout.errors import TensorLayoutError
from tensorlayout.indexing import IndexingMap, simplify, verify_equivalent
from tensorlayout.render._tv import MAX_PANEL_CELLS
from tensorlayout.triton import parse_layout
from tensorlayout.xla.show import describe
from tests.fuzz import _runner
from tests.fuzz._cli import BAD_KINDS, ONE_LINE, run_cli
from tests.fuzz._targets import check_hlo

HUGE = "9" * 4301
DEEP = 1000
TRITON_DIMS = "where out dims are: [dim0 (size 4)]"

# Still open in src/ at the time of writing (issue 17): case -> reproducer and what escapes.
OPEN: dict[str, str] = {}  # every reproducer's cause is fixed in src/ (an entry here xfails it)


def cases(names: list[str]) -> list[Any]:
    """``names`` as pytest params, the open ones xfailed strictly with their reproducer."""
    return [pytest.param(n, id=n, marks=[pytest.mark.xfail(strict=True, reason=OPEN[n])] if n in OPEN else [])
            for n in names]


def refused_or_ok(fn: Callable[..., Any], *args: Any) -> Any:
    """``fn(*args)``'s value, or None when it raised a TensorLayoutError; anything else fails."""
    try:
        return fn(*args)
    except TensorLayoutError:
        return None


@contextmanager
def within(seconds: float) -> Iterator[None]:
    def alarm(signum: int, frame: Any) -> None:
        raise TimeoutError(f"took more than {seconds} s")

    old = signal.signal(signal.SIGALRM, alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def _hlo(body: str) -> str:
    return f"HloModule m\nENTRY e {{\n{body}\n}}\n"


PARSE_CASES: dict[str, tuple[Callable[[str], Any], str]] = {
    "shape-huge-int": (xla.parse_shape, "f32[" + HUGE + "]"),
    "layout-huge-int": (xla.parse_layout, "{" + HUGE + "}"),
    "cute-huge-int": (cute.Layout.parse, HUGE + ":1"),
    "map-huge-int": (IndexingMap.parse, "(d0) -> (d0), domain: d0 in [0, " + HUGE + "]"),
    "hlo-huge-int": (hlo.parse_module, _hlo(f"  ROOT p = f32[{HUGE}] parameter(0)")),
    "shape-deep": (xla.parse_shape, "(" * DEEP + "f32[2]" + ")" * DEEP),
    "layout-deep-P": (xla.parse_layout, "{0:P(" * DEEP + ")" * DEEP + "}"),
    "cute-deep": (cute.Layout.parse, "(" * DEEP + "2" + ")" * DEEP + ":" + "(" * DEEP + "1" + ")" * DEEP),
    "map-deep": (IndexingMap.parse, "(d0) -> (" + "(" * DEEP + "d0" + ")" * DEEP + "), domain: d0 in [0, 3]"),
    "hlo-deep": (hlo.parse_module,
                 _hlo("  ROOT p = " + "(" * DEEP + "f32[2]" + ")" * DEEP + " parameter(0)")),
    "map-huge-multiplier": (IndexingMap.parse, "()[s0] -> (s0 * " + HUGE + "), domain: s0 in [0, 3]"),
    "hlo-huge-parameter-number": (hlo.parse_module, _hlo("  ROOT p0 = f32[32] parameter(" + HUGE + ")")),
    "hlo-unicode-digit": (hlo.parse_module, _hlo("  ROOT p = f32[2] parameter(²)")),
    "shape-unicode-digit": (xla.parse_shape, "f32[²]"),
    "cute-unicode-digit": (cute.Layout.parse, "٣:1"),
    "layout-unicode-digit": (xla.parse_layout, "{0:T(１)}"),
    "swizzle-huge-int": (cute.parse_layout, "Sw<" + HUGE + ",1,0> o _0 o (2,128):(128,1)"),
    "triton-dot-operand-rank-1": (parse_layout, "tensor<16x32xf16, #ttg.dot_op<{opIdx = 0, parent = "
                                  "#ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [2], "
                                  "instrShape = [16, 007]}>, kWidth = 1}>>"),
    "triton-huge-basis": (parse_layout, f"\n - register=1 -> ({HUGE})\n{TRITON_DIMS}"),
    "triton-huge-size": (parse_layout, f"\n - register=1 -> (1)\nwhere out dims are: [dim0 (size {HUGE})]"),
    "triton-huge-input": (parse_layout, f"\n - register={HUGE} -> (1)\n{TRITON_DIMS}"),
    "triton-unicode-digit": (parse_layout, f"\n - register=1 -> (٣)\n{TRITON_DIMS}"),
}


@pytest.mark.parametrize("case", cases(sorted(PARSE_CASES)))
def test_parser_extremes_are_typed_errors(case: str) -> None:
    parse, text = PARSE_CASES[case]
    with within(30):
        refused_or_ok(parse, text)


def test_unicode_digits_are_not_digits() -> None:
    """XLA's grammars take ASCII digits only."""
    for parse, text in ((xla.parse_shape, "f32[²]"), (cute.Layout.parse, "٣:1"),
                        (hlo.parse_module, _hlo("  ROOT p = f32[2] parameter(²)"))):
        with pytest.raises(TensorLayoutError, match=r", but got '"):
            parse(text)


def test_self_calling_computation_is_refused_not_recursed() -> None:
    text = ("HloModule m\nc {\n  p = f32[2] parameter(0)\n  ROOT r = f32[2] call(p), to_apply=c\n}\n"
            "ENTRY e {\n  p = f32[2] parameter(0)\n  ROOT r = f32[2] call(p), to_apply=c\n}\n")
    module = refused_or_ok(hlo.parse_module, text)
    if module is not None:
        with within(30):
            for comp in module.computations:
                for instr in comp.instructions:
                    refused_or_ok(hlo.output_to_input_indexing, instr)


PAD_TYPO = _hlo("  p0 = f32[4, 4] parameter(0)\n  p1 = f32[] parameter(1)\n"
               "  ROOT pad = f32[12, 16] pad(p0, p1), paTdding=1_4_1x0_8_0")
RANK65 = "f32[" + ",".join(["1"] * 65) + "]"
HUGE_TILE = f"f32[2]{{0:T({2**62})}}"
BAD_PERMUTATION = _hlo("  p = u32[] parameter(0)\n  ROOT b = u32[2,1]{191,0} broadcast(p), dimensions={}")
HELPER_CASES: dict[str, tuple[Callable[..., Any], Callable[[], tuple[Any, ...]]]] = {
    "byte_strides-s1[3]{2}": (xla.byte_strides, lambda: (xla.parse_shape("s1[3]{2}"),)),
    "linear_indices-rank65": (xla.linear_indices, lambda: (xla.parse_shape(RANK65),)),
    "linear_indices-huge-tile": (xla.linear_indices, lambda: (xla.parse_shape(HUGE_TILE),)),
    "padding_overhead-huge-tile": (xla.padding_overhead, lambda: (xla.parse_shape(HUGE_TILE),)),
    "tla_to_xla-2^64-cols": (convert.tla_to_xla, lambda: ("zN", 16, 2**64)),
    "render-negative": (render.to_svg, lambda: ("-128",)),
    "render-2^64": (render.to_svg, lambda: (f"f32[{2**64}]",)),
    "render-cute-2^64": (render.to_svg, lambda: (f"{2**64}:1",)),
    "pad-without-padding": (lambda m: hlo.output_to_input_indexing(hlo.parse_module(m).entry.root),
                            lambda: (PAD_TYPO,)),
    "linear_indices-zero-elements-huge-dim": (xla.linear_indices,
                                              lambda: (xla.parse_shape("f32[0,9007199254740993]"),)),
    "linear_indices-zero-elements-2^62": (xla.linear_indices,
                                          lambda: (xla.parse_shape("s32[4611686018427387904,0]"),)),
    "to_indexing_map-zero-extent": (convert.to_indexing_map,
                                    lambda: (cute.Layout.parse("(2,(0,2)):(1,(4,8))"),)),
    "cute_to_xla-zero-huge": (convert.cute_to_xla,
                              lambda: (cute.Layout.parse("(0,9007199254740993):(4,8)"),)),
    "render-huge-cute": (render.to_svg, lambda: ("(2,1" + "0" * 56 + ",0):(1,4611686018427387904,2)",)),
    "render-tla-huge": (render.to_svg, lambda: (cute.tla.make_format("L0C", 2**64, 0, 2),)),
    "cute-offsets-huge-stride": (lambda t: list(cute.Layout.parse(t).offsets()), lambda: (f"4:{2**63}",)),
    "left_inverse-2^65-stride": (cute.left_inverse, lambda: (
        cute.Layout.parse("(3,((3,6),(1))):(0,((2,1),(46116860018427387904)))"),)),
    "logical_divide-101-deep": (cute.logical_divide, lambda: (
        cute.Layout.parse("3:2"), cute.Layout.parse("(" * 100 + "4" + ")" * 100))),
    "complement-4300-digit-cotarget": (lambda a: str(cute.complement(a, 10**4300)),
                                       lambda: (cute.Layout.parse("2:1"),)),
    "concatenate-scalar-operand": (
        lambda m: hlo.output_to_input_indexing(hlo.parse_module(m).entry.root),
        lambda: (_hlo("  p0 = f32[2] parameter(0)\n  p1 = f32[] parameter(1)\n"
                      "  ROOT c = f32[32] concatenate(p0, p1), dimensions={0}"),)),
    "render-empty-tile-2^64": (render.to_svg, lambda: ("f64[0,0,8]{0,2,1:T(4611686018427387904,4)}",)),
    "render-empty-lead-past-intp": (render.to_svg, lambda: ("(88446116,6018427387904,0)",)),
    "scaled-dot-empty-scale": (
        lambda m: hlo.output_to_input_indexing(hlo.parse_module(m).entry.root),
        lambda: (_hlo("  a = f32[2,10] parameter(0)\n  b = f32[10,2] parameter(1)\n"
                      "  sa = f32[2,0] parameter(2)\n  sb = f32[2,2] parameter(3)\n"
                      "  ROOT d = f32[2,2] scaled-dot(a, b, sa, sb), lhs_contracting_dims={1}, "
                      "rhs_contracting_dims={0}"),)),
    "coalescing-layout-not-a-permutation": (lambda m: hlo.coalescing_report(hlo.parse_module(m).entry.root),
                                            lambda: (BAD_PERMUTATION,)),
}


@pytest.mark.parametrize("case", cases(sorted(HELPER_CASES)))
def test_helper_extremes_are_typed_errors(case: str) -> None:
    fn, args = HELPER_CASES[case]
    with within(30):
        try:
            made = args()
        except TensorLayoutError:
            return
        refused_or_ok(fn, *made)


ROUND_TRIPS: dict[str, tuple[Callable[[], Any], Callable[[str], Any]]] = {
    "rt-tla_to_xla-2^64": (lambda: convert.tla_to_xla("RowMajor", 0, 2**64, "s4"), xla.parse_shape),
    "rt-cute_to_xla-2^63-stride": (lambda: convert.cute_to_xla(cute.Layout.parse(f"6:{2**63}")),
                                   xla.parse_shape),
    "rt-to_indexing_map-int64-stride": (
        lambda: convert.to_indexing_map(cute.Layout.parse(f"(7,128):({2**62},{-(2**63)})")),
        IndexingMap.parse),
}


@pytest.mark.parametrize("case", cases(sorted(ROUND_TRIPS)))
def test_results_print_parseably(case: str) -> None:
    """What a bridge returns prints as text its notation's parser reads back (or is refused)."""
    make, parse = ROUND_TRIPS[case]
    value = refused_or_ok(make)
    if value is not None:
        assert str(parse(str(value))) == str(value)


def test_subtile_of_higher_rank_is_rejected_or_exact() -> None:
    """``f32[4]{0:T(4)(2,2,2)}``: offsets must stay in the allocation and invert."""
    shape = refused_or_ok(xla.parse_shape, "f32[4]{0:T(4)(2,2,2)}")
    if shape is None or _invalid(shape):
        return
    offsets = [xla.linear_index(shape, (i,)) for i in range(4)]
    assert len(set(offsets)) == 4
    assert [xla.multi_index(shape, o) for o in offsets] == [(i,) for i in range(4)]


def _invalid(shape: xla.Shape) -> bool:
    try:
        xla.validate_layout(shape)
    except TensorLayoutError:
        return True
    return False


@pytest.mark.parametrize("constraint", cases(["d0 mod -2 in [0, 0]", "d0 mod 0 in [0, 0]"]))
def test_exact_simplify_keeps_odd_mod_constraints(constraint: str) -> None:
    m = refused_or_ok(IndexingMap.parse, f"(d0) -> (d0), domain: d0 in [0, 9], {constraint}")
    if m is None:
        return
    s = refused_or_ok(lambda: simplify(m, exact=True))
    if s is not None:
        assert verify_equivalent(m, s).equivalent


def test_cute_negative_scalar_round_trips() -> None:
    """``Layout.parse("-1")`` must be refused, or its printed form must re-parse."""
    layout = refused_or_ok(cute.Layout.parse, "-1")
    if layout is not None:
        assert cute.Layout.parse(str(layout)) == layout


@pytest.mark.parametrize("text", [
    "(d0, d1, d2)[s0] -> (), domain: d0 in [0, 7], d1 in [53, 56], d2 in [0, 3], s0 in [-5, 122], "
    "((((d1 floordiv 128) floordiv -2) + d2 - d1 / -2) - (((s0 mod 8) / 4) * 8)) in [2, 11], "
    "d1 - d1 * 8 * 2 + (d0 - d2) in [5, 5]",
    "(d0) -> (35 ceildiv 0 - (d0 mod 4) + (11 + d0) * -2), domain: d0 in [0, 7]",
    "(d0, d1, d2) -> (d1 * 128 + (29 - (26 * -2 - (d0 - d2)))), domain: d0 in [-5, 26], "
    "d1 in [0, 9], d2 in [0, 1]",
    "(d0, d1) -> (d0 * 16 + d1 * -9223372036854775808), domain: d0 in [0, 9], d1 in [0, 9]",
    "(d0, d1, d2) -> (d0 + (d1 + d2), d0 * (d1 * d2)), domain: d0 in [0, 9], d1 in [0, 9], d2 in [0, 9]",
])
def test_maps_reparse_to_the_same_tree(text: str) -> None:
    """``parse(str(m)) == m``: sums and products the printer writes without parentheses are
    read left-nested, and a negated term is only printed as ``- (...)`` when it reads back."""
    m = IndexingMap.parse(text)
    assert IndexingMap.parse(str(m)) == m


def test_constant_map_prints_parseably() -> None:
    """A map without variables prints ``() -> (0)`` when its results are constants."""
    m = refused_or_ok(convert.to_indexing_map, xla.parse_shape("u64[]{:T(4)S(1)}"))
    if m is not None:
        assert IndexingMap.parse(str(m)) == m


def test_tiled_shape_is_not_quadratic() -> None:
    """2,000 ``(2,1)`` tiles took 17-20 s; 5,000 did not finish in 120 s."""
    shape = refused_or_ok(xla.parse_shape, "f32[4,4]{1,0:T(2,1)" + "(2,1)" * 4999 + "}")
    if shape is not None:
        start = time.monotonic()
        with within(60):
            refused_or_ok(xla.tiled_shape, shape)
            refused_or_ok(xla.linear_index, shape, (3, 3))
        assert time.monotonic() - start < 10


def test_tiled_copy_holder_is_found_without_listing_every_pair() -> None:
    """A tiled copy over an SS wgmma holds 10^8 (thread, value) pairs: ``thread_of`` listed them
    all (12 s); bank checks of a swizzle past bit 63 overflowed numpy."""
    mma = gpu.make_tiled_mma(gpu.mma_atom("SM90_64x192x16_F16F16F16_SS"), (3, 4, 4))
    copy = gpu.make_tiled_copy_b(gpu.copy_atom("SM75_U16x2_LDSM_T"), 16, mma)
    start = time.monotonic()
    with within(60):
        assert copy.tv_s().thread_of(0, 0) == 0
    assert time.monotonic() - start < 5
    access = gpu.vector_access((8, 64), 16, 128)
    far = gpu.bank_conflicts("Sw<1,280,3> o _0 o (8,64):(64,1)", 16, access)
    assert far.wavefronts == gpu.bank_conflicts("(8,64):(64,1)", 16, access).wavefronts


CLI_CASES = {
    "cli-deep": ["show", "(" * DEEP + "f32[2]" + ")" * DEEP],
    "cli-huge-shape": ["show", "f32[" + HUGE + "]"],
    "cli-render-negative": ["render", "-128", "-o", "-"],
    "cli-vector-layout": ["show", "--tla", "VectorLayout", "--rows", "4", "--cols", "4"],
    "cli-vector-layout-wide": ["show", "--tla", "VectorLayout", "--rows", "1", "--cols", "1024"],
    "cli-show-int64-extent": ["show", "(1,(9223372036854775807,(8),2)):(3,(16,(16),-1))"],
    "cli-simplify-huge-multiplier": ["simplify", "(d0)[s0] -> (d0 * 6 + s0 * " + HUGE + ")", "--json"],
    "cli-window-2^63-columns": ["show", "(4,9223372036854775808):(1,0)", "--window", "1"],
    "cli-window-2^63-columns-no-cap": ["show", "(4,9223372036854775808):(1,0)", "--window", "1",
                                       "--max-width", "0"],
    "cli-json-2^35-elements": ["show", "((2,2),(4294967296,2)):((1,2),(2,1))", "--json"],
    "cli-show-empty-with-2^32-dim": ["show", "s32[3,0,4294967296]"],
    "cli-show-empty-with-2^31-middle-dim": ["show", "s32[3,2147483648,0]"],
    "cli-show-2^63-extent": ["show", "(9223372036854775808)"],
    "cli-maps-nul-in-path": ["maps", "--json", ".D\x00 j"],
    "cli-verify-4.2M-points": ["simplify", "(d0, d1)[s0, s1] -> (d1, d0, s1), domain: d0 in [0, 49], "
                               "d1 in [0, 59], s0 in [0, 69], s1 in [0, 19], s0 + s1 in [1, 100], "
                               "s0 mod 3 in [0, 0]", "--verify", "--limit", "18446744073709551616"],
    "cli-verify-unused-symbols": [
        "simplify", "(d0, d1, d2, d3, d4)[s0, s1, s2] -> (s0 * 4 + d1 + d3 - 42), domain: d0 in [0, 0], "
        "d1 in [0, 1], d2 in [0, 2], d3 in [0, 3], d4 in [0, 4], s0 in [0, 31], s1 in [0, 63], "
        "s2 in [0, 95], s0 * 4 + d1 + d3 in [24, 459], s0 + s2 in [0, 512]", "--verify", "--remove-unused"],
    "cli-huge-map": ["simplify", "(d0) -> (d0), domain: d0 in [0, " + HUGE + "]"],
    "cli-window-28M-elements": ["show", "f32[128,24,48,48,4]{4,3,2,1,0}", "--dtype", "column",
                                "--window", ":", "--tpu"],
    "cli-png-to-text-stdout": ["render", "4:16", "--format", "png", "-o", "-"],
    "cli-show-triton-2^20-points": ["show", "#a = #ttg.nvmma_shared<{swizzlingByteWidth = 128, "
                                    "elementBitWidth = 16, rank = 3, transposed = false}>\n"
                                    "tensor<32x128x256xf16, #a>"],
}


@pytest.mark.parametrize("case", cases(sorted(CLI_CASES)))
def test_cli_one_line_errors(case: str) -> None:
    start = time.monotonic()
    code, _, err = run_cli(CLI_CASES[case])
    assert time.monotonic() - start < 10, "the CLI took over 10 s"
    assert "Traceback" not in err
    assert code in (0, 2), err
    if code == 2:
        assert ONE_LINE.match(err) and BAD_KINDS.match(err), err


def test_cli_fuzz_writes_outside_the_checkout(tmp_path: Any, monkeypatch: Any) -> None:
    """The CLI fuzz's ``-o`` takes fuzzed names; a PNG named ``'o*j৪\\t'`` was once committed."""
    monkeypatch.chdir(tmp_path)
    code, _, err = run_cli(["render", "4:1", "-o", "fuzzed.svg"])
    assert code == 0, err
    assert list(tmp_path.iterdir()) == []


def test_cli_coalescing_of_a_layout_that_permutes_nothing(tmp_path: Any) -> None:
    """``maps --coalescing`` read the minor dim of ``{191,0}`` as dim 191 (IndexError, exit 3)."""
    path = tmp_path / "m.hlo"
    path.write_text(BAD_PERMUTATION)
    code, _, err = run_cli(["maps", str(path), "--utilization", "--coalescing", "--shapes"])
    assert code == 2 and ONE_LINE.match(err) and BAD_KINDS.match(err), err


@pytest.mark.parametrize(("atom", "thr", "perm"), [
    ("SM90_64x256x16_F32F16F16_SS", (4, 3, 4), (64, None, None)),  # 2.5e7 (thread, value) pairs: 30 s
    ("SM80_16x8x16_F16F16F16F16_TN", (1, 64, 64), (None, None, None)),  # a 512 x 1024 B panel
])
def test_tiled_mma_pictures_are_bounded(atom: str, thr: tuple[int, ...], perm: tuple[Any, ...]) -> None:
    """Drawing a TiledMMA lists every (thread, value) pair and draws N x K cells for B: both
    are capped (a typed refusal), so the picture is drawn or refused within seconds."""
    tiled = gpu.make_tiled_mma(gpu.mma_atom(atom), thr, perm)
    start = time.monotonic()
    with within(60):
        svg = refused_or_ok(render.to_svg, tiled)
    assert time.monotonic() - start < 5
    assert svg is None or svg.count('class="cell"') <= 3 * MAX_PANEL_CELLS


@pytest.mark.parametrize("argv", [["padding", "--json", ""], ["maps", ""], ["maps", "--json", ""]])
def test_cli_empty_target_is_no_folder(argv: list[str], tmp_path: Any, monkeypatch: Any,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    """``Path("")`` is ``.``: an empty target read the working directory as a dump folder
    (a note and one error per module, several lines) where the OS finds no file."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "module_0000.jit_a.before_optimizations.txt").write_text("HloModule a\nENTRY e {\n ROOT x\n}")
    (tmp_path / "notes.txt").write_text("not HLO")
    code = cli.main(argv)
    err = capsys.readouterr().err
    assert code == 2 and ONE_LINE.match(err) and BAD_KINDS.match(err), err


def test_packed_relayout_past_memory_is_a_layout_error() -> None:
    """A 4-bit buffer of 128 GiB (an (8, 2^31) subtile): the packing path's allocation raised
    MemoryError under the fuzz's 4 GiB address-space cap; the numpy path reports a LayoutError."""
    target = "s4[64,64]{1,0:T(64,128)(8,2147483648)E(4)}"
    with _runner.guarded(_runner.MEMORY_CAP), pytest.raises(TensorLayoutError,
        match=r"s4\[64,64\]\{1,0:T\(64,128\)\(8,2147483648\)E\(4\)\}: the physical"):
        relayout.to_physical(np.zeros((64, 64), np.int8), target)


def test_cli_png_to_text_stdout_is_refused_before_drawing() -> None:
    """A PNG of 8,192 cells took 5 s of CairoSVG (past the fuzz's 10 s on a busy machine)
    before the text-only stdout refused the bytes; now the refusal comes first."""
    triton = ("tensor<32x256xf16, #ttg.dot_op<{opIdx = 0, parent = #ttg.nvidia_mma<{versionMajor = 3, "
              "versionMinor = 0, warpsPerCTA = [8, 1], instrShape = [16, 128, 16]}>, kWidth = 1}>>")
    start = time.monotonic()
    code, _, err = run_cli(["render", triton, "--format", "png", "-o", "-"])
    assert time.monotonic() - start < 2
    assert code == 2 and ONE_LINE.match(err) and BAD_KINDS.match(err), err


def test_show_facts_of_an_empty_array_with_a_huge_dim() -> None:
    """``offsets`` nested like ``s32[3,2147483648,0]`` holds 6e9 empty lists (MemoryError under
    the fuzz's 4 GiB cap): past the listing limit the facts leave them out."""
    with _runner.guarded(_runner.MEMORY_CAP):
        facts = describe(xla.parse_shape("s32[3,2147483648,0]"))
    assert "offsets" not in facts


def test_convert_search_takes_only_the_orders_it_tries() -> None:
    """A 13-mode CuTe layout: the candidate search listed all 13! mode orders to keep 24
    (MemoryError under the fuzz's 4 GiB cap)."""
    layout = cute.Layout.parse("(1,1,1,4,1,1,4,1,1,4,1,1,4)")
    with _runner.guarded(_runner.MEMORY_CAP), within(30):
        refused_or_ok(convert.cute_to_xla, layout)


@pytest.mark.parametrize(("instruction", "in_range"), [
    (f"ROOT c = s32[] constant({HUGE})", False),
    (f'ROOT c = s32[] constant(1), metadata={{source_line={HUGE} op_name="a"}}', False),
    (f'ROOT c = s32[] constant(1), metadata={{op_name="a" source_line=-{"0" * 5000}7}}', True),
], ids=["constant", "metadata", "metadata-zeros"])
def test_hlo_literals_past_the_digit_limit_are_range_checked(instruction: str, in_range: bool) -> None:
    """A rank-0 constant or a metadata integer of 4,301+ digits: int() raised ValueError (seed
    101 campaign); now the range check reads only the digits the bounds need."""
    text = f"HloModule m\nENTRY e {{\n  {instruction}\n}}\n"
    module = refused_or_ok(hlo.parse_module, text)
    assert module is not None or not in_range  # out of range: refused


def test_gather_index_vector_dim_out_of_range_is_an_hlo_error() -> None:
    """``index_vector_dim=-922337203`` indexed the indices' dims (IndexError, seed 101)."""
    text = ("HloModule m\nENTRY main {\n  operand = f32[33,76,70] parameter(0)\n"
            "  indices = s32[1806,2] parameter(1)\n"
            "  ROOT r = f32[1806,7,8,4] gather(operand, indices), offset_dims={1,2,3}, "
            "collapsed_slice_dims={}, start_index_map={1,0}, index_vector_dim=-922337203\n}\n")
    root = hlo.parse_module(text).entry.root
    for physical in (False, True):
        refused_or_ok(lambda r, p=physical: hlo.output_to_input_indexing(r, physical=p), root)
    check_hlo(text)  # the campaign's own check: only library errors escape


def test_verify_refuses_to_enumerate_past_its_ceiling() -> None:
    """``simplify --limit 2**64 --verify`` over a 2**44-point box: itertools.product copied a
    2**40-element range first (MemoryError, seed 101); past the enumeration ceiling it is a
    typed error, and a smaller box is enumerated one point at a time."""
    text = ("(d0, d1, d2)[s0] -> (24, ((d0 - (d2 * 2)) - (d1 / 3))), domain: d0 in [0, 1099511627776], "
            "d1 in [0, 1], d2 in [0, 3], s0 in [0, 1]")
    code, _, err = run_cli(["simplify", text, "--limit", str(2**64), "--verify"])
    assert code == 2 and ONE_LINE.match(err) and "IndexingError" in err, err
    m = IndexingMap.parse(text)
    with _runner.guarded(_runner.MEMORY_CAP), pytest.raises(TensorLayoutError, match="enumerat"):
        verify_equivalent(m, simplify(m), limit=2**64)


def test_negated_sum_prints_as_a_product_that_reads_back() -> None:
    """``(d1 - d0) * -1`` printed as ``-(d1 - d0)``, which reads back as the sum ``-d1 + d0``
    (another tree; seed-103 campaign): it prints as ``(d1 - d0) * -1``."""
    m = IndexingMap.parse("(d0, d1) -> (13 + (d1 - d0) * -1), domain: d0 in [0, 0], d1 in [1, 5]")
    assert "(d1 - d0) * -1" in str(m)
    assert IndexingMap.parse(str(m)) == m


def test_bank_picture_of_a_dimension_past_int64_is_refused() -> None:
    """``render '(2147483648,9223372036854775808)' --banks 1``: ``len`` of a 2**63-element range
    raised OverflowError (exit 3, seed-107 campaign); the size check counts without ``len``."""
    code, _, err = run_cli(["render", "(2147483648,9223372036854775808)", "--banks", "1", "-o", "-"])
    assert code == 2 and ONE_LINE.match(err) and "too large to draw" in err, err
