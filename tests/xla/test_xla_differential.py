"""tensorlayout's shape parser and validator against XLA's own (jaxlib), on random shape text.

Each text goes through XLA as an HLO parameter shape; XLA parses the top-level array without
validating its layout and validates every tuple element, exactly as ``parse_shape`` does, so
the two must agree on every input: both reject, or both accept and print the same text. Where
XLA aborts (a negative tile size, ``L(0)``), tensorlayout must reject. Skipped without jaxlib.

Known, deliberate differences (not counted): nesting deeper than ``MAX_DEPTH`` (tensorlayout
refuses it, XLA recurses on); a ``#(..)``/``*(..)`` type that is not unsigned, which XLA's
parser records as an error and then ignores (``f32[2]{0:#(s32)}`` parses; tensorlayout refuses
it, as the spec asks, test ``test_signed_index_type_is_refused``); a tile without its ``)``,
and a missing parenthesis in any annotation, which XLA's parser also records and ignores
(``T(4}`` reads as ``T(4)``, ``S(28}`` as ``S(28)``, a bare ``M`` is dropped; tensorlayout
refuses them, test ``test_unclosed_annotation_is_refused``); and texts with ``/`` or a
newline, whose comments would swallow the rest of the HLO line around the shape.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tensorlayout.errors import ParseError, TensorLayoutError
from tensorlayout.xla import parse_shape

from ..robustness.xla_text import fuzz_text
from .xla_oracle import XlaOracle, running_oracle

SEED = 15_000_000
DEFAULT_INPUTS = 300
THOROUGH_INPUTS = 22_000  # issue 15's size

# (text, what XLA does) -- the issue 15 and 17 reproducers; each is also asked of jaxlib.
CASES = [
    ("f32[4,4]{1,0:SC(0:3)}", "f32[4,4]{1,0:SC(0:3)}"),
    ("(f32[4,4]{1,0:SC(0:3)})", "(f32[4,4]{1,0:SC(0:3)})"),
    ("(f32[4,8]{0,1:SC(0:5)})", "(f32[4,8]{0,1:SC(0:5)})"),
    ("(f32[4,8]{1,0:SC(0:5)})", None),
    ("(f32[4,4]{1,0:SC(5:1)})", None),
    ("(f32[4,4]{1,0:SC(-1:1)})", None),
    ("(f32[4,4]{1,0:SC(0:0)})", None),
    ("(f32[4,4]{1,0:SC(0:4)})", None),
    ("(f32[4,4]{1,0:SC(0:2,1)})", None),
    ("(f32[4,4]{1,0:SC(0:2,2)})", None),
    ("(f32[4,4]{1,0:SC(0:1)(0:2)})", None),
    ("(f32[4,4]{1,0:SC(1:1)(0:2)})", "(f32[4,4]{1,0:SC(1:1)(0:2)})"),
    ("(f32[4]{0:SC(0:)})", "(f32[4]{0:SC(0:)})"),
    ("(s8[]{:E(4)})", "(s8[]{:E(4)})"),
    ("(f32[2]{0:E(3)})", "(f32[2]{0:E(3)})"),
    ("(c64[9223372036854775807,0,1000,1])", "(c64[9223372036854775807,0,1000,1]{3,2,1,0})"),
    ("(c64[9223372036854775807,2,0])", None),
    ("(f32[?,4611686018427387904])", None),
    ("(s8[?,9223372036854775807])", "(s8[?,9223372036854775807]{1,0})"),
    ("(s8[3074457345618258603,3])", None),
    ("(s8[3074457345618258602,3])", "(s8[3074457345618258602,3]{1,0})"),
    ("c64[18446744073709551616,2,7]", None),
    ("(f32[4]{0:T(4)(2,2,2)})", "(f32[4]{0:T(4)(2,2,2)})"),
    ("(f32[4]{0:T(0)})", None),
    ("(f32[4]{0:T()})", None),
    ("f32[4]{0:T(-1)}", "crash"),
    ("f32[4]{0:L(0)}", "crash"),
    ("f32[\u00b2]", None),
    ("f16[-9223322332036854775808]", None),
    ("f32\t[5,64,3]", "f32[5,64,3]{2,1,0}"),
    ("s16 []", "s16[]"),
    ("b(f32[2]{5})", "b(f32[2]{5})"),
    ("(b(f32[2]{5}))", None),
    ("b(f32[2]{0:T()})", "b(f32[2]{0:T()})"),
    ("(b(f32[4,4]{1,0:SC(0:5)}))", None),
    ("f32[<=9223372036854775808]", "f32[?]{0}"),
    ("(f32[<=-9223372036854775808])", "(f32[?]{0})"),
    ("f32[-9223372036854775808]", None),
    ("f32[9223372036854775808]", None),
    ("f32[2]{0:T(-9223372036854775808)}", "f32[2]{0:T(*)}"),
    ("(f32[2]{0:T(9223372036854775808)})", "(f32[2]{0:T(*)})"),
    ("f32[2,\u00a03]", None),
    ("f32[" + "9" * 4301 + "]", None),
]


# What tensorlayout refuses on purpose where XLA reads on (the ParseError's "expected" text).
KNOWN_DIFFERENCES = ("nested at most", "unsigned integer type", "')' to end the tile",
                     "after the annotation name", "to end the annotation", "inside the annotation")


@pytest.fixture(scope="module")
def oracle() -> Iterator[XlaOracle]:
    yield from running_oracle()


def ours(text: str) -> str | None:
    """tensorlayout's printed shape, or None if it rejects the text."""
    try:
        return str(parse_shape(text))
    except TensorLayoutError:
        return None


