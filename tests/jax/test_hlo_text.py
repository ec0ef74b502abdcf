"""Replica groups, shardings, frontend attributes and Shardy text in every form XLA and JAX
print (no jax needed; the differential tests against jaxlib are in test_differential.py)."""

from __future__ import annotations

import contextlib
import itertools
import random
from pathlib import Path

import numpy as np
import pytest

from tensorlayout.errors import ParseError, TensorLayoutError
from tensorlayout.hlo import parse_module
from tensorlayout.hlo.attributes import parse_attribute
from tensorlayout.hlo.sharding import (
    AxisRef,
    Mesh,
    SdySharding,
    attribute_value_end,
    mesh_replica_groups,
    parse_frontend_attributes,
    parse_replica_groups,
    parse_sdy,
    parse_sharding,
    sdy_meshes,
)

SPMD = Path(__file__).parent.parent / "data" / "dumps" / "spmd_cpu8"


def test_replica_group_forms() -> None:
    assert parse_replica_groups("{}").groups == ()
    assert parse_replica_groups("{{0,1},{2,3}}").form == "list"
    iota = parse_replica_groups("[2,4]<=[4,2]T(1,0)")
    expected = np.arange(8).reshape(4, 2).T.reshape(2, 4)
    assert iota.form == "iota" and iota.groups == tuple(map(tuple, expected.tolist()))
    assert str(iota.iota) == "[2,4]<=[4,2]T(1,0)"
    assert parse_replica_groups("[1,8]<=[8]").groups == (tuple(range(8)),)
    assert parse_attribute("replica_groups", "[2,2]<=[4]").groups == ((0, 1), (2, 3))


def _brute_force_groups(sizes: tuple[int, ...], grouped: tuple[int, ...]) -> set[tuple[int, ...]]:
    """Devices (row-major ids over the mesh) that agree on every non-grouped axis."""
    groups: dict[tuple[int, ...], list[tuple[tuple[int, ...], int]]] = {}
    for device, coord in enumerate(itertools.product(*map(range, sizes))):
        key = tuple(c for i, c in enumerate(coord) if i not in grouped)
        groups.setdefault(key, []).append((tuple(coord[i] for i in sorted(grouped)), device))
    return {tuple(d for _, d in sorted(g)) for g in groups.values()}


@pytest.mark.parametrize("sizes", [(4, 2), (4, 1, 2), (2, 3, 4), (8,)])
def test_mesh_groups_match_the_definition(sizes: tuple[int, ...]) -> None:
    names = tuple(f"axis_{i}" for i in range(len(sizes)))
    mesh = Mesh(names, sizes, tuple(range(int(np.prod(sizes)))))
    for r in range(1, len(sizes) + 1):
        for grouped in itertools.combinations(range(len(sizes)), r):
            axes = tuple(AxisRef(names[i]) for i in grouped)
            got = mesh_replica_groups(mesh, axes)
            assert set(got) == _brute_force_groups(sizes, grouped)


def test_mesh_text_forms() -> None:
    rg = parse_replica_groups("mesh['axis_0'=4,'axis_1'=1,'axis_2'=2] {'axis_0'}")
    assert rg.form == "mesh" and rg.groups == ((0, 2, 4, 6), (1, 3, 5, 7))
    # sub-axes, as XLA's comment gives them for mesh<"a"=8>
    assert parse_replica_groups("mesh['a'=8] {'a':(1)2}").groups == ((0, 4), (1, 5), (2, 6), (3, 7))
    two = parse_replica_groups("mesh['a'=8] {'a':(1)2,'a':(4)2}")
    assert two.groups == ((0, 1, 4, 5), (2, 3, 6, 7))
    ids = parse_replica_groups("mesh['x'=2,'y'=2], device_ids=([[3,2],[1,0]]) {'y'}")
    assert ids.groups == ((3, 2), (1, 0))
    for bad in ("mesh['x'=2] {'z'}", "[2,4]<=[6]", "[2,4]<=[8]T(0,0)", "{{0,1}", "mesh['a'=8] {'a':(3)2}"):
        with pytest.raises(ParseError, match=r"at line 1, column"):
            parse_replica_groups(bad)


def test_attribute_value_end_for_mesh_groups() -> None:
    line = "x = f32[4] all-reduce(y), replica_groups=mesh['x'=4,'y'=2], device_ids=(1) {'y'}, to_apply=a"
    start = line.index("mesh")
    stop = line.index("]", start) + 1
    assert line[start:attribute_value_end("replica_groups", line, start, stop)].endswith("{'y'}")
    assert attribute_value_end("sharding", line, start, stop) == stop


