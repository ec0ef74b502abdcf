"""The pictures on the docs site are what `tensorlayout render` draws now: each of
docs/img/make_pictures.py's pictures drawn again equals the committed file, and the page
shows each one with its command."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]
IMG = ROOT / "docs" / "img"


def _maker() -> ModuleType:
    spec = importlib.util.spec_from_file_location("make_pictures", IMG / "make_pictures.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


MAKER = _maker()


@pytest.mark.parametrize("name", sorted(MAKER.PICTURES))
def test_docs_picture_is_current(name: str, tmp_path: Path) -> None:
    out = tmp_path / name
    MAKER.draw(name, out)
    assert out.read_text() == (IMG / name).read_text(), f"run python docs/img/make_pictures.py ({name})"


def test_page_shows_every_picture_with_its_command() -> None:
    page = (ROOT / "docs" / "pictures.md").read_text()
    for name, argv in MAKER.PICTURES.items():
        assert f"](img/{name})" in page, name
        assert all(part in page for part in argv) and f"-o {name}" in page, name
