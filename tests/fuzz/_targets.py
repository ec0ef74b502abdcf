"""The fuzzed entry points: how to build one input and how to check it.

``check(input)`` returns normally when the input was handled (parsed and used, or refused
with a :class:`~tensorlayout.errors.TensorLayoutError`), raises :class:`RoundTripError` when
what parsed does not print and re-parse to an equal object (or a checked property fails),
and lets every other exception escape: that is the bug the suite looks for. Inputs are plain
values (text, tuples of text and ints, argv lists) so that ``repr(input)`` reproduces them.
"""

from __future__ import annotations

import contextlib
import random
from collections.abc import Callable
from typing import Any

import numpy as np

from tensorlayout import cute, hlo, xla
from tensorlayout.errors import TensorLayoutError
from tensorlayout.indexing import IndexingMap
from tests.fuzz import _bridges, _cli, _corpus, _exact, _gen, _gpu, _triton
from tests.fuzz._common import RoundTripError, Target, ok_or_library, parse_or_none, roundtrip


# ------------------------------------------------------------------------ parsers
def _parser_check(parse: Callable[[str], Any], what: str) -> Callable[[str], None]:
    def check(text: str) -> None:
        value = parse_or_none(parse, text)
        if value is not None:
            roundtrip(parse, value, what)
    return check


def _seeded(kind: str, grammar: Callable[[random.Random], str]) -> Callable[[random.Random], str]:
    return lambda rng: _gen.from_seeds(rng, _corpus.seeds(kind), grammar)


# ------------------------------------------------------------------------ HLO
def make_hlo(rng: random.Random) -> str:
    texts = _corpus.hlo_texts()
    roll = rng.random()
    if roll < 0.05:
        return rng.choice(texts)
    if roll < 0.75:
        return _gen.hlo_mutate(rng, rng.choice(texts))
    if roll < 0.9:
        return _gen.hlo_text(rng)
    return _gen.mutate(rng, rng.choice(texts)[:400])


def check_hlo(text: str) -> None:
    module = parse_or_none(hlo.parse_module, text)
    if module is None:
        return
    for comp in module.computations:
        for instr in comp.instructions[:200]:
            roundtrip(xla.parse_shape, instr.shape, f"shape of {instr.name}")
            for physical in (False, True):
                try:
                    indexing = hlo.output_to_input_indexing(instr, physical=physical)
                except TensorLayoutError:
                    continue
                for maps in indexing.indexing_maps:
                    for operand in maps:
                        if not operand.is_undefined:
                            roundtrip(IndexingMap.parse, operand.map, f"map of {instr.name}")


# ------------------------------------------------------------------------ xla helpers
SMALL = 4096  # enumerate layouts up to this many elements
HUGE = 2**36  # past this many elements an enumeration must be refused with a typed error


def _check_offsets(shape: xla.Shape, rng: random.Random) -> None:
    dims = shape.dimensions
    n = int(np.prod(dims, dtype=object))
    if n <= SMALL:
        table = xla.linear_indices(shape)
        if len(set(table.ravel().tolist())) != n:
            raise RoundTripError(f"linear_indices of {shape} repeats an offset")
    for _ in range(8 if all(d > 0 for d in dims) else 0):  # `?` dims are stored negative
        idx = tuple(rng.randrange(d) for d in dims)
        off = xla.linear_index(shape, idx)
        flat = int(np.ravel_multi_index(idx, dims)) if dims else 0
        if n <= SMALL and off != int(table[flat]):
            raise RoundTripError(f"linear_index{idx} = {off} but linear_indices says {table[flat]}")
        back = xla.multi_index(shape, off)
        if back != idx:
            raise RoundTripError(f"{shape}: multi_index(linear_index({idx}) = {off}) = {back}")
    if n > HUGE:
        xla.linear_indices(shape)  # must raise a TensorLayoutError, not allocate
    for off in (-1, 0, rng.randrange(1 << 20), 2**63, 2**64):
        ok_or_library(xla.multi_index, shape, off)


def check_helpers(text: str) -> None:
    shape = parse_or_none(xla.parse_shape, text)
    if shape is None:
        return
    for fn in (xla.byte_size, xla.array_size, xla.tiled_shape, xla.byte_strides, xla.padding_overhead):
        ok_or_library(fn, shape)
    if not shape.is_array:
        return
    try:
        xla.validate_layout(shape)
    except TensorLayoutError:
        return
    rng = random.Random(text)
    with contextlib.suppress(TensorLayoutError):
        _check_offsets(shape, rng)


# ------------------------------------------------------------------------ CuTe algebra
def make_pair(rng: random.Random) -> tuple[str, str]:
    def one() -> str:
        return _gen.from_seeds(rng, _corpus.seeds("cute"), _gen.cute_text)
    return one(), one()


def _eval_small(layout: cute.Layout) -> list[int] | None:
    size = cute.size(layout)
    return [layout(i) for i in range(size)] if isinstance(size, int) and size <= 1024 else None


