"""End to end: the HTML page in headless Chromium, driven with a real mouse.

Needs Debian's ``chromium`` (``.ci/run`` installs it); the test installs nothing and skips
when the browser is missing. It talks to the browser over the DevTools protocol on a pipe
(``--remote-debugging-pipe``: JSON messages ending in NUL on file descriptors 3 and 4, so no
port and no extra package), moves the mouse onto cells and slots with
``Input.dispatchMouseEvent`` and reads back what the page shows.
"""

from __future__ import annotations

import json
import os
import select
import shutil
import subprocess
import time
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tensorlayout.render import to_html, to_svg

from .test_render_display import KINDS  # the objects of every drawable kind

BROWSERS = ("chromium", "chromium-browser", "google-chrome")
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-dev-shm-usage", "--remote-debugging-pipe", "--window-size=1280,1000")
TIMEOUT = 30.0


def _browser_path() -> str:
    for name in BROWSERS:
        path = shutil.which(name)
        if path:
            return path
    pytest.skip("headless browser test needs Debian's chromium (apt-get install chromium); "
                f"none of {', '.join(BROWSERS)} is on PATH")


class Chromium:
    """One headless Chromium, spoken to over the DevTools pipe."""

    def __init__(self, path: str, profile: Path) -> None:
        to_browser_r, self._to_browser = os.pipe()
        self._from_browser, from_browser_w = os.pipe()

        def child_fds() -> None:  # the browser reads commands on fd 3 and answers on fd 4
            a, b = os.dup(to_browser_r), os.dup(from_browser_w)
            os.dup2(a, 3)
            os.dup2(b, 4)

        self.log = profile.parent / "chromium.log"
        with open(self.log, "wb") as log:
            self.proc = subprocess.Popen(
                [path, *FLAGS, f"--user-data-dir={profile}", "about:blank"],
                stdin=subprocess.DEVNULL, stdout=log, stderr=log, pass_fds=(3, 4),
                preexec_fn=child_fds)
        os.close(to_browser_r)
        os.close(from_browser_w)
        self._buf = b""
        self._id = 0

    def call(self, method: str, params: dict[str, Any] | None = None, session: str | None = None) -> Any:
        self._id += 1
        msg: dict[str, Any] = {"id": self._id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self._to_browser, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + TIMEOUT
        while True:
            while b"\0" in self._buf:
                raw, self._buf = self._buf.split(b"\0", 1)
                reply = json.loads(raw)
                if reply.get("id") == self._id:
                    if "error" in reply:
                        raise AssertionError(f"{method}: {reply['error']}")
                    return reply["result"]
            ready, _, _ = select.select([self._from_browser], [], [], max(0.0, deadline - time.monotonic()))
            chunk = os.read(self._from_browser, 1 << 16) if ready else b""
            if not chunk:
                raise AssertionError(f"chromium did not answer {method} (see {self.log}): "
                                     f"{self.log.read_text(errors='replace')[-1500:]}")
            self._buf += chunk

    def open(self, url: str) -> Page:
        target = self.call("Target.createTarget", {"url": url})["targetId"]
        session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        page = Page(self, session)
        page.wait_for(f"location.href === {json.dumps(url)} && document.readyState === 'complete' && "
                      "!!document.getElementById('count') && "
                      "document.getElementById('count').textContent !== ''")
        return page

    def close(self) -> None:
        try:
            self.call("Browser.close")
            self.proc.wait(timeout=10)
        except (AssertionError, OSError, subprocess.TimeoutExpired):
            self.proc.kill()
            self.proc.wait(timeout=10)
        finally:
            os.close(self._to_browser)
            os.close(self._from_browser)


class Page:
    """One tab: run JavaScript, move the mouse."""

    def __init__(self, browser: Chromium, session: str) -> None:
        self.browser, self.session = browser, session

    def js(self, expression: str) -> Any:
        result = self.browser.call("Runtime.evaluate", {"expression": expression, "returnByValue": True},
                                   self.session)
        if "exceptionDetails" in result:
            raise AssertionError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def wait_for(self, condition: str) -> None:
        deadline = time.monotonic() + TIMEOUT
        while not self.js(f"!!({condition})"):
            if time.monotonic() > deadline:
                raise AssertionError(f"the page never reached: {condition}")
            time.sleep(0.05)

    def hover(self, selector: str) -> None:
        """Scroll the element into view and move the mouse to its centre."""
        x, y = self.js(f"""(function () {{
            var e = document.querySelector({json.dumps(selector)});
            e.scrollIntoView({{block: 'center', inline: 'center'}});
            var b = e.getBoundingClientRect();
            return [b.x + b.width / 2, b.y + b.height / 2];
        }})()""")
        self.browser.call("Input.dispatchMouseEvent", {"type": "mouseMoved", "x": x, "y": y}, self.session)

    def info(self) -> str:
        return str(self.js("document.getElementById('info').textContent"))


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Chromium]:
    path = _browser_path()
    chromium = Chromium(path, tmp_path_factory.mktemp("chromium") / "profile")
    try:
        yield chromium
    finally:
        chromium.close()


