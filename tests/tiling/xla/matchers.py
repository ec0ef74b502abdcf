"""gtest matchers of the XLA tiling vectors, as checks on tensorlayout values.

``check(value, expected_tree, replay)`` dispatches on the expectation's matcher name through
``MATCHERS`` (an unknown matcher fails, naming it); a failed call's library error travels as an
``Err`` value that ``StatusIs`` / ``IsOk`` inspect. Texts compare with whitespace removed.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from tensorlayout.errors import TensorLayoutError
from tensorlayout.hlo import HloModule
from tensorlayout.tiling.constraint_expression import ConstraintExpression
from tests.tiling.xla.cxx_replay import Replay


def squash(text: str) -> str:
    return re.sub(r"\s", "", text)


def cxx_string(arg: dict[str, Any]) -> str:
    """A ``{text}`` argument, or a C++ literal concatenation ``"a " "b"`` given as ``{expr}``."""
    if "text" in arg:
        return str(arg["text"])
    return "".join(re.findall(r'"((?:[^"\\]|\\.)*)"', arg["expr"]))


class Err:
    """A failed ``absl::Status`` / ``StatusOr``: the library error a call raised."""

    def __init__(self, error: TensorLayoutError) -> None:
        self.error = error

    def __repr__(self) -> str:
        return f"error: {self.error}"


def capture(thunk: Callable[[], Any]) -> Any:
    """The call's value, or its library error as an ``Err`` (a status to check)."""
    try:
        return thunk()
    except TensorLayoutError as e:
        return Err(e)


def ok(value: Any) -> Any:
    """The value of an OK status (a failed one fails the check, naming its error)."""
    assert not isinstance(value, Err), f"expected OK, got {value}"
    return value


def xla_names(text: str, module: Any) -> str:
    """XLA's parsed module names instructions uniquely module-wide: a fused parameter named like
    an entry instruction prints as ``name.1`` in a tile's ``hlo:`` line and tile name (its users
    still print the operand as ``%name``). tensorlayout keeps names as written, so the expected
    text is read with that suffix dropped for exactly those names."""
    if not isinstance(module, HloModule):
        return text
    entry = {i.name for i in module.entry.instructions}
    clashing = {
        i.name
        for c in module.computations
        if c is not module.entry
        for i in c.instructions
        if i.opcode == "parameter" and i.name in entry
    }
    for name in clashing:
        text = re.sub(rf"(?<![\w.]){re.escape(name)}\.1(?=\.tile_|\s=)", name, text)
    return text


# ---- matchers: (value, expected tree, replay) -> None, raising on a disagreement -------------
def _match_text(value: Any, exp: dict[str, Any], rp: Replay) -> None:
    args = exp["args"]
    names = rp.evaluate(args[1]["expr"]) if len(args) > 1 else None
    text = value.to_string(names) if isinstance(value, ConstraintExpression) else str(value)
    assert squash(text) == squash(cxx_string(args[0])), f"got\n{text}\nwant\n{cxx_string(args[0])}"


def _match_optional(value: Any, exp: dict[str, Any], rp: Replay) -> None:
    assert value is not None, "expected a value, got nullopt"
    check(value, exp["args"][0], rp)


def _match_elements(value: Any, exp: dict[str, Any], rp: Replay) -> None:
    items = list(value)
    assert len(items) == len(exp["args"]), f"{items} has {len(items)} elements, want {len(exp['args'])}"
    for item, e in zip(items, exp["args"], strict=True):
        check(item, e, rp)


def match_tiled(value: Any, exp: dict[str, Any], rp: Replay) -> None:
    """``MatchTiledHloInstruction(tile_sizes, tile_strides, tile_offsets_indexing)``."""
    args = {a["label"]: a["value"] for a in exp["args"]}
    t = ok(value)
    assert list(t.tile_sizes) == args["tile_sizes"], f"tile sizes {t.tile_sizes} != {args['tile_sizes']}"
    assert list(t.tile_strides) == args["tile_strides"], f"strides {t.tile_strides} != {args['tile_strides']}"
    want = cxx_string(args["tile_offsets_indexing"])
    assert squash(str(t.tile_offsets_indexing)) == squash(want), (
        f"got\n{t.tile_offsets_indexing}\nwant\n{want}"
    )


