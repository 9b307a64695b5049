"""`git retcon plan` without a model: --from-commits folding, the editor round trip,
and the stored hunk assignment that `run` takes as a strong hint."""
from __future__ import annotations

import json
import re
import subprocess

import pytest
import tomli

from git_retcon.state.spec import LogicalCommit, Spec, SpecError
from git_retcon.state.specparse import parse
from git_retcon.state.spectoml import dump
from testing.editor import scripted_editor
from testing.flow import feature_repo, retcon
from testing.gitrepo import GitRepo

BASE = {
    "main.py": "import parser\n\n\ndef main():\n    return parser.parse('x')\n",
    "parser.py": "def parse(s):\n    return s\n",
    "README": "A tool.\n",
}


def messy(path) -> GitRepo:
    """A branch with fixups, a typo fix and an unrelated change of the same files."""
    repo = GitRepo.init(path)
    repo.commit("base", BASE)
    repo.git("checkout", "-q", "-b", "feature")
    repo.commit("parser: strip input", {
        "parser.py": "def parse(s):\n    s = s.strip()\n    return s\n\n\ndef tokens(s):\n    return s.split()\n"})
    repo.commit("docs: describe parse", {"README": "A tool.\n\nparse() strips its input and splits tokns.\n"})
    repo.commit("fixup! parser: strip input", {
        "parser.py": "def parse(s):\n    s = s.strip()\n    return s\n\n\n"
                     "def tokens(s):\n    return parse(s).split()\n"})
    repo.commit("fix typo", {"README": "A tool.\n\nparse() strips its input and splits tokens.\n"})
    repo.commit("main: print tokens", {
        "main.py": "import parser\n\n\ndef main():\n    return parser.parse('x')\n\n\n"
                   "def show():\n    print(parser.tokens('a b'))\n"})
    repo.commit("squash! docs: describe parse\n\nMention tokens() too.", {
        "README": "A tool.\n\nparse() strips its input and splits tokens.\ntokens() splits.\n"})
    return repo


def commits_of(repo: GitRepo, name: str = "feature-clean") -> list[dict]:
    return tomli.loads(repo.git("show", f"refs/retcon/{name}:spec.toml"))["commit"]


def test_from_commits_folds_fixups_squashes_and_typo_fixes(tmp_path):
    repo = messy(tmp_path / "repo")
    res = retcon(repo, "plan", "--from-commits", "--source", "feature", "--onto", "main", "--no-edit")
    assert res.code == 0, res.text
    commits = commits_of(repo)
    assert [c["message"].splitlines()[0] for c in commits] == [
        "parser: strip input", "docs: describe parse", "main: print tokens"]
    # squash! keeps its body in the message it squashes into; fixups leave a note in the hints.
    assert commits[1]["message"] == "docs: describe parse\n\nMention tokens() too."
    assert "fixup" in commits[0]["hints"] and "fixup! parser: strip input" in commits[0]["hints"]
    assert "follow-up" in commits[1]["hints"] and "fix typo" in commits[1]["hints"]
    # main.py was touched by no earlier commit's paths, and keeps its own commit;
    # every hunk is assigned once, and each commit owns its files.
    assert [c["paths"] for c in commits] == [["parser.py"], ["README"], ["main.py"]]
    ids = [i for c in commits for i in c["hunks"]]
    assert len(ids) == len(set(ids)) and ids
    assert "Warning" not in res.out
    assert re.search(r"^\s+1\s+1\s+2\s+\+5 -0\s+parser: strip input$", res.out, re.M), res.out
    assert re.search(r"^\s+3\s+1\s+1\s+\+4 -0\s+main: print tokens$", res.out, re.M), res.out
    # The offline model rebuilds it as is.
    done = retcon(repo, "run", "-m", "retcon-paths")
    assert done.code == 0, done.text
    assert repo.log("main..feature-clean") == ["main: print tokens", "docs: describe parse", "parser: strip input"]
    assert repo.tree("feature-clean") == repo.tree("feature")


