"""The table of readings (model/readings.py): every row's example is read as the row says, so a
reading that changes shows here, by name."""
from __future__ import annotations

import pytest

from git_retcon.model.readings import READINGS, Reading


@pytest.mark.parametrize("row", READINGS, ids=[r.name for r in READINGS])
def test_each_reading_reads_its_example(row: Reading) -> None:
    assert row.read(row.example) == row.meant


def test_prose_is_not_read_as_a_call() -> None:
    prose = next(r for r in READINGS if r.name == "a call written as fenced JSON")
    assert prose.read("I will now apply the hunks and then commit.") == ""
