"""The CLI fuzz campaign's one finding at 100,000 inputs (seed 17, input 44987): ``show`` of an
empty shape whose dims before the zero multiply to 2**62 built 2**62 empty lists (a timeout)."""

from __future__ import annotations

import pytest

from tensorlayout.cli import main


@pytest.mark.parametrize("text", ["bf16[4611686018427387904,0,2]{1,2,0:T(4)E(0)}",
                                  "s32[3,2147483648,0]{2,1,0}"])
def test_show_of_an_empty_shape_with_huge_dims_answers_at_once(text: str,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["show", text]) == 0
    out = capsys.readouterr().out
    assert "0 logical (ByteSizeOf)" in out and "memory order" not in out