def _page(browser: Chromium, tmp_path: Path, text: str, fragment: str = "") -> Page:
    html = tmp_path / "layout.html"
    html.write_text(to_html(text), encoding="utf-8")
    return browser.open(html.as_uri() + fragment)


def test_page_draws_cells_offsets_and_strip(browser: Chromium, tmp_path: Path) -> None:
    page = _page(browser, tmp_path, "f32[3,5]{1,0:T(2,2)}")
    assert page.js("document.getElementById('count').textContent") == "15 cells drawn"
    shown = page.js("Array.from(document.querySelectorAll('g.cell')).map(function (g) {"
                    " return [g.getAttribute('data-offset'), g.querySelector('text').textContent]; })")
    assert [int(a) for a, _ in shown] == [0, 1, 4, 5, 8, 2, 3, 6, 7, 10, 12, 13, 16, 17, 20]
    assert all(a == b for a, b in shown)
    # every cell is on screen and is what the mouse would hit at its centre
    hits = page.js("""Array.from(document.querySelectorAll('g.cell')).every(function (g) {
        g.scrollIntoView({block: 'center'});
        var b = g.getBoundingClientRect();
        var hit = document.elementFromPoint(b.x + b.width / 2, b.y + b.height / 2);
        return b.width > 20 && b.height > 20 && g.contains(hit); })""")
    assert hits is True
    pads = page.js("Array.from(document.querySelectorAll('rect.slot.pad')).map(function (r) {"
                   " return getComputedStyle(r).fill; })")
    assert len(pads) == 9 and set(pads) == {"rgb(255, 255, 255)"}
    assert page.js("document.querySelectorAll('rect.slot').length") == 24


@pytest.mark.parametrize("text, index, expected", [
    ("f32[3,5]{1,0:T(2,2)}", "2,3", "index (2,3)  offset 17  tile (1,1) #4  in-tile (0,1) #1"),
    ("f32[4,8]{1,0:T(2,4)(2,1)}", "1,2", "index (1,2)  offset 5  tile (0,0) #0  in-tile (1,2) #5"),
    ("((4,2),(4,3)):((4,16),(1,32))", "1,5", "index (1,5)  offset 37  tile (0,1) #2  in-tile (1,1) #5"),
    ("f32[2,3,4]{2,1,0:T(2,2)}", "1,2,3", "index (1,2,3)  offset 29  tile (1,1,1) #7  in-tile (0,1) #1"),
    ("(4,8):(8,1)", "3,7", "index (3,7)  offset 31  tile #0  in-tile #31"),
])
def test_mouse_hover_shows_index_offset_and_tile(browser: Chromium, tmp_path: Path, text: str,
                                                 index: str, expected: str) -> None:
    page = _page(browser, tmp_path, text)
    page.hover(f'g.cell[data-index="{index}"]')
    page.wait_for(f"document.getElementById('info').getAttribute('data-shown') === {json.dumps(index)}")
    assert page.info() == expected
    offset = expected.split("offset ")[1].split()[0]
    assert page.js("Array.from(document.querySelectorAll('g.cell.lit')).map(function (g) {"
                   " return g.getAttribute('data-index'); })") == [index]
    assert page.js("Array.from(document.querySelectorAll('rect.slot.lit')).map(function (r) {"
                   " return r.getAttribute('data-offset'); })") == [offset]
    # moving on to another cell moves the highlight (nothing stays lit)
    page.hover('g.cell[data-index="0,0"]' if index.count(",") == 1 else 'g.cell[data-index="0,0,0"]')
    page.wait_for("document.querySelector('g.cell.lit').getAttribute('data-offset') === '0'")
    assert page.js("document.querySelectorAll('.lit').length") == 2


