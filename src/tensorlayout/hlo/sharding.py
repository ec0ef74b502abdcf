"""Collective device groups and shardings as XLA prints them, and Shardy attribute text.

``replica_groups`` in every form (explicit ``{{0,1},{2,3}}``, iota ``[2,4]<=[8]``,
transposed iota ``[2,4]<=[4,2]T(1,0)``, mesh axes ``mesh['x'=4,'y'=2] {'y'}``), ``sharding``
in every form (``replicated``, ``manual``, ``maximal device=N``, ``unknown``, tiled
``devices=[...]`` over ids or an iota, ``last_tile_dim_replicate``, ``last_tile_dims={...}``,
``shard_as``/``shard_like``, ``metadata``, tuples), ``frontend_attributes``, and the Shardy
(``#sdy``) text JAX stores in them. :mod:`tensorlayout.hlo.attributes` dispatches to these.

>>> parse_replica_groups("[2,4]<=[8]").groups
((0, 1, 2, 3), (4, 5, 6, 7))
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from tensorlayout._cursor import Cursor, read_braced, read_whole
from tensorlayout.core.intmath import prod
from tensorlayout.errors import HloError

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


#: The most devices a tile assignment, mesh or replica-group list may name (XLA's largest
#: systems have tens of thousands); bigger texts are a ParseError, not a huge allocation.
MAX_DEVICES = 1 << 20
_QUOTED = re.compile(r"'([^'\n]*)'|\"((?:[^\"\\\n]|\\.)*)\"|([A-Za-z_][\w.\-]*)")
_ID_LIST = re.compile(r"([\[\]\d,\s-]*)\)")
_MESH_REST = re.compile(r"(?:,\s*device_ids=\((?:[^()]|\([^()]*\))*\))?\s+\{[^{}]*\}")


@dataclass(frozen=True, slots=True)
class IotaTileAssignment:
    """``[dims]<=[reshape_dims]T(perm)``: ``iota`` reshaped to ``reshape_dims``, transposed by
    ``perm``, then read row-major into ``dims`` (XLA's ``IotaTileAssignment``).

    >>> parse_replica_groups("[2,4]<=[4,2]T(1,0)").groups
    ((0, 2, 4, 6), (1, 3, 5, 7))
    """

    dims: tuple[int, ...]
    reshape_dims: tuple[int, ...]
    transpose_perm: tuple[int, ...]

    def devices(self) -> tuple[int, ...]:
        """The device ids in row-major order over ``dims``."""
        ids = np.arange(prod(self.reshape_dims), dtype=np.int64).reshape(self.reshape_dims)
        return tuple(int(d) for d in ids.transpose(self.transpose_perm).ravel())

    def __str__(self) -> str:
        perm = self.transpose_perm
        tail = "" if perm == tuple(range(len(perm))) else f"T({','.join(map(str, perm))})"
        return f"[{','.join(map(str, self.dims))}]<=[{','.join(map(str, self.reshape_dims))}]{tail}"


def _device_count(cur: Cursor, dims: tuple[int, ...], at: int, what: str) -> int:
    """``prod(dims)``, checked to be a sensible number of devices."""
    n = prod(dims)
    if any(d < 1 for d in dims) or n > MAX_DEVICES:
        raise cur.error(f"{what} of positive sizes naming at most {MAX_DEVICES} devices", at=at)
    return n


def _ints(cur: Cursor, open_: str, close: str, what: str) -> tuple[int, ...]:
    cur.expect(open_, f"'{open_}' to start {what}")
    values: list[int] = []
    if not cur.accept(close):
        while True:
            values.append(cur.integer(what))
            if cur.accept(close):
                break
            cur.expect(",", f"',' or '{close}' in {what}")
    return tuple(values)


def _iota(cur: Cursor, dims: tuple[int, ...]) -> IotaTileAssignment:
    """The rest of an iota tile assignment after ``[dims]`` (at ``<=``)."""
    start = cur.pos
    cur.expect("<=", "'<=' before the iota reshape dims")
    reshape = _ints(cur, "[", "]", "iota reshape dims")
    _device_count(cur, reshape, start, "iota reshape dims")
    perm = _ints(cur, "T(", ")", "a transpose permutation") if cur.peek("T(") else \
        tuple(range(len(reshape)))
    if sorted(perm) != list(range(len(reshape))) or prod(dims) != prod(reshape):
        raise cur.error("an iota with a permutation of its reshape dims and as many devices as "
                        "tiles", at=start)
    return IotaTileAssignment(dims, reshape, perm)


@dataclass(frozen=True, slots=True)
class AxisRef:
    """A mesh axis, or the sub-axis ``name:(pre_size)size`` of one."""

    name: str
    pre_size: int | None = None
    size: int | None = None


@dataclass(frozen=True, slots=True)
class Mesh:
    """``mesh['a'=4,'b'=2]`` (optionally ``, device_ids=(...)``): named axes over devices."""

    axis_names: tuple[str, ...]
    axis_sizes: tuple[int, ...]
    device_ids: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class ReplicaGroups:
    """``replica_groups`` in any form XLA prints: ``form`` is ``list`` (``{{0,1},{2,3}}``),
    ``iota`` (``[2,4]<=[8]``) or ``mesh`` (``mesh['x'=4,'y'=2] {'y'}``); ``groups`` is
    the flattened list of groups either way.

    >>> parse_replica_groups("mesh['x'=4,'y'=2] {'x'}").groups
    ((0, 2, 4, 6), (1, 3, 5, 7))
    """

    form: str
    groups: tuple[tuple[int, ...], ...]
    iota: IotaTileAssignment | None = None
    mesh: Mesh | None = None
    axes: tuple[AxisRef, ...] = ()


def _quoted_name(cur: Cursor, what: str, *, bare: bool = True) -> str:
    """A ``'single'`` or ``"double"``-quoted name (escapes removed), or a bare identifier
    when ``bare``."""
    at = cur.pos
    m = cur.match(_QUOTED)
    if not m or (m.group(3) is not None and not bare):
        raise cur.error(what, at=at)
    if m.group(1) is not None:
        return m.group(1)
    quoted = m.group(2)
    return re.sub(r"\\(.)", r"\1", quoted) if quoted is not None else m.group(3)


def _axis_sizes(cur: Cursor, *, bare: bool) -> tuple[tuple[str, ...], tuple[int, ...]]:
    """``name=size, ...]`` after a mesh's ``[``: the axis names and sizes."""
    names: list[str] = []
    sizes: list[int] = []
    while not cur.accept("]"):
        if names:
            cur.expect(",", "',' or ']' in the mesh axes")
        names.append(_quoted_key(cur, "a mesh axis", bare=bare))
        sizes.append(cur.integer("a mesh axis size"))
    return tuple(names), tuple(sizes)