def test_a_fix_touching_lines_older_than_the_branch_stays_its_own_commit(tmp_path):
    repo = GitRepo.init(tmp_path / "repo")
    repo.commit("base", BASE)
    repo.git("checkout", "-q", "-b", "feature")
    repo.commit("parser: add tokens", {"parser.py": BASE["parser.py"] + "\n\ndef tokens(s):\n    return s.split()\n"})
    repo.commit("fix typo", {"README": "A small tool.\n"})  # a line from main, not from the branch
    repo.commit("wip", {"parser.py": BASE["parser.py"] + "\n\ndef tokens(s):\n    return s.split(' ')\n",
                        "main.py": BASE["main.py"].replace("'x'", "'y'")})  # lines of the branch and of main
    res = retcon(repo, "plan", "--from-commits", "--no-edit", "--source", "feature", "--onto", "main")
    assert res.code == 0, res.text
    assert [c["message"] for c in commits_of(repo)] == ["parser: add tokens", "fix typo", "wip"]


def test_a_commit_whose_changes_all_got_rewritten_joins_its_neighbour(tmp_path):
    repo = GitRepo.init(tmp_path / "repo")
    repo.commit("base", BASE)
    repo.git("checkout", "-q", "-b", "feature")
    repo.commit("add notes", {"NOTES": "one\n"})
    repo.commit("add config", {"config.ini": "a = 1\n"})
    repo.commit("drop config again", {"config.ini": None})
    res = retcon(repo, "plan", "--from-commits", "--no-edit", "--source", "feature", "--onto", "main")
    assert res.code == 0, res.text
    commits = commits_of(repo)
    assert [c["message"] for c in commits] == ["add notes"]
    assert "add config" in commits[0]["hints"] and "drop config again" in commits[0]["hints"]


# --- the editor round trip -----------------------------------------------------------

@pytest.fixture
def editor(tmp_path, monkeypatch):
    """$GIT_EDITOR as a script that records each text it is shown and does actions[n] to it."""
    def install(*actions: list[str]):
        command, seen = scripted_editor(tmp_path / "editor", list(actions))
        monkeypatch.setenv("GIT_EDITOR", command)
        return seen
    return install


@pytest.fixture
def project(tmp_path):
    repo = feature_repo(tmp_path / "repo")
    repo.git("checkout", "-q", "feature")
    return repo


def test_editor_shows_the_format_reopens_on_errors_and_saves_the_result(project, editor, monkeypatch):
    monkeypatch.setattr("git_retcon.plan.write.at_terminal", lambda: True)   # a person answers again
    seen = editor(["replace", 'message = "wip"', 'mesage = "wip"'],
                  ["replace", 'mesage = "wip"', 'message = "util and app: add and use two()"'])
    res = retcon(project, "plan", "--from-commits", "--edit")
    assert res.code == 0, res.text
    first, second = seen(0), seen(1)
    assert first.startswith("# git-retcon history spec.") and "# Each [[commit]]" in first
    assert "hunks = [" in first and "#   hunks = " in first
    assert "# ERROR:" not in first
    # The invalid result comes back with the error at the top, the user's text kept.
    head = second.split("\n\n")[0]
    assert "# ERROR: spec.toml line" in head and "unknown field 'mesage'" in head
    assert 'mesage = "wip"' in second
    assert commits_of(project)[0]["message"] == "util and app: add and use two()"
    assert "Saved spec 'feature-clean'" in res.out


def test_an_emptied_file_aborts_without_saving(project, editor):
    editor(["write", "# nothing left\n\n"])
    res = retcon(project, "plan", "--from-commits", "--edit")
    assert res.code == 1 and "emptied: nothing was saved" in res.err
    assert project.git("for-each-ref", "refs/retcon/") == ""


def test_a_failing_editor_saves_nothing_and_no_edit_never_opens_it(project):
    # The hermetic GIT_EDITOR is `false`.
    res = retcon(project, "plan", "--from-commits", "--edit")
    assert res.code == 1 and "editor exited with 1" in res.err
    assert project.git("for-each-ref", "refs/retcon/") == ""
    assert retcon(project, "plan", "--from-commits", "--no-edit").code == 0
    # Not on a terminal, the default is not to edit.
    assert retcon(project, "plan", "--from-commits", "--cleaned", "other").code == 0


# --- the stored assignment ----------------------------------------------------------