def disagreement(text: str, xla: str | None) -> str | None:
    """Why tensorlayout and XLA's answer ``xla`` disagree on ``text`` (None if they agree)."""
    mine = ours(text)
    if xla == "crash":
        return None if mine is None else f"XLA aborts, tensorlayout accepts as {mine}"
    if mine != xla:
        return f"XLA: {xla!r}, tensorlayout: {mine!r}"
    return None


def comparable(text: str) -> bool:
    if "/" in text or "\n" in text:
        return False
    try:
        parse_shape(text)
    except ParseError as err:
        return not any(known in err.expected for known in KNOWN_DIFFERENCES)
    except TensorLayoutError:
        pass
    return True


@pytest.mark.parametrize(("text", "xla"), CASES, ids=[c[0][:40] for c in CASES])
def test_reproducers_as_xla_does(text: str, xla: str | None) -> None:
    assert disagreement(text, xla) is None


@pytest.mark.parametrize(("text", "xla"), CASES, ids=[c[0][:40] for c in CASES])
def test_reproducers_agree_with_jaxlib(oracle: XlaOracle, text: str, xla: str | None) -> None:
    assert oracle(text) == xla


def test_signed_index_type_is_refused(oracle: XlaOracle) -> None:
    assert oracle("f32[2]{0:#(s32)}") == "f32[2]{0:#(s32)}"  # XLA: error recorded, then ignored
    with pytest.raises(ParseError, match="unsigned integer type"):
        parse_shape("f32[2]{0:#(s32)}")


@pytest.mark.parametrize(("text", "xla"), [("f32[2]{0:T(4}", "f32[2]{0:T(4)}"),
                                           ("f32[2]{0:S(28}", "f32[2]{0:S(28)}"),
                                           ("f32[2]{0:T(2)M}", "f32[2]{0:T(2)}")])
def test_unclosed_annotation_is_refused(oracle: XlaOracle, text: str, xla: str) -> None:
    assert oracle(text) == xla  # XLA: error recorded, then ignored
    with pytest.raises(ParseError, match=r"to end the|after the annotation"):
        parse_shape(text)


def differential_text(n: int) -> str:
    """Input ``n``: odd ones wrapped in a tuple, so that XLA validates the shape too."""
    text = fuzz_text(n)
    return f"({text})" if n % 2 else text


def _run(oracle: XlaOracle, count: int) -> None:
    found = []
    for n in range(SEED, SEED + count):
        text = differential_text(n)
        if comparable(text):
            why = disagreement(text, oracle(text))
            if why:
                found.append(f"{n}: {text!r}: {why}")
    assert not found, f"{len(found)} disagreements, first: " + "\n".join(found[:10])


def test_random_shapes_agree_with_jaxlib(oracle: XlaOracle) -> None:
    _run(oracle, DEFAULT_INPUTS)


@pytest.mark.thorough
def test_random_shapes_agree_with_jaxlib_thorough(oracle: XlaOracle) -> None:
    _run(oracle, THOROUGH_INPUTS)
