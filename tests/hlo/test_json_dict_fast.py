"""json_dict_end's one-regex path (dicts nested up to four deep, possessive runs) ends every
JSON dict where the definition does: braces count outside double-quoted strings only."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from tensorlayout.errors import ParseError
from tensorlayout.hlo._scan import _JSON_DICT_4, json_dict_end

DATA = Path(__file__).resolve().parent.parent / "data" / "hlo"


def _by_definition(text: str, pos: int) -> int | None:
    """End of the dict at ``pos`` char by char (None if it never closes)."""
    depth, i, in_string = 0, pos, False
    while i < len(text):
        c = text[i]
        if in_string:
            if c == "\\":
                i += 1
            elif c == '"':
                in_string = False
        elif c == '"':
            in_string = True
        elif c in "{}":
            depth += 1 if c == "{" else -1
            if depth == 0:
                return i + 1
        i += 1
    return None


def _configs() -> list[str]:
    out = []
    for path in sorted(DATA.glob("**/*.hlo")):
        text = path.read_text()
        at = text.find("backend_config={")
        while at >= 0:
            start = at + len("backend_config=")
            end = _by_definition(text, start)
            if end is not None:
                out.append(text[start:end])
            at = text.find("backend_config={", start)
    return out


def test_corpus_configs_exist() -> None:
    assert len(_configs()) > 50


@pytest.mark.parametrize("seed", range(4))
def test_mutated_configs_end_as_defined(seed: int) -> None:
    rnd = random.Random(seed)
    configs = _configs()
    for _ in range(3000):
        chars = list(rnd.choice(configs)[: rnd.randint(1, 200)])
        for _ in range(rnd.randint(0, 6)):
            i = rnd.randrange(len(chars) + 1)
            if rnd.random() < 0.5:
                chars.insert(i, rnd.choice('{}"\\:,[] a\n'))
            elif i < len(chars):
                del chars[i]
        text = "".join(chars) + rnd.choice(["}", "}}", "", ", x=1", '"}'])
        if not text.startswith("{"):
            text = "{" + text
        want = _by_definition(text, 0)
        m = _JSON_DICT_4.match(text)
        if m is not None:  # the fast path never answers differently from the definition
            assert m.end() == want, text
        if want is None:
            with pytest.raises(ParseError, match="JSON dict"):
                json_dict_end(text, 0)
        else:
            assert json_dict_end(text, 0) == want, text
