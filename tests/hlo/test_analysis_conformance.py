"""Every public HLO indexing vector of tests/data/indexing_cases.json (spec §9), plus the
upstream XLA tests replayed in tests/data/hlo_indexing_extra_cases.json.

Kinds: op_output_to_input, op_input_to_output, fusion, fusion_grouped, epilogue,
group_by_producers. Text is compared with all whitespace removed (XLA's ApproximateMatch);
sets of maps are compared as multisets. Extra cases from an older XLA era say
``"match": "semantic"``: each map is then checked point by point with ``verify_equivalent``.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest

from tensorlayout.hlo import (
    FusionAdaptor,
    epilogue_input_to_output_indexing,
    group_indexing_maps_by_producers,
    grouped_output_to_input_indexing,
    input_to_output_indexing,
    output_to_input_indexing,
    parse_module,
)
from tensorlayout.hlo.model import HloInstruction, HloModule
from tensorlayout.indexing import IndexingMap, verify_equivalent

DATA = Path(__file__).resolve().parents[1] / "data"
KINDS = ("op_output_to_input", "op_input_to_output", "fusion", "fusion_grouped", "epilogue",
         "group_by_producers")
CASES = [c for name in ("indexing_cases.json", "hlo_indexing_extra_cases.json")
         for c in json.loads((DATA / name).read_text()) if c["kind"] in KINDS]

#: Vectors we know we do not match, with the reason (strict xfail).
XFAIL: dict[str, str] = {}


def norm(text: str) -> str:
    return re.sub(r"\s+", "", text)


def _param(case: dict) -> object:
    marks = []
    if case["id"] in XFAIL:
        marks.append(pytest.mark.xfail(strict=True, reason=XFAIL[case["id"]]))
    prefix = "extra/" if case["id"].startswith("extra/") else ""
    return pytest.param(case, id=prefix + case["id"].split("/", 1)[1], marks=marks)


def _compare_set(got: list[str], expected: dict) -> None:
    want = [norm(e) for e in expected["elements"]]
    assert Counter(norm(g) for g in got) == Counter(want), (got, expected["elements"])


def _find(module: HloModule, name: str) -> HloInstruction:
    return module.find_instruction(name)


def test_vector_count() -> None:
    counts = Counter(c["kind"] for c in CASES)
    assert counts["op_output_to_input"] >= 30 and counts["fusion"] >= 10
    extra = [c for c in CASES if c["id"].startswith("extra/")]
    assert len(extra) >= 40 and all(c["source"].startswith("github:") for c in extra)


def _same_text(got: str, want: str, semantic: bool) -> None:
    """Whitespace-free text equality, or (older XLA era) point-by-point map equality."""
    if not semantic:
        assert norm(got) == norm(want)
        return
    pattern = re.compile(r"operand id = \d+ ")
    got_maps, want_maps = pattern.split(got)[1:], pattern.split(want)[1:]
    assert len(got_maps) == len(want_maps), (got, want)
    for g, w in zip(got_maps, want_maps):
        result = verify_equivalent(IndexingMap.parse(g.strip()), IndexingMap.parse(w.strip()))
        assert result.equivalent, (g, w, result)


@pytest.mark.parametrize("case", [_param(c) for c in CASES if c["kind"] in KINDS[:3]])
def test_op_and_fusion_vectors(case: dict) -> None:
    module = parse_module(case["hlo"])
    root = module.entry.root
    physical = bool(case.get("use_physical_layout"))
    if "expected_filecheck_lines" in case:
        _check_filecheck(root, case["expected_filecheck_lines"])
        return
    if case["kind"] == "op_input_to_output":
        result = input_to_output_indexing(root, case["input_id"], physical=physical)
    else:
        result = output_to_input_indexing(root, case.get("output_id", 0), physical=physical)
    if case.get("post_simplify"):
        result = result.simplify()
    if "expected" in case:
        _same_text(str(result), case["expected"], case.get("match") == "semantic")
    elif "expected_indexing_maps" in case:
        outer = case["expected_indexing_maps"]["elements"]
        assert len(result) == len(outer)
        for k, inner in enumerate(outer):
            _compare_set([str(oi) for oi in result[k]], inner)
    else:
        assert len(result) == case["expected_num_results"]
        first = next(iter(result[0]))
        assert first.map.num_results == case["expected_num_results"]


def _check_filecheck(root: HloInstruction, lines: list[str]) -> None:
    """print_indexing's format: ``Output <o> operand <i>:`` then one map per line."""
    out = []
    count = len(root.shape.tuple_shapes) if root.shape.is_tuple else 1
    for o in range(count):
        result = output_to_input_indexing(root, o)
        for k in range(len(result)):
            if len(result[k]):
                out.append(f"Output {o} operand {k}:")
                out.extend(str(oi) for oi in result[k])
    pos = 0
    for line in lines:
        while pos < len(out) and norm(out[pos]) != norm(line):
            pos += 1
        assert pos < len(out), f"{line!r} not found in order in {out}"
        pos += 1


_ADAPTOR = re.compile(r"ForProducerConsumer\(producer=([^,]+), consumer=([^)]+)\)|ForInstruction\(([^)]+)\)")


def _grouped_target(module: HloModule, case: dict) -> tuple[FusionAdaptor, HloInstruction]:
    m = _ADAPTOR.search(case["fusion_adaptor"])
    assert m, case["fusion_adaptor"]
    if m.group(3):
        adaptor = FusionAdaptor.for_instruction(_find(module, m.group(3)))
    else:
        adaptor = FusionAdaptor.for_producer_consumer(_find(module, m.group(1).strip()),
                                                      _find(module, m.group(2).strip()))
    target_text = case["target"]
    if target_text.startswith("fusion root"):
        return adaptor, adaptor.roots[0]
    name = target_text.split()[0]  # e.g. "p0_bcast (operand 0 of fusion root reduce_2)"
    candidates = [*adaptor.post_order, *(op for root in adaptor.roots for op in root.operands)]
    return adaptor, next(i for i in candidates if i.name == name)


def _key_name(text: str) -> str:
    return text.split()[1] if text.startswith("entry ") else text


@pytest.mark.parametrize("case", [_param(c) for c in CASES if c["kind"] in KINDS[3:]])
def test_grouped_vectors(case: dict) -> None:
    module = parse_module(case["hlo"])
    if case["kind"] == "group_by_producers":
        root = module.entry.root
        groups = group_indexing_maps_by_producers(output_to_input_indexing(root), root)
    elif case["kind"] == "epilogue":
        parent = _find(module, case["parent"])
        root = _find(module, case["root"])
        got = epilogue_input_to_output_indexing(parent, root)
        assert norm(str(got)) == norm(case["expected"])
        return
    else:
        adaptor, target = _grouped_target(module, case)
        groups = grouped_output_to_input_indexing(adaptor, target)
    by_name = {instr.name: [str(oi) for oi in maps] for instr, maps in groups.items()}
    if case.get("exact_keys"):
        assert sorted(by_name) == sorted(_key_name(e["instruction"]) for e in case["expected_grouped"])
    for entry in case["expected_grouped"]:
        name = _key_name(entry["instruction"])
        assert name in by_name, (name, list(by_name))
        _compare_set(by_name[name], entry["maps"])