def test_hovering_the_strip(browser: Chromium, tmp_path: Path) -> None:
    page = _page(browser, tmp_path, "f32[3,5]{1,0:T(2,2)}")
    page.hover('rect.slot[data-offset="9"]')
    page.wait_for("document.getElementById('info').getAttribute('data-shown') === 'pad 9'")
    assert page.info() == "offset 9  padding"
    page.hover('rect.slot[data-offset="17"]')
    page.wait_for("document.getElementById('info').getAttribute('data-shown') === '2,3'")
    assert page.info().startswith("index (2,3)  offset 17")
    assert page.js("document.querySelector('g.cell.lit').getAttribute('data-index')") == "2,3"


def test_address_fragment_shows_a_cell_without_a_mouse(browser: Chromium, tmp_path: Path) -> None:
    page = _page(browser, tmp_path, "f32[4,8]{1,0:T(2,4)(2,1)}", "#hover=3,7")
    assert page.info() == "index (3,7)  offset 31  tile (1,1) #3  in-tile (1,3) #7"


def test_tiles_drawn_whole_with_thick_borders(browser: Chromium, tmp_path: Path) -> None:
    """bf16[16,256] with 8x128 tiles: two whole tiles drawn, the thick border frames exactly
    the drawn grid and splits it between rows 7 and 8; a window hovers like the whole."""
    html = tmp_path / "tiles.html"
    html.write_text(to_html("bf16[16,256]{1,0:T(8,128)(2,1)}"), encoding="utf-8")
    page = browser.open(html.as_uri())
    assert page.js("document.getElementById('count').textContent") == "2048 cells drawn"
    box = page.js("""(function () {
        var p = document.querySelector('path.tile-border').getBBox();
        var a = document.querySelector('g.cell[data-index="0,0"] rect').getBBox();
        var b = document.querySelector('g.cell[data-index="15,127"] rect').getBBox();
        var c = document.querySelector('g.cell[data-index="8,0"] rect').getBBox();
        return [p.x - a.x, p.y - a.y, p.x + p.width - b.x - b.width, p.y + p.height - b.y - b.height,
                c.y - a.y, getComputedStyle(document.querySelector('path.tile-border')).strokeWidth]; })()""")
    assert box[:4] == [0, 0, 0, 0] and box[4] == 8 * 36 and float(box[5].rstrip("px")) >= 2
    html.write_text(to_html("bf16[16,256]{1,0:T(8,128)(2,1)}", window=(range(8, 16), range(128, 256))),
                    encoding="utf-8")
    page = browser.open(html.as_uri())
    page.hover('g.cell[data-index="9,130"]')
    page.wait_for("document.getElementById('info').getAttribute('data-shown') === '9,130'")
    assert page.info() == "index (9,130)  offset 3077  tile (1,1) #3  in-tile (1,2) #5"
    assert page.js("document.querySelector('rect.slot.lit').getAttribute('data-offset')") == "3077"


def test_every_picture_kind_draws_in_the_browser(browser: Chromium, tmp_path: Path) -> None:
    """Each drawable kind's SVG, inline in a page: every cell laid out at full size, no two
    cells overlapping, the title drawn."""
    for kind, obj in KINDS.items():
        html = tmp_path / f"{kind}.html"
        html.write_text(f"<!DOCTYPE html><html><body><div id='count'>ready</div>{to_svg(obj)}</body></html>",
                        encoding="utf-8")
        page = browser.open(html.as_uri())
        cells = ET.fromstring(to_svg(obj)).findall(".//{http://www.w3.org/2000/svg}g[@class='cell']")
        boxes = page.js("""Array.from(document.querySelectorAll('g.cell rect')).map(function (r) {
            var b = r.getBBox(); return [b.x, b.y, b.width, b.height]; })""")
        assert len(boxes) == len(cells) > 0, kind
        assert all(w >= 18 and h >= 18 for _x, _y, w, h in boxes), kind
        corners = {(x, y) for x, y, _w, _h in boxes}
        assert len(corners) == len(boxes), f"{kind}: two cells drawn on one spot"
        assert page.js("document.querySelector('svg title').textContent"), kind
