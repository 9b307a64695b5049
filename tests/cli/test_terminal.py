"""Text a model wrote, a file name or a commit message reaches the terminal with its control
characters escaped: an OSC that retitles the window, a BEL, a CR or backspaces that overwrite
what was printed, a C1 CSI (0x9b, a CSI on its own) never arrive raw."""
from __future__ import annotations

import json
import re

from testing.flow import call, feature_repo, retcon, turn

SPEC = """\
source = "feature"
remote = "main"
cleaned = "feature-clean"
owners = "conversation"

[[commit]]
message = "first"

[[commit]]
message = "second"

[[commit]]
message = "the rest"
"""
NASTY = "\x1b]0;pwned\x07 \x9b2J\x08\x08 over\r write \u202e"
RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def test_a_models_text_and_a_file_name_are_printed_escaped(tmp_path, scripted):
    repo = feature_repo(tmp_path / "repo")
    (tmp_path / "spec.toml").write_text(SPEC)
    assert retcon(repo, "plan", "--from-file", str(tmp_path / "spec.toml"), "--no-edit").code == 0
    scripted({"1/extract": [turn(call("write_file", path=f"odd{NASTY[:12]}.txt", content="x\n")),
                            turn(call("create_commit", message=f"first {NASTY}"))],
              "2/extract": [turn(call("stuck", summary=f"cannot {NASTY}"))]})
    outputs = {"run": retcon(repo, "run", "-m", "scripted")}
    assert outputs["run"].code == 3, outputs["run"].text
    for args in (("status",), ("check",), ("spec", "show"), ("run", "--dry-run"), ("list",), ("run",)):
        outputs[" ".join(args)] = retcon(repo, *args)
    for what, res in outputs.items():
        assert not RAW.search(res.text), (what, RAW.findall(res.text))
    assert "cannot \\e]0;pwned\\x07 \\x9b2J\\b\\b over\\r write \\u202e" in outputs["run"].err
    doc = json.loads(retcon(repo, "status", "--json").out)     # JSON escapes them, as JSON does
    assert not RAW.search(retcon(repo, "status", "--json").out)
    assert doc["commits"][0]["state"] == "complete"
