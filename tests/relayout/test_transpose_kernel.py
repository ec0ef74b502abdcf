"""The C kernel's transposing paths (vector tiles with scalar edges, the destination-run axis,
the staged and streamed copy) against a brute-force reference, on odd sizes, ragged edges,
every item width, non-contiguous and read-only inputs, 1 or N threads, with and without the
kernel; and the kernel's raw entry point on hand-made transposing tasks."""

from __future__ import annotations

import numpy as np
import pytest

import tensorlayout.relayout._copy as engine
from tensorlayout.relayout import as_target, from_physical, to_physical
from tensorlayout.xla import linear_indices, parse_shape
from tests.relayout._reference import kernel_or_skip as _kernel

DTYPES = {8: np.uint8, 16: np.uint16, 32: np.float32, 64: np.int64}
TYPES = {8: "u8", 16: "u16", 32: "f32", 64: "s64"}
# (dims, layout): column-major tiles, rank-3 permutations, ragged in every dim
LAYOUTS = [((37, 300), "{0,1:T(8,128)}"), ((256, 24), "{0,1:T(8,128)}"), ((9, 13, 70), "{0,2,1:T(8,128)}"),
           ((16, 8, 130), "{0,2,1:T(8,128)}"), ((40, 33), "{0,1}"), ((5, 7, 9), "{1,2,0:T(4,8)}"),
           ((131, 17), "{0,1:T(16,16)}"), ((64, 3, 100), "{2,0,1:T(8,128)}"),
           ((131, 2100), "{0,1:T(8,128)}")]  # 8-byte rows a line per tile: runs of lines at once





def _assert_only_rows_written(raw: np.ndarray, start: int, rows: int, pitch: int, width: int) -> None:
    """Every byte of ``raw`` outside the rows (``width`` bytes, ``pitch`` apart from ``start``)
    still holds 0xAB."""
    untouched = np.ones(raw.size, bool)
    for r in range(rows):
        untouched[start + r * pitch:start + r * pitch + width] = False
    assert (raw[untouched] == 0xAB).all()


def _reference(data: np.ndarray, text: str, slots: int, pad: int) -> np.ndarray:
    buf = np.full(slots, pad, dtype=data.dtype)
    buf[linear_indices(parse_shape(text))] = data.reshape(-1)
    return buf


@pytest.mark.parametrize("bits", sorted(DTYPES))
@pytest.mark.parametrize("dims, layout", LAYOUTS)
@pytest.mark.parametrize("threads", [1, 3])
def test_transposing_layouts_match_the_reference(engine_mode: str, bits: int, dims: tuple[int, ...],
                                                 layout: str, threads: int) -> None:
    text = f"{TYPES[bits]}[{','.join(map(str, dims))}]{layout}"
    target = as_target(text)
    data = np.random.default_rng(bits + len(dims)).integers(0, 250, dims).astype(DTYPES[bits])
    want = _reference(data, text, target.physical_elements, 3)
    buf = to_physical(data, target, pad_value=3, threads=threads)
    assert np.array_equal(buf, want)
    assert np.array_equal(from_physical(want, target, threads=threads), data)


@pytest.mark.parametrize("how", ["reversed", "gapped", "readonly", "unaligned-out"])
def test_transposing_layouts_from_odd_arrays(engine_mode: str, how: str) -> None:
    text = "f32[45,260]{0,1:T(8,128)}"
    target = as_target(text)
    data = np.random.default_rng(1).standard_normal((45, 260)).astype(np.float32)
    want = _reference(data, text, target.physical_elements, 0)
    if how == "reversed":
        src = np.ascontiguousarray(data[::-1, ::-1])[::-1, ::-1]
    elif how == "gapped":
        src = np.zeros((45, 520), np.float32)[:, ::2]
        src[...] = data
    else:
        src = data.copy()
        src.setflags(write=False)
    assert np.array_equal(to_physical(src, target), want)
    out = np.zeros((45, 260), np.float32) if how != "gapped" else np.zeros((45, 520), np.float32)[:, ::2]
    if how == "unaligned-out":
        out = np.zeros(45 * 260 * 4 + 1, np.uint8)[1:].view(np.float32).reshape(45, 260)
    assert np.array_equal(from_physical(want, target, out=out), data)


