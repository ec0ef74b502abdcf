"""Fuzzing the XLA shape and layout parsers and the size helpers: only library errors escape,
and whatever parses prints back to text that parses to an equal value.

The default run is short (hypothesis over seeds of the grammar-built generator, plus raw text);
``pytest -m thorough`` runs 100,000 seeded inputs per entry point.
"""

from __future__ import annotations

import contextlib
import random

import pytest
from hypothesis import given, seed, settings
from hypothesis import strategies as st

from tensorlayout.errors import TensorLayoutError
from tensorlayout.xla import (
    Shape,
    array_size,
    byte_size,
    byte_strides,
    padding_overhead,
    parse_layout,
    parse_shape,
    validate_layout,
)
from tensorlayout.xla.advice import layout_warnings
from tensorlayout.xla.sizes import max_elements_in_per_split, unpacked_byte_strides
from tensorlayout.xla.validate import problems

from .xla_text import ALPHABET, fuzz_text, layout_text, mutate

SEED = 20261123
THOROUGH_INPUTS = 100_000
HELPERS = (problems, layout_warnings, validate_layout, byte_size, array_size, padding_overhead,
           byte_strides, unpacked_byte_strides, max_elements_in_per_split)


def check_shape_text(text: str) -> Shape | None:
    """Parse; on success the text form round-trips and every helper answers or raises ours."""
    try:
        shape = parse_shape(text)
    except TensorLayoutError:
        return None
    again = parse_shape(str(shape))
    assert again == shape and str(again) == str(shape), text
    assert repr(shape) == f"Shape({str(shape)!r})"
    for helper in HELPERS:
        with contextlib.suppress(TensorLayoutError):
            helper(shape)
    return shape


def check_layout_text(text: str) -> None:
    try:
        layout = parse_layout(text)
    except TensorLayoutError:
        return
    again = parse_layout(str(layout))
    assert again == layout and str(again) == str(layout), text


def layout_fuzz_text(n: int) -> str:
    rng = random.Random(n)
    text = layout_text(rng, rng.choice([0, 1, 2, 3]))
    return mutate(rng, text) if rng.random() < 0.5 else text


@seed(SEED)
@settings(max_examples=300, deadline=None)
@given(st.integers(0, 2**32))
def test_shape_parser_fuzz(n: int) -> None:
    check_shape_text(fuzz_text(n))


@seed(SEED)
@settings(max_examples=300, deadline=None)
@given(st.integers(0, 2**32))
def test_layout_parser_fuzz(n: int) -> None:
    check_layout_text(layout_fuzz_text(n))


@seed(SEED)
@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=ALPHABET, max_size=40))
def test_raw_text_fuzz(text: str) -> None:
    check_shape_text(text)
    check_layout_text(text)


@pytest.mark.thorough
@pytest.mark.parametrize("entry", ["parse_shape", "parse_layout"])
def test_thorough_fuzz(entry: str) -> None:
    parse_shape.cache_clear()  # type: ignore[attr-defined]
    check = (lambda n: check_shape_text(fuzz_text(n))) if entry == "parse_shape" else \
        (lambda n: check_layout_text(layout_fuzz_text(n)))
    for n in range(SEED, SEED + THOROUGH_INPUTS):
        check(n)
