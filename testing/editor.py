"""A scripted $GIT_EDITOR for tests: it records every text it is shown (seen.0, seen.1, ...
in its directory) and does the n-th action to the n-th: ["keep"], ["replace", old, new]
or ["write", text]."""
from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path

SCRIPT = """\
import json, pathlib, sys
d = pathlib.Path(sys.argv[1])
path = pathlib.Path(sys.argv[2])
n = len(list(d.glob("seen.*")))
text = path.read_text()
(d / f"seen.{n}").write_text(text)
actions = json.loads((d / "actions.json").read_text())
act = actions[n] if n < len(actions) else ["keep"]
if act[0] == "replace":
    text = text.replace(act[1], act[2])
elif act[0] == "write":
    text = act[1]
path.write_text(text)
"""


def scripted_editor(directory: Path, actions: list[list[str]]) -> tuple[str, Callable[[int], str]]:
    """(the GIT_EDITOR value, a function giving the text shown at the n-th open)."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "actions.json").write_text(json.dumps(actions))
    (directory / "editor.py").write_text(SCRIPT)
    return (f"{sys.executable} {directory / 'editor.py'} {directory}",
            lambda n: (directory / f"seen.{n}").read_text())
