"""A CuTe algebra result derived step by step from its definition, each intermediate layout named.

``explain("logical_divide((8,8):(8,1),(2,4))")`` reads an operation written as in C++ (layouts
as ``shape:stride`` text, tilers as shapes ``(2,4)``, layouts or tuples of layouts) and returns
a :class:`Derivation`: the inputs, the steps of CuTe's definition (a divide is the composition
with the tiler and its complement, a product the tiler composed with the complement of the
block, ...), each with its layout, and the result, which is always the library function's own
result (so a derivation can never disagree with the answer).

>>> d = explain("logical_divide((8,8):(8,1),(2,4))")
>>> [(s.name, str(s.value)) for s in d.steps][:3]
[('A0', '8:8'), ('B0', '2:1'), ('C0', '4:2')]
>>> str(d.result)
'((2,4),(4,2)):((8,16),(1,4))'
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from tensorlayout.cute import algebra
from tensorlayout.cute.coalescing import coalesce
from tensorlayout.cute.int_tuple import _, parse_int_tuple
from tensorlayout.cute.layout import Layout, cosize, make_layout
from tensorlayout.cute.modes import flatten
from tensorlayout.errors import AlgebraError, LayoutError, ParseError

__all__ = ["OPERATIONS", "Derivation", "Step", "explain", "explain_call", "format_derivation",
           "split_call", "tiler_of"]

Value = Layout | int | tuple[Any, ...]


@dataclass(frozen=True)
class Step:
    """One named intermediate: ``name = formula`` has the value ``value``; ``why`` says which
    rule of the definition it applies."""

    name: str
    formula: str
    value: Value
    why: str


@dataclass(frozen=True)
class Derivation:
    """``op(args)``: its inputs (name, value), the steps and the library's result."""

    op: str
    inputs: tuple[tuple[str, Value], ...]
    steps: tuple[Step, ...]
    result: Layout

    @property
    def expression(self) -> str:
        """The operation as it was written, canonically printed."""
        return f"{self.op}({','.join(_show(v) for _, v in self.inputs)})"


def _show(v: Value) -> str:
    if isinstance(v, tuple):
        return "(" + ",".join(_show(x) for x in v) + ")"
    return str(v)


# ---------------------------------------------------------------- reading an operation


def split_call(text: str) -> tuple[str, list[str]]:
    """``name(arg, arg, ...)`` as its name and argument texts (split at top-level commas).

    >>> split_call("composition(Sw<3,3,3> o _0 o (8,64):(64,1), (8,8):(1,8))")
    ('composition', ['Sw<3,3,3> o _0 o (8,64):(64,1)', '(8,8):(1,8)'])
    """
    s = text.strip()
    head = s.find("(")
    name = s[:head].strip() if head > 0 else ""
    if not name.isidentifier() or not s.endswith(")"):
        raise ParseError(s, 0, "an operation name(arg, ...)")
    return name, _top_level_split(s[head + 1:-1], s, head + 1)


_OPEN, _CLOSE = "([<{", ")]>}"


