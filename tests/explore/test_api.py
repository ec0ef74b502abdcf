"""The explorer's answers, its server and its command line (the page in a browser: test_browser.py)."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from urllib.error import HTTPError
from urllib.request import urlopen

import pytest

from tensorlayout import explore
from tensorlayout.cli import main
from tensorlayout.errors import TensorLayoutError
from tensorlayout.explore import EXAMPLES, answer, read, saved_page, state_key

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("text", EXAMPLES)
def test_every_view_of_every_example_answers(text: str) -> None:
    first = answer({"q": text})
    assert first["ok"], first
    assert first["views"] and first["view"] == first["views"][0][0]
    for name, _label in first["views"]:
        a = answer({"q": text, "view": name})
        assert a["ok"] and a["view"] == name
        assert a["html"] or a["view_error"], (text, name)
        assert "view_error" not in a or "\n" not in a["view_error"]


@pytest.mark.parametrize("text, kind", [
    ("f32[3,5]{1,0:T(2,2)}", "layout"), ("Sw<3,3,3> o _0 o (8,64):(64,1)", "layout"),
    ("zN 40x72 f16", "layout"), ("(4,8):(_1@1,_1@0)", "layout"),
    ("SM80_16x8x16_F16F16F16F16_TN", "mma"), ("SM75_U32x4_LDSM_N", "copy"),
    ("#ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [8, 4], warpsPerCTA = [2, 1], order = [1, 0]}>",
     "triton"),
    ("ttgl.BlockedLayout(size_per_thread=[1, 4], threads_per_warp=[8, 4], warps_per_cta=[2, 1], "
     "order=[1, 0])",
     "triton"),
    ("ttgl.to_linear_layout(ttgl.SliceLayout(1, ttgl.BlockedLayout([1, 4], [8, 4], [2, 1], [1, 0])), [16])",
     "triton"),
    ("(d0, d1) -> (d0 * 8 + d1), domain: d0 in [0, 7], d1 in [0, 7]", "map"),
    ("zipped_divide((8,8):(8,1),(2,4))", "op"),
])
def test_the_box_reads_every_notation(text: str, kind: str) -> None:
    assert read(text, [16, 16]).kind == kind


def test_notations_view_gives_each_text_or_why_not() -> None:
    html = answer({"q": "Sw<3,3,3> o _0 o (8,64):(64,1)", "view": "notations"})["html"]
    assert '<td class="why" data-notation="xla">' in html.replace("XLA", "xla")  # an XOR has no XLA layout
    html = answer({"q": "(4,8):(8,1)", "view": "notations"})["html"]
    assert "<pre>f32[4,8]{1,0}</pre>" in html and "(d0, d1) -&gt; (d0 * 8 + d1)" in html


@pytest.mark.parametrize("text, error", [
    ("f32[3,5", "ParseError: expected ',' or ']' in the dimensions at line 1, column 8"),
    ("", "LayoutError: type a layout"),
    ("BlockedLayout([1,4],[8,4],[2,1],[1,0])", "LayoutError: BlockedLayout needs a tensor shape"),
    ("BlockedLayout(__import__('os'))", "LayoutError: unknown Gluon layout '__import__'"),
    ("BlockedLayout(x, [8,4], [2,1], [1,0])", "LayoutError: a Gluon layout argument must be a literal"),
    ("make_tiled_mma(SM99_NOPE, (2,2,1))", "Error: "),
    ("logical_divide((8,8):(8,1),(2,4,2))", "AlgebraError: "),
])
def test_bad_input_is_one_line(text: str, error: str) -> None:
    a = answer({"q": text})
    assert not a["ok"] and error in a["error"] and "\n" not in a["error"]


def test_indexing_map_grid_and_triton_notations() -> None:
    a = answer({"q": "(d0, d1) -> (d1 * 16 + d0), domain: d0 in [0, 15], d1 in [0, 7]", "view": "grid"})
    assert a["html"].count('class="cell"') == 128 and 'data-index="3,2" data-offset="35"' in a["html"]
    a = answer({"q": "(d0, d1) -> (d0, d1 mod 4), domain: d0 in [0, 15], d1 in [0, 7]", "view": "grid"})
    assert a["view_error"].startswith("UnsupportedError: the grid of an indexing map is drawn for one result")
    a = answer({"q": "to_linear_layout(BlockedLayout([1, 4], [8, 4], [2, 1], [1, 0]), [16, 16])",
                "view": "notations"})
    for name, text in (("CuTe", "(16,16):(16,1)"), ("XLA", "f16[16,16]{1,0}"),
                       ("indexing map", "(d0, d1) -&gt; (d0 * 16 + d1)")):
        assert f'data-notation="{name}"><pre>{text}' in a["html"], name


def test_a_view_that_does_not_apply_says_why() -> None:
    a = answer({"q": "(4,8):(8,1)", "view": "tv"})
    assert a["ok"] and a["view_error"].startswith("UnsupportedError: a TV layout")
    assert "tile" in a["view_error"]
    a = answer({"q": "(32,4):(4,1)", "view": "tv", "tile": "16,8"})
    assert a["html"].count('class="cell"') == 128


def test_window_and_caps() -> None:
    whole = answer({"q": "(256,256):(256,1)"})["html"]
    part = answer({"q": "(256,256):(256,1)", "win": "8:12,100:104"})["html"]
    assert whole.count('class="cell"') == 64 * 64 and part.count('class="cell"') == 16
    assert 'data-index="9,101"' in part
    bad = answer({"q": "(256,256):(256,1)", "win": "zz"})
    assert bad["ok"] and "view_error" in bad


def test_state_key_and_saved_page_carry_every_view() -> None:
    texts = ["Sw<3,3,3> o _0 o (8,64):(64,1)", "make_tiled_mma(SM80_16x8x16_F16F16F16F16_TN, (2,2,1))"]
    html = saved_page(texts)
    data = json.loads(html.split('id="precomputed">')[1].split("</script>")[0])
    for text in texts:
        views = answer({"q": text})["views"]
        for name, _ in views:
            assert data[state_key({"q": text, "view": name})]["view"] == name
    remote = re.findall(r"(?:src|href)=[\"']?(?:https?:)?//|@import|url\(", html)
    assert remote == []  # nothing fetched from the network: no remote script, style, image or font
    with pytest.raises(TensorLayoutError, match="ParseError"):
        saved_page(["f32[3,5"])


@pytest.fixture()
def server() -> Iterator[str]:
    srv = explore.make_server(0)
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{srv.server_address[1]}/"
    finally:
        srv.shutdown()
        srv.server_close()


def test_server_serves_page_and_answers(server: str) -> None:
    with urlopen(server) as r:
        assert r.headers["Content-Type"].startswith("text/html") and b'id="q"' in r.read()
    with urlopen(server + "api?q=(4,8):(8,1)&view=grid") as r:
        a = json.loads(r.read())
    assert a["ok"] and a["html"].count('class="cell"') == 32
    with pytest.raises(HTTPError, match="404"):
        urlopen(server + "elsewhere")


def test_a_bug_is_said_in_one_line_not_a_broken_page(server: str, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(state: object) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(explore._server, "answer", broken)
    with urlopen(server + "api?q=(5,7):(7,1)") as r:
        a = json.loads(r.read())
    assert a == {"ok": False,
                 "error": "InternalError: RuntimeError: boom (a bug in tensorlayout; please report it)"}


def test_cli_serves_on_localhost_until_stopped() -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    proc = subprocess.Popen([sys.executable, "-m", "tensorlayout", "explore", "--port", "0", "(4,8):(8,1)"],
                            stdout=subprocess.PIPE, text=True, env=env)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line.startswith("tensorlayout explore: serving http://127.0.0.1:")
        url = line.split()[3]
        assert proc.stdout.readline().strip() == f"{url}#q=%284%2C8%29%3A%288%2C1%29"
        with urlopen(url + "api?q=8:1") as r:
            assert json.loads(r.read())["ok"]
        with urlopen(url) as r:
            assert b'data-q="(4,8):(8,1)"' in r.read()
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=10)
    assert proc.returncode == 0


def test_cli_writes_the_saved_page(tmp_path: Path) -> None:
    out = tmp_path / "page.html"
    assert main(["explore", "(4,8):(8,1)", "logical_divide((8,8):(8,1),(2,4))", "-o", str(out)]) == 0
    html = out.read_text()
    assert html.startswith("<!DOCTYPE html>") and 'data-q="logical_divide((8,8):(8,1),(2,4))"' in html


@pytest.mark.parametrize("argv, kind", [
    (["explore", "f32[3,5", "-o", "x.html"], "ParseError"),
    (["explore", "-o", "x.html"], "UsageError"),
    (["explore", "--port", "70000"], "UsageError"),
    (["explore", "#ttg.blocked<{order = [1, 0]}>"], "LayoutError"),
    (["explore", "#ttg.blocked<{order = [1, 0]}>", "--shape", "a,b", "-o", "x.html"], "LayoutError"),
])
def test_cli_bad_input_is_one_line(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                   monkeypatch: pytest.MonkeyPatch, argv: list[str], kind: str) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"tensorlayout: {kind}: ") and err.count("\n") == 1
    assert not (tmp_path / "x.html").exists()
