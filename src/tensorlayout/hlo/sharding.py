"""Collective device groups and shardings as XLA prints them, and Shardy attribute text.

``replica_groups`` in every form (explicit ``{{0,1},{2,3}}``, iota ``[2,4]<=[8]``,
transposed iota ``[2,4]<=[4,2]T(1,0)``, mesh axes ``mesh['x'=4,'y'=2] {'y'}``), ``sharding``
in every form (``replicated``, ``manual``, ``maximal device=N``, ``unknown``, tiled
``devices=[...]`` over ids or an iota, ``last_tile_dim_replicate``, ``last_tile_dims={...}``,
``shard_as``/``shard_like``, ``metadata``, tuples), ``frontend_attributes``, and the Shardy
(``#sdy``) text JAX stores in them. :mod:`tensorlayout.hlo.attributes` dispatches to these. The
device lists (iota tile assignments, meshes, replica groups) are read in
:mod:`tensorlayout.hlo.devices`; their names are importable from here too.

>>> parse_replica_groups("[2,4]<=[8]").groups
((0, 1, 2, 3), (4, 5, 6, 7))
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from tensorlayout._cursor import Cursor, read_braced, read_whole
from tensorlayout.core.intmath import prod
from tensorlayout.hlo.devices import (
    _MESH_REST,
    AxisRef,
    IotaTileAssignment,
    Mesh,
    ReplicaGroups,
    _axis_sizes,
    _device_count,
    _ints,
    _iota,
    _permutation,
    _quoted_key,
    _quoted_name,
    mesh_replica_groups,
    parse_replica_groups,
)

__all__ = [
    "AxisRef",
    "HloSharding",
    "IotaTileAssignment",
    "Mesh",
    "ReplicaGroups",
    "SdyDimSharding",
    "SdySharding",
    "attribute_value_end",
    "mesh_replica_groups",
    "parse_frontend_attributes",
    "parse_replica_groups",
    "parse_sdy",
    "parse_sharding",
    "sdy_meshes",
]


def attribute_value_end(name: str, text: str, start: int, end: int) -> int:
    """Where the value of attribute ``name`` starting at ``start`` really ends, given where a
    bracket scan stopped (``end``): XLA prints mesh replica groups with a space (and maybe a
    comma) inside, ``mesh['x'=4,'y'=2] {'y'}``; every other value ends at ``end``.

    >>> line = "replica_groups=mesh['x'=4] {'x'}, to_apply=add"
    >>> line[15:attribute_value_end("replica_groups", line, 15, 26)]
    "mesh['x'=4] {'x'}"
    """
    if name == "replica_groups" and text.startswith("mesh[", start):
        m = _MESH_REST.match(text, end)
        if m:
            return m.end()
    return end


_SHARDING_WORD = re.compile(r"[A-Za-z_][\w]*")
_STRING = re.compile(r'"(?:[^"\\\n]|\\.)*"')
_SHARDING_KINDS = ("replicated", "manual", "maximal", "unknown", "unreduced")


@dataclass(frozen=True, slots=True)
class HloSharding:
    """``sharding={...}``: ``kind`` is ``replicated``, ``manual``, ``maximal`` (on
    ``device``), ``unknown``, ``unreduced``, ``tiled`` (``devices=[dims]`` over explicit ids
    or an iota) or ``tuple`` (``elements``); ``last_tile_dims`` names the subgroup dims
    (``last_tile_dim_replicate`` is ``("replicated",)``).

    >>> s = parse_sharding("{devices=[2,1,4]<=[4,2]T(1,0) last_tile_dim_replicate}")
    >>> s.kind, s.tile_dims, s.devices[:4], s.last_tile_dims
    ('tiled', (2, 1, 4), (0, 2, 4, 6), ('replicated',))
    """

    kind: str
    tile_dims: tuple[int, ...] = ()
    devices: tuple[int, ...] = ()
    iota: IotaTileAssignment | None = None
    device: int | None = None
    last_tile_dims: tuple[str, ...] = ()
    elements: tuple[HloSharding, ...] = ()
    shard_group: tuple[str, int] | None = None
    metadata: str = field(default="", compare=False)


def _balanced(cur: Cursor, what: str) -> str:
    """A ``{...}`` group (strings and nesting respected) as raw text."""
    cur.skip()
    start, depth, text = cur.pos, 0, cur.text
    while cur.pos < len(text):
        ch = text[cur.pos]
        if ch == '"':
            m = _STRING.match(text, cur.pos)
            if not m:
                raise cur.error("a closing '\"'")
            cur.pos = m.end()
            continue
        depth += {"{": 1, "}": -1}.get(ch, 0)
        cur.pos += 1
        if depth == 0:
            return text[start:cur.pos]
    raise cur.error(f"'}}' to close {what}", at=start)


def _tile_devices(cur: Cursor, fields: dict[str, Any]) -> None:
    start = cur.pos
    dims = _ints(cur, "[", "]", "the tile-assignment dims")
    _device_count(cur, dims, start, "tile-assignment dims")
    fields["tile_dims"] = dims
    if cur.peek("<="):
        fields["iota"] = iota = _iota(cur, dims)
        fields["devices"] = iota.devices()
        return
    at = cur.pos
    ids = [cur.integer("a device id")]
    while cur.accept(","):
        ids.append(cur.integer("a device id"))
    if len(ids) != prod(dims):
        raise cur.error(f"{prod(dims)} device ids for tile dims {list(dims)}", at=at)
    fields["devices"] = tuple(ids)


def _sharding_word(cur: Cursor, word: str, at: int, fields: dict[str, Any]) -> None:
    if word in _SHARDING_KINDS:
        fields["kind"] = word
    elif word in ("device", "devices", "last_tile_dims", "metadata"):
        cur.expect("=", f"'=' after {word}")
        if word == "device":
            fields["device"] = cur.integer("a device id")
        elif word == "devices":
            fields["kind"] = "tiled"
            _tile_devices(cur, fields)
        elif word == "metadata":
            fields["metadata"] = _balanced(cur, "the sharding metadata")
        else:
            names = _balanced(cur, "last_tile_dims")[1:-1]
            fields["last_tile_dims"] = tuple(n.strip() for n in names.split(",") if n.strip())
    elif word == "last_tile_dim_replicate":
        fields["last_tile_dims"] = ("replicated",)
    elif word in ("shard_as", "shard_like"):
        fields["shard_group"] = (word, cur.integer(f"a {word} group id"))
    else:
        raise cur.error("a sharding field (replicated, manual, maximal, unknown, devices=, "
                        "device=, last_tile_dim_replicate, last_tile_dims=, shard_as, "
                        "shard_like, metadata=)", at=at)


def _single_sharding(cur: Cursor) -> HloSharding:
    cur.expect("{", "'{' to start a sharding")
    if cur.peek("{"):
        elements = [_single_sharding(cur)]
        while cur.accept(","):
            elements.append(_single_sharding(cur))
        cur.expect("}", "',' or '}' in a tuple sharding")
        return HloSharding("tuple", elements=tuple(elements))
    fields: dict[str, Any] = {"kind": ""}
    while not cur.accept("}"):
        cur.skip()
        at = cur.pos
        m = cur.match(_SHARDING_WORD)
        if not m:
            raise cur.error("a sharding field or '}'")
        _sharding_word(cur, m.group(), at, fields)
    if not fields["kind"]:
        raise cur.error("a sharding kind (replicated, manual, maximal, unknown, devices=)")
    if fields["kind"] == "maximal" and fields.get("device") is None:
        raise cur.error("'device=' in a maximal sharding")
    return HloSharding(**fields)


def parse_sharding(text: str) -> HloSharding:
    """``sharding=`` text (one sharding or a tuple of them).

    >>> parse_sharding("{{maximal device=1}, {manual}}").elements[0].device
    1
    """
    cur = Cursor(text, comments=True)
    sharding = _single_sharding(cur)
    cur.expect_end("end of the sharding")
    return sharding


def parse_frontend_attributes(text: str) -> dict[str, str]:
    """``{key="value", key={...}}`` as a dict of strings (quotes and escapes removed).

    >>> parse_frontend_attributes('{a="x", b={c = 1}}')
    {'a': 'x', 'b': '{c = 1}'}
    """
    return dict(read_whole(text, lambda cur: read_braced(
        cur, _frontend_attribute, "'{' to start frontend attributes", "',' or '}' in frontend attributes"),
        "end of the frontend attributes"))


def _frontend_attribute(cur: Cursor) -> tuple[str, str]:
    """``key="value"`` or ``key={...}`` (the braces kept)."""
    key = _quoted_key(cur, "a frontend attribute")
    if cur.peek("{"):
        return key, _balanced(cur, "a frontend attribute")
    return key, _quoted_name(cur, "a quoted frontend attribute value")


# -- Shardy (sdy) attribute text, as JAX stores it in frontend_attributes ---------------------


@dataclass(frozen=True, slots=True)
class SdyDimSharding:
    """One dimension of a Shardy sharding: the axes it is sharded on, whether it is closed
    (no ``?``) and its priority (``p0``…), if any."""

    axes: tuple[AxisRef, ...]
    closed: bool = True
    priority: int | None = None


@dataclass(frozen=True, slots=True)
class SdySharding:
    """``#sdy.sharding<@mesh, [{"x"}, {}], replicated={"y"}>``: a tensor's Shardy sharding.

    >>> s = parse_sdy('#sdy.sharding<@mesh, [{"x", ?}, {"y":(1)2}p1]>')
    >>> s.mesh, [len(d.axes) for d in s.dimensions], s.dimensions[0].closed, s.dimensions[1].priority
    ('mesh', [1, 1], False, 1)
    """

    mesh: str | Mesh
    dimensions: tuple[SdyDimSharding, ...]
    replicated: tuple[AxisRef, ...] = ()
    unreduced: tuple[AxisRef, ...] = ()


_SDY_MESH_NAME = re.compile(r"@([\w.\-$]+)")


def _sdy_mesh(cur: Cursor) -> Mesh:
    """``mesh<["x"=4, "y"=2]>`` or ``<["x"=4], device_ids=[...]>`` (after ``#sdy.``)."""
    start = cur.pos
    cur.expect("mesh<", "'mesh<' to start a Shardy mesh")
    cur.expect("[", "'[' to start the mesh axes")
    names, sizes = _axis_sizes(cur, bare=False)
    n = _device_count(cur, sizes, start, "mesh axes")
    ids = tuple(range(n))
    if cur.accept(","):
        cur.expect("device_ids=", "'device_ids=' after the mesh axes")
        at = cur.pos
        ids = _permutation(cur, _ints(cur, "[", "]", "the mesh device ids"), n, at)
    cur.expect(">", "'>' to end the Shardy mesh")
    return Mesh(names, sizes, ids)


def _sdy_axes(cur: Cursor, open_ok: bool) -> tuple[tuple[AxisRef, ...], bool]:
    """``{"x", "y":(2)2, ?}``: the axes and whether the list is closed."""
    cur.expect("{", "'{' to start a list of axes")
    axes: list[AxisRef] = []
    closed = True
    while not cur.accept("}"):
        if axes or not closed:
            cur.expect(",", "',' or '}' in a list of axes")
        if open_ok and cur.accept("?"):
            closed = False
            continue
        name = _quoted_name(cur, "a quoted axis name", bare=False)
        if cur.accept(":"):
            pre = _ints(cur, "(", ")", "a sub-axis pre-size")
            axes.append(AxisRef(name, pre[0] if pre else 1, cur.integer("a sub-axis size")))
        else:
            axes.append(AxisRef(name))
    return tuple(axes), closed


def _sdy_sharding_body(cur: Cursor) -> SdySharding:
    """``@mesh, [dims], replicated={...}, unreduced={...}`` up to the closing ``>``."""
    m = cur.match(_SDY_MESH_NAME)
    mesh: str | Mesh = m.group(1) if m else _sdy_mesh(cur)
    cur.expect(",", "',' after the sharding's mesh")
    cur.expect("[", "'[' to start the dimension shardings")
    dims: list[SdyDimSharding] = []
    while not cur.accept("]"):
        if dims:
            cur.expect(",", "',' or ']' in the dimension shardings")
        axes, closed = _sdy_axes(cur, True)
        prio = cur.integer("a priority") if cur.text.startswith("p", cur.pos) and \
            cur.accept("p") else None
        dims.append(SdyDimSharding(axes, closed, prio))
    extra: dict[str, tuple[AxisRef, ...]] = {}
    while cur.accept(","):
        key = cur.identifier("replicated= or unreduced=")
        if key not in ("replicated", "unreduced"):
            raise cur.error("replicated= or unreduced=")
        cur.expect("=", f"'=' after {key}")
        extra[key] = _sdy_axes(cur, False)[0]
    cur.expect(">", "'>' to end the sharding")
    return SdySharding(mesh, tuple(dims), **extra)


def parse_sdy(text: str) -> Mesh | SdySharding | tuple[SdySharding, ...] | tuple[str, ...]:
    """A Shardy attribute as JAX writes it into ``frontend_attributes``: ``#sdy.mesh<...>``,
    ``#sdy.sharding<...>``, ``#sdy.sharding_per_value<[<...>, ...]>`` or
    ``#sdy<manual_axes{"x", "y"}>`` (axis names).

    >>> parse_sdy('#sdy.mesh<["x"=4, "y"=2]>').axis_sizes, parse_sdy('#sdy<manual_axes{"x"}>')
    ((4, 2), ('x',))
    """
    cur = Cursor(text)
    value: Mesh | SdySharding | tuple[SdySharding, ...] | tuple[str, ...]
    if cur.accept("#sdy.sharding_per_value<"):
        cur.expect("[", "'[' to start the per-value shardings")
        values: list[SdySharding] = []
        while not cur.accept("]"):
            if values:
                cur.expect(",", "',' or ']' in the per-value shardings")
            cur.expect("<", "'<' to start a sharding")
            values.append(_sdy_sharding_body(cur))
        cur.expect(">", "'>' to end the per-value shardings")
        value = tuple(values)
    elif cur.accept("#sdy.sharding<"):
        value = _sdy_sharding_body(cur)
    elif cur.accept("#sdy<manual_axes"):
        value = tuple(a.name for a in _sdy_axes(cur, False)[0])
        cur.expect(">", "'>' to end the manual axes")
    else:
        cur.expect("#sdy.", "'#sdy.mesh<', '#sdy.sharding<', '#sdy.sharding_per_value<' or "
                   "'#sdy<manual_axes'")
        value = _sdy_mesh(cur)
    cur.expect_end("end of the Shardy attribute")
    return value


def sdy_meshes(text: str) -> dict[str, Mesh]:
    """The ``xla.sdy.meshes`` frontend attribute ``{mesh = #sdy.mesh<...>, ...}`` by name.

    >>> sdy_meshes('{mesh = #sdy.mesh<["x"=4, "y"=2]>}')["mesh"].axis_names
    ('x', 'y')
    """
    return dict(read_whole(text, lambda cur: read_braced(
        cur, _named_sdy_mesh, "'{' to start the Shardy meshes", "',' or '}' in the Shardy meshes"),
        "end of the Shardy meshes"))


def _named_sdy_mesh(cur: Cursor) -> tuple[str, Mesh]:
    """``name = #sdy.mesh<...>``."""
    name = _quoted_key(cur, "a mesh")
    cur.expect("#sdy.", "'#sdy.mesh<'")
    return name, _sdy_mesh(cur)

