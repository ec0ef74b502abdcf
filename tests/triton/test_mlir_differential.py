"""Triton's own IR text, read back: random encodings of every family are built in Gluon, put in
a module as function argument types, and the module printed by Triton; each argument's type
(with the alias definitions Triton prints above the module) must read as the encoding it was
built from. Needs the ``triton`` wheel (CPU is enough)."""

from __future__ import annotations

import random
import re
import zlib
from typing import Any

import pytest

from tensorlayout.triton._mlir import parse_layout
from tests.triton import _random
from tests.triton._cases import build
from tests.triton._oracle import Result, run_isolated, to_gluon

ttgl = pytest.importorskip("triton.experimental.gluon.language")

DEFAULT, THOROUGH = 150, 1000
_ARG = re.compile(r"%arg0: ((?:tensor|!ttg\.memdesc)<.*?>) loc\(")


def _printed(case: tuple[dict[str, Any], list[int]]) -> Result:
    """The module Triton prints for a function taking a value of the case's type."""
    from triton._C.libtriton import gluon_ir, ir

    spec, shape = case
    ctx = ir.context()
    ir.load_dialects(ctx)
    b = gluon_ir.GluonOpBuilder(ctx)
    module = b.create_module()
    layout = to_gluon(spec)._to_ir(b)
    if "Shared" in spec["kind"]:
        bits = spec.get("element_bitwidth", 16)
        elem = {8: b.get_int8_ty, 16: b.get_half_ty, 32: b.get_float_ty}[bits]()
        ty = b.get_shared_mem_desc_ty(elem, list(shape), layout, list(shape))
    else:
        ty = b.get_distributed_ty(b.get_half_ty(), list(shape), layout)
    fn = b.get_or_insert_function(module, "f", b.get_function_ty([ty], []), "public", False)
    module.push_back(fn)
    fn.add_entry_block()
    return ("text", module.str(), None)


def _reader_input(module: str) -> str:
    """The alias definitions Triton printed, then the argument's type."""
    definitions = [line for line in module.splitlines() if re.match(r"#\w+ = ", line)]
    match = _ARG.search(module)
    assert match, module
    return "\n".join([*definitions, match.group(1)])


def _read_back(family: str, n: int, seed: int) -> None:
    rng = random.Random(seed)
    cases = [_random.FAMILIES[family](rng) for _ in range(n)]
    read = several_ctas = 0
    for (spec, shape), (kind, module, _) in zip(cases, run_isolated(_printed, cases)):
        if kind != "text":
            continue  # Triton itself refuses the encoding (checked in test_differential)
        try:
            expected = build(spec).to_linear_layout(shape)
        except Exception:
            continue  # an encoding we refuse too (test_differential checks that Triton does)
        text = _reader_input(module)
        assert parse_layout(text) == expected, (text, str(parse_layout(text)), str(expected))
        read += 1
        several_ctas += "CGALayout" in text
    assert read >= n * 3 // 4 and several_ctas, f"{read} of {n} read, {several_ctas} with CTAs"


@pytest.mark.parametrize("family", sorted(_random.FAMILIES))
def test_triton_printed_encodings_read_back(family: str) -> None:
    _read_back(family, DEFAULT, zlib.crc32(b"mlir" + family.encode()))


@pytest.mark.thorough
@pytest.mark.parametrize("family", sorted(_random.FAMILIES))
def test_triton_printed_encodings_read_back_thorough(family: str) -> None:
    _read_back(family, THOROUGH, 10_000 + zlib.crc32(b"mlir" + family.encode()))
