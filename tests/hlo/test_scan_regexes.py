"""The unrolled string regexes of the attribute scanners against their plain forms and the
careful loop, on random texts (same matches, same ends)."""

from __future__ import annotations

import random
import re

import pytest

from tensorlayout._cursor import Cursor
from tensorlayout.errors import ParseError
from tensorlayout.hlo import _scan, attributes
from tensorlayout.hlo.parser_instruction import InstructionReader
from tensorlayout.xla.shape import read_shape

_PLAIN_STRING = r'"(?:[^"\\]|\\.)*"'
_OLD_SIMPLE_VALUE = re.compile(
    r'[^\s,{}()\[\]"/]+(?=[\s,})\]]|\Z)' r'|\{[^{}"\n/\[\]()]*\}'
    r'|\{(?:[^{}"\\\n\[\]()]|' + _PLAIN_STRING + r')*\}' r'|' + _PLAIN_STRING, re.A)
_OLD_META = re.compile(
    r'\{(?:op_type=' + _PLAIN_STRING + ' ?)?(?:op_name=' + _PLAIN_STRING + ' ?)?(?:source_file='
    + _PLAIN_STRING + r' ?)?(?:source_line=-?[0-9]{1,9} ?)?(?:stack_frame_id=-?[0-9]{1,9})?\}', re.A)
_PIECES = ['{', '}', '"', '\\', '\\"', 'a', ' ', '\n', ',', '[', ']', '(', ')', '/', ':', '1', 'op_name=',
           'op_type=', 'source_file=', 'source_line=', 'stack_frame_id=', '"x"', '{"k":"v"}', '\\\n']


def _texts(seed: int, count: int) -> list[str]:
    rng = random.Random(seed)
    return ["".join(rng.choice(_PIECES) for _ in range(rng.randint(0, 14))) for _ in range(count)]


def test_unrolled_value_and_metadata_regexes_match_the_plain_ones() -> None:
    for text in _texts(1, 20000):
        for at in (0, 1):
            a, b = _scan._SIMPLE_VALUE.match(text, at), _OLD_SIMPLE_VALUE.match(text, at)
            assert (a and a.end()) == (b and b.end()), text
            a, b = attributes._META_FAST.match(text, at), _OLD_META.match(text, at)
            assert (a and a.end()) == (b and b.end()), text


def test_metadata_end_with_the_escape_free_pattern_first_matches_the_plain_one() -> None:
    texts = _texts(4, 20000)
    texts += ['{op_name="' + t.replace('"', '\\"') + '" source_line=1}' for t in texts[:5000]]
    texts += ["{op_name=" + t for t in texts[5000:10000]] + ["{" + t + "}" for t in texts[10000:]]
    hits = 0
    for text in texts:
        for at in (0, 1):
            b = _OLD_META.match(text, at)
            assert attributes.common_metadata_end(text, at) == (b and b.end()), text
            hits += b is not None and "\\" in b.group()
    assert hits > 100  # strings with escapes were among them


def _end(text: str) -> int | str:
    try:
        return _scan.json_dict_end(text, 0)
    except ParseError as e:
        return str(e)


def test_json_dict_regex_ends_where_the_loop_does(monkeypatch: pytest.MonkeyPatch) -> None:
    texts = ["{" + t for t in _texts(2, 4000)] + ['{"a":{"b":{"c":{"d":{"e":1}}}}}, x=1']
    fast = [_end(t) for t in texts]
    monkeypatch.setattr(_scan, "_JSON_DICT_4", re.compile(r"(?!)"))  # the loop alone
    assert fast == [_end(t) for t in texts]


def test_shape_before_a_brace_reads_as_the_careful_reader() -> None:
    """A plain shape followed by ``{``: a layout (careful reader) or a computation body (fast)."""
    rng = random.Random(4)
    tails = [" {", "{", " {\n", " { %p", "{p", " {}", " { 1,0}", " {:T(2)}", " {/*c*/ %p", " {-1}", " {_x",
             "\n{ x"]
    for _ in range(300):
        text = rng.choice(["f32[2,3]", "s8[]", "pred[4]", "bf16[2,2]"]) + rng.choice(tails) + " rest"
        cur = Cursor(text, comments=True)
        try:
            want: object = (read_shape(cur), cur.pos)
        except ParseError as e:
            want = str(e)
        try:
            got: object = InstructionReader(text)._shape(0)
        except ParseError as e:
            got = str(e)
        assert got == want, text
