"""The reference site's pages are true: their command examples print what they say, their
Python examples run, every subpackage has a page, and the CLI reference is the parser's help."""

from __future__ import annotations

import doctest
import re
import shlex
import sys
from pathlib import Path

import pytest

from tensorlayout.cli import build_parser, main

ROOT = Path(__file__).parent.parent.parent
DOCS = ROOT / "docs"
PAGES = sorted(DOCS.glob("*.md"))


def _commands(text: str) -> list[tuple[str, str]]:
    found = []
    for block in re.findall(r"```text\n(.*?)```", text, flags=re.S):
        for part in re.split(r"^\$ ", block, flags=re.M)[1:]:
            command, _, expected = part.partition("\n")
            if command.startswith("tensorlayout "):
                found.append((command, expected))
    return found


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_command_examples_are_true(page: Path, capsys: pytest.CaptureFixture[str],
                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    for command, expected in _commands(page.read_text()):
        main(shlex.split(command)[1:])
        out, err = capsys.readouterr()
        assert (out + err).strip() == expected.strip(), command


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_python_examples_run(page: Path) -> None:
    blocks = re.findall(r"```pycon\n(.*?)```", page.read_text(), flags=re.S)
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    globs: dict[str, object] = {}
    for i, block in enumerate(blocks):
        runner.run(doctest.DocTestParser().get_doctest(block, globs, f"{page.name} {i}", str(page), 0))
    assert runner.failures == 0


def test_examples_exist() -> None:
    assert sum(len(_commands(p.read_text())) for p in PAGES) >= 10


def test_every_subpackage_has_a_page() -> None:
    nav = (ROOT / "mkdocs.yml").read_text()
    for package in sorted(p.parent.name for p in (ROOT / "src/tensorlayout").glob("*/__init__.py")):
        page = DOCS / "api" / f"{package}.md"
        assert page.exists() and f"::: tensorlayout.{package}" in page.read_text(), package
        assert f"api/{package}.md" in nav, package


def test_cli_reference_covers_every_command() -> None:
    sub = next(a for a in build_parser()._actions if a.dest == "command")
    text = (DOCS / "cli.md").read_text()
    for name in sub.choices:  # type: ignore[union-attr]
        assert f"<!-- tensorlayout-help: {name} -->" in text, name


def test_help_hook_prints_the_parsers_help(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(DOCS / "hooks"))
    import cli_help

    page = cli_help.on_page_markdown("x\n<!-- tensorlayout-help: show -->\ny")
    assert page.startswith("x\n```text\nusage: tensorlayout show") and page.endswith("```\ny")
    assert "--index I" in page and "``" not in page.replace("```", "")
    sys.modules.pop("cli_help", None)


def test_griffe_extension_fences_doctests() -> None:
    pytest.importorskip("griffe")
    sys.path.insert(0, str(DOCS / "hooks"))
    try:
        import griffe_rest
    finally:
        sys.path.pop(0)
    text = "Offsets of ``x``, see :func:`~a.b`.\n\n>>> f([1])\n[2]\n\nMore."
    want = "Offsets of `x`, see `a.b`.\n\n```pycon\n>>> f([1])\n[2]\n```\n\nMore."
    assert griffe_rest.markdown(text) == want
