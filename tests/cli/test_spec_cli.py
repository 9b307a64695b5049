"""`spec show|export|import|edit`, `list`, `status`: the stored spec as TOML."""
from __future__ import annotations

import stat

from testing.flow import SPEC, call, feature_repo, retcon, turn


def planned(tmp_path):
    repo = feature_repo(tmp_path / "repo")
    (tmp_path / "spec.toml").write_text(SPEC)
    assert retcon(repo, "plan", "--from-file", str(tmp_path / "spec.toml"), "--no-edit").code == 0
    return repo


def editor(tmp_path, script: str) -> str:
    """A scripted $GIT_EDITOR: a shell script that edits the file it is given."""
    path = tmp_path / "editor.sh"
    path.write_text("#!/bin/sh\n" + script)
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return str(path)


def test_export_import_round_trip_versions_the_spec(tmp_path):
    repo = planned(tmp_path)
    assert retcon(repo, "spec", "export", "-o", str(tmp_path / "out.toml")).code == 0
    # the spec as show prints it, under a line naming the save it was made from (issue 38)
    head, _, body = (tmp_path / "out.toml").read_text().partition("\n")
    assert body == retcon(repo, "spec", "show").out
    assert head.startswith(f"# git retcon spec export of feature-clean at {repo.rev('refs/retcon/feature-clean')}")
    text = (tmp_path / "out.toml").read_text().replace('hints = "Only util.py."', 'hints = "util.py only"')
    (tmp_path / "out.toml").write_text(text)
    res = retcon(repo, "spec", "import", str(tmp_path / "out.toml"))
    assert res.code == 0 and "Imported spec 'feature-clean'" in res.out
    assert 'hints = "util.py only"' in retcon(repo, "spec", "show", "feature-clean").out
    assert repo.git("log", "--format=%s", "refs/retcon/feature-clean").splitlines() == ["import out.toml", "plan"]


def test_edit_validates_and_reopens_until_the_spec_parses(tmp_path, monkeypatch):
    """At a terminal, a refused edit reopens the editor, which shows the error."""
    monkeypatch.setattr("git_retcon.plan.write.at_terminal", lambda: True)
    repo = planned(tmp_path)
    # First save breaks a field name; on the reopen (which shows the error) the editor fixes it.
    script = editor(tmp_path, """
if grep -q 'ERROR' "$1"; then
  grep -q "unknown field 'hint'" "$1" || exit 9
  sed -i 's/^hint = /hints = /' "$1"
else
  sed -i 's/^hints = "Only util.py."/hint = "edited"/' "$1"
fi
""")
    monkeypatch.setenv("GIT_EDITOR", script)
    res = retcon(repo, "spec", "edit")
    assert res.code == 0, res.text
    assert 'hints = "edited"' in retcon(repo, "spec", "show").out


REFUSED = "sed -i 's/^hints = \"Only util.py.\"/hint = \"edited\"/' \"$1\"\necho ran >> {log}\n"


def test_a_refused_edit_off_a_terminal_says_why_once_and_never_reopens(tmp_path, monkeypatch):
    """A non-interactive EDITOR (a script) whose spec is refused looped with no output: off a
    terminal the editor runs once, and the refusal says why and what to do."""
    repo = planned(tmp_path)
    before = repo.rev("refs/retcon/feature-clean")
    log = tmp_path / "runs"
    monkeypatch.setenv("GIT_EDITOR", editor(tmp_path, REFUSED.format(log=log)))
    res = retcon(repo, "spec", "edit")
    assert res.code == 1, res.text
    assert log.read_text() == "ran\n"                         # opened once
    assert "unknown field 'hint'" in res.err and "nothing was saved" in res.err
    assert "spec export" in res.err and len(res.err.strip().splitlines()) == 1, res.err
    assert repo.rev("refs/retcon/feature-clean") == before


def test_at_a_terminal_an_editor_that_changes_nothing_after_a_refusal_is_not_reopened(tmp_path, monkeypatch):
    monkeypatch.setattr("git_retcon.plan.write.at_terminal", lambda: True)
    repo = planned(tmp_path)
    log = tmp_path / "runs"
    # Refused, then the same script again leaves the same refused spec: no third opening.
    monkeypatch.setenv("GIT_EDITOR", editor(tmp_path, REFUSED.format(log=log)))
    res = retcon(repo, "spec", "edit")
    assert res.code == 1 and "unknown field 'hint'" in res.err, res.text
    assert log.read_text() == "ran\nran\n"


