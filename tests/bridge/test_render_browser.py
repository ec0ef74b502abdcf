"""End to end: the HTML page in headless Chromium shows the cells and the hover read-out.

Needs Debian's ``chromium`` (``.ci/run`` installs it); the test installs nothing and skips
when the browser is missing. The page reads ``#hover=I,J`` from its address and runs the
same code a mouse hover runs, so ``--dump-dom`` shows the read-out after the script ran.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tensorlayout.render import to_html

BROWSERS = ("chromium", "chromium-browser", "google-chrome")


def _browser() -> str:
    for name in BROWSERS:
        path = shutil.which(name)
        if path:
            return path
    pytest.skip("headless browser test needs Debian's chromium (apt-get install chromium); "
                f"none of {', '.join(BROWSERS)} is on PATH")


def _dump_dom(url: str, tmp_path: Path) -> str:
    cmd = [_browser(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
           f"--user-data-dir={tmp_path / 'profile'}", "--virtual-time-budget=3000", "--dump-dom", url]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False)
    if done.returncode != 0 or "<html" not in done.stdout:
        pytest.fail(f"chromium failed ({done.returncode}): {done.stderr[-2000:]}")
    return done.stdout


@pytest.mark.parametrize("text, hover, expected, cells", [
    ("f32[3,5]{1,0:T(2,2)}", "2,3", "index (2,3)  offset 17  tile 4  in-tile 1", 15),
    ("f32[4,8]{1,0:T(2,4)(2,1)}", "1,2", "index (1,2)  offset 5  tile 0  in-tile 5", 32),
])
def test_hover_read_out_in_chromium(tmp_path: Path, text: str, hover: str, expected: str,
                                    cells: int) -> None:
    page = tmp_path / "layout.html"
    page.write_text(to_html(text), encoding="utf-8")
    dom = _dump_dom(f"{page.as_uri()}#hover={hover}", tmp_path)
    info = re.search(r'<div id="info"[^>]*>(.*?)</div>', dom)
    assert info is not None, dom[:2000]
    assert info.group(1).replace("&nbsp;", " ") == expected
    assert re.search(r'<div id="count">(\d+) cells drawn</div>', dom).group(1) == str(cells)
    assert dom.count('class="cell lit"') == 1
    assert len(re.findall(r'class="slot( pad)? lit"', dom)) == 1
