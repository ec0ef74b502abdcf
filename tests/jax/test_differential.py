"""Every module XLA dumps for a set of JAX programs (single-device and SPMD on 8 host CPU
devices) that XLA's own parser (jaxlib's ``hlo_module_from_text``) accepts parses here with
the same computations, instructions, opcodes and shapes; shardings agree with XLA's
``HloSharding.from_string``."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

os.environ.setdefault("JAX_PLATFORMS", "cpu")
pytest.importorskip("jax")
jax_lib = pytest.importorskip("jax._src.lib")
hlo_lib = getattr(jax_lib, "hlo", None)  # jaxlib's HLO parser bindings
xla_client = getattr(jax_lib, "xla_client", None)
if hlo_lib is None or xla_client is None or not hasattr(hlo_lib, "hlo_module_from_text"):
    pytest.skip("this jaxlib exposes no HLO text parser", allow_module_level=True)

from tensorlayout._cursor import Cursor  # noqa: E402
from tensorlayout.cli.dump import discover  # noqa: E402
from tensorlayout.errors import TensorLayoutError  # noqa: E402
from tensorlayout.hlo import parse_module  # noqa: E402
from tensorlayout.hlo.model import HloModule  # noqa: E402
from tensorlayout.hlo.sharding import (  # noqa: E402
    HloSharding,
    parse_frontend_attributes,
    parse_sdy,
    parse_sharding,
    sdy_meshes,
)
from tensorlayout.xla.shape import read_shape  # noqa: E402

PROGRAMS = Path(__file__).parent / "programs.py"
_OPCODE = re.compile(r"\s*([\w-]+)\(")


@pytest.fixture(scope="module")
def dump(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("xla_dump")
    env = {**os.environ, "JAX_PLATFORMS": "cpu",
           "XLA_FLAGS": f"--xla_dump_to={out} --xla_force_host_platform_device_count=8"}
    subprocess.run([sys.executable, str(PROGRAMS)], env=env, check=True, capture_output=True,
                   timeout=280)
    return out


def _xla_view(text: str) -> dict[str, list[tuple[str, str, str]]]:
    """Per computation: (name, opcode, shape) of each instruction, as XLA prints them."""
    module = hlo_lib.hlo_module_from_text(text)
    view = {}
    for comp in module.computations():
        rows = []
        for instr in comp.instructions():
            line = instr.to_string()
            cur = Cursor(line, line.index(" = ") + 3, comments=True)
            shape = read_shape(cur)
            m = _OPCODE.match(line, cur.pos)
            assert m, line
            rows.append((instr.name, m.group(1), shape.to_string(with_layout=True)))
        view[comp.name] = rows
    return view


def _our_view(module: HloModule) -> dict[str, list[tuple[str, str, str]]]:
    return {c.name: [(i.name, i.opcode, i.shape.to_string(with_layout=True)) for i in c.instructions]
            for c in module.computations}


def _compare(path: Path) -> str | None:
    """None when both parsers agree; otherwise why not. Modules XLA rejects are skipped."""
    text = path.read_text()
    try:
        theirs = _xla_view(text)
    except Exception:
        return None
    try:
        ours = _our_view(parse_module(text))
    except TensorLayoutError as err:
        return f"{path.name}: {type(err).__name__}: {err}".splitlines()[0]
    if set(ours) != set(theirs):
        return f"{path.name}: computations differ: {sorted(set(ours) ^ set(theirs))}"
    for name, rows in theirs.items():
        if sorted(ours[name]) != sorted(rows):
            diff = sorted(set(ours[name]) ^ set(rows))[:3]
            return f"{path.name}: computation {name} differs: {diff}"
    return None


def _modules(dump: Path) -> list[Path]:
    modules, _ = discover(dump)
    assert len(modules) > 20
    return [m.path for m in modules]


def test_modules_parse_like_xla(dump: Path) -> None:
    paths = _modules(dump)
    problems = [p for p in map(_compare, paths) if p]
    # the mesh form of replica groups needs the parser patch described in notes/jax.md
    unexplained = [p for p in problems if "mesh[" not in (dump / p.split(":")[0]).read_text()]
    assert not unexplained, unexplained
    assert any("jit_collectives" in p.name for p in paths)


def test_mesh_replica_group_modules_parse(dump: Path) -> None:
    paths = [p for p in _modules(dump) if "replica_groups=mesh[" in p.read_text()]
    assert paths
    assert [p for p in map(_compare, paths) if p] == []


def _same(ours: HloSharding, theirs: object) -> bool:
    if ours.kind == "tuple":
        elements = theirs.tuple_elements()  # type: ignore[attr-defined]
        return len(elements) == len(ours.elements) and all(
            _same(a, b) for a, b in zip(ours.elements, elements, strict=True))
    kinds = {"replicated": theirs.is_replicated(), "manual": theirs.is_manual(),  # type: ignore[attr-defined]
             "maximal": theirs.is_maximal(), "unknown": theirs.is_unknown(),  # type: ignore[attr-defined]
             "tiled": theirs.is_tiled()}  # type: ignore[attr-defined]
    if not kinds.get(ours.kind, False):
        return False
    if ours.kind in ("tiled", "maximal"):
        subgroups = [str(t).rsplit(".", 1)[-1].lower() for t in theirs.subgroup_types()]  # type: ignore[attr-defined]
        if theirs.replicate_on_last_tile_dim():  # type: ignore[attr-defined]
            subgroups = ["replicated"]
        return (list(ours.devices or (ours.device,)) == list(theirs.tile_assignment_devices())  # type: ignore[attr-defined]
                and (ours.kind == "maximal"
                     or list(ours.tile_dims) == list(theirs.tile_assignment_dimensions()))  # type: ignore[attr-defined]
                and list(ours.last_tile_dims) == subgroups)
    return True


SHARDINGS = [
    "{replicated}", "{manual}", "{maximal device=3}", "{unknown}",
    "{devices=[4,2]<=[8]}", "{devices=[2,1,4]<=[4,2]T(1,0) last_tile_dim_replicate}",
    "{devices=[2,2,2]<=[2,2,2]T(2,0,1) last_tile_dims={manual}}",
    "{devices=[2,2]3,1,2,0}", "{devices=[1,2,2,2]<=[8] last_tile_dims={manual, replicated}}",
    "{{replicated}, {maximal device=0}, {devices=[2,4]<=[8]}}",
    '{replicated metadata={op_name="a"}}',
]


@pytest.mark.parametrize("text", SHARDINGS)
def test_sharding_forms_match_xla(text: str) -> None:
    theirs = xla_client.HloSharding.from_string(text)
    assert _same(parse_sharding(text), theirs), (text, str(theirs))


def test_dumped_shardings_match_xla(dump: Path) -> None:
    seen = 0
    for path in _modules(dump):
        for line in path.read_text().splitlines():
            m = re.search(r"sharding=(\{.*?\})(?:, [a-z_]+=|$)", line)
            if not m or "mesh[" in m.group(1):
                continue
            theirs = xla_client.HloSharding.from_string(m.group(1))
            assert _same(parse_sharding(m.group(1)), theirs), m.group(1)
            seen += 1
    assert seen > 3


def test_dumped_frontend_attributes_and_shardy_text_parse(dump: Path) -> None:
    sdy = 0
    for path in _modules(dump):
        text = path.read_text()
        module = parse_module(text)
        raws = [i.raw_attributes["frontend_attributes"] for i in module.instructions()
                if "frontend_attributes" in i.raw_attributes]
        tables = [parse_frontend_attributes(r) for r in raws]
        tables.append(dict(module.attributes.get("frontend_attributes", {})))
        for table in tables:
            for key, value in table.items():
                if key == "xla.sdy.meshes":
                    assert sdy_meshes(value)
                    sdy += 1
                elif value.startswith("#sdy"):
                    assert parse_sdy(value) is not None
                    sdy += 1
    assert sdy > 10
