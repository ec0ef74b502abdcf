"""Issue 17: every entry point, fed seeded junk, raises only TensorLayoutError and round-trips.

Inputs are mutations of tests/data, grammar-built extremes and random text (see _gen.py);
input ``i`` of a target is fixed by ``(SEED, target, i)``, so a failure message names an
input that ``python -m tests.fuzz.campaign --show TARGET:I`` rebuilds.
"""

from __future__ import annotations

import pytest

from tests.fuzz import _cli, _runner
from tests.fuzz._targets import TARGETS

SEED = 17
DEFAULT_INPUTS = 400  # per unit of weight: a few seconds per entry point on a shared core
THOROUGH_INPUTS = 100_000
THOROUGH_BAD_CLI = 2_000

# Failure classes still open in src/ (issue 17), each with the input that shows it; the
# entry points they make fail are xfailed strictly so that a fix turns them red.
KNOWN_OPEN: dict[str, str] = {}  # none open: an entry here xfails its entry point


def _check(name: str, count: int) -> None:
    report = _runner.run(TARGETS[name], SEED, 0, count)
    if report.failures:
        pytest.fail(report.summary(), pytrace=False)


def _marks(name: str) -> list[pytest.MarkDecorator]:
    reason = KNOWN_OPEN.get(name)
    return [pytest.mark.xfail(strict=True, reason=reason)] if reason else []


@pytest.mark.parametrize("name", [pytest.param(n, marks=_marks(n)) for n in TARGETS])
def test_entry_point(name: str) -> None:
    _check(name, max(20, int(DEFAULT_INPUTS / TARGETS[name].weight)))


@pytest.mark.thorough
@pytest.mark.parametrize("name", list(TARGETS))
def test_entry_point_thorough(name: str) -> None:
    bad_before = _cli.EXIT_CODES[2]
    _check(name, THOROUGH_INPUTS if name != "cli" else 3 * THOROUGH_BAD_CLI)
    if name == "cli":
        assert _cli.EXIT_CODES[2] - bad_before >= THOROUGH_BAD_CLI
