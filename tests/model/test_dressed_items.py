"""apply_hunks items as mid-size models dress them (issue 11, part 2): an id in backticks,
after `hunk` or `#`, with its path in parentheses; a selection in brackets, after `lines`,
with `..` or an en dash. Each is read as the plain id or id:LINES, and the answer says so."""
from __future__ import annotations

import pytest

from git_retcon.model.args import plain_item, plain_items
from testing.flow import call, retcon, turn
from tests.model.test_answers import results, small

# The small repository's hunks (ids hash path and content): its CI file, and util.py's 4 added lines.
CI_ID, UTIL_ID = "c5a46e", "e3c34d"


@pytest.mark.parametrize(("written", "meant"), [
    ("`3f2a9c`", "3f2a9c"),
    ("hunk 3f2a9c", "3f2a9c"),
    ("Hunk #3f2a9c", "3f2a9c"),
    ("#3f2a9c", "3f2a9c"),
    ("hunk_id: 3f2a9c", "3f2a9c"),
    ("3f2a9c (src/a.py)", "3f2a9c"),
    ("3f2a9c (modify)", "3f2a9c"),
    ("3f2a9c: 1-4", "3f2a9c:1-4"),
    ("3f2a9c:1..4", "3f2a9c:1-4"),
    ("3f2a9c:1\u20134", "3f2a9c:1-4"),
    ("3f2a9c:1 to 4,9", "3f2a9c:1-4,9"),
    ("3f2a9c[1-4]", "3f2a9c:1-4"),
    ("3f2a9c[lines 1-4, 9]", "3f2a9c:1-4, 9"),
    ("3f2a9c lines 1-4", "3f2a9c:1-4"),
    ("`3f2a9c` line 3", "3f2a9c:3"),
    # A line of the prompt's hunk lists copied whole, or its tail as an item of its own (the 1.5B model).
    ("e8aa invoicing/tax.py add +27 -0", "e8aa"),
    ("add +27 -0", ""),
])
def test_a_dressed_id_or_selection_is_read_plainly(written, meant):
    assert plain_item(written) == meant


@pytest.mark.parametrize("path", ["src/a.py", "docs/a:b.md", "src/a (1).py", "hunks/x.py", "3f2a9c", "3F2A9C:1-4",
                                  # paths whose names have a hex word in the shape of a dressed id
                                  "src/cafe (1).txt", "cafe (1).txt", "data/beef[1].csv", "beef[1].csv",
                                  "docs/#cafe.md", "src/hunk cafe.py", "notes/dead lines 2.txt",
                                  "src/add +1 -2.txt"])
def test_paths_and_plain_items_are_left_as_they_are(path):
    assert plain_item(path) == path


def test_a_comma_string_is_undressed_before_it_is_split():
    assert plain_items("hunk 3f2a9c, 77aa01 lines 1-4, 9") == "3f2a9c, 77aa01:1-4, 9"


def test_dressed_items_apply_and_the_answer_shows_the_plain_form(tmp_path, scripted):
    repo = small(tmp_path)
    log = scripted({"1/extract": [
        turn(call("read_diff")),
        turn(call("apply_hunks", hunk_ids=[f"hunk `{CI_ID.upper()}` (.github/workflows/ci.yml)"])),
        turn(call("apply_hunks", hunk_ids=f"#{UTIL_ID}[1\u20134]")),
        turn(call("create_commit", message="x")),
    ]})
    res = retcon(repo, "run", "-m", "scripted")
    assert res.code == 0, res.text
    out = results(log)
    assert out[1].startswith(f"(read hunk_ids as ['{CI_ID.upper()}']: write ids plainly, as read_diff shows them) "
                             "Applied 1 hunks to 1 files: .github/workflows/ci.yml."), out[1]
    assert out[2].startswith(f"(read hunk_ids as ['{UTIL_ID}:1-4']"), out[2]
    assert "Applied 1 hunks to 1 files: util.py" in out[2]
    assert repo.tree("clean~1") == repo.tree("feature~1")
