"""Seeded input generators: mutations of seeds, grammar-built extremes and random text.

Each generator takes a :class:`random.Random` and returns one input, so a run is fixed by
its seed and reproducible input by input.
"""

from __future__ import annotations

import random
import string
from collections.abc import Callable, Sequence

# Integers that probe every size limit: int64 edges, 2^64, negatives and > 4300 digits.
EXTREME_INTS = (
    "0", "1", "-1", "-0", "2", "-2", "7", "63", "64", "65", "127", "128", "4096", "65536",
    str(2**31), str(2**32), str(2**53 + 1), str(2**62), str(2**63 - 1), str(2**63), str(2**64),
    str(2**64 + 1), str(-(2**63)), str(-(2**63) - 1), str(10**40), "9" * 4301, "1" + "0" * 5000,
    "00", "007", "+3",
)
# Digits that str.isdigit() or int() accept but XLA's ASCII grammars do not.
UNICODE_DIGITS = ("²", "٣", "１", "߀", "৪", "𝟡", "⑤", "½", "Ⅻ", "\u0663\u0664")
_PUNCT = "()[]{},:;*?#=<>-+_ /%\n\t."
_ALPHABET = string.ascii_letters + string.digits + _PUNCT + "".join(UNICODE_DIGITS) + "\x00é∞"


def small_int(rng: random.Random, hi: int = 6) -> int:
    """Mostly tiny positive sizes, sometimes 0 or 1, rarely an extreme."""
    roll = rng.random()
    if roll < 0.03:
        return int(rng.choice(EXTREME_INTS[:25]))
    return rng.choice((1, 1, 2, 2, 2, 3, 4, 4, 8, hi, 0))


def random_text(rng: random.Random, max_len: int = 40) -> str:
    return "".join(rng.choice(_ALPHABET) for _ in range(rng.randint(0, max_len)))


def _digit_runs(text: str) -> list[tuple[int, int]]:
    runs, i = [], 0
    while i < len(text):
        if text[i].isdigit():
            j = i
            while j < len(text) and text[j].isdigit():
                j += 1
            runs.append((i, j))
            i = j
        else:
            i += 1
    return runs


def _replace_int(rng: random.Random, text: str) -> str:
    runs = _digit_runs(text)
    if not runs:
        return text + rng.choice(EXTREME_INTS)
    a, b = rng.choice(runs)
    new = rng.choice(EXTREME_INTS + UNICODE_DIGITS) if rng.random() < 0.8 else str(rng.randint(0, 300))
    return text[:a] + new + text[b:]


def _insert(rng: random.Random, text: str) -> str:
    i = rng.randint(0, len(text))
    return text[:i] + rng.choice(_ALPHABET) + text[i:]


def _delete(rng: random.Random, text: str) -> str:
    if not text:
        return text
    i = rng.randrange(len(text))
    return text[:i] + text[i + rng.randint(1, 4):]


def _duplicate(rng: random.Random, text: str) -> str:
    if not text:
        return text
    i = rng.randrange(len(text))
    j = min(len(text), i + rng.randint(1, 12))
    return text[:j] + text[i:j] * rng.randint(1, 3) + text[j:]


def _truncate(rng: random.Random, text: str) -> str:
    return text[: rng.randint(0, len(text))]


def _nest(rng: random.Random, text: str) -> str:
    depth = rng.choice((2, 5, 50, 300, 1200, 3000))
    return "(" * depth + text + ")" * depth


def _swap(rng: random.Random, text: str) -> str:
    if len(text) < 2:
        return text
    i, j = sorted(rng.sample(range(len(text)), 2))
    chars = list(text)
    chars[i], chars[j] = chars[j], chars[i]
    return "".join(chars)


def _unicode_digit(rng: random.Random, text: str) -> str:
    runs = _digit_runs(text)
    if not runs:
        return text
    a, _ = rng.choice(runs)
    return text[:a] + rng.choice(UNICODE_DIGITS) + text[a + 1:]


