"""A small evaluator for the C++ statements of XLA's experimental tiling tests.

The vectors keep each test body's statements as text (``steps``) and its assertions as
``{subject, expected}`` trees. Subjects and steps are C++ expressions over a few XLA calls; they
are rewritten into Python syntax (``->`` and ``::`` to attribute access, brace lists to lists,
``Tile{...}`` to calls) and evaluated on the parsed AST against a table of the allowed functions
and of wrapper objects that expose XLA's method names. Anything outside that table fails with its
name. Steps are bound lazily: a name is evaluated when an assertion first uses it, so a step that
reads a value an assertion binds (``ASSERT_OK_AND_ASSIGN``) sees it.
"""

from __future__ import annotations

import ast
import operator
import re
from collections.abc import Callable
from typing import Any

#: Brace-initialised types: ``Name{...}`` becomes the call ``Name(...)``.
BRACE_CALLS = ("Tile", "DimTile", "FlatTiling")

_BINOPS: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Mod: operator.mod,
    ast.FloorDiv: operator.floordiv,
}


def to_python(text: str, strings: dict[str, str], literals: dict[str, str]) -> str:
    """C++ expression text -> Python expression text (see the module docstring); string
    literals and ``<S#n>`` references become names bound in ``literals``."""
    text = re.sub(r'"\s+"', "", text)  # adjacent string literals concatenate

    def literal(value: str) -> str:
        name = f"__str{len(literals)}"
        literals[name] = value
        return name

    for ref, value in strings.items():
        text = text.replace(ref, literal(value))
    text = re.sub(
        r'"((?:[^"\\]|\\.)*)"', lambda m: literal(bytes(m.group(1), "utf-8").decode("unicode_escape")), text
    )
    text = re.sub(r",?\s*&mlir_context_", "", text)
    text = text.replace("->", ".").replace("::", "__")
    out, stack = [], []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "{":
            word = re.search(r"(\w+)\s*$", "".join(out))
            if word and word.group(1) in BRACE_CALLS:
                out.append("(")
                stack.append(")")
            else:
                out.append("[")
                stack.append("]")
        elif ch == "}":
            out.append(stack.pop() if stack else "}")
        else:
            out.append(ch)
        i += 1
    text = re.sub(r"(^|[(,\[]\s*)\*", r"\1", "".join(out))
    return _drop_list_labels(text)


def _drop_list_labels(text: str) -> str:
    """``[1, name=8]`` -> ``[1, 8]``: argument labels inside brace lists are comments in C++."""
    out, depth = [], []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch in "[(":
            depth.append(ch)
        elif ch in ")]" and depth:
            depth.pop()
        label = re.match(r"(\w+)=(?!=)", text[i:]) if depth and depth[-1] == "[" else None
        if label and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            i += label.end()
            continue
        out.append(ch)
        i += 1
    return "".join(out)


class Evaluator:
    """Evaluates Python-syntax expressions over ``names`` (values and allowed functions)."""

    def __init__(self, names: dict[str, Any], lazy: Callable[[str], Any]) -> None:
        self.names = names
        self.lazy = lazy

    def eval(self, text: str) -> Any:
        return self._node(ast.parse(text.strip(), mode="eval").body)

    def _node(self, node: ast.expr) -> Any:
        method = getattr(self, f"_{type(node).__name__}", None)
        if method is None:
            raise AssertionError(f"unsupported C++ construct {ast.dump(node)[:80]}")
        return method(node)

    def _Constant(self, node: ast.Constant) -> Any:
        return node.value

    def _Name(self, node: ast.Name) -> Any:
        if node.id in self.names:
            return self.names[node.id]
        return self.lazy(node.id)

    def _List(self, node: ast.List) -> list[Any]:
        return [self._node(e) for e in node.elts]

    def _Tuple(self, node: ast.Tuple) -> tuple[Any, ...]:
        return tuple(self._node(e) for e in node.elts)

    def _Attribute(self, node: ast.Attribute) -> Any:
        value = self._node(node.value)
        if node.attr.startswith("_") or not hasattr(value, node.attr):
            raise AssertionError(f"unknown member {node.attr!r} of {type(value).__name__}")
        return getattr(value, node.attr)

    def _Subscript(self, node: ast.Subscript) -> Any:
        return self._node(node.value)[self._node(node.slice)]

    def _Call(self, node: ast.Call) -> Any:
        func = self._node(node.func)
        if not callable(func):
            raise AssertionError(f"{ast.dump(node.func)[:60]} is not callable")
        args = [self._node(a) for a in node.args]
        kwargs = {k.arg: self._node(k.value) for k in node.keywords if k.arg}
        return func(*args, **kwargs)

    def _BinOp(self, node: ast.BinOp) -> Any:
        op = _BINOPS.get(type(node.op))
        if op is None:
            raise AssertionError(f"unsupported operator {type(node.op).__name__}")
        return op(self._node(node.left), self._node(node.right))

    def _UnaryOp(self, node: ast.UnaryOp) -> Any:
        if isinstance(node.op, ast.USub):
            return -self._node(node.operand)
        raise AssertionError(f"unsupported unary operator {type(node.op).__name__}")


_DECLARATION = re.compile(
    r"^(?:const\s+|constexpr\s+|static\s+)*(?P<type>[\w:<>,*&\s]+?)[\s*&](?P<name>\w+)\s*"
    r"(?:=\s*(?P<init>.+)|(?P<brace>\{.*\})|\((?P<ctor>.*)\))$",
    re.S,
)
_ASSIGNMENT = re.compile(r"^(\w+)\s*=\s*(.+)$", re.S)


def _type_name(declared: re.Match[str]) -> str:
    return re.sub(r"<.*>", "", declared.group("type")).split("::")[-1].strip()


def parse_steps(steps: list[str]) -> list[tuple[str | None, str]]:
    """Each step as ``(name, C++ expression)``: a definition, or ``(None, statement)`` for a bare
    call statement. Declarations without a value are dropped."""
    out: list[tuple[str | None, str]] = []
    for step in steps:
        assigned = _ASSIGNMENT.match(step)
        if assigned:
            out.append((assigned.group(1), assigned.group(2)))
            continue
        declared = _DECLARATION.match(step)
        if declared and declared.group("init") is not None:
            out.append((declared.group("name"), declared.group("init")))
        elif declared and declared.group("brace") is not None:
            kind = _type_name(declared)
            out.append(
                (declared.group("name"), (kind if kind in BRACE_CALLS else "") + declared.group("brace"))
            )
        elif declared and declared.group("ctor") is not None:
            out.append((declared.group("name"), f"{_type_name(declared)}({declared.group('ctor')})"))
        elif re.fullmatch(r"[\w.\->]+\(.*\)", step, re.S):
            out.append((None, step))
    return out