def _match_status(value: Any, exp: dict[str, Any], rp: Replay) -> None:
    """``StatusIs(code[, HasSubstr(text)])``: the call failed (with that text in its message)."""
    assert isinstance(value, Err), f"expected an error status, got {value!r}"
    for a in exp["args"][1:]:
        check(str(value.error), a, rp)


def _match_substr(value: Any, exp: dict[str, Any], rp: Replay) -> None:
    text = cxx_string(exp["args"][0])
    message = str(value.error) if isinstance(value, Err) else str(value)
    assert text in message, f"{text!r} not in {message!r}"


def _match_holds(value: Any, exp: dict[str, Any], rp: Replay) -> None:
    check(ok(value), exp["args"][0], rp)


def _match_size(value: Any, exp: dict[str, Any], rp: Replay) -> None:
    assert len(ok(value)) == exp["args"][0], f"size {len(value)} != {exp['args'][0]}"


def _match_not(value: Any, exp: dict[str, Any], rp: Replay) -> None:
    try:
        check(value, exp["args"][0], rp)
    except AssertionError:
        return
    raise AssertionError(f"{value!r} matches {exp['args'][0]!r}")


def _match_list(value: Any, exp: dict[str, Any], rp: Replay) -> None:
    """``TilingVector{...}`` / ``vector<FlatTiling>{...}``: the same tilings in the same order."""
    want = exp["args"][0] if len(exp["args"]) == 1 and isinstance(exp["args"][0][0], list) else exp["args"]
    assert [list(v) for v in ok(value)] == want, f"{value} != {want}"


def _match_mapping(value: Any, exp: dict[str, Any], rp: Replay) -> None:
    """``InstructionMapping(instruction, count)``: one entry of a parameter mapping."""
    hlo, n = value
    want = rp.evaluate(exp["args"][0]["expr"])
    assert hlo is want and n == exp["args"][1], f"({hlo.name}, {n}) != ({want.name}, {exp['args'][1]})"


MATCHERS: dict[str, Callable[[Any, dict[str, Any], Replay], None]] = {
    "MatchTiledHloInstruction": match_tiled,
    "MatchIndexingMap": _match_text,
    "StatusIs": _match_status,
    "HasSubstr": _match_substr,
    "IsOk": lambda v, e, rp: ok(v) and None,
    "IsOkAndHolds": _match_holds,
    "SizeIs": _match_size,
    "IsEmpty": lambda v, e, rp: _match_size(v, {"args": [0]}, rp),
    "Not": _match_not,
    "TilingVector": _match_list,
    "vector<FlatTiling>": _match_list,
    "InstructionMapping": _match_mapping,
    "MatchSymbolicTileString": _match_text,
    "MatchConstraintExpressionString": _match_text,
    "MatchIndexingString": _match_text,
    "MatchString": _match_text,
    "Optional": _match_optional,
    "ElementsAre": _match_elements,
}


def check(value: Any, exp: Any, rp: Replay) -> None:
    """``value`` satisfies the expected tree ``exp`` (a matcher call, a literal, nullopt...)."""
    if isinstance(exp, dict) and "call" in exp:
        if exp["call"] not in MATCHERS:
            raise AssertionError(f"no matcher {exp['call']!r}: add it to MATCHERS")
        MATCHERS[exp["call"]](value, exp, rp)
    elif isinstance(exp, dict) and exp.get("nullopt"):
        assert value is None, f"expected nullopt, got {value}"
    elif isinstance(exp, dict) and "text" in exp:
        want = xla_names(exp["text"], rp.env.get("module"))
        assert squash(str(value)) == squash(want), f"got\n{value}\nwant\n{want}"
    elif isinstance(exp, dict) and "expr" in exp:
        want = rp.evaluate(exp["expr"])
        if isinstance(want, Callable):  # type: ignore[arg-type]  # a matcher bound by a step
            want(value)
        else:
            assert ok(value) == want, f"{value} != {exp['expr']} ({want})"
    elif isinstance(exp, dict) and exp.get("nullptr"):
        assert value is None, f"expected nullptr, got {value}"
    elif isinstance(exp, dict) and exp.get("status") == "ok":
        ok(value)
    elif isinstance(exp, bool | int):
        value = ok(value)
        assert value == exp and isinstance(value, bool) == isinstance(exp, bool), f"{value!r} != {exp!r}"
    else:
        raise AssertionError(f"no check for the expectation {exp!r}")


