"""``tensorlayout show TARGET --as xla|cute|map``: the same layout in another notation.

What is printed is parsed back and checked against the source's own offsets; bad input gives
one ``tensorlayout: ErrorKind: message`` line and exit code 2, never a traceback.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tensorlayout.cli import main
from tensorlayout.cute import Layout, tla
from tensorlayout.indexing import IndexingMap
from tensorlayout.xla import linear_indices, parse_shape

from .strategies import cute_offsets, logical_indices


def _show(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["show", *argv])
    out, err = capsys.readouterr()
    return code, out.strip(), err.strip()


@pytest.mark.parametrize("target", [
    "f32[3,5]{1,0:T(2,2)}", "bf16[16,256]{1,0:T(8,128)(2,1)}", "s4[8,128]{1,0:T(8,128)(8,1)E(4)}",
    "f32[2,3,4]{0,2,1:T(2,2)}", "f32[7]{0}", "f32[]",
])
def test_xla_to_cute_and_map_and_back(capsys: pytest.CaptureFixture[str], target: str) -> None:
    shape = parse_shape(target)
    want = linear_indices(shape)
    code, out, _ = _show(capsys, target, "--as", "cute")
    assert code == 0
    assert np.array_equal(cute_offsets(Layout.parse(out), shape.dimensions), want)
    # back to XLA: over the padded domain (the CuTe text does not carry the logical dims)
    layout = Layout.parse(out)
    padded = tuple(int(m.size()) for m in layout.modes())
    code, back, _ = _show(capsys, out, "--as", "xla")
    assert code == 0 and np.array_equal(linear_indices(parse_shape(back)), cute_offsets(layout, padded))
    code, text, _ = _show(capsys, target, "--as", "map")
    assert code == 0
    if shape.rank:  # IndexingMap.parse cannot read a rank-0 map back yet ("() -> (0)")
        m = IndexingMap.parse(text)
        got = [m.evaluate(list(map(int, ix)))[0] for ix in logical_indices(shape.dimensions)]
        assert got == want.tolist()
    code, same, _ = _show(capsys, target, "--as", "xla")
    assert code == 0 and parse_shape(same) == shape


def test_combined_dims_have_a_map_but_no_cute_form(capsys: pytest.CaptureFixture[str]) -> None:
    target = "f32[2,7,8,11,10]{4,3,2,1,0:T(*,*,2,*,3)}"
    assert _show(capsys, target, "--as", "xla")[:2] == (0, target)
    code, out, _ = _show(capsys, target, "--as", "map")
    assert code == 0 and IndexingMap.parse(out).evaluate([1, 6, 7, 10, 9]) == (
        int(linear_indices(parse_shape(target))[-1]),)
    code, _, err = _show(capsys, target, "--as", "cute")
    assert code == 2 and err.startswith("tensorlayout: UnsupportedError: ") and "'*'" in err


@pytest.mark.parametrize("tag", tla.FORMATS)
@pytest.mark.parametrize("dtype", ["f16", "f32", "int8", "s4"])
def test_tla_formats_in_every_notation(capsys: pytest.CaptureFixture[str], tag: str, dtype: str) -> None:
    t = tla.make_format(tag, 37, 45, dtype)
    want = cute_offsets(t.layout, t.origin_shape)
    args = ["--tla", tag, "--rows", "37", "--cols", "45", "--dtype", dtype]
    code, out, _ = _show(capsys, *args, "--as", "xla")
    assert code == 0 and np.array_equal(linear_indices(parse_shape(out)), want)
    code, out, _ = _show(capsys, *args, "--as", "cute")
    assert code == 0 and Layout.parse(out) == t.layout
    code, out, _ = _show(capsys, *args, "--as", "map")
    m = IndexingMap.parse(out)
    last = tuple(n - 1 for n in t.origin_shape)
    assert m.evaluate(list(last)) == (int(want[-1]),) == (tla.crd2offset(last, t),)


@pytest.mark.parametrize("argv, kind", [
    (["(4,8):(0,1)", "--as", "xla"], "UnsupportedError"),
    (["(4,8", "--as", "cute"], "ParseError"),
    (["f32[3,5", "--as", "map"], "ParseError"),
    (["(f32[3], f32[2])", "--as", "cute"], "UnsupportedError"),
    (["token[]", "--as", "map"], "UnsupportedError"),
    (["f32[?,5]", "--as", "cute"], "LayoutError"),
    (["f32[6]{0:T(3)(2)}", "--as", "cute"], "UnsupportedError"),
    (["--tla", "zN", "--rows", "8", "--as", "xla"], "TensorLayoutError"),
    (["--tla", "zQ", "--rows", "8", "--cols", "8", "--as", "xla"], "LayoutError"),
    (["--tla", "zN", "--rows", "8", "--cols", "8", "--dtype", "f24", "--as", "map"], "LayoutError"),
    (["--as", "map"], "TensorLayoutError"),
])
def test_bad_input_is_one_line_and_exit_2(capsys: pytest.CaptureFixture[str], argv: list[str],
                                          kind: str) -> None:
    code, out, err = _show(capsys, *argv)
    assert code == 2 and out == ""
    assert err.splitlines()[0].startswith(f"tensorlayout: {kind}: ")
    assert "Traceback" not in err and all(line.startswith("  ") for line in err.splitlines()[1:])


@given(st.text(alphabet="()[]{},:*_0123456789fsTES<=?@ ", min_size=1, max_size=24),
       st.sampled_from(["xla", "cute", "map"]))
def test_random_text_never_crashes(text: str, notation: str) -> None:
    assert main(["show", text, "--as", notation]) in (0, 2)
