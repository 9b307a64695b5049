"""Each text form the diff is shown in is read back by the function beside its writer: the
ids, paths and kinds a model (retcon-paths, the test models) learns from it are the ones
written, on a real repository's hunks of every kind, paths with spaces included."""
from __future__ import annotations

import pytest

from git_retcon import diff
from tests.diff.test_select import Files

BASE = {"src/app.py": "".join(f"line {i}\n" for i in range(1, 15)), "old name.txt": "kept\n",
        "gone.md": "bye\n", "docs/a b.md": "a\n"}
TARGET = {"src/app.py": "".join(f"line {i}\n" for i in range(1, 15)).replace("line 3\n", "LINE 3\n")
          + "".join(f"new {i}\n" for i in range(12)),
          "new name.txt": "kept\n", "docs/a b.md": "a\nb\n", "src/new file.py": "x = 1\n"}


@pytest.fixture
def hunks(tmp_path) -> list[diff.Hunk]:
    found = Files(tmp_path, BASE, TARGET).remaining()
    assert {h.kind for h in found} >= {"modify", "add", "delete", "rename"}
    return found


def _named(hunks: list[diff.Hunk]) -> list[tuple[str, str, str]]:
    names = diff.names_of(hunks)
    return [(names[h.id], h.path, h.kind) for h in hunks]


def test_read_hunks_reads_every_hunk_read_diff_shows_with_its_numbered_lines(hunks):
    text = diff.render(hunks)
    shown = diff.read_hunks(text)
    assert [(s.id, s.path, s.kind) for s in shown] == _named(hunks)
    # A hunk of 14 numbered lines is shown right-aligned (" 9 +..."): all of them are counted.
    counts = {s.path: s.numbered for s in shown}
    long = next(h for h in hunks if h.path == "src/app.py" and h.added_lines > 9)
    assert counts["src/app.py"] >= long.added_lines + long.removed_lines > 9
    assert diff.read_page(text) == (1, 1)


def test_read_page_follows_the_pages_and_a_filter(hunks):
    first, total = diff.read_page(diff.render(hunks, budget=400))
    assert first == 1 and total > 1
    last = diff.render(hunks, budget=400, page=total)
    assert diff.read_page(last) == (total, total)
    assert diff.read_page(diff.render(hunks, path_prefix="docs/")) == (1, 1)
    assert diff.read_page(diff.render(hunks, path_prefix="nowhere/")) is None


def test_read_index_reads_the_per_hunk_index(hunks):
    text = diff.index_lines(hunks, short=True)
    assert [(s.id, s.path, s.kind) for s in diff.read_index(text)] == _named(hunks)
    # The per-file form names no hunk line by line: nothing is misread from it.
    assert diff.read_index(diff.index_lines(hunks, short=True, budget=len(text) - 1)) == []


def test_read_candidates_reads_what_candidate_line_writes(hunks):
    reasons = [f"defines `name{i}` used at src/app.py:{i}" for i in range(len(hunks))]
    text = "Candidate hunks in the remaining diff:\n" + "\n".join(
        diff.candidate_line(h.id[:6], h, why) for h, why in zip(hunks, reasons, strict=True))
    read = diff.read_candidates(text)
    assert [(s.id, s.path, s.kind, why) for s, why in read] == [
        (h.id[:6], h.path, h.kind, why) for h, why in zip(hunks, reasons, strict=True)]


def test_read_assigned_reads_the_ids_of_the_assigned_value(hunks):
    ids = [h.id for h in hunks[:2]] + ["0" * 40]
    value = diff.assigned_text(ids, hunks)
    names = diff.names_of(hunks)
    assert diff.read_assigned(value) == [names[i] for i in ids[:2]]
    assert "1 of the 3 planned are no longer" in value
    assert diff.read_assigned(diff.assigned_text([], hunks)) == []