def test_spec_keeps_validates_and_shows_hunks():
    spec = Spec("f", "main", "f-clean", [LogicalCommit("a", hunks=["0123456789", "abcdefabcd"]),
                                         LogicalCommit("b", hunks=[f"{i:010x}" for i in range(8)])])
    text = dump(spec)
    assert 'hunks = ["0123456789", "abcdefabcd"]' in text
    assert parse(text) == spec
    with pytest.raises(SpecError, match=r"line 6: commit 1: hunks entry 2: must be a hunk id of 10 hex"):
        parse('source = "f"\nremote = "m"\ncleaned = "c"\n[[commit]]\nmessage = "a"\nhunks = ["0123456789", "xyz"]\n')
    assert parse('source = "f"\nremote = "m"\ncleaned = "c"\n[[commit]]\nmessage = "a"\n'
                 'hunks = ["ABCDEF0123"]\n').commits[0].hunks == ["abcdef0123"]


ASSIGNED = """\
source = "feature"
remote = "main"
cleaned = "feature-clean"

[[commit]]
message = "util: add two()"
hunks = [{util}]

[[commit]]
message = "the rest"
hunks = [{rest}]
"""


def test_run_gets_assigned_hunks_and_retcon_paths_applies_them_without_paths(project, tmp_path, scripted):
    import pygit2

    from git_retcon import diff
    from git_retcon.diff.remaining import remaining

    r = pygit2.Repository(str(project.path))
    left = remaining(r, project.tree("main"), project.tree("feature"))
    util = [h.id for h in left if h.path == "util.py"]
    rest = [h.id for h in left if h.path != "util.py"]
    (tmp_path / "s.toml").write_text(ASSIGNED.format(util=", ".join(f'"{i}"' for i in util),
                                                     rest=", ".join(f'"{i}"' for i in rest)))
    assert retcon(project, "plan", "--from-file", str(tmp_path / "s.toml"), "--no-edit").code == 0
    shown = retcon(project, "spec", "show").out
    assert f'hunks = ["{util[0]}"]' in shown
    res = retcon(project, "run", "-m", "retcon-paths")
    assert res.code == 0, res.text
    assert project.git("diff", "--name-only", "main", "feature-clean~1") == "util.py"
    assert project.tree("feature-clean") == project.tree("feature")
    # A model that chooses in each commit's conversation reads them in the extraction prompt (where
    # questions placed the hunks, no model is asked to confirm them).
    retcon(project, "abort", "feature-clean")
    project.git("config", "retcon.owners", "conversation")
    log = scripted({"*/extract": [{"calls": [{"name": "stuck", "arguments": {"summary": "just looking"}}]}]})
    retcon(project, "run", "-m", "scripted")
    prompt = json.loads(log.read_text().splitlines()[0])["prompt"]
    # The spec keeps the whole id; the prompt shows it as read_diff does, abbreviated.
    assert f"Assigned hunks: {diff.short_ids(h.id for h in left)[util[0]]}\n" in prompt


def test_onto_after_push_u_is_the_remotes_default_branch(tmp_path):
    """`git push -u origin feature`: the upstream is the source's own copy, not where it merges."""
    repo = feature_repo(tmp_path / "repo")
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(tmp_path / "bare.git")], check=True)
    repo.git("remote", "add", "origin", str(tmp_path / "bare.git"))
    repo.git("push", "-q", "origin", "main")
    repo.git("checkout", "-q", "feature")
    repo.git("push", "-q", "-u", "origin", "feature")
    res = retcon(repo, "plan", "--from-commits", "--no-edit")
    assert res.code == 0, res.text
    assert "'feature' tracks 'origin/feature'" in res.out and "onto 'origin/main'" in res.out, res.out
    assert "remote = \"origin/main\"" in retcon(repo, "spec", "show").out
    # origin/HEAD, when the clone knows it, names the default branch.
    repo.git("push", "-q", "origin", "main:trunk")
    repo.git("remote", "set-head", "origin", "trunk")
    res = retcon(repo, "plan", "--from-commits", "--no-edit", "--force")
    assert res.code == 0 and "onto 'origin/trunk'" in res.out, res.text
