"""A second imperfect model (testing/imperfect2_model.py), with other mistakes than the
first's: over many seeds every step ends at the expected tree, no wrong tree is accepted,
no run is stuck, and every mistake got an answer with the words a model needs (issue 11)."""
from __future__ import annotations

import json
import re
import shutil

import pytest

from testing import imperfect2_model
from testing.flow import retcon
from testing.gitrepo import GitRepo
from tests.model.test_imperfect import LOGICAL, SPEC, template  # noqa: F401  (the fixture)

SEEDS = range(24)      # 24 runs of 3 model steps: 72 steps, as for the first model (the 4th is plain code's)
# What each mistake is answered (a regex of the answer the next turn read).
ANSWERS = {
    "diff header path": r"^(?!Error|Cancelled)",      # read as the path meant
    "page out of range": r"page 2 is out of range: valid pages are 1 to 1",
    "unknown extra argument": r"^Error: read_diff has no parameter 'file_filter': call read_diff\(path: string, "
                              r"page: integer\)",
    "Hermes tool_call text": r"^Executed: your reply wrote read_diff\(\{\}\) as text.*Result:\n",
    "Llama function tag": r"^Executed: your reply wrote (read_diff|create_commit)\(.*Result:\n",
    "default_api name": r'^Cancelled: there is no tool "default_api\.(read_diff|apply_hunks)": did you mean '
                        r"(read_diff|apply_hunks)\? Call it by that exact name",
    "ids dressed": r"^(\(read hunk_ids as \[[^]]+\]: write ids plainly, as read_diff shows them\) )?Applied \d",
    "diff header paths": r"^Applied \d+ hunks",
    "selection written otherwise": r"^\(read hunk_ids as \['[0-9a-f]+:1-\d+'.*\) Applied \d+ hunks",
    "extra argument": r"^Error: apply_hunks has no parameter 'path': call apply_hunks\(hunk_ids: array of strings\)",
    "Mistral TOOL_CALLS text": r"^Executed: your reply wrote apply_hunks\(.*Result:\nApplied \d+ hunks",
    "trailing space": r"^(?!Error)",
    "missing content": r"^Error: write_file needs content: call write_file\(path: string, content: string\)",
    "apply again": r"^Nothing to apply: [0-9a-f]+ \(\S+\) is in the worktree already \(applied in this step\)\. "
                   r"\d+ hunks remain\. If this commit is complete, call create_commit\(\)\.",
    "same failing call": r"^Error: create_commit has no parameter 'amend'",
}


@pytest.fixture
def imperfect2(tmp_path, monkeypatch):
    imperfect2_model.register()
    log = tmp_path / "imperfect2.jsonl"
    monkeypatch.setenv("RETCON_IMPERFECT_LOG", str(log))
    yield log
    imperfect2_model.unregister()


def test_over_many_seeds_every_step_ends_at_the_expected_tree(template, imperfect2, tmp_path, monkeypatch):  # noqa: F811
    expected = [template.tree(f"reference~{len(LOGICAL) - 1 - i}") for i in range(len(LOGICAL))]
    (tmp_path / "spec.toml").write_text(SPEC)
    for seed in SEEDS:
        repo = GitRepo(shutil.copytree(template.path, tmp_path / f"run{seed}"))
        assert retcon(repo, "plan", "--from-file", str(tmp_path / "spec.toml"), "--no-edit").code == 0
        monkeypatch.setenv("RETCON_IMPERFECT_SEED", str(seed))
        res = retcon(repo, "run", "-m", "imperfect2")
        assert res.code == 0, f"seed {seed}: {res.text}"
        made = repo.git("rev-list", "--reverse", "main..clean").split()
        # One commit per step, each at the tree the logical commit has: no WIP, nothing wrong accepted.
        assert [repo.tree(sha) for sha in made] == expected, f"seed {seed}"
    turns = [json.loads(ln) for ln in imperfect2.read_text().splitlines()]
    played = {(t["seed"], t["step"]) for t in turns}
    assert played == {(str(seed), f"{k}/extract/1") for seed in SEEDS for k in (1, 2, 3)}
    # Every mistake was made, and each time got the answer a model recovers with.
    answer_to = {(t["seed"], t["step"], t["turn"] - 1): t["answer"] for t in turns}
    # A create_commit written as text ran and ended its step: no turn after it reads its answer.
    ended = [t for t in turns if t["mistake"] and (t["seed"], t["step"], t["turn"]) not in answer_to]
    assert all(t["mistake"] == "Llama function tag" for t in ended), ended
    made = [(t["mistake"], answer_to[t["seed"], t["step"], t["turn"]])
            for t in turns if t["mistake"] and t not in ended]
    assert {m for m, _ in made} == set(ANSWERS), {m for m, _ in made} ^ set(ANSWERS)
    for mistake, answer in made:
        assert re.search(ANSWERS[mistake], answer, re.S), (mistake, answer)
    # The same failing call, sent again, is told it is the same.
    assert any("This is the same call, with the same arguments" in a for m, a in made if m == "same failing call")
    assert len(made) > 2 * len(SEEDS)
