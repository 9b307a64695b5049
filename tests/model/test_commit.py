"""create_commit: an empty message, and the lines a model invented (in neither the base
nor the source), named in the answer, kept in the note, shown by status."""
from __future__ import annotations

import json

from testing.fixcase import make
from testing.flow import call, retcon, take, turn
from tests.model.test_answers import MINE, UTIL, small


def note(repo, rev):
    return json.loads(repo.git("notes", "--ref=refs/notes/retcon", "show", rev))


def test_an_empty_message_is_the_specs_and_nothing_invented_is_counted_zero(tmp_path, scripted):
    repo = small(tmp_path)
    log = scripted({"1/extract": [turn(call("apply_hunks", hunk_ids=MINE)), turn(call("create_commit"))]})
    res = retcon(repo, "run", "-m", "scripted")
    assert res.code == 0, res.text
    assert repo.log("main..clean") == ["the rest", "util: two() and CI"]
    assert [e["calls"][0]["name"] for e in map(json.loads, log.read_text().splitlines())] == \
        ["apply_hunks", "create_commit"]
    assert note(repo, "clean~1")["invented"] == {"count": 0, "lines": []}


def test_invented_lines_are_counted_noted_and_shown_by_status(tmp_path, scripted):
    repo = small(tmp_path)
    wrong = UTIL.replace("return 2", "return 2  # two") + "\n\ndef three():\n    return 3\n"
    scripted({"1/extract": [
        turn(call("apply_hunks", hunk_ids="$ids:.github/")),
        turn(call("write_file", path="util.py", content=wrong)),
        turn(call("create_commit", message="")),
    ]})
    res = retcon(repo, "run", "-m", "scripted")
    # Commit 1 is kept as written; the last commit (plain code) takes what brings the source's tree back.
    assert res.code == 0, res.text
    assert repo.tree("clean") == repo.tree("feature")
    assert repo.git("show", "clean~1:util.py") == wrong.rstrip("\n")
    drift = note(repo, "clean~1")["invented"]
    assert drift == {"count": 3, "lines": ["util.py: +    return 2  # two", "util.py: +def three():",
                                           "util.py: +    return 3"]}
    doc = json.loads(retcon(repo, "status", "--json").out)
    assert doc["commits"][0]["invented"]["count"] == 3
    assert "Commit 1: 3 invented lines (in neither the base nor the source): util.py: +    return 2  # two" \
        in retcon(repo, "status").out


def test_a_line_without_its_final_newline_is_counted_and_explained(tmp_path, scripted):
    repo = small(tmp_path)
    scripted({"1/extract": [
        turn(call("apply_hunks", hunk_ids="$ids:.github/")),
        turn(call("write_file", path="util.py", content=UTIL.rstrip("\n"))),
        turn(call("create_commit", message="x")),
    ]})
    assert retcon(repo, "run", "-m", "scripted").code == 0
    assert note(repo, "clean~1")["invented"] == {
        "count": 1, "lines": ["util.py: +    return 2 (the same line, but without its newline)"]}


def test_an_empty_fix_message_is_wip_and_the_failures_summary(tmp_path, scripted):
    repo = make(tmp_path, docs=0, extra=True)    # the brief's candidate alone fails: the model is asked
    scripted({"1/extract": take("app.py"),
              "1/fix/1": [turn(call("apply_hunks", hunk_ids="$ids:extra.py")), turn(call("create_commit", message=""))],
              "2/extract": take("")})
    res = retcon(repo, "run", "-m", "scripted")
    assert res.code == 0, res.text
    assert repo.log("main..feature-clean")[1] == ("WIP: Test failed: `python3 -c 'import app; app.main()'` (exit 1): "
                                                  "AttributeError: module 'util' has no attribute 'two'")
    assert note(repo, "feature-clean~1")["invented"]["count"] == 0


def test_lines_removed_that_the_source_keeps_are_invented_too(tmp_path, scripted):
    """A model that deletes a file the source keeps (its tests then pass vacuously) is seen: the
    answer, the note and status count the removed lines; a line only re-ended counts once."""
    repo = small(tmp_path)
    scripted({"1/extract": [
        turn(call("apply_hunks", hunk_ids=MINE)),
        turn(call("delete_file", path="README")),
        turn(call("create_commit", message="x")),
    ]})
    res = retcon(repo, "run", "-m", "scripted")
    assert res.code == 0, res.text
    assert repo.tree("clean") == repo.tree("feature")    # the last commit brings README back
    drift = note(repo, "clean~1")["invented"]
    assert drift == {"count": 1, "lines": ["README: -r"], "removed": 1}
    # What create_commit answered (the step ended with it), as the tool worked it out.
    import pygit2

    from git_retcon.model.invented import invented
    r = pygit2.Repository(str(repo.path))
    trees = [str(r.revparse_single(rev).tree_id) for rev in ("main", "clean~1", "feature")]
    assert invented(r, trees[0], trees[1], trees[0], trees[2]).answer() == (
        "\nNote: 1 removed line that the source branch keeps (invented; recorded in the commit's note): README: -r")
    assert "Commit 1: 1 invented lines (1 of them removed while the source keeps them): README: -r" \
        in retcon(repo, "status").out


def test_lines_holding_a_carriage_return_are_not_invented_when_the_source_has_them(tmp_path, scripted):
    from testing.gitrepo import GitRepo

    repo = GitRepo.init(tmp_path / "repo")
    repo.commit("base", {"a.txt": "one\n"})
    repo.git("checkout", "-q", "-b", "feature")
    repo.commit("cr", {"a.txt": "one\nprogress 10%\rprogress 20%\ntwo\r\n"})
    repo.git("checkout", "-q", "main")
    (tmp_path / "spec.toml").write_text('source = "feature"\nremote = "main"\ncleaned = "clean"\n'
                                        'owners = "conversation"\n\n'
                                        '[[commit]]\nmessage = "cr"\n\n[[commit]]\nmessage = "rest"\n')
    assert retcon(repo, "plan", "--from-file", str(tmp_path / "spec.toml"), "--no-edit").code == 0
    scripted({"1/extract": [turn(call("write_file", path="a.txt", content="one\nprogress 10%\rprogress 20%\ntwo\r\n")),
                            turn(call("create_commit", message="x")),
                            turn(call("create_commit", message="x", confirm="the whole change is this commit"))]})
    assert retcon(repo, "run", "-m", "scripted").code == 0      # the last, left with nothing, is complete
    assert note(repo, "clean")["invented"] == {"count": 0, "lines": []}
