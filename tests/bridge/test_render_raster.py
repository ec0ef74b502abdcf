"""PNG and PDF output (the optional extra ``png``): real images of the SVG pictures, and a
typed error naming the extra when it is missing."""

from __future__ import annotations

import io
import struct
import sys
from pathlib import Path

import pytest

from tensorlayout.cli import main
from tensorlayout.errors import UnsupportedError
from tensorlayout.gpu import mma_atom
from tensorlayout.render import to_pdf, to_png, to_svg
from tensorlayout.render._draw import color

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _size(png: bytes) -> tuple[int, int]:
    assert png[:8] == PNG_MAGIC and png[12:16] == b"IHDR"
    width, height = struct.unpack(">II", png[16:24])
    return int(width), int(height)


def _svg_size(svg: str) -> tuple[int, int]:
    head = svg.split(">", 1)[0]
    return int(head.split('width="')[1].split('"')[0]), int(head.split('height="')[1].split('"')[0])


@pytest.fixture
def extra() -> None:
    pytest.importorskip("cairosvg", reason="the optional extra 'png' (cairosvg) is not installed")


def test_png_has_the_svg_size_and_its_colours(extra: None) -> None:
    text = "f32[3,5]{1,0:T(2,2)}"
    png = to_png(text)
    assert _size(png) == _svg_size(to_svg(text))
    assert _size(to_png(text, scale=2)) == tuple(2 * n for n in _svg_size(to_svg(text)))
    image = pytest.importorskip("PIL.Image")
    pixels = image.open(io.BytesIO(png)).convert("RGB")
    svg = to_svg(text)
    cell = svg.split('data-index="2,3"')[1]  # tile 4's cell: read back its fill at its centre
    x, y = (float(cell.split(f'{a}="')[1].split('"')[0]) for a in ("x", "y"))
    r, g, b = pixels.getpixel((int(x) + 4, int(y) + 4))
    assert f"#{r:02x}{g:02x}{b:02x}" == color(4)


def test_pdf_of_a_tiled_mma(extra: None) -> None:
    pdf = to_pdf(mma_atom("SM80_16x8x8_F16F16F16F16_TN"))
    assert pdf.startswith(b"%PDF-") and b"%%EOF" in pdf[-64:]


def test_cli_png_and_pdf_by_suffix(extra: None, tmp_path: Path) -> None:
    for name in ("l.png", "l.pdf"):
        out = tmp_path / name
        assert main(["render", "(8,8):(1,8)", "-o", str(out)]) == 0
        assert out.read_bytes()[:4] in (PNG_MAGIC[:4], b"%PDF")
    out = tmp_path / "mma.png"
    assert main(["render", "--mma", "SM80_16x8x8_F16F16F16F16_TN", "--scale", "0.5", "-o", str(out)]) == 0
    assert _size(out.read_bytes())[0] > 100


def test_missing_extra_is_a_typed_error_naming_it(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setitem(sys.modules, "cairosvg", None)  # import cairosvg now raises ImportError
    with pytest.raises(UnsupportedError, match=r"optional extra 'png': pip install 'tensorlayout\[png\]'"):
        to_png("f32[4]")
    assert main(["render", "f32[4]", "-o", str(tmp_path / "x.pdf")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("tensorlayout: UnsupportedError: PDF output needs the optional extra 'png'")
    assert not (tmp_path / "x.pdf").exists()