def _non_negative(layout: cute.Layout) -> bool:
    stride = cute.flatten(layout).stride
    return all(s >= 0 for s in (stride if isinstance(stride, tuple) else (stride,)))


def _algebra_props(a: cute.Layout, b: cute.Layout, results: dict[str, Any]) -> None:
    """A(B(i)), coalesce keeps the function, and the inverses (non-negative strides only:
    with negative strides the inverses' contracts are left to the differential tests)."""
    av, bv = _eval_small(a), _eval_small(b)
    comp = results.get("composition")
    if comp is not None and av is not None and bv is not None and all(0 <= x < len(av) for x in bv):
        cv = _eval_small(comp)
        if cv is not None and cv[: len(bv)] != [av[x] for x in bv]:
            raise RoundTripError(f"composition({a}, {b}) = {comp} is not A(B(i))")
    co = results.get("coalesce")
    if co is not None and av is not None and _eval_small(co) != av:
        raise RoundTripError(f"coalesce({a}) = {co} changes the function")
    ri = results.get("right_inverse")
    if ri is not None and av is not None and _non_negative(a):
        rv = _eval_small(ri) or []
        if any(not 0 <= r < len(av) or av[r] != i for i, r in enumerate(rv)):
            raise RoundTripError(f"right_inverse({a}) = {ri}: A(R(i)) != i")
    li = results.get("left_inverse")
    if (li is not None and av is not None and _non_negative(a) and len(set(av)) == len(av)
            and any(li(x) != i for i, x in enumerate(av))):
        raise RoundTripError(f"left_inverse({a}) = {li}: R(A(i)) != i for injective A")


ALGEBRA: dict[str, Callable[[cute.Layout, cute.Layout], Any]] = {
    "composition": cute.composition,
    "complement": lambda a, b: cute.complement(a),
    "complement_cotarget": lambda a, b: cute.complement(a, cute.size(b) * 64),
    "left_inverse": lambda a, b: cute.left_inverse(a),
    "right_inverse": lambda a, b: cute.right_inverse(a),
    "logical_divide": cute.logical_divide,
    "zipped_divide": cute.zipped_divide,
    "logical_product": cute.logical_product,
    "blocked_product": cute.blocked_product,
    "raked_product": cute.raked_product,
    "coalesce": lambda a, b: cute.coalesce(a),
    "filter": lambda a, b: cute.filter(a),
}


def check_algebra(pair: tuple[str, str]) -> None:
    a, b = (parse_or_none(cute.Layout.parse, t) for t in pair)
    if a is None or b is None:
        return
    results = {}
    for name, op in ALGEBRA.items():
        out = ok_or_library(op, a, b)
        if isinstance(out, cute.Layout):
            roundtrip(cute.Layout.parse, out, f"{name}({a}, {b})")
            results[name] = out
    _algebra_props(a, b, results)


def make_helper_input(rng: random.Random) -> str:
    return _gen.from_seeds(rng, _corpus.seeds("shape"), _gen.shape_text)


TARGETS: dict[str, Target] = {t.name: t for t in (
    Target("xla.parse_shape", _seeded("shape", _gen.shape_text), _parser_check(xla.parse_shape, "shape")),
    Target("xla.parse_layout", _seeded("layout", _gen.layout_text),
           _parser_check(xla.parse_layout, "layout")),
    Target("cute.Layout.parse", _seeded("cute", _gen.cute_text), _parser_check(cute.Layout.parse, "cute")),
    Target("indexing.IndexingMap.parse", _seeded("map", _gen.map_text),
           _parser_check(IndexingMap.parse, "map")),
    Target("hlo.parse_module+analysis", make_hlo, check_hlo, weight=20.0),
    Target("xla.helpers", make_helper_input, check_helpers, weight=3.0),
    Target("cute.algebra", make_pair, check_algebra, weight=5.0),
    Target("convert", _bridges.make_target, _bridges.check_convert, weight=3.0),
    Target("convert.tla_to_xla", _bridges.make_tla, _bridges.check_tla),
    Target("relayout", _bridges.make_target, _bridges.check_relayout, weight=3.0),
    Target("render.to_svg", _bridges.make_target, _bridges.check_render, weight=5.0),
    Target("render.tla", _bridges.make_tla, _bridges.check_render_tla, weight=5.0),
    Target("triton.parse_layout", _triton.make_triton, _triton.check_triton, weight=3.0),
    Target("gpu", _gpu.make_gpu, _gpu.check_gpu, weight=10.0),
    Target("cli", _cli.cli_input, _cli.cli_check, weight=10.0),
    Target("cute.composed+offsets", _exact.composed_text, _exact.check_composed, weight=2.0),
    Target("cute.offsets", _exact.cute_offsets_text, _exact.check_cute_offsets),
    Target("relayout.brute_force", _exact.make_relayout, _exact.check_relayout, weight=3.0),
    Target("xla.tpu.default_layout", _exact.make_tpu, _exact.check_tpu),
    Target("render.formats", _exact.make_picture, _exact.check_picture, weight=5.0),
    Target("indexing.verify_equivalent", _exact.make_map, _exact.check_verify, weight=5.0),
)}
