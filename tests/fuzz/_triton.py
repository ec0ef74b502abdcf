"""The Triton text entry point: encodings as Triton prints them in its IR (random attributes from
the differential tests' generators, in a tensor type or after an alias line) and printed
``LinearLayout``s, mutated; what parses must print and re-parse to an equal layout."""

from __future__ import annotations

import random
from functools import cache
from typing import Any

from tensorlayout.triton import LinearLayout, element_layout, parse_layout
from tensorlayout.triton._mlir import is_triton_text
from tests.fuzz import _corpus, _gen
from tests.fuzz._common import ok_or_library, parse_or_none, roundtrip
from tests.triton import _random

#: Python field name -> the attribute name Triton prints (per encoding kind below)
_ATTRS = {
    "BlockedLayout": ("blocked", {"size_per_thread": "sizePerThread", "threads_per_warp": "threadsPerWarp",
                                  "warps_per_cta": "warpsPerCTA", "order": "order"}),
    "NVMMADistributedLayout": ("nvidia_mma", {"warps_per_cta": "warpsPerCTA", "instr_shape": "instrShape"}),
    "DotOperandLayout": ("dot_op", {"operand_index": "opIdx", "k_width": "kWidth"}),
    "SwizzledSharedLayout": ("swizzled_shared", {"vec": "vec", "per_phase": "perPhase",
                                                 "max_phase": "maxPhase", "order": "order"}),
    "NVMMASharedLayout": ("nvmma_shared", {"swizzle_byte_width": "swizzlingByteWidth",
                                           "transposed": "transposed", "element_bitwidth": "elementBitWidth",
                                           "fp4_padded": "fp4Padded", "rank": "rank"}),
}


def _value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, list):
        return "[" + ", ".join(_value(x) for x in v) + "]"
    return str(v)


def encoding_text(layout: dict[str, Any]) -> str:
    """``#ttg.blocked<{sizePerThread = [1, 4], ...}>`` for one generator dict."""
    kind, names = _ATTRS[layout["kind"]]
    fields = [f"{names[k]} = {_value(v)}" for k, v in layout.items() if k in names]
    if layout["kind"] == "NVMMADistributedLayout":
        fields[:0] = [f"versionMajor = {layout['version'][0]}", f"versionMinor = {layout['version'][1]}"]
    if layout["kind"] == "DotOperandLayout":
        fields.insert(1, f"parent = {encoding_text(layout['parent'])}")
    if layout.get("cga_layout"):
        fields.append(f"CGALayout = {_value(layout['cga_layout'])}")
    return f"#ttg.{kind}<{{{', '.join(fields)}}}>"


def triton_text(rng: random.Random) -> str:
    """An encoding in a tensor type (sometimes behind an alias line), or a printed layout."""
    layout, shape = rng.choice(list(_random.FAMILIES.values()))(rng)
    enc = encoding_text(layout)
    roll = rng.random()
    if roll < 0.15:
        return enc
    if roll < 0.3:
        return f"#a = {enc}\ntensor<{'x'.join(map(str, shape))}xf16, #a>"
    if roll < 0.45:
        ll = ok_or_library(parse_layout, f"tensor<{'x'.join(map(str, shape))}xf16, {enc}>")
        if ll is not None:
            return str(ll)
    return f"tensor<{'x'.join(map(str, shape))}xf16, {enc}>"


@cache
def seeds() -> tuple[str, ...]:
    """The printed Triton layouts in tests/data, and a fixed sample of the grammar's texts."""
    found = [s for s in _corpus.all_strings() if is_triton_text(s)]
    rng = random.Random(0)
    return tuple(found + [triton_text(rng) for _ in range(200)])


def make_triton(rng: random.Random) -> str:
    return _gen.from_seeds(rng, seeds(), triton_text)


def check_triton(text: str) -> None:
    """Parsed text prints as a layout that re-parses equal; its element layout is an answer or
    a typed refusal."""
    ll = parse_or_none(parse_layout, text)
    if ll is None:
        return
    roundtrip(LinearLayout.parse, ll, "triton")
    ok_or_library(element_layout, ll)
