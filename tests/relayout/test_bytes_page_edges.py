"""The 1-byte kernels read nothing outside a task's source bytes: tasks whose vector loops could
run past the box (a ragged (4,1) sub-tile's last 3 rows read as whole groups, ``quads_from3``;
one row gathered out of groups 32 at a time, ``_kernel_bytes_spread.h``; 16x16 staged byte
transposes) with their source bytes between two pages that may not be read (a child process:
a read past them kills it)."""

from __future__ import annotations

import pytest

from tests.relayout._reference import check_page_edges, kernel_or_skip


def _three_rows(ng: int, na: int) -> tuple:
    # ng quads by 3 of their 4 rows, against rows a of na bytes (the source ends at the box)
    db = na + 3
    return (ng, 3, na), (3 * db + 5, db, 1), (4, 1, ng * 4 + 1), 7, 5


def _gather(n: int, group: int, rows: int) -> tuple:
    # one row of bytes out of n groups of `group` bytes, `rows` times
    wide, narrow = (n + 5) * group, n + 3
    return (rows, n), (narrow, 1), (wide, group), 3, n % 7


def _staged(na: int, nb: int) -> tuple:
    # na x nb bytes, both contiguous axes short: the 16 x 16 staged transposes
    return (na, nb), (1, na + 1), (nb + 2, 1), 0, 1


TASKS = ([_three_rows(ng, na) for ng in (8, 9, 70, 130) for na in (15, 16, 17, 106)]
         + [_gather(n, g, r) for n in (31, 32, 33, 95, 125, 1000) for g in (2, 4) for r in (1, 3)]
         + [_staged(na, nb) for na in (64, 100, 257) for nb in (7, 13)])


@pytest.mark.parametrize("part", range(3))
def test_no_read_outside_the_source_bytes(part: int) -> None:
    kernel_or_skip()
    check_page_edges(TASKS[part::3])