def _permutation(cur: Cursor, ids: tuple[int, ...], n: int, at: int) -> tuple[int, ...]:
    if sorted(ids) != list(range(n)):
        raise cur.error("device ids that are a permutation of the mesh's devices", at=at)
    return ids


def _mesh(cur: Cursor) -> Mesh:
    """``mesh['x'=4,'y'=2]`` with an optional ``, device_ids=(...)`` (XLA's ``Mesh::ToString``)."""
    start = cur.pos
    cur.expect("mesh[", "'mesh[' to start a mesh")
    names, sizes = _axis_sizes(cur, bare=True)
    n = _device_count(cur, sizes or (0,), start, "mesh axes")
    ids = tuple(range(n))
    if cur.accept(","):
        cur.expect("device_ids=(", "'device_ids=(' after the mesh axes")
        at = cur.pos
        ids = _permutation(cur, _mesh_device_ids(cur, n), n, at)
    return Mesh(names, sizes, ids)


def _mesh_device_ids(cur: Cursor, n: int) -> tuple[int, ...]:
    """The device ids after ``device_ids=(``, up to its ``)``: a list ``0,4,1,5`` (maybe nested
    in brackets) or an iota ``[2,4]T(1,0)`` (``iota(n)`` reshaped to ``[2,4]``, transposed, read
    row-major)."""
    at = cur.pos
    if cur.peek("[") and not cur.peek("[["):
        dims = _ints(cur, "[", "]", "iota device-id dims")
        is_list = sorted(dims) == list(range(n)) and not cur.peek("T(")
        if not is_list:
            _device_count(cur, dims, at, "iota device-id dims")
            perm = _ints(cur, "T(", ")", "a transpose permutation") if cur.peek("T(") else \
                tuple(range(len(dims)))
            if sorted(perm) != list(range(len(dims))):
                raise cur.error("a permutation of the iota device-id dims", at=at)
            cur.expect(")", "')' to end the mesh device ids")
            return IotaTileAssignment((prod(dims),), dims, perm).devices()
        cur.pos = at
    m = cur.match(_ID_LIST)
    if m is None:
        raise cur.error("device ids and ')'", at=at)
    return tuple(int(x) for x in re.findall(r"-?\d+", m.group(1)))


def _axis_ref(cur: Cursor, mesh: Mesh) -> AxisRef:
    at = cur.pos
    name = _quoted_name(cur, "a mesh axis name")
    if name not in mesh.axis_names:
        raise cur.error(f"one of the mesh axes {', '.join(mesh.axis_names)}", at=at)
    if not cur.accept(":"):
        return AxisRef(name)
    pre = _ints(cur, "(", ")", "a sub-axis pre-size")
    size = cur.integer("a sub-axis size")
    full = mesh.axis_sizes[mesh.axis_names.index(name)]
    if len(pre) != 1 or pre[0] < 1 or size < 2 or full % (pre[0] * size):
        raise cur.error(f"a sub-axis (pre)size that divides the axis size {full}", at=at)
    return AxisRef(name, pre[0], size)


