"""What the parser remembers between modules (compatible signature/root pairs, shapes by text)
changes only speed: equal results, and the same errors with their line and column."""

from __future__ import annotations

import pytest

from tensorlayout.errors import ParseError
from tensorlayout.hlo import parse_module

_GOOD = """HloModule m
%f (p: (f32[2], s8[])) -> (f32[2], s8[]) {
  ROOT %p = (f32[2]{0}, s8[]) parameter(0)
}
ENTRY %e (a: (f32[2], s8[])) -> (f32[2], s8[]) {
  %a = (f32[2]{0}, s8[]) parameter(0)
  ROOT %c = (f32[2]{0}, s8[]) call(%a), to_apply=%f
}
"""


def test_a_compatible_pair_seen_before_does_not_admit_an_incompatible_root() -> None:
    first, again = parse_module(_GOOD), parse_module(_GOOD)
    assert [i.shape for i in first.instructions()] == [i.shape for i in again.instructions()]
    bad = _GOOD.replace("ROOT %c = (f32[2]{0}, s8[])", "ROOT %c = (f32[3]{0}, s8[])")
    for _ in range(2):
        with pytest.raises(ParseError, match=r"a root whose shape \(f32\[3\]\{0\}, s8\[\]\) is compatible .* "
                                             r"at line 7, column 3"):
            parse_module(bad)


@pytest.mark.parametrize(("body", "where", "why"), [
    ("  %n = f32[2]{0} negate(%q)\n  ROOT %q = f32[2]{0} parameter(0)", "line 3, column 26",
     "defined only after its use"),
    ("  %q = f32[2]{0} parameter(0)\n  ROOT %n = f32[2]{0} add(%q, %r)", "line 4, column 32",
     "is not defined"),
    ("  ROOT %n = f32[2]{0} negate(%n)", "line 3, column 9", "defined only after its use"),
])
def test_operands_defined_later_or_never_are_errors_at_their_name(body: str, where: str, why: str) -> None:
    text = "HloModule m\nENTRY %e {\n" + body + "\n}\n"
    with pytest.raises(ParseError, match=f"{why}.* at {where}"):
        parse_module(text)
