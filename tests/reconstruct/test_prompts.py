"""What an extraction prompt shows of the remaining diff: the whole diff when it is short (no
read_diff turn needed), else an index of it."""
from __future__ import annotations

import json
import re

from testing.fixcase import make
from testing.flow import SPEC, call, retcon, take, turn

# The spec without `paths`: nothing is applied for the model, which chooses from what the prompt shows.
CHOOSE = re.sub(r"^paths = .*\n", "", SPEC, flags=re.M)


def entries(log, step):
    return [e for e in map(json.loads, log.read_text().splitlines()) if e["keys"][0].startswith(step)]


def prompts(log, step):
    return [e["prompt"] for e in entries(log, step)]


def test_a_short_remaining_diff_is_in_the_prompt_whole_and_the_model_applies_from_it(tmp_path, scripted):
    repo = make(tmp_path, docs=0, spec=CHOOSE)
    log = scripted({"1/extract": [turn(call("apply_hunks", hunk_ids="$ids:util.py")), turn(call("create_commit"))],
                    "2/extract": take("app.py"), "3/extract": take("")})
    res = retcon(repo, "run", "-m", "scripted")
    assert res.code == 0, res.text
    (first, *_) = prompts(log, "1/extract")
    assert "The whole remaining diff, as read_diff() shows it (no need to call it):" in first
    assert "+def two():" in first and "; page 1 of 1" in first
    calls = [c["name"] for e in entries(log, "1/extract") for c in e["calls"]]
    assert calls == ["apply_hunks", "create_commit"]
    assert repo.git("diff", "--name-only", "main", "feature-clean~2") == "util.py"


def test_a_long_remaining_diff_is_shown_as_an_index(tmp_path, scripted):
    repo = make(tmp_path, docs=30, doc_size=60, spec=CHOOSE)
    log = scripted({"1/extract": take("util.py"), "2/extract": take("app.py"), "3/extract": take("")})
    assert retcon(repo, "run", "-m", "scripted").code == 0
    (first, *_) = prompts(log, "1/extract")
    assert "The whole remaining diff" not in first and "\nhunk " not in first
    assert "docs/page29.md" in first     # the index names every file