def test_edit_to_an_empty_file_saves_nothing(tmp_path, monkeypatch):
    repo = planned(tmp_path)
    before = repo.rev("refs/retcon/feature-clean")
    monkeypatch.setenv("GIT_EDITOR", editor(tmp_path, ': > "$1"\n'))
    res = retcon(repo, "spec", "edit")
    assert res.code == 1 and "nothing was saved" in res.err
    assert repo.rev("refs/retcon/feature-clean") == before


def test_list_and_status_table(tmp_path):
    repo = planned(tmp_path)
    listed = retcon(repo, "list")
    assert listed.code == 0 and listed.out.startswith("feature-clean\tpending\t0/3 complete")
    table = retcon(repo, "status")
    assert table.code == 0
    assert "feature-clean: pending" in table.out
    assert "  2  pending" in table.out and "app: use two()" in table.out


def test_name_is_required_when_several_specs_exist(tmp_path):
    repo = planned(tmp_path)
    repo.git("branch", "other", "feature")
    (tmp_path / "other.toml").write_text(SPEC.replace('cleaned = "feature-clean"', 'cleaned = "other-clean"')
                                         .replace('source = "feature"', 'source = "other"'))
    assert retcon(repo, "plan", "--from-file", str(tmp_path / "other.toml"), "--no-edit").code == 0
    res = retcon(repo, "status")
    assert res.code == 2 and "feature-clean, other-clean" in res.err
    # ...unless exactly one spec is for the current branch.
    repo.git("checkout", "-q", "other")
    res = retcon(repo, "status")
    assert res.code == 0 and res.out.startswith("other-clean:")


def test_show_prints_a_stuck_summary_as_lines_not_one_escaped_string(tmp_path, scripted):
    repo = planned(tmp_path)
    summary = 'Test failed: `pytest -q` (exit 1)\n\nEvidence:\n  app.py:5: NameError: name "two" is not defined'
    scripted({"1/extract": [turn(call("stuck", summary=summary))]})
    assert retcon(repo, "run", "-m", "scripted").code == 3
    shown = retcon(repo, "spec", "show").out
    assert '{ stuck = """\nTest failed: `pytest -q` (exit 1)\n\nEvidence:\n' in shown
    assert '  app.py:5: NameError: name "two" is not defined""" },' in shown
    # What is shown is the spec: it imports back unchanged.
    (tmp_path / "shown.toml").write_text(shown)
    assert retcon(repo, "spec", "import", str(tmp_path / "shown.toml")).code == 0
    assert retcon(repo, "spec", "show").out == shown


def test_edit_off_a_terminal_with_no_editor_says_an_editor_needs_a_terminal(tmp_path, monkeypatch):
    repo = planned(tmp_path)
    before = repo.rev("refs/retcon/feature-clean")
    for var in ("GIT_EDITOR", "VISUAL", "EDITOR"):
        monkeypatch.delenv(var, raising=False)
    # A `vi` that would record being launched: git's default editor must not be started.
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "vi").write_text(f"#!/bin/sh\ntouch {tmp_path}/vi-ran\n")
    (bin_dir / "vi").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{__import__('os').environ['PATH']}")
    res = retcon(repo, "spec", "edit")
    assert res.code == 1 and "an editor needs a terminal" in res.err, res.text
    assert "GIT_EDITOR" in res.err and "spec export" in res.err
    assert not (tmp_path / "vi-ran").exists()
    assert repo.rev("refs/retcon/feature-clean") == before


def test_edit_honours_core_editor_and_editor_as_git_does(tmp_path, monkeypatch):
    repo = planned(tmp_path)
    for var in ("GIT_EDITOR", "VISUAL", "EDITOR"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("EDITOR", editor(tmp_path,
                                        "sed -i 's/^hints = \"Only util.py.\"/hints = \"by EDITOR\"/' \"$1\"\n"))
    res = retcon(repo, "spec", "edit")
    assert res.code == 0, res.text
    assert 'hints = "by EDITOR"' in retcon(repo, "spec", "show").out
    script = tmp_path / "core.sh"
    script.write_text("#!/bin/sh\nsed -i 's/^hints = \"by EDITOR\"/hints = \"by core.editor\"/' \"$1\"\n")
    script.chmod(0o755)
    repo.git("config", "core.editor", str(script))     # core.editor wins over EDITOR, as in git
    res = retcon(repo, "spec", "edit")
    assert res.code == 0, res.text
    assert 'hints = "by core.editor"' in retcon(repo, "spec", "show").out
