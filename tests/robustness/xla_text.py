"""Random XLA shape and layout text for the fuzz and differential tests (seeded, grammar-built).

``shape_text(rng)`` builds a shape from the grammar with extreme values mixed in (64-bit edges,
4,301-digit literals, deep nesting, every annotation, Unicode digits and spaces);
``mutate(rng, text)`` edits it a few characters at a time, so most texts are near-valid.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

DATA = Path(__file__).resolve().parents[1] / "data"

TYPES = ["pred", "s1", "s2", "s4", "s8", "s16", "s32", "s64", "u4", "u8", "u32", "u64", "f16", "bf16",
         "f32", "f64", "c64", "c128", "f8e4m3fn", "f4e2m1fn", "token", "opaque", "tuple", "f33", "F32"]
EDGE_INTS = ["0", "1", "2", "3", "4", "7", "8", "128", "255", "256", "1024", "2147483647", "4294967296",
             "9223372036854775807", "9223372036854775808", "18446744073709551615", "18446744073709551616",
             "-1", "-9223372036854775808", "00", "+1", "\u00b2", "\u0662", "9" * 4301]
ALPHABET = "0123456789,:;{}[]()<=?*#TLESPMDCH fsubtpredokn-\n\t/+~\u00a0\u00b2"


def _int(rng: random.Random) -> str:
    return rng.choice(EDGE_INTS) if rng.random() < 0.15 else str(rng.randint(0, 12))


def _dim(rng: random.Random) -> str:
    roll = rng.random()
    if roll < 0.05:
        return "?"
    if roll < 0.12:
        return "<=" + _int(rng)
    return _int(rng)


def _tile(rng: random.Random) -> str:
    dims = [("*" if rng.random() < 0.1 else _int(rng)) for _ in range(rng.randint(0, 3))]
    return "(" + ",".join(dims) + ")"


def _annotations(rng: random.Random, depth: int) -> str:
    parts = []
    if rng.random() < 0.05:
        parts.append("D(" + ",".join(rng.choice(["D", "C", "S", "H", "C+", "C~"]) for _ in range(2)) + ")")
    if rng.random() < 0.5:
        parts.append("T" + "".join(_tile(rng) for _ in range(rng.randint(1, 3))))
    for key, p in (("L", 0.1), ("E", 0.2), ("S", 0.15)):
        if rng.random() < p:
            parts.append(f"{key}({_int(rng)})")
    if rng.random() < 0.05:
        parts.append(rng.choice(["#(u32)", "*(u8)", "#(s32)"]))
    if rng.random() < 0.2:
        parts.append("SC" + "".join(
            f"({_int(rng)}:{','.join(_int(rng) for _ in range(rng.randint(0, 3)))})"
            for _ in range(rng.randint(1, 2))))
    if rng.random() < 0.03:
        parts.append(f"P({shape_text(rng, depth + 1)})")
    if rng.random() < 0.05:
        parts.append(f"M({_int(rng)})")
    if rng.random() < 0.1:
        rng.shuffle(parts)
    return "".join(parts)


def layout_text(rng: random.Random, rank: int, depth: int = 0) -> str:
    """``{minor_to_major:annotations}``: usually a permutation of ``rank`` dims."""
    m2m = list(range(rank))
    rng.shuffle(m2m)
    if rng.random() < 0.1:
        m2m = [rng.randint(-2, 5) for _ in range(rng.randint(0, 3))]
    text = ",".join(map(str, m2m))
    ann = _annotations(rng, depth)
    return "{" + text + (":" + ann if ann or rng.random() < 0.1 else "") + "}"


def shape_text(rng: random.Random, depth: int = 0) -> str:
    """A shape string from the grammar (tuples, buffers, arrays with layouts), extremes mixed in."""
    roll = rng.random()
    if roll < 0.01:
        k = rng.choice([63, 64, 65, 1000])
        return "(" * k + "f32[2]" + ")" * k
    if depth < 3 and roll < 0.12:
        return "(" + ", ".join(shape_text(rng, depth + 1) for _ in range(rng.randint(0, 4))) + ")"
    if depth < 3 and roll < 0.15:
        return f"b({shape_text(rng, depth + 1)})"
    rank = rng.choice([0, 1, 1, 2, 2, 3, 4])
    dims = ",".join(_dim(rng) for _ in range(rank))
    text = f"{rng.choice(TYPES)}[{dims}]"
    if rng.random() < 0.7:
        text += layout_text(rng, rank, depth)
    return text


def mutate(rng: random.Random, text: str) -> str:
    """A few random edits: delete, insert, replace or duplicate a span."""
    chars = list(text)
    for _ in range(rng.randint(1, 3)):
        if not chars:
            chars = list(rng.choice(ALPHABET))
        k = rng.randrange(len(chars))
        op = rng.randrange(4)
        if op == 0:
            del chars[k]
        elif op == 1:
            chars.insert(k, rng.choice(ALPHABET))
        elif op == 2:
            chars[k] = rng.choice(ALPHABET)
        else:
            j = min(len(chars), k + rng.randint(1, 8))
            chars[k:k] = chars[k:j]
    return "".join(chars)


def corpus() -> list[str]:
    """Shape strings from XLA's own tests (the conformance round-trip set)."""
    cases = json.loads((DATA / "xla_layout_cases.json").read_text())
    return [c["input"] for c in cases["roundtrip"]]


def fuzz_text(seed: int) -> str:
    """Input number ``seed``: a grammar-built shape, a mutated one, or a mutated corpus shape."""
    rng = random.Random(seed)
    roll = rng.random()
    if roll < 0.4:
        return shape_text(rng)
    if roll < 0.8:
        return mutate(rng, shape_text(rng))
    return mutate(rng, rng.choice(_CORPUS))


_CORPUS = corpus()
