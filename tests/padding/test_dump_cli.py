"""Dump directories (`maps DIR`, `padding DIR`) on a committed real JAX CPU dump, and the
shapes/linearized additions to `maps`."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import tensorlayout.cli.dump as dump_cli
from tensorlayout.cli import main
from tensorlayout.cli.dump import discover, select
from tensorlayout.xla import array_size, parse_shape

DUMP = Path(__file__).parent.parent / "data" / "dumps" / "jit_f_cpu"
TPU = Path(__file__).parent.parent / "data" / "hlo" / "tpu"


def test_discover_finds_modules_and_counts_the_rest() -> None:
    modules, skipped = discover(DUMP)
    assert [(m.number, m.name, m.stage) for m in modules] == [
        (0, "jit_convert_element_type", "before_optimizations"),
        (0, "jit_convert_element_type", "cpu_after_optimizations"),
        (6, "jit_f", "before_optimizations"),
        (6, "jit_f", "cpu_after_optimizations"),
    ]
    assert skipped["buffer-assignment"] == 2 and skipped["memory-usage-report"] == 1
    assert [m.stage for m in select(modules, "6")] == ["cpu_after_optimizations"]
    assert [m.number for m in select(modules, stage="before")] == [0, 6]
    assert len(select(modules, "jit_f", "all")) == 2


def test_maps_dir(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["maps", str(DUMP)]) == 0
    out, err = capsys.readouterr()
    assert out.count("### module_") == 2 and "jit_f (cpu_after_optimizations)" in out
    assert len(err.strip().splitlines()) == 1 and "skipped 6 non-HLO files" in err
    assert main(["maps", str(DUMP), "--module", "jit_f", "--stage", "before", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [m["module"] for m in data["modules"]] == ["jit_f"]
    assert main(["maps", str(DUMP), "--module", "nope"]) == 2
    assert "no module 'nope'" in capsys.readouterr().err


def test_maps_shapes_operands_and_linearized(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["maps", str(DUMP), "--module", "6", "--fusion", "tanh_reduce_fusion", "--shapes",
            "--linearized"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "tanh_reduce_fusion = fusion  f32[4]{0} (16B logical, 16B allocated)" in out
    assert "operand 0 ynn_fusion: f32[8,4]{1,0} (128B logical, 128B allocated)" in out
    assert "linearized operand 0: (d0)[s0] -> (s0 * 4 + d0)" in out
    assert "tanh.0 = tanh" in out  # the fused computation's instructions follow
    assert main(args[:-2] + ["--json"]) == 0
    rec = json.loads(capsys.readouterr().out)["modules"][0]["instructions"][0]
    assert rec["operands"] == [{"name": "ynn_fusion", "shape": "f32[8,4]", "layout": "{1,0}",
                                "logical_bytes": 128, "allocated_bytes": 128}]


def test_maps_tpu_module_allocated_bytes(capsys: pytest.CaptureFixture[str]) -> None:
    path = TPU / "transformer_block.v5e.opt.hlo"
    assert main(["maps", str(path), "--json", "--instruction", "copy.8"]) == 0
    rec = json.loads(capsys.readouterr().out)["instructions"][0]
    shape = parse_shape(rec["shape"] + rec["layout"])
    assert rec["allocated_bytes"] == array_size(shape) == 4 * rec["logical_bytes"]


def test_padding_dir_and_module(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["padding", str(DUMP), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    jit_f = next(m for m in data["modules"] if m["module"] == "jit_f")
    assert jit_f["logical_bytes"] == jit_f["allocated_bytes"] == 912  # CPU: no tiles
    assert main(["padding", str(DUMP), "--module", "jit_f", "--tpu", "v5e", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)["modules"][0]
    names = [b["name"] for b in data["buffers"]]
    assert set(names) == {"x.1", "w.1", "ynn_fusion", "tanh_reduce_fusion"}
    wastes = [b["waste_bytes"] for b in data["buffers"]]
    assert wastes == sorted(wastes, reverse=True)
    assert data["allocated_bytes"] == sum(b["allocated_bytes"] for b in data["buffers"]) == 8704
    assert main(["padding", str(TPU / "softmax.v6e.opt.hlo")]) == 0
    assert "buffers:" in capsys.readouterr().out


def test_single_file_and_non_hlo_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    report = DUMP / "module_0006.jit_f.cpu_after_optimizations-memory-usage-report.txt"
    assert main(["maps", str(report)]) == 2
    capsys.readouterr()
    empty = tmp_path / "dump"
    shutil.copytree(DUMP, empty)
    for f in empty.glob("*optimizations.txt"):
        f.unlink()
    assert main(["maps", str(empty)]) == 2
    assert "no HLO module files" in capsys.readouterr().err


def test_progress_for_big_dumps(capsys: pytest.CaptureFixture[str],
                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(dump_cli, "PROGRESS_MODULES", 1)
    assert main(["padding", str(DUMP), "--stage", "all"]) == 0
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith("tensorlayout: note: skipped")
    assert err[-1] == "tensorlayout: note: 4 modules read"


def test_failing_module_in_a_dump_is_reported_and_skipped(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    broken = tmp_path / "dump"
    shutil.copytree(DUMP, broken)
    (broken / "module_0007.jit_g.cpu_after_optimizations.txt").write_text("HloModule jit_g\nENTRY {")
    assert main(["maps", str(broken)]) == 2
    out, err = capsys.readouterr()
    assert "### module_0006 jit_f" in out and "module_0007.jit_g" in err and "ParseError" in err


def test_padding_totals_by_memory_space(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["padding", str(TPU / "transformer_block.v5e.opt.hlo"), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)["modules"][0]
    spaces = {s["memory_space"]: s for s in data["memory_spaces"]}
    assert set(spaces) >= {0, 1}
    assert sum(s["allocated_bytes"] for s in spaces.values()) == data["allocated_bytes"]
    vmem = sum(b["allocated_bytes"] for b in data["buffers"] if "S(1)" in b["shape"])
    assert spaces[1]["allocated_bytes"] == vmem


def test_jobs_give_the_same_output(capsys: pytest.CaptureFixture[str]) -> None:
    outputs = []
    for jobs in ("1", "2", "0"):
        assert main(["maps", str(DUMP), "--stage", "all", "--shapes", "--jobs", jobs]) == 0
        outputs.append(capsys.readouterr().out)
        assert main(["padding", str(DUMP), "--stage", "all", "--tpu", "--json", "--jobs", jobs]) == 0
        outputs.append(capsys.readouterr().out)
    assert outputs[0::2] == [outputs[0]] * 3 and outputs[1::2] == [outputs[1]] * 3
    assert outputs[0].count("### module_") == 4
    assert main(["maps", str(DUMP), "--jobs", "-1"]) == 2
    assert "--jobs" in capsys.readouterr().err