MUTATORS: tuple[Callable[[random.Random, str], str], ...] = (
    _replace_int, _replace_int, _insert, _delete, _duplicate, _truncate, _nest, _swap, _unicode_digit,
)


def mutate(rng: random.Random, text: str, rounds: int = 3) -> str:
    """``text`` after 1..``rounds`` random mutations (nesting at most once)."""
    for _ in range(rng.randint(1, rounds)):
        text = rng.choice(MUTATORS)(rng, text)
    return text


def splice(rng: random.Random, a: str, b: str) -> str:
    return a[: rng.randint(0, len(a))] + b[rng.randint(0, len(b)):]


def from_seeds(rng: random.Random, seeds: Sequence[str], grammar: Callable[[random.Random], str]) -> str:
    """One input: a seed (10%), a mutated seed (45%), a grammar-built one (30%, sometimes
    mutated), a splice (5%) or random text (10%)."""
    roll = rng.random()
    if roll < 0.10:
        return rng.choice(seeds)
    if roll < 0.55:
        return mutate(rng, rng.choice(seeds))
    if roll < 0.85:
        built = grammar(rng)
        return mutate(rng, built, 2) if rng.random() < 0.3 else built
    if roll < 0.90:
        return splice(rng, rng.choice(seeds), rng.choice(seeds))
    return random_text(rng)


# ---------------------------------------------------------------- grammars
ELEMENT_TYPES = ("f32", "bf16", "f16", "s8", "u8", "s4", "u4", "s1", "u1", "pred", "f64", "s32",
                 "f8e4m3fn", "c64", "token", "u64", "s2", "f4e2m1fn")


def _dims(rng: random.Random, rank: int) -> list[str]:
    out = []
    for _ in range(rank):
        d = str(small_int(rng))
        if rng.random() < 0.05:
            d = rng.choice(("?", "<=" + d, "-3", str(2**64)))
        out.append(d)
    return out


def _tile(rng: random.Random, rank: int) -> str:
    n = rng.randint(1, max(1, rank + (1 if rng.random() < 0.2 else 0)))
    return "T(" + ",".join(rng.choice(("*", str(small_int(rng)))) if rng.random() < 0.1
                           else str(small_int(rng)) for _ in range(n)) + ")"


def layout_text(rng: random.Random, rank: int | None = None) -> str:
    """``{m2m[:T(..)..E(n)S(n)...]}`` with a random permutation and tiles."""
    if rank is None:
        rank = rng.randint(0, 4)
    perm = list(range(rank))
    rng.shuffle(perm)
    body = ",".join(map(str, perm))
    extras = [_tile(rng, rank) for _ in range(rng.choice((0, 0, 1, 1, 2, 3)))]
    if rng.random() < 0.2:
        extras.append(f"E({rng.choice((1, 2, 4, 8, 3, 0, 64))})")
    if rng.random() < 0.1:
        extras.append(f"S({rng.choice((0, 1, 2, 5, -1))})")
    if rng.random() < 0.05:
        extras.append("L(" + ",".join(map(str, perm)) + ")")
    if extras:
        body += ":" + "".join(extras)
    return "{" + body + "}"


def shape_text(rng: random.Random, depth: int = 0) -> str:
    """An array shape, or (rarely, deeper) a tuple of shapes."""
    if depth < 3 and rng.random() < 0.08:
        return "(" + ", ".join(shape_text(rng, depth + 1) for _ in range(rng.randint(0, 3))) + ")"
    rank = rng.choice((0, 1, 1, 2, 2, 2, 3, 4)) if rng.random() > 0.01 else rng.choice((64, 65, 200))
    text = f"{rng.choice(ELEMENT_TYPES)}[{','.join(_dims(rng, rank))}]"
    if rng.random() < 0.8:
        text += layout_text(rng, rank)
    return text


def int_tuple_text(rng: random.Random, depth: int = 0, leaf: Callable[[], str] | None = None) -> str:
    leaf = leaf or (lambda: str(small_int(rng)))
    if depth < 3 and rng.random() < 0.35:
        return "(" + ",".join(int_tuple_text(rng, depth + 1, leaf) for _ in range(rng.randint(1, 3))) + ")"
    return leaf()


