"""Every ``pytest.raises`` in the tests says which message it expects (``match=``): an error of the
right class with the wrong message is a bug the test should catch (issue 31)."""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).parent


def _raises_without_match(path: Path) -> list[int]:
    lines = []
    for node in ast.walk(ast.parse(path.read_text())):
        func = node.func if isinstance(node, ast.Call) else None
        if (isinstance(func, ast.Attribute) and func.attr == "raises" and isinstance(func.value, ast.Name)
                and func.value.id == "pytest" and not any(k.arg == "match" for k in node.keywords)):  # type: ignore[union-attr]
            lines.append(node.lineno)
    return lines


def test_every_pytest_raises_has_a_match() -> None:
    missing = [f"{p.relative_to(TESTS)}:{line}" for p in sorted(TESTS.rglob("*.py"))
               for line in _raises_without_match(p)]
    assert not missing, f"pytest.raises without match=: {missing}"
