"""Composition of indexing maps (XLA's ``ComposeIndexingMaps``, spec §4).

``compose(first, second)`` is ``second ∘ first``: ``first`` maps the consumer's index to an
intermediate tensor, ``second`` maps that tensor to the producer's input. The result's symbols
are ordered ``[range(second), range(first), rt(second), rt(first)]``; nothing is simplified.

>>> from tensorlayout.indexing.map import IndexingMap
>>> consumer = IndexingMap.parse("(d0)[s0] -> (d0, s0), domain: d0 in [0, 9], s0 in [0, 7]")
>>> producer = IndexingMap.parse("(d0, d1)[s0] -> (d1 + s0, d0), "
...                              "domain: d0 in [0, 4], d1 in [0, 5], s0 in [0, 1]")
>>> print(compose(consumer, producer))
(d0)[s0, s1] -> (s1 + s0, d0), domain: d0 in [0, 4], s0 in [0, 1], s1 in [0, 5]
"""

from __future__ import annotations

from tensorlayout.errors import IndexingError
from tensorlayout.indexing.expr import var
from tensorlayout.indexing.map_base import IndexingMapBase, M, _State

__all__ = ["compose", "compose_indexing_maps"]


def compose(first: M, second: IndexingMapBase) -> M:
    """``second ∘ first`` with XLA's symbol order and constraint propagation."""
    if not isinstance(first, IndexingMapBase) or not isinstance(second, IndexingMapBase):
        raise IndexingError("compose expects two IndexingMaps")
    if first.is_undefined or second.is_undefined:
        return type(first).undefined()
    if first.num_results != second.num_dims:
        raise IndexingError(
            f"cannot compose: the first map has {first.num_results} results but the second map "
            f"has {second.num_dims} dims"
        )
    n = first.num_dims
    r2, r1 = second.num_range_vars, first.num_range_vars
    t2 = second.num_rt_vars
    # New symbol ids: [range(second), range(first), rt(second), rt(first)].
    first_map = {i: var(i) for i in range(n)}
    for j in range(r1):
        first_map[n + j] = var(n + r2 + j)
    for k in range(first.num_rt_vars):
        first_map[n + r1 + k] = var(n + r2 + r1 + t2 + k)
    first_results = [r.replace_variables(first_map) for r in first.results]
    m2 = second.num_dims
    second_map = dict(enumerate(first_results))
    for j in range(r2):
        second_map[m2 + j] = var(n + j)
    for k in range(t2):
        second_map[m2 + r2 + k] = var(n + r2 + r1 + k)
    results = [r.replace_variables(second_map) for r in second.results]
    state = _State(
        type(first),
        results,
        list(first.dim_vars),
        [*second.range_vars, *first.range_vars],
        [*second.rt_vars, *first.rt_vars],
        known_empty=first.is_known_empty or second.is_known_empty,
    )
    if state.known_empty:
        state.reset_to_known_empty()
        return state.freeze()
    state.check_feasible()
    for e, iv in second.constraints.items():
        state.add_constraint(e.replace_variables(second_map), iv)
    for e, iv in first.constraints.items():
        state.add_constraint(e.replace_variables(first_map), iv)
    for i, r in enumerate(first_results):
        state.add_constraint(r, second.dim_vars[i].bounds)
    return state.freeze()


compose_indexing_maps = compose