@pytest.mark.parametrize("item", [1, 2, 4, 8])
@pytest.mark.parametrize("rows, cols", [(1, 1), (3, 5), (8, 8), (9, 17), (16, 40), (33, 7), (64, 64)])
@pytest.mark.parametrize("stream", [False, True])
def test_raw_kernel_transposes(item: int, rows: int, cols: int, stream: bool) -> None:
    if engine._kernel is None:
        pytest.skip("the C copy kernel was not built (no compiler at install time)")
    dtype = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[item]
    src = np.arange(rows * cols, dtype=dtype).reshape(rows, cols)
    dst = np.zeros((cols, rows), dtype)
    engine._kernel.copy(dst, src, [(0, 0, (cols, rows), (rows * item, item), (item, cols * item))], stream)
    assert np.array_equal(dst, src.T)


@pytest.mark.parametrize("stream", [False, True])
def test_raw_kernel_destination_run_axis(stream: bool) -> None:
    # dst[a, g*nb + b] = src[g, b, a]: the destination rows run on over g (the kernel's 3-axis case)
    if engine._kernel is None:
        pytest.skip("the C copy kernel was not built (no compiler at install time)")
    ng, nb, na = 5, 8, 37
    src = np.arange(ng * nb * na, dtype=np.float32).reshape(ng, nb, na)
    dst = np.zeros((na, ng * nb), np.float32)
    task = (0, 0, (ng, na, nb), (nb * 4, ng * nb * 4, 4), (nb * na * 4, 4, na * 4))
    engine._kernel.copy(dst, src, [task], stream)
    assert np.array_equal(dst, src.transpose(2, 0, 1).reshape(na, ng * nb))


@pytest.mark.parametrize("item", [1, 2, 4, 8])
@pytest.mark.parametrize("rows, cols, gap", [(130, 136, 0), (200, 9, 8), (9, 300, 0), (70, 520, 0),
                                             (144, 64, 4096)])