def _axis_split(refs: list[AxisRef], full: int) -> tuple[list[int], list[int]]:
    """XLA's reshape of one mesh axis into pieces and which pieces are grouped (in the
    order of ``refs``)."""
    if len(refs) == 1 and refs[0].pre_size is None:
        return [full], [0]
    order = sorted(range(len(refs)), key=lambda i: refs[i].pre_size or 1)
    dims: list[int] = []
    grouped: list[int] = [0] * len(refs)
    done = 1
    for i in order:
        pre, size = refs[i].pre_size or 1, refs[i].size or full
        if pre % done or size < 1:
            raise HloError(f"overlapping sub-axes of an axis of size {full}: {refs}")
        if pre != done:
            dims.append(pre // done)
            done *= pre // done
        grouped[i] = len(dims)
        dims.append(size)
        done *= size
    if full % done:
        raise HloError(f"sub-axes {refs} do not divide an axis of size {full}")
    if done != full:
        dims.append(full // done)
    return dims, grouped


def mesh_replica_groups(mesh: Mesh, axes: tuple[AxisRef, ...]) -> tuple[tuple[int, ...], ...]:
    """``MeshAxesReplicaGroupList::flattened_replica_groups``: devices that differ only along
    ``axes`` form a group.

    >>> m = Mesh(("a",), (8,), tuple(range(8)))
    >>> mesh_replica_groups(m, (AxisRef("a", 1, 2),))
    ((0, 4), (1, 5), (2, 6), (3, 7))
    """
    sizes: list[int] = []
    grouped: list[int] = []
    for i, name in enumerate(mesh.axis_names):
        refs = [a for a in axes if a.name == name]
        if not refs:
            sizes.append(mesh.axis_sizes[i])
            continue
        dims, agg = _axis_split(refs, mesh.axis_sizes[i])
        grouped += [len(sizes) + a for a in agg]
        sizes += dims
    per_group = prod(a.size or mesh.axis_sizes[mesh.axis_names.index(a.name)] for a in axes)
    if prod(sizes) != len(mesh.device_ids) or min(sizes, default=1) < 1 or \
            len(mesh.device_ids) % per_group:
        raise HloError(f"replica-group axes {[str(a) for a in axes]} overlap or do not divide "
                       f"the mesh {dict(zip(mesh.axis_names, mesh.axis_sizes, strict=True))}")
    perm = [d for d in range(len(sizes)) if d not in grouped] + grouped
    ids = np.asarray(mesh.device_ids, dtype=np.int64).reshape(sizes).transpose(perm).ravel()
    return tuple(tuple(int(d) for d in ids[k:k + per_group]) for k in range(0, len(ids), per_group))


def _mesh_groups(cur: Cursor) -> ReplicaGroups:
    mesh = _mesh(cur)
    axes = read_braced(cur, lambda c: _axis_ref(c, mesh), "'{' to start the replica-group axes",
                       "',' or '}' in the replica-group axes")
    try:
        groups = mesh_replica_groups(mesh, tuple(axes))
    except HloError as err:
        raise cur.error(f"replica-group axes that partition the mesh ({err})", at=0) from None
    return ReplicaGroups("mesh", groups, mesh=mesh, axes=tuple(axes))


def _iota_groups(cur: Cursor) -> ReplicaGroups:
    iota = _iota(cur, _ints(cur, "[", "]", "the replica-group dims"))
    if len(iota.dims) != 2:
        raise cur.error("iota replica groups of rank 2 ([groups,size]<=[...])", at=0)
    ids, size = iota.devices(), iota.dims[1]
    return ReplicaGroups("iota", tuple(ids[k:k + size] for k in range(0, len(ids), size)), iota)


def _list_groups(cur: Cursor) -> ReplicaGroups:
    groups = read_braced(cur, lambda c: _ints(c, "{", "}", "a replica group"),
                         "'{', '[' or 'mesh[' to start replica groups", "',' or '}' in the replica groups")
    return ReplicaGroups("list", tuple(groups))


def parse_replica_groups(text: str) -> ReplicaGroups:
    """``replica_groups=`` text in any of XLA's forms.

    >>> parse_replica_groups("{{0,1},{2,3}}").groups
    ((0, 1), (2, 3))
    """
    cur = Cursor(text, comments=True)
    reader = _mesh_groups if cur.peek("mesh[") else _iota_groups if cur.peek("[") else _list_groups
    groups = reader(cur)
    cur.expect_end("end of the replica groups")
    return groups


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


def _quoted_key(cur: Cursor, what: str, *, bare: bool = True) -> str:
    """``name =`` (the name quoted, or bare where ``bare``): the name; ``what`` names it in errors."""
    key = _quoted_name(cur, f"{what} name", bare=bare)
    cur.expect("=", f"'=' after {what} name")
    return key


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