def test_sharding_forms() -> None:
    assert parse_sharding("{replicated}").kind == "replicated"
    assert parse_sharding("{maximal device=2}").device == 2
    s = parse_sharding("{devices=[2,2]3,1,2,0 last_tile_dims={manual}}")
    assert (s.kind, s.devices, s.last_tile_dims) == ("tiled", (3, 1, 2, 0), ("manual",))
    t = parse_sharding('{{replicated}, {manual metadata={op_name="a}"}}, {unknown shard_as 1}}')
    assert [e.kind for e in t.elements] == ["replicated", "manual", "unknown"]
    assert t.elements[2].shard_group == ("shard_as", 1)
    for bad in ("{devices=[2,2]0,1,2}", "{maximal}", "{sideways}", "{replicated", "{}"):
        with pytest.raises(ParseError, match=r"at line 1, column"):
            parse_sharding(bad)


def test_frontend_attributes_and_shardy_from_a_real_jax_dump() -> None:
    m = parse_module((SPMD / "module_0056.jit_collectives.before_optimizations.txt").read_text())
    attrs = m.attributes["frontend_attributes"]  # module attributes are typed
    meshes = sdy_meshes(attrs["xla.sdy.meshes"])
    assert meshes["mesh"].axis_names == ("x", "y") and meshes["mesh"].axis_sizes == (4, 2)
    seen = 0
    for instr in m.instructions():
        raw = instr.raw_attributes.get("frontend_attributes")
        if not raw:
            continue
        for key, value in parse_frontend_attributes(raw).items():
            if value.startswith("#sdy"):
                parsed = parse_sdy(value)
                assert isinstance(parsed, (SdySharding, tuple, Mesh)), key
                seen += 1
    assert seen >= 3


def test_shardy_forms() -> None:
    s = parse_sdy('#sdy.sharding<@mesh, [{"x"}, {?}], replicated={"y"}>')
    assert isinstance(s, SdySharding) and s.replicated == (AxisRef("y"),)
    assert not s.dimensions[1].closed and s.dimensions[1].axes == ()
    per_value = parse_sdy('#sdy.sharding_per_value<[<@mesh, [{}, {"x"}]>, <@mesh, []>]>')
    assert isinstance(per_value, tuple) and len(per_value) == 2
    inline = parse_sdy('#sdy.sharding<mesh<["a"=2]>, [{"a"}]>')
    assert isinstance(inline, SdySharding) and isinstance(inline.mesh, Mesh)
    with pytest.raises(ParseError, match=r"expected a quoted axis name at line 1, column 24, but got"):
        parse_sdy("#sdy.sharding<@mesh, [{x}]>")


def test_mutated_texts_raise_only_library_errors() -> None:
    seeds = ["mesh['x'=4,'y'=2] {'y'}", "[2,4]<=[4,2]T(1,0)", "{{0,1},{2,3}}",
             "{devices=[2,1,4]<=[4,2]T(1,0) last_tile_dim_replicate}",
             "{{replicated}, {maximal device=0}}", "mesh['a'=8] {'a':(1)2,'a':(4)2}",
             '#sdy.sharding<@mesh, [{"x", ?}, {"y":(1)2}p1], replicated={"z"}>',
             '#sdy.mesh<["x"=4, "y"=2]>', '{a="x", b={c = 1}}', '{mesh = #sdy.mesh<["x"=4]>}']
    rng = random.Random(13)
    alphabet = "[]{}()<>=,'\"?:#@ 0123456789-Txyamesh_devicsrpltd."
    parsers = (parse_replica_groups, parse_sharding, parse_sdy, parse_frontend_attributes, sdy_meshes)
    for _ in range(2000):
        text = rng.choice(seeds)
        for _ in range(rng.randint(1, 3)):
            k = rng.randrange(len(text) + 1)
            piece = rng.choice([rng.choice(alphabet), "", str(rng.choice([0, -1, 10**12]))])
            text = text[:k] + piece + text[k + (piece == ""):]
        for parse in parsers:
            with contextlib.suppress(TensorLayoutError):
                parse(text)
    with pytest.raises(ParseError, match="partition the mesh"):
        parse_replica_groups("mesh['a'=8] {'a','a'}")
    with pytest.raises(ParseError, match="at most"):
        parse_replica_groups("[2,4]<=[99999999999]")
