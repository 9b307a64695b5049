"""Driving git-retcon as a user does, in-process or as a killable subprocess."""
from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from testing.gitrepo import GitRepo

ROOT = Path(__file__).resolve().parent.parent


@dataclass
class Outcome:
    code: int
    out: str
    err: str

    @property
    def text(self) -> str:
        return self.out + self.err


def retcon(repo: GitRepo, *args: str) -> Outcome:
    """`git retcon ARGS` in this process (cwd = repo), as the console script runs it."""
    from git_retcon.cli import main

    out, err = io.StringIO(), io.StringIO()
    old = os.getcwd()
    os.chdir(repo.path)
    code = 0
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                main(list(args))
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    finally:
        os.chdir(old)
    return Outcome(code, out.getvalue(), err.getvalue())


def one_line_error(res: Outcome, *words: str) -> str:
    """The one line of an error (exit 1, no traceback, no internal error), holding each of words."""
    assert res.code == 1, res.text
    assert "Traceback" not in res.text and "internal error" not in res.text, res.text
    lines = [ln for ln in res.err.splitlines() if ln.strip()]
    assert len(lines) == 1, res.err
    for w in words:
        assert w in lines[0], lines[0]
    return lines[0]


def plan_file(repo: GitRepo, tmp_path: Path, text: str) -> Outcome:
    """`plan --from-file` of a spec written as text."""
    (tmp_path / "s.toml").write_text(text)
    return retcon(repo, "plan", "--from-file", str(tmp_path / "s.toml"), "--no-edit")


def retcon_proc(repo: GitRepo, *args: str, env: dict[str, str] | None = None,
                timeout: float = 120) -> Outcome:
    """`git retcon ARGS` as a subprocess, with the scripted test models registered."""
    proc = subprocess.run(
        [sys.executable, "-m", "testing.run_retcon", *args], cwd=repo.path, text=True,
        capture_output=True, timeout=timeout,
        env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})},
    )
    return Outcome(proc.returncode, proc.stdout, proc.stderr)


def write_script(path: Path, script: dict[str, Any]) -> Path:
    path.write_text(json.dumps(script))
    return path


def call(name: str, **arguments: Any) -> dict[str, Any]:
    """One tool call of a scripted turn."""
    return {"name": name, "arguments": arguments}


def turn(*calls: dict[str, Any], text: str = "") -> dict[str, Any]:
    return {"calls": list(calls), "text": text}


def take(prefix: str, message: str = "commit") -> list[dict[str, Any]]:
    """The turns of a well-behaved extraction: read, apply what lies under prefix, commit."""
    return [turn(call("read_diff")),
            turn(call("apply_hunks", hunk_ids=f"$ids:{prefix}")),
            turn(call("create_commit", message=message))]


def feature_repo(path: Path, extra: bool = False) -> GitRepo:
    """main with a tiny package; `feature` with a messy history for three concerns:
    a helper in util.py, a feature in app.py that uses it, and docs. extra: the helper imports
    its value from a new module, extra.py, so that util.py's hunk alone (what a failure that
    misses the helper blames) still fails."""
    repo = GitRepo.init(path)
    repo.commit("base", {
        "app.py": "import util\n\n\ndef main():\n    return util.one()\n",
        "util.py": "def one():\n    return 1\n",
        "README": "demo\n",
    })
    repo.git("checkout", "-q", "-b", "feature")
    two = "    from extra import TWO\n\n    return TWO\n" if extra else "    return 2\n"
    repo.commit("wip", {"util.py": "def one():\n    return 1\n\n\ndef two():\n" + two,
                        "app.py": "import util\n\n\ndef main():\n    return util.one() + util.two()\n",
                        **({"extra.py": "TWO = 2\n"} if extra else {})})
    repo.commit("docs wip", {"README": "demo\n\nmain() returns 3.\n"})
    repo.commit("fix", {"notes/todo.txt": "nothing\n"})
    repo.git("checkout", "-q", "main")
    return repo


SPEC = """\
source = "feature"
remote = "main"
cleaned = "feature-clean"
build = "python3 -m py_compile app.py util.py"
test = "python3 -c 'import app; app.main()'"
owners = "conversation"

[[commit]]
message = "util: add two()"
hints = "Only util.py."
paths = ["util.py"]

[[commit]]
message = "app: use two()"
paths = ["app.py"]

[[commit]]
message = "docs: explain main"
paths = ["README", "notes/"]
"""


def needs_fix_repo(tmp_path: Path, spec: str = SPEC, extra: bool = False) -> GitRepo:
    """feature_repo planned (spec without its util commit) with app's commit first: its test
    fails until the fix loop takes util.py's helper from the remaining diff (a WIP commit). That
    hunk, the rework brief's candidate, passes on its own, so plain code commits it with no model;
    with extra, it does not (the helper needs extra.py too), and the model is asked."""
    repo = feature_repo(tmp_path / "repo", extra)
    spec = spec.replace('message = "util: add two()"\nhints = "Only util.py."\npaths = ["util.py"]\n\n[[commit]]\n', "")
    (tmp_path / "s.toml").write_text(spec)
    assert retcon(repo, "plan", "--from-file", str(tmp_path / "s.toml"), "--no-edit").code == 0
    return repo


def spec_with(spec: str, **fields: object) -> str:
    """spec's TOML with top-level fields added before its first [[commit]]: `writable=[dir]` for a test
    whose commands leave marks outside their worktree, `sandbox="off"` for one whose commands stand for
    another process changing the repository (what the sandbox refuses to a build)."""
    lines = "".join(f"{k} = {json.dumps([str(v) for v in val] if isinstance(val, list) else val)}\n"
                    for k, val in fields.items())
    at = spec.index("[[commit]]")
    return spec[:at] + lines + spec[at:]
