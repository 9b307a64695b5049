"""A sandbox that slows a command several times says why, in `run -v` (issue 38: tox took 11.5 s
under bubblewrap or Landlock against 4.1 s unconfined, unexplained): what the command wrote to its
private temp folder, measured, and its time beside the unconfined time recorded on the same tree.
Real mechanisms, each skipped where it does not work here."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from git_retcon.sandbox import slow
from git_retcon.sandbox.confine import FORCE_ENV
from testing.flow import feature_repo, plan_file, retcon
from testing.gitrepo import GitRepo
from testing.sandboxes import MECHANISMS

# One logical commit (the last: plain code takes everything, no model), so a run is the base's test
# and one commit's.
ONE = """\
source = "feature"
remote = "main"
cleaned = "feature-clean"
test = "{test}"

[[commit]]
message = "util: two(), used by main"
paths = ["util.py", "app.py", "README", "notes/"]
"""
PASSES = "python3 -c 'import app; app.main()'"


def planned(tmp_path: Path, test: str) -> GitRepo:
    repo = feature_repo(tmp_path / "repo")
    res = plan_file(repo, tmp_path, ONE.format(test=test.replace('"', '\\"')))
    assert res.code == 0, res.text
    return repo


@pytest.mark.parametrize("mech", MECHANISMS)
def test_a_test_that_fills_its_temp_folder_is_named_in_verbose_only(tmp_path, mech, monkeypatch):
    monkeypatch.setenv(FORCE_ENV, mech)
    repo = planned(tmp_path, f'head -c 25000000 /dev/zero > "$TMPDIR/blob" && {PASSES}')
    said = f"test wrote 25 MB (1 file) to its private temp folder under {mech}"
    res = retcon(repo, "run", "-m", "retcon-paths")
    assert res.code == 0, res.text
    assert "private temp folder" not in res.text, res.text
    assert retcon(repo, "abort", "feature-clean").code == 0
    res = retcon(repo, "run", "-m", "retcon-paths", "-v", "--retest")
    assert res.code == 0, res.text
    lines = [ln for ln in res.out.splitlines() if said in ln]
    assert len(lines) == 2, res.out            # the base's test, and commit 1's
    assert "starts empty for each command" in lines[0] and "check --rerun" not in lines[0]   # no commit yet
    advice = "git retcon check --rerun --sandbox off feature-clean"
    assert lines[1].endswith(advice), lines[1]
    # The advice works as written: the unconfined time, per logical commit.
    res = retcon(repo, *advice.split()[2:])
    assert res.code == 0, res.text
    assert re.search(r"commit 1/1 \w+: test pass \(\d+\.\ds\)", res.out), res.out


@pytest.mark.parametrize("mech", MECHANISMS)
def test_a_test_slow_only_when_confined_shows_both_times(tmp_path, mech, monkeypatch):
    monkeypatch.setenv(FORCE_ENV, mech)
    # Sleeps only in the sandbox's private temp folder (TMPDIR is git-retcon-tmp-<pid>-... there).
    repo = planned(tmp_path, f'case "$TMPDIR" in *git-retcon-tmp-*) sleep 3;; esac; {PASSES}')
    res = retcon(repo, "run", "-m", "retcon-paths", "--sandbox", "off")
    assert res.code == 0, res.text
    assert retcon(repo, "abort", "feature-clean").code == 0
    res = retcon(repo, "run", "-m", "retcon-paths", "-v")
    assert res.code == 0, res.text
    found = re.findall(rf"test took (\d+\.\d) s under {mech}, (\d+\.\d) s unconfined on this tree: (.*)", res.out)
    assert len(found) == 2, res.out            # the base's test, and commit 1's
    for confined, unconfined, why in found:
        assert float(confined) >= 3 and float(unconfined) < float(confined) - 2, res.out
        assert "network is off" in why and "temp folder" not in why, why


def test_the_walk_counts_files_and_bytes_and_stops_at_its_bound(tmp_path, monkeypatch):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "x").write_bytes(b"1" * 1500)
    (tmp_path / "y").write_bytes(b"22")
    (tmp_path / "link").symlink_to("/usr")     # not followed
    assert slow.measure(str(tmp_path)) == slow.Left(1502, 2)
    assert slow.Left(1502, 2).say() == "1.5 KB (2 files)"
    monkeypatch.setattr(slow, "MAX_ENTRIES", 2)
    assert slow.measure(str(tmp_path)).more


def test_a_small_slowdown_or_a_quiet_temp_folder_says_nothing():
    big = slow.Left(85_000_000, 3120)
    assert slow.explain("test", "bubblewrap", 1.5, 0.4, big, False, "x") is None     # under 2 s more
    assert slow.explain("test", "bubblewrap", 9.0, 4.1, big, False, "x") is None     # not 2.5 times
    assert slow.explain("test", "bubblewrap", 9.0, None, slow.Left(5_000_000, 9), False, "x") is None
    line = slow.explain("test", "landlock", 11.5, 4.1, big, False, "x")   # the tox run of issue 38
    assert line == ("test took 11.5 s under landlock, 4.1 s unconfined on this tree: it wrote 85 MB "
                    "(3,120 files) to its private temp folder, which starts empty for each command, so a tool "
                    "that caches there (tox, virtualenv, pip's build isolation) starts cold; network is off, so a "
                    "tool that checks for updates or downloads waits for it")
    quiet = slow.explain("test", "landlock", 12.5, 4.1, slow.Left(0, 0), True, "x")
    assert quiet is not None and "(git retcon spec edit x)" in quiet and "writable" in quiet
