"""A sandbox that slows a command several times says why, in `run -v` (issue 38: tox took 11.5 s
under bubblewrap or Landlock against 4.1 s unconfined, unexplained): what the command wrote to its
private temp folder, measured, and its time beside the unconfined time recorded on the same tree."""
from __future__ import annotations

from git_retcon.sandbox import slow


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
