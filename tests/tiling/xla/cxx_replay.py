"""Replaying the C++ statements and subjects of an XLA test vector in Python.

A vector's ``steps`` and expectation ``subject`` s are C++ (``auto t = SymbolicTile::FromIndexingMap(m)``,
``c0 && c1 || c2``, ``tile->stride_map().Evaluate({4, 8})``). They are rewritten to Python by a
table of textual rules (``::`` -> ``__``, ``->`` -> ``.``, ``&&`` -> ``&``, braces -> lists,
declarations -> assignments, argument labels dropped) and run against a namespace of adapters
that each check module supplies: a name the namespace lacks raises ``NameError`` naming the
call, so a vector calling something unknown fails loudly.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

#: Textual rewrites of C++ into Python, applied in order.
REWRITES: list[tuple[str, str]] = [
    (r"/\*[^*]*\*/", ""),
    (r"<S#(\d+)>", r"S[\1]"),
    (r"&mlir_context_|&mlir_ctx|mlir_context_", "None"),
    (r"std::make_unique<(\w+)>", r"\1"),
    (r"static_cast<[\w:]+>", ""),
    (r"(\w+)::(\w+)::(\w+)", r"\1__\2__\3"),
    (r"(\w+)::(\w+)", r"\1__\2"),
    (r"->", "."),
    (r"&&", " & "),
    (r"\|\|", " | "),
    (r"!(?!=)", " not "),
    (r"\.get\(\)", ""),
    (r"\btrue\b", "True"),
    (r"\bfalse\b", "False"),
    (r"\b(\w+)\{", r"\1("),  # Interval{0, 1} -> Interval(0, 1) (closing brace fixed below)
]

_LABEL = re.compile(r"(?<![=!<>])\b[a-z_][a-z0-9_]*=(?!=)")


def _braces(text: str) -> str:
    """``T{...}`` became ``T(...``: close it with ``)``; other braces become list brackets."""
    out, stack = [], []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "{":
            stack.append("]")
            out.append("[")
        elif ch == "(":
            stack.append(")")
            out.append("(")
        elif ch in "})":
            out.append(stack.pop() if stack else ch)
        else:
            out.append(ch)
        i += 1
    return "".join(out)


Rewrites = list[tuple[str, str]]


def translate(expr: str, methods: Rewrites = ()) -> str:  # type: ignore[assignment]
    """One C++ expression as Python source; ``methods`` are extra rewrites applied after the base ones."""
    literals: list[str] = []

    def hide(m: re.Match[str]) -> str:
        literals.append(m.group(0))
        return f"_LIT{len(literals) - 1}_"

    text = re.sub(r'"(?:[^"\\]|\\.)*"', hide, expr)
    for pattern, repl in [*REWRITES, *methods]:
        text = re.sub(pattern, repl, text)
    text = _braces(_LABEL.sub("", text)).strip()
    return re.sub(r"_LIT(\d+)_", lambda m: literals[int(m.group(1))], text)


_DECL = re.compile(r"^(?:const\s+|constexpr\s+)?(?:[\w:]+(?:<[^=]*>)?[\s*&]+)(\w+)\s*(=|\{|\()(.*)$", re.S)
_ASSIGN = re.compile(r"^(\w+)\s*=\s*(.*)$", re.S)


def statement(step: str, mutators: dict[str, str], methods: Rewrites = ()) -> str:  # type: ignore[assignment]
    """One C++ statement as Python: declarations and assignments, or a call.

    ``mutators`` maps a C++ method called as a statement (``x.Simplify()``) to the Python
    function whose result replaces the receiver (``x = simplify(x)``).
    """
    step = step.strip().rstrip(";")
    for method, fn in mutators.items():
        m = re.match(rf"^(\w+)\.{method}\((.*)\)$", step, re.S)
        if m:
            args = translate(m.group(2), methods)
            return f"{m.group(1)} = {fn}({m.group(1)}{', ' + args if args else ''})"
    m = _DECL.match(step)
    if m and (m.group(2) != "(" or _is_ctor(step)):
        name, kind, rest = m.group(1), m.group(2), m.group(3)
        type_name = step[: m.start(1)].replace("const", "").replace("constexpr", "").strip(" *&")
        if kind == "=":
            return f"{name} = {translate(rest, methods)}"
        close = "}" if kind == "{" else ")"
        return f"{name} = {translate(type_name)}({translate(rest[: rest.rindex(close)], methods)})"
    m = _ASSIGN.match(step)
    if m:
        return f"{m.group(1)} = {translate(m.group(2), methods)}"
    return translate(step, methods)


def _is_ctor(step: str) -> bool:
    """``Type name(args)``: a constructor call, not a function call statement."""
    return bool(re.match(r"^(?:const\s+)?[A-Z][\w:<>]*[\s*&]+\w+\(", step))


class Replay:
    """One vector's namespace: run its steps, evaluate its subjects."""

    def __init__(self, vector: dict[str, Any], namespace: dict[str, Any],
                 mutators: dict[str, str] | None = None, methods: Rewrites = (),  # type: ignore[assignment]
                 actions: list[tuple[str, Callable[[dict[str, Any], re.Match[str]], None]]] = ()  # type: ignore[assignment]
                 ) -> None:
        self.vector = vector
        self.methods = list(methods)
        self.actions = list(actions)
        strings = {int(s["ref"][3:-1]): s["text"] for s in vector.get("strings", [])}
        self.env: dict[str, Any] = {"S": strings, **namespace}
        self.mutators = mutators or {}
        self.history: dict[str, list[Any]] = {}

    def run_steps(self, before: Callable[[str], None] = lambda s: None) -> None:
        """Run every step (``before(step)`` first); an assignment whose call raises a library
        error binds the error (the C++ held a failed ``StatusOr``), through ``_capture``."""
        for step in self.vector["steps"]:
            before(step)
            text = translate(step.strip().rstrip(";"), self.methods)
            action = next(((a, m) for p, a in self.actions if (m := re.match(p, text))), None)
            if action is not None:
                action[0](self.env, action[1])
                continue
            source = statement(step, self.mutators, self.methods)
            source = re.sub(r"^(\w+) = (.*)$", r"\1 = _capture(lambda: \2)", source, flags=re.S)
            exec(source, self.env)
            target = re.match(r"^(\w+) = ", source)
            if target:
                self.history.setdefault(target.group(1), []).append(self.env[target.group(1)])

    def evaluate(self, subject: str) -> Any:
        return eval(f"_capture(lambda: {translate(subject, self.methods)})", self.env)

    def subjects(self, lazy: list[str] = ()) -> list[tuple[dict[str, Any], Any]]:  # type: ignore[assignment]
        """Each expectation with its subject's value; a variable assigned as many times as it is
        checked is checked after each assignment in turn (the C++ interleaves them). Subjects
        matching a ``lazy`` pattern are left to the caller (value None)."""
        exps = self.vector["expectations"]
        counts: dict[str, int] = {}
        for e in exps:
            counts[e["subject"]] = counts.get(e["subject"], 0) + 1
        seen: dict[str, int] = {}
        out = []
        for e in exps:
            s = e["subject"]
            hist = self.history.get(s, [])
            if any(re.search(p, s) for p in lazy):
                out.append((e, None))
            elif counts[s] > 1 and len(hist) == counts[s]:
                out.append((e, hist[seen.get(s, 0)]))
                seen[s] = seen.get(s, 0) + 1
            else:
                out.append((e, self.evaluate(s)))
        return out
