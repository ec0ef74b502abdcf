"""The module header's computation layouts end (one regex, common form) where the careful
scanner ends them: on the corpus and on mutated headers."""

from __future__ import annotations

import random
from pathlib import Path

from tensorlayout.errors import TensorLayoutError
from tensorlayout.hlo.attributes import value_end
from tensorlayout.hlo.parser import _layout_end

DATA = Path(__file__).resolve().parent.parent / "data" / "hlo"
KEY = "entry_computation_layout"


def _headers() -> list[str]:
    out = []
    for path in sorted(DATA.glob("**/*.hlo")):
        first = path.read_text().split("\n", 1)[0]
        if KEY + "=" in first:
            out.append(first)
    return out


def _check(text: str) -> bool:
    at = text.find(KEY + "=") + len(KEY) + 1
    fast = _layout_end(KEY, text, at)
    if fast is None:
        return False
    try:
        careful = value_end(KEY, text, at)
    except TensorLayoutError:
        raise AssertionError(f"fast end {fast} where the scanner fails: {text!r}") from None
    assert fast == careful, text
    return True


def test_corpus_headers() -> None:
    headers = _headers()
    assert len(headers) > 50
    assert sum(_check(h) for h in headers) > 50  # the rest (comments inside) take the scanner


def test_mutated_headers() -> None:
    rnd = random.Random(7)
    headers = _headers()
    hits = 0
    for _ in range(20000):
        h = list(rnd.choice(headers))
        start = "".join(h).find(KEY) + len(KEY) + 1
        for _ in range(rnd.randint(1, 3)):
            i = rnd.randrange(start, len(h) + 1)
            if rnd.random() < 0.5:
                h.insert(i, rnd.choice('{}()[],:/*" 0a'))
            elif i < len(h):
                del h[i]
        hits += _check("".join(h))
    assert hits > 100