@pytest.mark.parametrize("offsets", [(0, 0), (1, 3), (2, 0), (0, 6), (5, 7)])
def test_raw_kernel_transposes_at_any_start(item: int, rows: int, cols: int, gap: int,
                                            offsets: tuple[int, int]) -> None:
    # both sides start anywhere in a cache line (the tiles then start at the first vector
    # boundary, one overlapping tile before it); destination rows `gap` bytes apart past their
    # end (4096: rows a multiple of 4 KiB apart); nothing outside the rows may change
    if engine._kernel is None:
        pytest.skip("the C copy kernel was not built (no compiler at install time)")
    dtype = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[item]
    s_off, d_off = offsets[0] * item, offsets[1] * item
    if gap == 4096:
        gap = -rows * item % 4096
    row = rows * item + gap
    raw_src = np.zeros(rows * cols + 64 + s_off, dtype)
    raw_dst = np.empty(-(-(cols * row + 64 + d_off) // item), dtype)
    raw_dst.view(np.uint8)[...] = 0xAB
    start_s, start_d = -raw_src.ctypes.data % 64 + s_off, -raw_dst.ctypes.data % 64 + d_off
    src = raw_src.view(np.uint8)[start_s:start_s + rows * cols * item].view(dtype).reshape(rows, cols)
    src[...] = np.arange(1, rows * cols + 1, dtype=np.uint64).astype(dtype).reshape(rows, cols)
    task = (start_d, 0, (cols, rows), (row, item), (item, cols * item))
    engine._kernel.copy(raw_dst, src, [task], False)
    raw = raw_dst.view(np.uint8)
    dst = np.lib.stride_tricks.as_strided(raw[start_d:].view(dtype), (cols, rows), (row, item))
    assert np.array_equal(dst, src.T)
    _assert_only_rows_written(raw, start_d, cols, row, rows * item)


WEAVES = [(item, m, offsets) for item, m in [(2, 2), (1, 4), (1, 2), (1, 8), (2, 4), (4, 2)]
          for offsets in [(0, 0), (2, 6), (16, 34), (3, 5), (4, 12)] if not (offsets[0] | offsets[1]) % item]


@pytest.mark.parametrize("n", [1, 15, 16, 17, 31, 32, 33, 65, 128, 200])
@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("item, m, offsets", WEAVES)
def test_raw_kernel_weaves_rows(n: int, offsets: tuple[int, int], stream: bool, item: int, m: int) -> None:
    # out[k, b] = row b[k] and back (a (m,1) sub-tile of item-byte items: the vector weaves
    # take rounds of 16 or 32 items, then the rest), at any start (whole items); the bytes
    # around the destination stay as they were
    if engine._kernel is None:
        pytest.skip("the C copy kernel was not built (no compiler at install time)")
    dtype = {1: np.uint8, 2: np.uint16, 4: np.uint32}[item]
    rng = np.random.default_rng(n * m + item)
    rows = rng.integers(0, 1 << (8 * item), (m, n + 5), dtype=np.uint64).astype(dtype)  # row stride n + 5
    src_off, dst_off = offsets
    raw = np.zeros(m * (n + 5) + 64, dtype)
    raw[src_off // item:src_off // item + rows.size] = rows.reshape(-1)
    woven = np.full(m * n + 64, 7, dtype)
    task = (dst_off, src_off, (n, m), (m * item, item), (item, item * (n + 5)))
    engine._kernel.copy(woven, raw, [task], stream)
    want = np.full_like(woven, 7)
    want[dst_off // item:dst_off // item + m * n] = rows[:, :n].T.reshape(-1)
    assert np.array_equal(woven, want)
    back = np.full(m * (n + 5) + 64, 9, dtype)
    engine._kernel.copy(back, woven, [(src_off, dst_off, (n, m), (item, item * (n + 5)), (m * item, item))],
                        stream)
    expect = np.full_like(back, 9)
    expect[src_off // item:src_off // item + rows.size] = np.where(np.arange(n + 5) < n, rows, 9).reshape(-1)
    assert np.array_equal(back, expect)


@pytest.mark.parametrize("item", [1, 2, 4, 8])
@pytest.mark.parametrize("ng, na, nb", [(5, 8, 128), (3, 37, 200), (17, 16, 64), (2, 130, 9)])
@pytest.mark.parametrize("d_off", [0, 8, 16, 48, 1])
def test_raw_streamed_source_run_transposes(item: int, ng: int, na: int, nb: int, d_off: int) -> None:
    # dst[g, a, b] = src[b, g, a], streamed: the source rows run on over g (strips of
    # destination lines; whole tiles of whole lines go straight out), destination rows a
    # multiple of 64 bytes apart starting anywhere in a line; nothing between them changes
    if engine._kernel is None:
        pytest.skip("the C copy kernel was not built (no compiler at install time)")
    dtype = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[item]
    d_off -= d_off % item
    da = -(-(nb * item + 64) // 64) * 64
    dg = na * da
    src = np.arange(1, nb * ng * na + 1, dtype=np.uint64).astype(dtype).reshape(nb, ng, na)
    raw_dst = np.empty(-(-(ng * dg + 64 + d_off) // item), dtype)
    raw = raw_dst.view(np.uint8)
    raw[...] = 0xAB
    start = -raw_dst.ctypes.data % 64 + d_off
    task = (start, 0, (ng, na, nb), (dg, da, item), (na * item, item, ng * na * item))
    engine._kernel.copy(raw_dst, src, [task], True)
    dst = np.lib.stride_tricks.as_strided(raw[start:].view(dtype), (ng, na, nb), (dg, da, item))
    assert np.array_equal(dst, src.transpose(1, 2, 0))
    untouched = np.ones(raw.size, bool)
    for g in range(ng):
        for a in range(na):
            untouched[start + g * dg + a * da:start + g * dg + a * da + nb * item] = False
    assert (raw[untouched] == 0xAB).all()


@pytest.mark.parametrize("item, ng, na", [(2, 4096, 8), (4, 2048, 8), (4, 1024, 17), (2, 8192, 5)])
@pytest.mark.parametrize("nb", [9, 131])
@pytest.mark.parametrize("d_off", [0, 8, 16, 2])
def test_raw_streamed_far_row_transposes(item: int, ng: int, na: int, nb: int, d_off: int) -> None:
    # the same with source rows 64 KiB or more apart (a permuted rank-3 array's): tile by tile,
    # streamed where every store is 16-byte aligned (far_rows in _kernel_strips.h)
    assert ng * na * item >= 1 << 16
    test_raw_streamed_source_run_transposes(item, ng, na, nb, d_off)


@pytest.mark.parametrize("w", [1, 2, 4])
@pytest.mark.parametrize("ng, n", [(8, 128), (7, 131), (3, 8), (9, 20), (1, 64)])
@pytest.mark.parametrize("side", ["source", "destination"])
@pytest.mark.parametrize("stream", [False, True])
def test_raw_narrow_transposes_in_groups(w: int, ng: int, n: int, side: str, stream: bool) -> None:
    # transposes of 4-byte items whose rows on one side take w = 1, 2 or 4 items per g and run
    # on over g (a bf16 (2,1) / s8 (4,1) sub-tile's pairs / quads in a column-major tiling):
    # 8/w of them go into one 8 x 8 tile (the g left over and the rows past whole tiles one g
    # at a time), cached or, tile by tile, in a streamed copy (the source's rows: in strips);
    # rows of the other side n items, pitches odd
    if engine._kernel is None:
        pytest.skip("the C copy kernel was not built (no compiler at install time)")
    rng = np.random.default_rng(ng * n + w)
    pitch = 4 * (ng * w + 3)  # the rows that run on over g: ng pieces of w items, then a gap
    if side == "source":  # dst[g, a, b] = src[b, g * w + a]: a < w, b < n
        src = rng.integers(0, 2**32, (n, pitch // 4), dtype=np.uint64).astype(np.uint32)
        dst = np.zeros((ng, w, n + 5), np.uint32)
        task = (0, 0, (ng, w, n), (dst.strides[0], dst.strides[1], 4), (4 * w, 4, pitch))
        engine._kernel.copy(dst, src, [task], stream)
        want = src[:, :ng * w].reshape(n, ng, w).transpose(1, 2, 0)
        assert np.array_equal(dst[:, :, :n], want) and not dst[:, :, n:].any()
    else:  # dst[a, g * w + b] = src[g, b, a]: a < n, b < w
        src = rng.integers(0, 2**32, (ng, w, n + 3), dtype=np.uint64).astype(np.uint32)
        dst = np.zeros((n, pitch // 4), np.uint32)
        task = (0, 0, (ng, n, w), (4 * w, pitch, 4), (src.strides[0], 4, src.strides[1]))
        engine._kernel.copy(dst, src, [task], stream)
        want = src[:, :, :n].transpose(2, 0, 1).reshape(n, ng * w)
        assert np.array_equal(dst[:, :ng * w], want) and not dst[:, ng * w:].any()


@pytest.mark.parametrize("side", ["source", "destination"])
@pytest.mark.parametrize("stream", [False, True])
def test_raw_narrow_transposes_of_unaligned_wider_items(side: str, stream: bool) -> None:
    # the same with 4-byte wider items of 2-byte arrays starting 2 bytes off a 4-byte boundary
    # (the pairs of a bf16 (2,1) sub-tile in an array of odd rows): the 8 x 8 tile over rows
    # anywhere loads and stores unaligned; w = 2 pairs a row per g, 9 g, 20 rows the other way
    if engine._kernel is None:
        pytest.skip("the C copy kernel was not built (no compiler at install time)")
    rng = np.random.default_rng(7)
    ng, w, n, pitch = 9, 2, 20, 2 * (2 * 9 * 2 + 3)  # pitch: odd 2-byte items
    if side == "source":  # dst pair [g, a, b] = src pair at row b, pair g * w + a
        src = rng.integers(0, 2**16, n * pitch // 2 + 1, dtype=np.uint64).astype(np.uint16)
        dst = np.zeros(ng * w * (2 * n + 6) + 1, np.uint16)
        task = (2, 2, (ng, w, n), (4 * w * (n + 3), 4 * (n + 3), 4), (4 * w, 4, pitch), False, 4)
        engine._kernel.copy(dst, src, [task], stream)
        pairs = src[1:1 + n * pitch // 2].reshape(n, pitch // 2)[:, :2 * ng * w].reshape(n, ng, w, 2)
        got = np.lib.stride_tricks.as_strided(dst[1:], (ng, w, n, 2), (4 * w * (n + 3), 4 * (n + 3), 4, 2))
        assert np.array_equal(got, pairs.transpose(1, 2, 0, 3))
    else:  # dst pair at row a, pair g * w + b = src pair [g, b, a]
        src = rng.integers(0, 2**16, ng * w * (2 * n + 6) + 1, dtype=np.uint64).astype(np.uint16)
        dst = np.zeros(n * pitch // 2 + 1, np.uint16)
        task = (2, 2, (ng, n, w), (4 * w, pitch, 4), (4 * w * (n + 3), 4, 4 * (n + 3)), False, 4)
        engine._kernel.copy(dst, src, [task], stream)
        pairs = np.lib.stride_tricks.as_strided(src[1:], (ng, w, n, 2), (4 * w * (n + 3), 4 * (n + 3), 4, 2))
        got = dst[1:1 + n * pitch // 2].reshape(n, pitch // 2)[:, :2 * ng * w].reshape(n, ng, w, 2)
        assert np.array_equal(got, pairs.transpose(2, 0, 1, 3))


@pytest.mark.parametrize("seed", range(60))
def test_raw_transposes_of_rows_in_the_same_sets(seed: int) -> None:
    # rows a multiple of 4 KiB apart on one side or both (the source's: blocks down the
    # destination's lines when its rows are short; the destination's: through a stage when a
    # line of each is written): every item width, odd sizes and starts, bytes outside kept
    kernel = _kernel()
    rng = np.random.default_rng(seed)
    item = int(rng.choice([1, 2, 4, 8]))
    dtype = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[item]
    na, nb = int(rng.integers(1, 300)), int(rng.integers(1, 200))  # dst[a, b] = src[b, a]
    far = rng.choice(["source", "destination", "both"])
    sb = 4096 * int(rng.integers(1, 3)) if far != "destination" else (na + int(rng.integers(0, 9))) * item
    da = 4096 * int(rng.integers(1, 3)) if far != "source" else (nb + int(rng.integers(0, 9))) * item
    sb, da = max(sb, na * item), max(da, nb * item)
    s_off, d_off = int(rng.integers(0, 64 // item)) * item, int(rng.integers(0, 64 // item)) * item
    raw_src = np.zeros(-(-(nb * sb + s_off + 64) // item), dtype)  # the kernel's items: dtype's
    raw_dst = np.zeros(-(-(na * da + d_off + 64) // item), dtype)
    raw = raw_dst.view(np.uint8)
    raw[...] = 0xAB
    ss = -raw_src.ctypes.data % 64 + s_off
    sd = -raw_dst.ctypes.data % 64 + d_off
    values = rng.integers(1, 1 << 62, (nb, na), dtype=np.uint64).astype(dtype)
    src = raw_src.view(np.uint8)[ss:].view(dtype)
    np.lib.stride_tricks.as_strided(src, (nb, na), (sb, item))[...] = values
    kernel.copy(raw_dst, raw_src, [(sd, ss, (na, nb), (da, item), (item, sb))], False)
    dst = np.lib.stride_tricks.as_strided(raw[sd:].view(dtype), (na, nb), (da, item))
    assert np.array_equal(dst, values.T)
    _assert_only_rows_written(raw, sd, na, da, nb * item)


def _units(raw: np.ndarray, off: int, shape: tuple[int, ...], strides: tuple[int, ...],
           unit: int) -> np.ndarray:
    """The units of a task's box in the bytes of ``raw``, as (*shape, unit) bytes."""
    return np.lib.stride_tricks.as_strided(raw[off:], (*shape, unit), (*strides, 1))


@pytest.mark.parametrize("seed", range(80))
def test_raw_transposes_over_g_of_rows_in_the_same_sets(seed: int) -> None:
    # the transposes over a third axis g where one side's rows run on over g in pieces of at
    # most a line and sit 1, 2 or 4 KiB multiples apart: the source's in cache go a line of g
    # at a time (transpose_grouped), the destination's in cache are gathered through the stage
    # with stored lines; units of 1-8 bytes or swapped 2 x 2 blocks, odd g counts, ragged rows,
    # any start; cached or streamed; bytes outside the box kept
    kernel = _kernel()
    rng = np.random.default_rng(seed)
    swap = bool(rng.integers(0, 4) == 0)
    e = int(rng.choice([1, 2])) if swap else int(rng.choice([1, 2, 4, 8]))
    unit = 4 * e if swap else e
    piece = int(rng.choice([p for p in (8, 16, 32, 64) if p >= unit]))
    ng, other = int(rng.integers(1, 10)), int(rng.integers(1, 150))
    pitch = 1024 * int(rng.choice([1, 2, 3, 4, 8]))
    run = piece // unit  # units per g on the side whose rows run on
    side = "source" if rng.integers(0, 2) else "destination"
    if side == "source":  # dst[g, a, b] = src[b, g*run + a]
        shape, gap = (ng, run, other), int(rng.integers(0, 3))
        da = (other + gap) * unit
        d_st, s_st = (run * da, da, unit), (piece, unit, pitch)
        d_size, s_size = ng * run * da, other * pitch
    else:  # dst[a, g*run + b] = src[g, b, a]
        shape, gap = (ng, other, run), int(rng.integers(0, 3))
        sb = (other + gap) * unit
        d_st, s_st = (piece, pitch, unit), (run * sb, unit, sb)
        d_size, s_size = other * pitch, ng * run * sb
    d_off, s_off = int(rng.integers(0, 8)) * e, int(rng.integers(0, 8)) * e
    dtype = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[e]
    src = np.frombuffer(rng.bytes(s_size + s_off + 64), dtype)
    dst = np.frombuffer(b"\xab" * ((d_size + d_off + 64) // e * e), dtype).copy()
    want = dst.view(np.uint8).copy()
    got = _units(src.view(np.uint8), s_off, shape, s_st, unit)
    if swap:  # [a, b, c, d] written as [a, c, b, d]
        got = got.reshape(*shape, 4, e)[..., [0, 2, 1, 3], :].reshape(*shape, unit)
    _units(want, d_off, shape, d_st, unit)[...] = got
    kernel.copy(dst, src, [(d_off, s_off, shape, d_st, s_st, swap)], bool(rng.integers(0, 4) == 0))
    assert np.array_equal(dst.view(np.uint8), want)


@pytest.mark.parametrize("far", ["source", "destination", "both"])
@pytest.mark.parametrize("offsets", [(2, 6), (0, 2), (6, 0)])
def test_raw_same_set_transposes_of_unaligned_wider_items(far: str, offsets: tuple[int, int]) -> None:
    # 2-byte arrays moved as 4-byte items (a (2,1) pair) that start 2 bytes off a 4-byte
    # boundary, rows 4 KiB apart on one side or both: the staged and the strip orders
    kernel = _kernel()
    na, nb, unit = 150, 70, 4
    sb = 4096 if far != "destination" else (na + 3) * unit
    da = 4096 if far != "source" else (nb + 1) * unit
    d_off, s_off = offsets
    rng = np.random.default_rng(na + d_off)
    src = np.frombuffer(rng.bytes(nb * sb + s_off + 64), np.uint16)
    dst = np.full((na * da + d_off + 64) // 2, 0xABAB, np.uint16)
    want = dst.view(np.uint8).copy()
    shape, d_st, s_st = (na, nb), (da, unit), (unit, sb)
    _units(want, d_off, shape, d_st, unit)[...] = _units(src.view(np.uint8), s_off, shape, s_st, unit)
    kernel.copy(dst, src, [(d_off, s_off, shape, d_st, s_st, False, unit)], False)
    assert np.array_equal(dst.view(np.uint8), want)


# sub-tiles of 1- and 2-byte items read from (or into) a dim the tiling leaves alone: the kernel
# weaves the sub-tile's rows through a stage (transpose_woven), ragged sub-tiles item by item
WOVEN = ["pred[19,64,30,23]{2,0,1,3:T(8,128)(4,1)}", "s8[9,20,131,7]{2,0,1,3:T(8,128)(4,1)}",
         "bf16[12,40,9,17]{2,0,1,3:T(8,128)(2,1)}", "bf16[131,29,15]{0,2,1:T(8,128)(2,1)}",
         "u8[16,300,5]{1,0,2:T(8,128)(4,1)}", "s16[40,7,8]{2,1,0:T(2,128)(2,1)}"]
WOVEN_DTYPES = {"pred": np.bool_, "s8": np.int8, "u8": np.uint8, "bf16": np.uint16, "s16": np.int16}


@pytest.mark.parametrize("text", WOVEN)
@pytest.mark.parametrize("threads", [1, 3])
def test_woven_sub_tiles_match_the_reference(engine_mode: str, text: str, threads: int) -> None:
    target = as_target(text)
    dtype = WOVEN_DTYPES[text[:text.index("[")]]
    data = np.random.default_rng(len(text)).integers(0, 2 if dtype == np.bool_ else 120,
                                                       target.logical_shape).astype(dtype)
    want = _reference(data, text, target.physical_elements, 1)
    assert np.array_equal(to_physical(data, target, pad_value=1, threads=threads), want)
    assert np.array_equal(from_physical(want, target, threads=threads), data)


@pytest.mark.parametrize("na, nb", [(3, 4), (3, 5), (3, 7), (3, 128), (3, 131), (4, 3), (6, 3), (128, 3),
                                    (131, 3)])
@pytest.mark.parametrize("gaps", [(0, 0), (4, 12), (2036, 500)])
def test_raw_three_row_transposes_of_four_byte_items(na: int, nb: int, gaps: tuple[int, int]) -> None:
    # three rows against a longer side (a ragged (2,1) sub-tile's last pairs of rows): 4 x 4
    # tiles with exactly the three rows' bytes loaded and stored; nothing outside the rows moves
    kernel = _kernel()
    da, sb = nb * 4 + gaps[0], na * 4 + gaps[1]
    src_raw = np.random.default_rng(na * nb).integers(1, 1 << 32, (nb * sb + 64) // 4, dtype=np.uint32)
    dst_raw = np.full(na * da + 64, 0xAB, np.uint8)
    kernel.copy(dst_raw.view(np.uint32), src_raw, [(0, 0, (na, nb), (da, 4), (4, sb))], False)  # type: ignore[attr-defined]
    src = np.lib.stride_tricks.as_strided(src_raw, (nb, na), (sb, 4))
    dst = np.lib.stride_tricks.as_strided(dst_raw.view(np.uint32), (na, nb), (da, 4))
    assert np.array_equal(dst, src.T)
    _assert_only_rows_written(dst_raw, 0, na, da, nb * 4)
