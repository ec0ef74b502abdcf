"""Device lists as XLA prints them: iota tile assignments (``[2,4]<=[4,2]T(1,0)``), meshes and their
axes (``mesh['x'=4,'y'=2]``), and ``replica_groups`` in every form (explicit ``{{0,1},{2,3}}``,
iota, mesh axes ``mesh['x'=4,'y'=2] {'y'}``). :mod:`tensorlayout.hlo.sharding` builds shardings and
Shardy text on these, and re-exports the public names.

>>> parse_replica_groups("[2,4]<=[8]").groups
((0, 1, 2, 3), (4, 5, 6, 7))
>>> parse_replica_groups("mesh['x'=2,'y'=2] {'y'}").groups
((0, 1), (2, 3))
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from tensorlayout._cursor import Cursor, read_braced
from tensorlayout.core.intmath import prod
from tensorlayout.errors import HloError

__all__ = ["MAX_DEVICES", "AxisRef", "IotaTileAssignment", "Mesh", "ReplicaGroups", "mesh_replica_groups",
           "parse_replica_groups"]


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


def _quoted_key(cur: Cursor, what: str, *, bare: bool = True) -> str:
    """``name =`` (the name quoted, or bare where ``bare``): the name; ``what`` names it in errors."""
    key = _quoted_name(cur, f"{what} name", bare=bare)
    cur.expect("=", f"'=' after {what} name")
    return key


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
