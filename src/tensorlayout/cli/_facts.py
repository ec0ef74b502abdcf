"""What `show` says about a layout, as the JSON object `show --json` prints.

One schema for every notation (documented in docs/cli.md): `notation` (`xla`, `cute` or
`tla`), `target` (its text), `dimensions` (the logical shape), `slots` (physical slots,
padding included), then either the description (`window`, `offsets` nested like the
dimensions, `memory_order`) or, with `--index`/`--offset`, `lookups`. The facts peculiar to a
notation come first, under the keys its own printers use.

>>> from tensorlayout.cli._target import target_from
>>> facts = describe(target_from("(2,3):(1,2)"), (range(2), range(3)))
>>> facts["offsets"], facts["memory_order"][:3], facts["slots"]
([[0, 2, 4], [1, 3, 5]], [[0, 0], [1, 0], [0, 1]], 6)
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

import numpy as np

from tensorlayout._lazy import lazy_modules
from tensorlayout.cli._grid import MAX_ORDER_SLOTS, window_offsets
from tensorlayout.cli._target import Target
from tensorlayout.cli._window import Window
from tensorlayout.core.intmath import nested_lists, row_major_coords
from tensorlayout.errors import UnsupportedError
from tensorlayout.lowering import lower, notation_of

__all__ = ["cute_facts", "describe", "head", "lookup_index", "lookup_offset", "own_facts"]

#: each notation's own facts, loaded when a layout of it comes: a CuTe layout's facts load no XLA
#: code, an XLA shape's no CuTe code
_lazy = lazy_modules({"xla_show": "tensorlayout.xla.show", "cute": "tensorlayout.cute"})


def cute_facts(layout: object) -> dict[str, Any]:
    """Size, cosize, rank, depth and the coalesced form of a CuTe layout; for a swizzled one,
    the swizzle and offset, and the facts of the layout it swizzles."""
    cute = _lazy("cute")
    if isinstance(layout, cute.ComposedLayout) and isinstance(layout.inner, cute.Layout):
        return {**cute_facts(layout.inner), "layout": str(layout), "swizzle": str(layout.outer),
                "offset": str(layout.offset), "cosize": lower(layout).slots}
    if not isinstance(layout, cute.Layout):
        raise UnsupportedError(f"{layout}: show reads a Swizzle over a plain layout, not nested compositions")
    return {"layout": str(layout), "size": layout.size(), "cosize": int(cute.cosize(layout)),
            "rank": layout.rank(), "depth": layout.depth(), "coalesced": str(cute.coalesce(layout))}


def _xla_facts(shape: Any) -> dict[str, Any]:
    """What XLA's ``show`` says of a shape, but the keys the common part gives."""
    facts = _lazy("xla_show").describe(shape)
    for key in ("offsets", "memory_order", "dimensions"):
        facts.pop(key, None)
    return facts


def _tla_facts(tla: Any) -> dict[str, Any]:
    """The facts of a TLA format's CuTe layout, and its origin shape."""
    return {**cute_facts(tla.layout), "origin_shape": list(tla.origin_shape)}


#: Per notation (:func:`tensorlayout.lowering.notation_of`), the facts its own printers give;
#: any other value is read as CuTe's (which refuses what is not a CuTe layout).
_OWN_FACTS: dict[str | None, Callable[[Any], dict[str, Any]]] = {"xla": _xla_facts, "tla": _tla_facts}


def own_facts(target: Target) -> dict[str, Any]:
    """The facts peculiar to the target's notation, under the keys its own printers use.

    >>> from tensorlayout.cli._target import target_from
    >>> own_facts(target_from("(2,3):(1,2)"))["coalesced"], own_facts(target_from("f32[4]{0}"))["byte_size"]
    ('6:1', 16)
    """
    return _OWN_FACTS.get(notation_of(target.layout), cute_facts)(target.layout)


def head(target: Target) -> dict[str, Any]:
    """The keys every `show --json` object starts its common part with."""
    common: dict[str, Any] = {"notation": target.notation, "target": target.text}
    if target.has_grid:
        common.update(dimensions=list(target.dims), slots=target.slots)
    return common


def memory_order(target: Target) -> list[list[int] | None]:
    """The logical index in each of the first `MAX_ORDER_SLOTS` slots (None: padding)."""
    owners = np.asarray(target.owners(min(target.slots, MAX_ORDER_SLOTS)))
    return [None if k < 0 else list(row_major_coords(int(k), target.dims)) for k in owners]


def describe(target: Target, window: Window | None) -> dict[str, Any]:
    """The whole `show --json` object (without `--index`/`--offset`)."""
    facts = {**own_facts(target), **head(target)}
    if target.has_grid and window is not None:
        facts["window"] = [[r.start, r.stop] for r in window]
        facts["offsets"] = nested_lists(window_offsets(target, window).reshape(-1).tolist(),
                                        [max(0, r.stop - r.start) for r in window])
        with contextlib.suppress(UnsupportedError):  # negative strides: no slot 0 to start from
            facts["memory_order"] = memory_order(target)
    return facts


def lookup_index(index: tuple[int, ...], offset: int) -> dict[str, Any]:
    """One `--index` answer."""
    return {"index": list(index), "offset": offset}


def lookup_offset(offset: int, indices: tuple[tuple[int, ...], ...]) -> dict[str, Any]:
    """One `--offset` answer: every index stored there (none: padding)."""
    return {"offset": offset, "indices": [list(i) for i in indices], "padding": not indices}
