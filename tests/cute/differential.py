"""Random CuTe cases and the checks that decide who is right: shared by the differential tests.

Every answer is judged against the definitions, point by point:
composition ``R(i) = A(B(i))``; complement disjoint, ordered and covering; ``L(R(i)) = i`` for a
right inverse; ``L(R(L(i))) = L(i)`` for C++'s left quasi-inverse; a divide or product equal to
the composition it is defined by.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import numpy as np

from tensorlayout import cute
from tensorlayout.cute import Layout, _
from tensorlayout.cute.int_tuple import flatten, unflatten
from tensorlayout.errors import TensorLayoutError

STRIDES = (0, 1, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32)
DIVIDES = ("logical_divide", "zipped_divide", "tiled_divide", "flat_divide")
PRODUCTS = ("logical_product", "zipped_product", "tiled_product", "flat_product")


def random_shape(rng: random.Random, depth: int = 2) -> Any:
    if depth == 0 or rng.random() < 0.5:
        return rng.choice((1, 2, 2, 3, 4, 4, 6, 8))
    return tuple(random_shape(rng, depth - 1) for _k in range(rng.randint(1, 3)))


def random_layout(rng: random.Random, max_size: int = 512, compact: bool = False) -> Layout:
    while True:
        shape = random_shape(rng)
        if cute.size(shape) <= max_size:
            break
    flat = flatten(shape)
    if compact:
        strides, cur = [0] * len(flat), 1
        for k in rng.sample(range(len(flat)), len(flat)):
            cur *= rng.choice((1, 1, 2))
            strides[k], cur = cur, cur * flat[k]
    else:
        strides = [rng.choice(STRIDES) for _k in flat]
    return Layout(shape, unflatten(strides, shape))


def random_tiler(rng: random.Random, a: Layout) -> Any:
    """A layout, or a tuple (one entry per leading mode of ``a``) of layouts, ints and ``_``."""
    if rng.random() < 0.4 or not isinstance(a.shape, tuple):
        return random_layout(rng, 64, compact=rng.random() < 0.7)
    out = []
    for m in a.modes()[: rng.randint(1, len(a.shape))]:
        r = rng.random()
        out.append(_ if r < 0.25 else rng.choice((1, 2, 3, 4)) if r < 0.5 else
                   random_layout(rng, 16, compact=True) if isinstance(m.shape, int) else _)
    return tuple(out)


def random_cases(seed: int, n: int) -> list[tuple[str, tuple[Any, ...]]]:
    rng = random.Random(seed)
    cases: list[tuple[str, tuple[Any, ...]]] = []
    while len(cases) < n:
        a = random_layout(rng)
        kind = rng.random()
        if kind < 0.25:
            cases.append(("composition", (a, random_layout(rng, 64, compact=rng.random() < 0.5))))
        elif kind < 0.35:
            cases.append(("complement", (random_layout(rng, 64, compact=True), rng.choice((64, 128, 512)))))
        elif kind < 0.45:
            cases.append((rng.choice(("left_inverse", "right_inverse")), (a,)))
        elif kind < 0.7:
            cases.append((rng.choice(DIVIDES), (a, random_tiler(rng, a))))
        elif kind < 0.85:
            b = random_layout(rng, 16, compact=True)
            op = rng.choice(("blocked_product", "raked_product"))
            cases.append((op, (random_layout(rng, 32, True), b)))
        else:
            cases.append((rng.choice(PRODUCTS), (random_layout(rng, 32, True), random_tiler(rng, a))))
    return cases


def values(layout: Layout) -> np.ndarray:
    return np.asarray(layout.offsets(), dtype=np.int64)


def _as_layout(t: Any) -> Layout:
    return t if isinstance(t, Layout) else Layout(int(t), 1)


def _divide_spec(a: Layout, t: Any) -> Layout | None:
    """``logical_divide`` from its definition, by mode (None: not defined here)."""
    if isinstance(t, tuple):
        return _by_mode(_divide_spec, a, t)
    b = _as_layout(t)
    return cute.composition(a, cute.make_layout(b, cute.complement(b, a.size())))


def composes(a: Layout, b: Layout, r: Layout) -> bool:
    return r.size() == b.size() and bool(np.array_equal(values(r), np.asarray(a(values(b)))))


def _by_mode(spec: Callable[[Layout, Any], Layout | None], a: Layout, t: tuple[Any, ...]) -> Layout | None:
    """``spec`` of each mode of ``a`` by the tiler's entry for it (``_`` keeps the mode); the modes
    past the tiler unchanged; None where ``spec`` is."""
    modes = a.modes()
    parts = [m if ti is _ else spec(m, ti) for m, ti in zip(modes, t)]
    if any(p is None for p in parts):
        return None
    return cute.make_layout(*parts, *modes[len(t):])  # type: ignore[arg-type]


def _leaves(r: Layout) -> list[tuple[int, int]]:
    """The modes of ``r`` as a multiset; a size-1 mode's stride does not matter."""
    return sorted((s, d if s != 1 else 0) for s, d in r.flat_modes())


def _tiled_spec(op: str, a: Layout, t: Any) -> Layout | None:
    """The rank-2 ``logical_divide`` / ``logical_product`` a regrouped answer must rearrange."""
    return _divide_spec(a, t) if "divide" in op else _product_spec(a, t)


def _product_spec(a: Layout, t: Any) -> Layout | None:
    if isinstance(t, tuple):
        return _by_mode(_product_spec, a, t)
    b = _as_layout(t)
    rest = cute.complement(a, a.size() * cute.cosize(b))
    return cute.make_layout(a, cute.composition(rest, b))


def correct(op: str, args: tuple[Any, ...], r: Layout) -> bool:
    """Whether ``r`` is a right answer for ``op(*args)`` by the definition (brute force)."""
    a = args[0]
    if op == "composition":
        return composes(a, args[1], r)
    if op == "complement":
        img_a, img_r = set(values(a).tolist()), values(r).tolist()
        both = set(values(cute.make_layout(a, r)).tolist())
        return (img_a & set(img_r) == {0} and img_r == sorted(img_r)
                and set(range(args[1])) <= both and len(both) == a.size() * r.size())
    if op == "right_inverse":
        return bool(np.array_equal(np.asarray(a(values(r))), np.arange(r.size())))
    if op == "left_inverse":
        img = values(a)
        return bool(np.array_equal(np.asarray(a(np.asarray(r(img)))), img))
    if op in ("blocked_product", "raked_product"):
        return sorted(values(r).tolist()) == sorted(values(cute.logical_product(a, args[1])).tolist())
    try:
        spec = _tiled_spec(op, a, args[1])
    except TensorLayoutError:
        return False
    return spec is not None and _leaves(spec) == _leaves(r) and (
        not op.startswith("logical") or np.array_equal(values(spec), values(r)))


def ours(op: str, args: tuple[Any, ...]) -> Layout | TensorLayoutError:
    fn: Callable[..., Layout] = getattr(cute, op)
    try:
        return fn(*args)
    except TensorLayoutError as e:
        return e
