"""PNG and PDF output: the SVG picture converted by CairoSVG, the optional extra ``png``.

CairoSVG (``pip install 'tensorlayout[png]'``) draws SVG with the cairo library, which Linux
desktops and CI images with a browser already have (``libcairo2``; macOS: ``brew install
cairo``). Without it, asking for PNG or PDF raises an :class:`~tensorlayout.errors.UnsupportedError`
that names the extra.
"""

from __future__ import annotations

from typing import Any

from tensorlayout.errors import UnsupportedError

__all__ = ["FORMATS", "convert_svg"]

#: what each format asks of CairoSVG
FORMATS = {"png": "svg2png", "pdf": "svg2pdf"}
_MISSING = ("{kind} output needs the optional extra 'png': pip install 'tensorlayout[png]' "
            "(CairoSVG, which also needs the system cairo library, e.g. Debian's libcairo2)")


def _cairosvg(kind: str) -> Any:
    try:
        import cairosvg  # optional dependency: the 'png' extra
    except (ImportError, OSError) as err:  # OSError: the cairo library itself is missing
        raise UnsupportedError(_MISSING.format(kind=kind.upper()) + f"; {err}") from None
    return cairosvg


def convert_svg(svg: str, kind: str, scale: float = 1.0) -> bytes:
    """The ``kind`` (``png`` or ``pdf``) rendering of an SVG document, ``scale`` times its size."""
    if kind not in FORMATS:
        raise UnsupportedError(f"cannot convert a picture to {kind!r}: expected one of {', '.join(FORMATS)}")
    if not scale > 0:
        raise UnsupportedError(f"scale must be positive, got {scale}")
    convert = getattr(_cairosvg(kind), FORMATS[kind])
    return bytes(convert(bytestring=svg.encode("utf-8"), scale=scale))