def _top_level_split(inner: str, whole: str, at: int) -> list[str]:
    """``inner`` split at the commas outside brackets; unbalanced brackets are a ParseError."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(inner):
        depth += (ch in _OPEN) - (ch in _CLOSE)
        if depth < 0:
            raise ParseError(whole, at + i, "balanced brackets")
        if ch == "," and depth == 0:
            parts.append(inner[start:i].strip())
            start = i + 1
    if depth:
        raise ParseError(whole, len(whole), "a closing bracket")
    parts.append(inner[start:].strip())
    return [p for p in parts if p] if parts != [""] else []


def tiler_of(text: str) -> Layout | int | tuple[Any, ...]:
    """A tiler as C++ writes one: a layout ``s:d``, an extent, or a tuple of tilers (a shape
    ``(2,4)`` is a by-mode tiler, as ``make_shape(2,4)`` is).

    >>> tiler_of("(2,4)"), str(tiler_of("4:2")), [str(t) for t in tiler_of("(2:1,4:2)")]
    ((2, 4), '4:2', ['2:1', '4:2'])
    """
    s = text.strip()
    if ":" not in s:
        value = parse_int_tuple(s)
        if not isinstance(value, (int, tuple)):
            raise LayoutError(f"expected a tiler (a shape, a layout or a tuple of them), got {s!r}")
        return value
    depth = 0
    for ch in s:
        depth += (ch in _OPEN) - (ch in _CLOSE)
        if ch == ":" and depth == 0:
            return Layout.parse(s)
    if not (s.startswith("(") and s.endswith(")")):
        raise ParseError(s, 0, "a layout s:d or a tuple of tilers")
    return tuple(tiler_of(p) for p in _top_level_split(s[1:-1], s, 1))


def _layout(text: str) -> Layout:
    return Layout.parse(text.strip())


# ---------------------------------------------------------------- the rules, one per operation


def _tile_layout(t: Layout | int) -> Layout:
    """A tiler entry as a layout: an extent ``n`` is ``n:1``."""
    return t if isinstance(t, Layout) else make_layout(t)


def _per_mode(a: Layout, tiler: Any, one: Callable[[Layout, Layout, str], list[Step]]) -> list[Step]:
    """The steps of a by-mode tiler: ``one`` for each mode that the tiler names."""
    if not isinstance(tiler, tuple):
        return one(a, _tile_layout(tiler), "")
    if len(tiler) > a.rank():
        raise AlgebraError(f"tiler of rank {len(tiler)} is longer than {a} (rank {a.rank()})")
    steps: list[Step] = []
    results: list[Layout] = []
    for i, t in enumerate(tiler):
        if isinstance(t, tuple):
            raise AlgebraError("explain takes a tiler of layouts or extents, one per mode (not nested)")
        mode = [Step(f"R{i}", f"A{i}", a[i], "a '_' entry leaves the mode as it is")] if t is _ else \
            one(a[i], _tile_layout(t), str(i))
        steps += [Step(f"A{i}", f"mode {i} of A", a[i], "a by-mode tiler works on each mode alone"), *mode]
        results.append(mode[-1].value)  # type: ignore[arg-type]
    rest = [a[i] for i in range(len(tiler), a.rank())]
    names = [f"R{i}" for i in range(len(tiler))] + [f"A{i}" for i in range(len(tiler), a.rank())]
    steps.append(Step("R", f"({', '.join(names)})", make_layout(*results, *rest),
                      "the modes side by side again"))
    return steps


def _divide_steps(a: Layout, b: Layout, k: str) -> list[Step]:
    """``A ∘ (B, complement(B, size A))``."""
    c = algebra.complement(b, a.size())
    lay = make_layout(b, c)
    return [Step(f"B{k}", "the tile", b, "the tiler entry as a layout"),
            Step(f"C{k}", f"complement(B{k}, {a.size()})", c,
                 "the layout of the tiles: what B misses of size(A)"),
            Step(f"L{k}", f"(B{k}, C{k})", lay, "the tile and its repeats, one function of size(A)"),
            Step(f"R{k}", f"composition(A{k}, L{k})", algebra.composition(a, lay),
                 "A read through L: mode 0 a tile, mode 1 which tile")]


def _product_steps(a: Layout, b: Layout, k: str) -> list[Step]:
    """``(A, complement(A, size A · cosize B) ∘ B)``."""
    bound = a.size() * cosize(b)
    c = algebra.complement(a, bound)
    cb = algebra.composition(c, b)
    return [Step(f"B{k}", "the tiler", b, "how the copies of A are arranged"),
            Step(f"C{k}", f"complement(A{k}, {bound})", c,
                 f"what A misses of size(A) * cosize(B) = {bound}: room for the copies"),
            Step(f"T{k}", f"composition(C{k}, B{k})", cb, "where each copy of A starts"),
            Step(f"R{k}", f"(A{k}, T{k})", make_layout(a, cb), "one copy of A per element of B")]


def _composition_steps(a: Layout, b: Layout, k: str) -> list[Step]:
    return [Step(f"B{k}", "the right-hand layout", b, "the domain of the result"),
            Step(f"R{k}", f"composition(A{k}, B{k})", algebra.composition(a, b),
                 "R(i) = A(B(i)) for every i of B")]


def _named(inputs: Sequence[tuple[str, Value]]) -> list[Step]:
    return [Step(n, "input", v, "as given") for n, v in inputs]


def _tiling(op: str) -> Callable[[list[str]], Derivation]:
    """The rule of ``op`` (``<kind>_divide`` or ``<kind>_product``): the logical operation mode by
    mode, then (but for ``logical_``) the regrouping of its result."""
    kind, family = op.split("_")

    def rule(args: list[str]) -> Derivation:
        a, t = _two(op, args)
        tiler = tiler_of(t)
        if kind in ("blocked", "raked") and not isinstance(tiler, Layout):
            tiler = make_layout(tiler)  # C++ takes a layout here: a shape is its compact layout
        steps = _per_mode(a, tiler, _FAMILY_STEPS[family])
        result = getattr(algebra, op)(a, tiler)
        if kind != "logical":
            steps.append(Step("R", f"{op} regrouping of logical_{family}(A, B)", result, _REGROUP[kind]))
        return Derivation(op, (("A", a), ("B", tiler)), tuple(steps), result)
    return rule


#: The per-mode steps of each family of tiling operations.
_FAMILY_STEPS = {"divide": _divide_steps, "product": _product_steps}

_REGROUP = {
    "zipped": "the tile modes gathered in mode 0, the rest in mode 1",
    "tiled": "mode 0 the tile, the rest modes unpacked after it",
    "flat": "every mode unpacked to the top level",
    "blocked": "mode i is (A_i, T_i): whole blocks of A, arranged by B",
    "raked": "mode i is (T_i, A_i): the copies of A interleaved",
}


def _two(op: str, args: list[str]) -> tuple[Layout, str]:
    if len(args) != 2:
        raise AlgebraError(f"{op} takes two arguments (a layout and a tiler), got {len(args)}")
    return _layout(args[0]), args[1]


def _composition(args: list[str]) -> Derivation:
    a, t = _two("composition", args)
    tiler = tiler_of(t)
    steps = _per_mode(a, tiler, _composition_steps)
    result = algebra.composition(a, tiler)
    return Derivation("composition", (("A", a), ("B", tiler)), tuple(steps), result)


def _complement(args: list[str]) -> Derivation:
    if len(args) not in (1, 2):
        raise AlgebraError(f"complement takes a layout and an optional cotarget, got {len(args)} arguments")
    a = _layout(args[0])
    bound = parse_int_tuple(args[1]) if len(args) == 2 else cosize(a)
    result = algebra.complement(a, bound)
    steps = [Step("F", "coalesce(A), its modes sorted by stride", _sorted_modes(a),
                  "the complement fills the gaps between A's strides, smallest first"),
             Step("R", f"complement(A, {_show(bound)})", result, "the strides A skips, up to the cotarget"),
             Step("AR", "(A, R)", make_layout(a, result), "A and its complement together: one-to-one onto "
                  f"[0, {cosize(make_layout(a, result))})")]
    return Derivation("complement", (("A", a), ("M", bound)), tuple(steps), result)


def _sorted_modes(a: Layout) -> Layout:
    c = coalesce(a)
    modes = sorted(((m.shape, m.stride) for m in c.modes()), key=lambda sd: (sd[1], sd[0]))
    if len(modes) == 1:
        return make_layout(modes[0][0], modes[0][1])
    return make_layout(tuple(s for s, _ in modes), tuple(d for _, d in modes))


def _inverse(op: str) -> Callable[[list[str]], Derivation]:
    def rule(args: list[str]) -> Derivation:
        if len(args) != 1:
            raise AlgebraError(f"{op} takes one layout, got {len(args)} arguments")
        a = _layout(args[0])
        result = getattr(algebra, op)(a)
        check = algebra.composition(a, result) if op == "right_inverse" else algebra.composition(result, a)
        formula = "composition(A, R)" if op == "right_inverse" else "composition(R, A)"
        steps = [Step("F", "coalesce(A), its modes sorted by stride", _sorted_modes(a),
                      "the inverse walks A's modes from the smallest stride up"),
                 Step("R", f"{op}(A)", result, "each offset back to the index of A that reaches it"),
                 Step("I", formula, check, "the identity on its domain: the check of the inverse")]
        return Derivation(op, (("A", a),), tuple(steps), result)
    return rule


def _coalesce(args: list[str]) -> Derivation:
    if len(args) != 1:
        raise AlgebraError(f"coalesce takes one layout, got {len(args)} arguments")
    a = _layout(args[0])
    result = coalesce(a)
    steps = [Step("F", "flatten(A)", flatten(a), "the same function with every mode at the top level"),
             Step("R", "coalesce(A)", result, "size-1 modes dropped, mode i+1 merged into mode i "
                  "when stride(i+1) = shape(i) * stride(i)")]
    return Derivation("coalesce", (("A", a),), tuple(steps), result)


#: Each operation explain reads, by its C++ name: the rule deriving it.
OPERATIONS: dict[str, Callable[[list[str]], Derivation]] = {
    "composition": _composition,
    "complement": _complement,
    "right_inverse": _inverse("right_inverse"),
    "left_inverse": _inverse("left_inverse"),
    "coalesce": _coalesce,
    **{f"{k}_divide": _tiling(f"{k}_divide") for k in ("logical", "zipped", "tiled", "flat")},
    **{f"{k}_product": _tiling(f"{k}_product")
       for k in ("logical", "zipped", "tiled", "flat", "blocked", "raked")},
}


def explain_call(op: str, args: Sequence[str]) -> Derivation:
    """The derivation of ``op`` (a key of :data:`OPERATIONS`) on argument texts ``args``.

    >>> str(explain_call("complement", ["4:2", "16"]).result)
    '(2,2):(1,8)'
    """
    rule = OPERATIONS.get(op)
    if rule is None:
        raise AlgebraError(f"explain knows {', '.join(sorted(OPERATIONS))}; got {op!r}")
    return rule(list(args))


def explain(text: str) -> Derivation:
    """The derivation of an operation written ``op(arg, ...)`` (see the module doc).

    >>> str(explain("coalesce((2,(1,4)):(1,(5,2)))").result)
    '8:1'
    """
    op, args = split_call(text)
    return explain_call(op, args)


def format_derivation(d: Derivation) -> str:
    """The derivation as text: inputs, numbered steps (name = formula = layout, and why), result.

    >>> print(format_derivation(explain("right_inverse(4:2)")).splitlines()[0])
    right_inverse(4:2)
    """
    width = max(len(f"{s.name} = {s.formula}") for s in d.steps) if d.steps else 0
    lines = [d.expression, *(f"  {n} = {_show(v)}" for n, v in d.inputs), ""]
    for i, s in enumerate(d.steps, 1):
        lines.append(f"{i:>2}. {f'{s.name} = {s.formula}':<{width}}  = {_show(s.value)}   ({s.why})")
    lines += ["", f"result: {d.result}"]
    return "\n".join(lines)