def cute_text(rng: random.Random) -> str:
    """``shape:stride`` with congruent (usually) profiles; strides may be 0 or negative."""
    shape = int_tuple_text(rng)
    stride_leaf = iter(str(rng.choice((0, 1, 1, 2, 3, 4, 8, 16, -1, 2**62))) for _ in range(10**6))
    out, i = [], 0
    while i < len(shape):
        if shape[i].isdigit() or shape[i] == "-":
            j = i + 1
            while j < len(shape) and shape[j].isdigit():
                j += 1
            out.append(next(stride_leaf))
            i = j
        else:
            out.append(shape[i])
            i += 1
    stride = "".join(out)
    if rng.random() < 0.1:
        stride = int_tuple_text(rng)
    return shape if rng.random() < 0.05 else f"{shape}:{stride}"


def _affine(rng: random.Random, names: Sequence[str], depth: int = 0) -> str:
    if not names or depth > 3 or rng.random() < 0.3:
        return rng.choice((*names, str(rng.randint(-9, 40)))) if names else str(rng.randint(-9, 40))
    op = rng.choice((" + ", " - ", " * ", " floordiv ", " mod ", " ceildiv ", " / "))
    left = _affine(rng, names, depth + 1)
    if op.strip() in "+-":
        right = _affine(rng, names, depth + 1)
    else:
        right = str(rng.choice((2, 3, 4, 8, -2, 0, 128)))
    return f"({left}{op}{right})" if rng.random() < 0.5 else f"{left}{op}{right}"


def map_text(rng: random.Random) -> str:
    """``(d..)[s..] -> (exprs), domain: ...`` with random ranges and constraints."""
    dims = [f"d{i}" for i in range(rng.randint(0, 3))]
    syms = [f"s{i}" for i in range(rng.choice((0, 0, 1, 2)))]
    names = dims + syms
    head = f"({', '.join(dims)})" + (f"[{', '.join(syms)}]" if syms else "")
    results = ", ".join(_affine(rng, names) for _ in range(rng.randint(0, 3)))
    text = f"{head} -> ({results})"
    if not names and rng.random() < 0.5:
        return text
    ranges = []
    for n in names:
        lo = rng.choice((0, 0, 0, 1, -5, 53))
        hi = lo + rng.choice((0, 1, 3, 7, 31, 127, 2**40))
        ranges.append(f"{n} in [{lo}, {hi}]")
    for _ in range(rng.choice((0, 0, 1, 2))):
        lo = rng.randint(-3, 5)
        ranges.append(f"{_affine(rng, names)} in [{lo}, {lo + rng.randint(0, 9)}]")
    return text + ", domain: " + ", ".join(ranges)


def hlo_mutate(rng: random.Random, text: str) -> str:
    """A module with one to three line edits: a line dropped, duplicated, or mutated."""
    lines = text.splitlines()
    for _ in range(rng.randint(1, 3)):
        if not lines:
            break
        i = rng.randrange(len(lines))
        roll = rng.random()
        if roll < 0.2:
            del lines[i]
        elif roll < 0.3:
            lines.insert(i, lines[i])
        else:
            lines[i] = mutate(rng, lines[i], 2)
    return "\n".join(lines)


def hlo_text(rng: random.Random) -> str:
    """A small module built from the grammar: parameters, one op, maybe a self-call."""
    shape = f"f32[{','.join(str(small_int(rng)) for _ in range(rng.randint(0, 3)))}]"
    op = rng.choice(("add(p0, p0)", "negate(p0)", "transpose(p0), dimensions={}",
                     "reshape(p0)", "call(p0), to_apply=e", "broadcast(p0), dimensions={}",
                     "reduce(p0, p0), dimensions={0}, to_apply=e", "copy(p0)"))
    return (f"HloModule m\nENTRY e {{\n  p0 = {shape} parameter({rng.choice(('0', '1', '²', '-1'))})\n"
            f"  ROOT r = {shape} {op}\n}}\n")
