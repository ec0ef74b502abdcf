"""``tensorlayout memory`` and :mod:`tensorlayout.jax.memory` against the compiler's own
numbers: the buffer assignment XLA dumped for a JAX block, split into parameters, outputs
and temporaries, equals ``compiled.memory_analysis()`` (CPU: all three; TPU v5e compiled
deviceless: parameters, outputs, and the live peak equals ``peak_memory_in_bytes``); the TPU
sizes estimated from the CPU dump (``--tpu``) equal the TPU compile's argument and output
bytes."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tensorlayout.cli import main
from tensorlayout.cli.memory import reports
from tensorlayout.errors import ParseError
from tensorlayout.jax.memory import MemoryReport, parse_buffer_assignment, parse_live_ranges

SCRIPT = Path(__file__).parent / "memory_programs.py"
HAVE_LIBTPU = importlib.util.find_spec("libtpu") is not None


def _compile(out: Path, target: str) -> dict[str, int]:
    pytest.importorskip("jax")
    run = subprocess.run([sys.executable, str(SCRIPT), str(out), target], capture_output=True, text=True,
                         env={**os.environ, "JAX_PLATFORMS": "cpu"}, timeout=180, check=True)
    stats: dict[str, int] = json.loads(run.stdout.strip().splitlines()[-1])
    return stats


@pytest.fixture(scope="module")
def cpu_dump(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, int]]:
    out = tmp_path_factory.mktemp("cpu_dump")
    return out, _compile(out, "cpu")


@pytest.fixture(scope="module")
def tpu_dump(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, int]]:
    if not HAVE_LIBTPU:
        pytest.skip("needs libtpu (the tpu extra) for a deviceless TPU compile")
    out = tmp_path_factory.mktemp("tpu_dump")
    return out, _compile(out, "tpu")


def _matching_memory_analysis(dump: tuple[Path, dict[str, int]]) -> tuple[MemoryReport, dict[str, int]]:
    """The dump's report (not estimated for TPU), its parameter and output bytes checked against the
    compiler's memory analysis ``stats``; returns it with its kinds' bytes."""
    out, stats = dump
    [(_, report)] = reports(str(out), "jit_block", False, "v5e")
    kinds = report.by_kind()
    assert kinds["parameter"] == stats["argument_size_in_bytes"]
    assert kinds["output"] == stats["output_size_in_bytes"]
    return report, kinds


def test_cpu_buffer_assignment_is_memory_analysis(cpu_dump: tuple[Path, dict[str, int]]) -> None:
    report, kinds = _matching_memory_analysis(cpu_dump)
    assert kinds["temporary"] == cpu_dump[1]["temp_size_in_bytes"]
    assert not report.tiled
    sources = [report.sources[v.instruction] for a in report.allocations for v in a.values]
    assert any(s.source.endswith("(block)") and "memory_programs.py:" in s.source for s in sources)
    assert report.live_peak is not None and max(a.size for a in report.allocations) <= report.live_peak


@pytest.mark.skipif(not HAVE_LIBTPU, reason="needs libtpu (the tpu extra)")
def test_tpu_estimate_from_the_cpu_dump_is_the_tpu_compile(cpu_dump: tuple[Path, dict[str, int]],
                                                             tpu_dump: tuple[Path, dict[str, int]]) -> None:
    [(_, cpu)] = reports(str(cpu_dump[0]), "jit_block", True, "v5e")
    tpu_stats = tpu_dump[1]
    by_kind = {kind: sum(cpu.tpu_allocations[a.index] for a in cpu.allocations if a.kind == kind)
               for kind in ("parameter", "output")}
    assert by_kind["parameter"] == tpu_stats["argument_size_in_bytes"]
    assert by_kind["output"] == tpu_stats["output_size_in_bytes"]


def test_tpu_dump_against_memory_analysis(tpu_dump: tuple[Path, dict[str, int]]) -> None:
    report, _kinds = _matching_memory_analysis(tpu_dump)
    assert report.tiled and set(report.by_memory_space()) >= {0, 1}  # HBM and VMEM
    assert report.live_peak == tpu_dump[1]["peak_memory_in_bytes"]


def test_cli_text_json_and_errors(cpu_dump: tuple[Path, dict[str, int]],
                                  capsys: pytest.CaptureFixture[str]) -> None:
    out, stats = cpu_dump
    assert main(["memory", str(out), "--module", "jit_block"]) == 0
    text = capsys.readouterr().out
    assert "note: no tiled layouts here" in text and "MiB" in text and "temporaries" in text
    assert main(["memory", str(out), "--module", "jit_block", "--tpu", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["modules"][0]["by_kind"]["parameter"] == stats["argument_size_in_bytes"]
    assert main(["memory", str(out) + "_typo"]) == 2
    assert "No such directory" in capsys.readouterr().err
    assert main(["memory", str(out), "--module", "no_such_module"]) == 2


def test_parsers_by_hand() -> None:
    text = ("BufferAssignment:\nallocation 5: size 256000, color 1, preallocated-temp:\n"
            " value: <45 copy-start{0} @1> (size=256000,offset=0): bf16[1000,125]{1,0:T(8,128)(2,1)S(1)}\n"
            "\nTotal bytes used: 1\n")
    [a] = parse_buffer_assignment(text)
    assert (a.kind, a.memory_space, a.values[0].instruction, a.values[0].index) == \
        ("temporary", 1, "copy-start", "{0}")
    assert parse_live_ranges("  BufferLiveRange:\n    copy-start{0}:3-9\n") == {"copy-start{0}": (3, 9)}
    with pytest.raises(ParseError, match="value line"):
        parse_buffer_assignment("allocation 0: size 4, thread-local:\n value: garbage\n")
    with pytest.raises(ParseError, match="buffer assignment"):
        parse_buffer_assignment("HloModule m")
