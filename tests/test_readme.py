"""The README's Python examples run as written (doctest over each ```python block)."""

from __future__ import annotations

import doctest
import re
from pathlib import Path

README = Path(__file__).parent.parent / "README.md"


def test_readme_python_examples() -> None:
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
    assert blocks
    parser = doctest.DocTestParser()
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    globs: dict[str, object] = {}
    for i, block in enumerate(blocks):
        test = parser.get_doctest(block, globs, f"README block {i}", str(README), 0)
        runner.run(test)
    assert runner.failures == 0, f"{runner.failures} README example(s) failed"


def test_readme_command_outputs_are_true(capsys, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import shlex

    monkeypatch.chdir(README.parent)  # the examples name files under tests/data

    from tensorlayout.cli import main

    checked = 0
    for block in re.findall(r"```text\n(.*?)```", README.read_text(), flags=re.S):
        parts = re.split(r"^\$ ", block, flags=re.M)
        for part in parts[1:]:
            command, _, expected = part.partition("\n")
            if "..." in expected or not command.startswith("tensorlayout "):
                continue
            main(shlex.split(command)[1:])
            out, err = capsys.readouterr()
            assert (out + err).strip() == expected.strip(), command
            checked += 1
    assert checked >= 5
