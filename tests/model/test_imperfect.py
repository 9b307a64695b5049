"""An imperfect model (testing/imperfect_model.py) makes the mistakes mid-size models
make with tool calling, and corrects one only when the answer says what went wrong.
Over many seeds it must finish every step at the expected tree, and no wrong tree
may ever be accepted as complete (issue 11, part 2). The spec names each commit's files
in its hints only (no `paths`): the model chooses the hunks, nothing is applied for it."""
from __future__ import annotations

import json
import shutil

import pytest

from testing import imperfect_model
from testing.flow import retcon
from testing.gitrepo import GitRepo

SEEDS = range(24)      # 24 runs of 3 model steps: the 72 steps the issue measured (the 4th is plain code's)
SPEC = """\
source = "feature"
remote = "main"
cleaned = "clean"
owners = "conversation"

[[commit]]
message = "util: add two()"
hints = "Files: util.py, sub/"

[[commit]]
message = "app: use two(), and CI"
hints = "Files: app.py, .github/"

[[commit]]
message = "docs: a guide; drop old notes"
hints = "Files: docs/, old.txt"

[[commit]]
message = "readme: say more"
hints = "Files: README"
"""
# The logical commits, as a human would have made them: the trees each step must reach.
LOGICAL = [
    {"util.py": "def one():\n    return 1\n\n\ndef two():\n    return 2\n",
     "sub/x.py": "X = 1\nY = 2\n"},
    {"app.py": "import util\n\n\ndef main():\n    return util.one() + util.two()\n\n\nif __name__ == '__main__':\n"
               "    print(main())\n",
     ".github/workflows/ci.yml": "name: ci\non: push\njobs: {}\n"},
    {"docs/guide.md": "# Guide\n\nRun app.py.\n", "old.txt": None},
    {"README": "r\n\nSee docs/guide.md.\n"},    # the last commit: taken by plain code, no model
]


@pytest.fixture(scope="module")
def template(tmp_path_factory):
    """main, a `reference` branch of the logical commits, and `feature`: the same end
    state in one messy commit."""
    from testing.gitrepo import HERMETIC_ENV

    with pytest.MonkeyPatch.context() as mp:
        for key, value in HERMETIC_ENV.items():
            mp.setenv(key, value)
        mp.setenv("HOME", str(tmp_path_factory.mktemp("home")))
        repo = GitRepo.init(tmp_path_factory.mktemp("template") / "repo")
        repo.commit("base", {"util.py": "def one():\n    return 1\n", "sub/x.py": "X = 1\n",
                             "app.py": "import util\n\n\ndef main():\n    return util.one()\n",
                             "old.txt": "old\n", "README": "r\n"})
        repo.git("checkout", "-q", "-b", "reference")
        for i, files in enumerate(LOGICAL):
            repo.commit(f"logical {i + 1}", files)
        repo.git("checkout", "-q", "-b", "feature", "main")
        repo.git("checkout", "-q", "reference", "--", ".")
        repo.git("rm", "-q", "old.txt")
        repo.commit("everything at once")
        repo.git("checkout", "-q", "main")
        assert repo.tree("feature") == repo.tree("reference")
        return repo


@pytest.fixture
def imperfect(tmp_path, monkeypatch):
    imperfect_model.register()
    log = tmp_path / "imperfect.jsonl"
    monkeypatch.setenv("RETCON_IMPERFECT_LOG", str(log))
    yield log
    imperfect_model.unregister()


def test_over_many_seeds_every_step_ends_at_the_expected_tree(template, imperfect, tmp_path, monkeypatch):
    expected = [template.tree(f"reference~{len(LOGICAL) - 1 - i}") for i in range(len(LOGICAL))]
    (tmp_path / "spec.toml").write_text(SPEC)
    for seed in SEEDS:
        repo = GitRepo(shutil.copytree(template.path, tmp_path / f"run{seed}"))
        assert retcon(repo, "plan", "--from-file", str(tmp_path / "spec.toml"), "--no-edit").code == 0
        monkeypatch.setenv("RETCON_IMPERFECT_SEED", str(seed))
        res = retcon(repo, "run", "-m", "imperfect")
        assert res.code == 0, f"seed {seed}: {res.text}"
        made = repo.git("rev-list", "--reverse", "main..clean").split()
        # One commit per step, each at the tree the logical commit has: no WIP, nothing wrong accepted.
        assert [repo.tree(sha) for sha in made] == expected, f"seed {seed}"
        assert repo.log("main..clean")[::-1] == ["util: add two()", "app: use two(), and CI",
                                                 "docs: a guide; drop old notes", "readme: say more"]
    turns = [json.loads(ln) for ln in imperfect.read_text().splitlines()]
    # The model played the first 3 steps of every seed, and never the last commit's.
    played = {(t["seed"], t["step"]) for t in turns}
    assert played == {(str(seed), f"{k}/extract/1") for seed in SEEDS for k in (1, 2, 3)}
    assert len(played) == 72
    # It did make every kind of mistake, many times: the test is not a well-behaved model's.
    made = [t["mistake"] for t in turns]
    kinds = {m for m in made if m}
    assert kinds == {"unknown tool", "missing file", "absolute path", "text, not a call", "page as a string",
                     "invented ids", "ids in an object", "call as JSON text", "call as code text", "empty commit",
                     "CRLF file", "no final newline", "message as an object", "commit as JSON text",
                     "believes it committed", "namespaced tool name", "tool name in another case",
                     "plural dropped"}, kinds
    assert sum(1 for m in made if m) > 2 * len(SEEDS)
