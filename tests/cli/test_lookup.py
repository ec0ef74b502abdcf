"""`show --index` / `show --offset`: one command each, for every notation, checked against
the library's own offsets (`linear_indices`, CuTe `offsets`) element by element."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest

from tensorlayout.cli import main
from tensorlayout.cli._locate import MAX_SEARCHED, elements_at, offset_of
from tensorlayout.cli._target import target_from
from tensorlayout.cute import Layout, tla
from tensorlayout.errors import LayoutError, UnsupportedError
from tensorlayout.xla import linear_indices, parse_shape


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_the_headline_questions_in_one_command_each(capsys: pytest.CaptureFixture[str]) -> None:
    seed = "f32[3,5]{1,0:T(2,2)}"
    assert run(capsys, "show", seed, "--index", "2,3") == (0, "index (2,3): offset 17\n", "")
    assert run(capsys, "show", seed, "--offset", "17")[1] == "offset 17: index (2,3)\n"
    assert run(capsys, "show", seed, "--offset", "9")[1] == "offset 9: padding\n"
    cute = "((4,2),(4,3)):((4,16),(1,32))"
    assert run(capsys, "show", cute, "--index", "1,5")[1] == "index (1,5): offset 37\n"
    code, out, _ = run(capsys, "show", "--tla", "zN", "--rows", "40", "--cols", "72", "--offset", "17",
                       "--index", "(39,71)")
    assert code == 0 and out.splitlines() == ["index (39,71): offset 3703", "offset 17: index (1,1)"]


def test_lookup_json_schema(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "show", "f32[3,5]{1,0:T(2,2)}", "--index", "2,3", "--offset", "9", "--json")
    facts = json.loads(out)
    assert code == 0 and facts == {
        "notation": "xla", "target": "f32[3,5]{1,0:T(2,2)}", "dimensions": [3, 5], "slots": 24,
        "lookups": [{"index": [2, 3], "offset": 17}, {"offset": 9, "indices": [], "padding": True}]}


def test_broadcast_offset_lists_every_element(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "show", "(2,3):(0,1)", "--offset", "2")[1] == "offset 2: index (0,2) index (1,2)\n"


@pytest.mark.parametrize("text", [
    "f32[3,5]{1,0:T(2,2)}", "bf16[5,9]{1,0:T(8,128)(2,1)}", "s8[3,70]{0,1:T(4,128)(4,1)}",
    "f32[2,3,4]{0,2,1:T(2,2)}", "f32[7]{0:T(4)}", "pred[]{:T(512)S(6)}", "f32[6,4,8]{2,1,0:T(*,2,4)}",
])
def test_xla_every_index_and_slot(text: str) -> None:
    target = target_from(text)
    want = linear_indices(parse_shape(text)).reshape(target.dims)
    owner = {int(off): idx for idx, off in np.ndenumerate(want)}
    for idx, off in np.ndenumerate(want):
        assert offset_of(target, tuple(idx)) == off
    for k in range(target.slots):
        assert elements_at(target, k) == ((owner[k],) if k in owner else ())


def _random_layout(rng: random.Random) -> Layout:
    modes = []
    for _ in range(rng.randint(1, 3)):
        strides = [0, 1, 2, 3, 5, 8, 12, 16, 40]
        digits = [(rng.randint(1, 4), rng.choice(strides)) for _ in range(rng.randint(1, 2))]
        shape = tuple(s for s, _ in digits)
        stride = tuple(d for _, d in digits)
        modes.append((shape[0], stride[0]) if len(digits) == 1 else (shape, stride))
    return Layout(tuple(m[0] for m in modes), tuple(m[1] for m in modes))


def test_cute_offsets_round_trip_against_enumeration() -> None:
    rng = random.Random(16)
    for _ in range(300):
        layout = _random_layout(rng)
        target = target_from(str(layout))
        sizes = target.dims
        offsets = layout.offsets()
        for k in range(target.slots):
            hits = np.flatnonzero(offsets == k)
            want = tuple(sorted(tuple(int(c) for c in np.unravel_index(h, sizes, order="F")) for h in hits))
            # (CuTe lists coordinates colexicographically)
            assert tuple(sorted(elements_at(target, k))) == want, (layout, k)
        for idx in np.ndindex(*sizes):
            assert offset_of(target, idx) == layout(*idx), (layout, idx)


@pytest.mark.parametrize("tag", tla.FORMATS)
def test_tla_padding_and_origin(tag: str) -> None:
    t = tla.make_format(tag, 5, 7, "f16")
    target = target_from(str(t.layout))
    tla_target = type(target)("tla", t, str(t))
    for k in range(tla_target.slots):
        inside = [i for i in elements_at(target, k)
                  if all(c < n for c, n in zip(i, t.origin_shape, strict=True))]
        assert list(elements_at(tla_target, k)) == inside


def test_large_layouts_are_answered_without_enumeration() -> None:
    big = target_from("bf16[65536,65536]{1,0:T(8,128)(2,1)}")
    assert elements_at(big, offset_of(big, (40000, 1234))) == ((40000, 1234),)
    cute = target_from("((8,4096),(128,512)):((128,1024),(1,4194304))")
    assert elements_at(cute, int(offset_of(cute, (12345, 54321)))) == ((12345, 54321),)
    knotted = target_from(f"({MAX_SEARCHED},2):(2,3)")  # strides 2 and 3 overlap: no unique digits
    with pytest.raises(UnsupportedError,
        match=r"\(4194304,2\):\(2,3\) has 8388608 elements and digits that do"):
        elements_at(knotted, 7)


@pytest.mark.parametrize("argv, kind", [
    (("show", "f32[3,5]", "--index", "3,0"), "LayoutError"),
    (("show", "f32[3,5]", "--index", "1"), "UsageError"),
    (("show", "f32[3,5]", "--index", "a,b"), "UsageError"),
    (("show", "f32[3,5]", "--offset", "15"), "LayoutError"),
    (("show", "f32[3,5]", "--offset", "-1"), "LayoutError"),
    (("show", "(4,2):(1,4)", "--offset", "8"), "LayoutError"),
    (("show", "(f32[3], s8[2])", "--index", "0"), "UsageError"),
    (("show", "f32[3,5]", "--index", "0,0", "--window", "0:1"), "UsageError"),
    (("show", "f32[3,5]", "--index", "0,0", "--as", "cute"), "UsageError"),
    (("show", "f32[3,5]", "--offset", "x"), "UsageError"),
])
def test_bad_lookups(capsys: pytest.CaptureFixture[str], argv: tuple[str, ...], kind: str) -> None:
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == "" and err.startswith(f"tensorlayout: {kind}: ") and err.count("\n") == 1


def test_layout_error_type_for_out_of_range() -> None:
    with pytest.raises(LayoutError, match=r"offset 24 is outside the 24 slots of f32\[3,5\]\{1,0:T\(2,2\)\}"):
        elements_at(target_from("f32[3,5]{1,0:T(2,2)}"), 24)
