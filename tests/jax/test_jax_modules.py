"""The modules JAX 0.10.2 prints for the programs of ``jax_modules.py`` (8 host CPU devices,
Shardy and GSPMD, transposed and 3-D meshes; switch branches, dynamic slices, 4-bit
constants; deviceless TPU v5e when libtpu is installed) parse as jaxlib parses them, and
every instruction's analysis gives maps or a typed error.

References: jaxlib's HLO parser (``hlo_module_from_text``) for the instruction views, and
jaxlib's ``HloSharding`` of the entry parameter for the devices a mesh-form all-reduce must
group (devices that differ only in the tile coordinate of the reduced dimension).
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("jax")
jax_lib = pytest.importorskip("jax._src.lib")
hlo_lib = getattr(jax_lib, "hlo", None)
xla_client = getattr(jax_lib, "xla_client", None)
if hlo_lib is None or xla_client is None or not hasattr(hlo_lib, "hlo_module_from_text"):
    pytest.skip("this jaxlib exposes no HLO text parser", allow_module_level=True)

from tensorlayout._cursor import Cursor  # noqa: E402
from tensorlayout.errors import TensorLayoutError  # noqa: E402
from tensorlayout.hlo import parse_module  # noqa: E402
from tensorlayout.hlo.analysis import input_to_output_indexing, output_to_input_indexing  # noqa: E402
from tensorlayout.hlo.model import HloModule  # noqa: E402
from tensorlayout.hlo.sharding import parse_replica_groups  # noqa: E402
from tensorlayout.indexing.parse import parse_indexing_map  # noqa: E402
from tensorlayout.xla.shape import read_shape  # noqa: E402

SCRIPT = Path(__file__).parent / "jax_modules.py"
HAVE_LIBTPU = importlib.util.find_spec("libtpu") is not None


@pytest.fixture(scope="module")
def modules(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    out = tmp_path_factory.mktemp("jax_modules")
    env = {**os.environ, "JAX_PLATFORMS": "cpu", "XLA_FLAGS": "--xla_force_host_platform_device_count=8"}
    # two processes (each about half the compile time), on CI's two cores at once
    halves = ["cpu,shardy", "gspmd,tpu" if HAVE_LIBTPU else "gspmd"]
    runs = [subprocess.Popen([sys.executable, str(SCRIPT), str(out), "--kinds", kinds], env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE) for kinds in halves]
    for run in runs:
        _, err = run.communicate(timeout=240)
        assert run.returncode == 0, err.decode(errors="replace")[-4000:]
    texts = {p.name: p.read_text() for p in sorted(out.glob("*.txt"))}
    assert len(texts) > 100
    return texts


def _xla_view(text: str) -> dict[str, list[tuple[str, str, str]]]:
    view = {}
    for comp in hlo_lib.hlo_module_from_text(text).computations():
        rows = []
        for instr in comp.instructions():
            line = instr.to_string()
            cur = Cursor(line, line.index(" = ") + 3, comments=True)
            shape = read_shape(cur)
            opcode = re.match(r"\s*([\w-]+)\(", line[cur.pos:])
            assert opcode, line
            rows.append((instr.name, opcode.group(1), shape.to_string(with_layout=True)))
        view[comp.name] = sorted(rows)
    return view


def _our_view(module: HloModule) -> dict[str, list[tuple[str, str, str]]]:
    return {c.name: sorted((i.name, i.opcode, i.shape.to_string(with_layout=True))
                           for i in c.instructions) for c in module.computations}


def test_every_module_parses_as_jaxlib_reads_it(modules: dict[str, str]) -> None:
    kinds = {name.split("_")[0] for name in modules}
    assert {"cpu", "shardy", "gspmd"} <= kinds and ("tpu" in kinds) == HAVE_LIBTPU
    assert any("device_ids=([" in t for t in modules.values())  # an iota device list
    assert any(re.search(r"s4\[[\d,]*\]\{[^}]*\} constant", t) for t in modules.values())
    for name, text in modules.items():
        assert _our_view(parse_module(text)) == _xla_view(text), name


def _outputs(shape: object) -> int:
    return max(1, len(shape.tuple_shapes)) if shape.is_tuple else 1  # type: ignore[attr-defined]


def test_every_instruction_has_maps_or_a_typed_error(modules: dict[str, str]) -> None:
    maps = runtime = 0
    for text in modules.values():
        for instr in parse_module(text).instructions():
            results = []
            for k in range(_outputs(instr.shape)):
                with contextlib.suppress(TensorLayoutError):
                    results.append(output_to_input_indexing(instr, k))
            for k in range(len(instr.operands)):
                with contextlib.suppress(TensorLayoutError):
                    results.append(input_to_output_indexing(instr, k))
            for oi in (oi for r in results for group in r.indexing_maps for oi in group):
                if oi.is_undefined:
                    continue
                assert parse_indexing_map(str(oi)) == oi.map, str(oi)  # printed text reads back
                maps += 1
                runtime += bool(oi.runtime_vars)
    assert maps > 1000 and runtime > 20


def test_empty_tuple_parameter_of_a_switch_branch(modules: dict[str, str]) -> None:
    text = next(t for t in modules.values() if "() parameter(0)" in t)
    instr = next(i for i in parse_module(text).instructions() if str(i.shape) == "()")
    assert len(output_to_input_indexing(instr).indexing_maps) == 0  # no operands


def _tile_groups(sharding: str, dim: int) -> set[frozenset[int]]:
    """Devices that differ only in tile coordinate ``dim`` of ``sharding`` (jaxlib's view)."""
    theirs = xla_client.HloSharding.from_string(sharding)
    tiles = np.asarray(theirs.tile_assignment_devices()).reshape(theirs.tile_assignment_dimensions())
    tiles = np.moveaxis(tiles, dim, -1).reshape(-1, tiles.shape[dim])
    return {frozenset(int(d) for d in row) for row in tiles}


def test_mesh_replica_groups_are_the_devices_a_reduction_combines(modules: dict[str, str]) -> None:
    """For ``a.sum(k)`` over a parameter of rank 1 or 2, the all-reduce groups the devices holding the
    tiles along dim ``k``; the mesh form (with or without ``device_ids``) must say the same."""
    checked = with_ids = 0
    for name, text in modules.items():
        groups = re.findall(r"replica_groups=(mesh\[[^\]]*\](?:, device_ids=\((?:[^()]|\([^()]*\))*\))?"
                            r" \{[^}]*\})", text)
        param = re.search(r"ENTRY .*\n\s*%\S+ = f32\[[\d,]+\]\{[\d,]+\} parameter\(0\), "
                          r"sharding=(\{devices=[^}]*\})", text)
        reduces = set(re.findall(r"= f32\[\d*\](?:\{0\})? reduce\(%\S+, %\S+\), dimensions=\{(\d)\}", text))
        if ".after." not in name or len(groups) != 1 or not param or len(reduces) != 1 \
                or " reshape(" in modules[name.replace(".after.", ".before.")]:
            continue
        ours = {frozenset(g) for g in parse_replica_groups(groups[0]).groups}
        assert ours == _tile_groups(param.group(1), int(reduces.pop())), (name, groups[0])
        checked += 1
        with_ids += "device_ids" in groups[0]
    assert checked >= 4 and with_ids >= 1


@pytest.mark.parametrize(("text", "groups"), [
    # XLA's Mesh::ToString of a non-iota device order: iota(8) reshaped [4,2], transposed
    ("mesh['x'=1,'y'=2,'z'=4], device_ids=([4,2]T(1,0)) {'y'}", [(0, 1), (2, 3), (4, 5), (6, 7)]),
    ("mesh['a'=4,'b'=2], device_ids=(0,4,1,5,2,6,3,7) {'a'}", [(0, 1, 2, 3), (4, 5, 6, 7)]),
    # a sub-axis 'y':(pre)size: y = 4 read as [pre, size, rest]; (2)2 is its minor half
    ("mesh['x'=2,'y'=4] {'y':(2)2}", [(0, 1), (2, 3), (4, 5), (6, 7)]),
    ("mesh['x'=2,'y'=4] {'y':(1)2}", [(0, 2), (1, 3), (4, 6), (5, 7)]),
])
def test_mesh_forms(text: str, groups: list[tuple[int, ...]]) -> None:
    assert list(parse_replica_groups(text).groups) == groups


def test_bad_iota_device_ids_are_parse_errors() -> None:
    with pytest.raises(TensorLayoutError, match="permutation"):
        parse_replica_groups("mesh['x'=4,'y'=2], device_ids=([4,2]T(0,0)) {'x'}")
    with pytest.raises(TensorLayoutError, match="permutation of the mesh's devices"):
        parse_replica_groups("mesh['x'=4,'y'=2], device_ids=([4,4]) {'x'}")


