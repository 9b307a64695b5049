"""The spec's `setup` installs a project's dependencies in the build worktree: once when the
worktree is new, again when a commit changes a lockfile, never otherwise; a failure at the base
is the command's (an error with its output), mid-run the commit's (the fix loop takes it).

The project stands in for an npm one without npm: `install.sh` does what `npm ci` does (the
lockfile's package, from registry/, into the ignored node_modules/, with its program `bundt` in
node_modules/.bin), and logs each run to a file outside the repository, so the tests count them.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

from testing.cleaned import edit_spec
from testing.flow import retcon, spec_with
from testing.gitrepo import GitRepo
from testing.sandboxes import shown, worktrees

INSTALL = """\
#!/bin/sh
# What `npm ci` does here: the lockfile's package into node_modules/, with its program.
echo run >> {log}
set -e
version=$(sed -n 's/.*"dep": \\([0-9]*\\).*/\\1/p' package-lock.json)
rm -rf node_modules && mkdir -p node_modules/.bin
test -f registry/dep-$version || {{
    echo "npm error enoent ENOENT: no such file or directory, open 'registry/dep-$version'"; exit 254; }}
cp registry/dep-$version node_modules/dep.txt
printf '#!/bin/sh\\ncat node_modules/dep.txt\\n' > node_modules/.bin/bundt
chmod +x node_modules/.bin/bundt
"""
# `npm run build`: the project's programs on PATH, then the build script.
BUILD = 'export PATH="$PWD/node_modules/.bin:$PATH"\nbundt > /dev/null\n'
TEST = 'grep -qx "needs: $(cat node_modules/dep.txt)" app.txt\n'

SPEC = """\
source = "feature"
remote = "main"
cleaned = "feature-clean"
setup = "sh install.sh"
build = "sh build.sh"
test = "sh test.sh"

[[commit]]
message = "lib: hello"
paths = ["lib.txt"]

[[commit]]
message = "app: needs dep two"
paths = ["package-lock.json", "registry/", "app.txt"]

[[commit]]
message = "docs"
paths = ["README"]
"""


def project(tmp_path: Path, spec: str = SPEC) -> tuple[GitRepo, Path]:
    """main: the frame, needing dep one; feature: a lib file, dep two (lockfile, package, app), docs."""
    log = tmp_path / "setup.log"
    repo = GitRepo.init(tmp_path / "repo")
    repo.commit("frame", {".gitignore": "node_modules/\n", "package.json": '{"name": "demo"}\n',
                          "package-lock.json": '{"dep": 1}\n', "registry/dep-1": "dep one\n",
                          "install.sh": INSTALL.format(log=log), "build.sh": BUILD, "test.sh": TEST,
                          "app.txt": "needs: dep one\n"})
    repo.git("checkout", "-q", "-b", "feature")
    repo.commit("wip", {"lib.txt": "hello\n"})
    repo.commit("dep two", {"package-lock.json": '{"dep": 2}\n', "registry/dep-2": "dep two\n",
                            "app.txt": "needs: dep two\n"})
    repo.commit("docs", {"README": "demo\n"})
    repo.git("checkout", "-q", "main")
    # install.sh logs its runs beside the repository: a folder the sandbox lets it write.
    (tmp_path / "spec.toml").write_text(spec_with(spec, writable=[tmp_path]))
    res = retcon(repo, "plan", "--from-file", str(tmp_path / "spec.toml"), "--no-edit")
    assert res.code == 0, res.text
    return repo, log


def runs(log: Path) -> int:
    return len(log.read_text().splitlines()) if log.exists() else 0


def kept(repo: GitRepo) -> Path:
    return worktrees(repo.path) / "kept" / "worktrees" / "feature-clean"


def listed(repo: GitRepo) -> list[str]:
    out = repo.git("worktree", "list", "--porcelain")
    return [ln.removeprefix("worktree ") for ln in out.splitlines() if ln.startswith("worktree ")]


def test_setup_runs_in_a_new_worktree_and_again_only_when_a_commit_changes_a_lockfile(tmp_path):
    repo, log = project(tmp_path)
    res = retcon(repo, "run", "-m", "retcon-paths")
    assert res.code == 0, res.text
    assert "Setup `sh install.sh` (new worktree)... PASS" in res.out
    assert "Setup `sh install.sh` (package-lock.json changed)... PASS" in res.out
    assert res.out.count("Setup `") == 2 and runs(log) == 2     # not for lib.txt, nor for the docs
    assert repo.log("main..feature-clean") == ["docs", "app: needs dep two", "lib: hello"]
    assert repo.tree("feature-clean") == repo.tree("feature")
    assert retcon(repo, "check").code == 0


def test_a_complete_spec_keeps_the_installed_files_for_the_next_run_out_of_git_worktree_list(tmp_path):
    repo, log = project(tmp_path)
    res = retcon(repo, "run", "-m", "retcon-paths")
    assert res.code == 0, res.text
    where = shown(kept(repo))
    assert ("Kept the build worktree for the next run, with the files git ignores there (node_modules/; "
            in res.out) and f"B): {where}. Free it with `git retcon free feature-clean`." in res.out
    assert (kept(repo) / "node_modules" / "dep.txt").read_text() == "dep two\n"
    assert listed(repo) == [str(repo.path)]     # only the user's: no registered worktree of ours
    assert not (repo.path / ".git" / "worktrees").exists() or not list((repo.path / ".git" / "worktrees").iterdir())
    # The next run (the source moved on, the spec took a commit for it) brings it back with its
    # dependencies: the lockfile is as it was at the last setup, so no setup.
    (kept(repo) / "stray.txt").write_text("left by hand\n")      # not ignored: gone when it comes back
    (kept(repo) / "lib.txt").write_text("changed by hand\n")     # tracked: as committed again
    repo.git("checkout", "-q", "feature")
    repo.commit("more docs", {"NEWS": "news\n"})
    repo.git("checkout", "-q", "main")
    edit_spec(repo, lambda text: text + '\n[[commit]]\nmessage = "news"\npaths = ["NEWS"]\n')
    res = retcon(repo, "run", "-m", "retcon-paths")
    assert res.code == 0, res.text
    assert runs(log) == 2 and "Setup" not in res.out
    assert repo.log("main..feature-clean")[0] == "news" and repo.tree("feature-clean") == repo.tree("feature")
    assert not (kept(repo) / "stray.txt").exists() and (kept(repo) / "lib.txt").read_text() == "hello\n"
    assert (kept(repo) / "node_modules" / "dep.txt").read_text() == "dep two\n"
    assert listed(repo) == [str(repo.path)]
    # check --rerun builds every commit again: commit 1's lockfile asks for dep one, so setup runs.
    res = retcon(repo, "check", "--rerun")
    assert res.code == 0, res.text
    assert runs(log) == 4 and listed(repo) == [str(repo.path)] and kept(repo).is_dir()


def test_free_deletes_the_kept_worktree_and_leaves_the_spec_and_branch(tmp_path):
    repo, log = project(tmp_path)
    assert retcon(repo, "run", "-m", "retcon-paths").code == 0
    refs = repo.git("for-each-ref")
    res = retcon(repo, "free", "feature-clean")
    assert res.code == 0, res.text
    assert res.out.startswith("Freed ") and "B: deleted the build worktree of 'feature-clean' " \
        f"({shown(kept(repo))})" in res.out
    assert "the next run makes the worktree again and runs its setup." in res.out
    assert not kept(repo).exists() and not list((repo.path / ".git" / "retcon" / "setup").rglob("*.json"))
    assert repo.git("for-each-ref") == refs and retcon(repo, "check").code == 0
    assert retcon(repo, "free", "feature-clean").out == "Nothing to free: 'feature-clean' has no build worktree.\n"
    # Freed: the next run that needs a worktree installs again.
    assert retcon(repo, "check", "--rerun").code == 0 and runs(log) == 4   # one for dep one, one for dep two


def test_a_setup_that_fails_on_the_base_stops_before_any_model_call_with_its_output(tmp_path, scripted):
    repo, log = project(tmp_path, SPEC.replace('setup = "sh install.sh"',
                                               'setup = "echo ERROR: registry unreachable; exit 3"'))
    model_log = scripted({"*/extract": []})
    res = retcon(repo, "run", "-m", "scripted")
    assert res.code == 1, res.text
    base = repo.git("merge-base", "main", "feature")
    first, *output = res.err.splitlines()
    assert first == (f"error: the setup command fails on the base (merge-base {base[:12]}): "
                     "`echo ERROR: registry unreachable; exit 3` exits 3; fix `setup` in the spec "
                     "(git retcon spec edit feature-clean) so that it passes on the base, then run again. Its output:")
    assert output == ["  ERROR: registry unreachable"]
    assert not model_log.exists() and repo.rev("feature-clean") == base
    assert ("Setup `echo ERROR: registry unreachable; exit 3` (new worktree)... "
            "FAIL (setup: ERROR: registry unreachable)") in res.out


def test_a_commit_whose_lockfile_does_not_install_fails_and_the_fix_loop_takes_what_it_lacks(tmp_path):
    # Misordered: the lockfile asks for dep 2 in commit 2, whose package only commit 3 adds.
    repo, log = project(tmp_path, SPEC.replace('paths = ["package-lock.json", "registry/", "app.txt"]',
                                               'paths = ["package-lock.json", "app.txt"]')
                        .replace('paths = ["README"]', 'paths = ["README", "registry/"]'))
    res = retcon(repo, "run", "-m", "retcon-paths")
    assert res.code == 0, res.text
    assert "Setup `sh install.sh` (package-lock.json changed)... FAIL (setup: " in res.out
    assert "registry/dep-2" in res.out
    # The candidate is tried before the fix commit, with the commands' progress shown as the judge shows it.
    # Without the times a slow command earns (" (0.1s)"): the order is what is tested, not the speed.
    untimed = re.sub(r" \(\d+\.\ds\)", "", res.out)
    assert ("Trying the candidate hunks...\nSetup `sh install.sh` (it failed last time)... PASS\nBuilding... PASS"
            in untimed)
    commits = repo.log("main..feature-clean")
    assert commits[-2] == "app: needs dep two" and commits[-3].startswith("WIP: ")
    assert repo.git("show", "--name-only", "--format=", "feature-clean~1") == "registry/dep-2"
    assert repo.tree("feature-clean") == repo.tree("feature")
    # The failed setup is the commit's build verdict, and no record on its tree (it may pass another time).
    note = json.loads(repo.git("notes", "--ref=retcon", "show", "feature-clean~2"))
    assert note["build"] == "fail"
    tested = repo.git("notes", "--ref=retcon-tests", "show", repo.tree("feature-clean~2"), check=False)
    assert "sh install.sh" not in tested


def test_a_dev_dependency_missing_from_the_worktree_is_told_apart_and_setup_suggested(tmp_path):
    repo, _ = project(tmp_path, SPEC.replace('setup = "sh install.sh"\n', ""))
    res = retcon(repo, "run", "-m", "retcon-paths")
    assert res.code == 1, res.text
    first, *output = res.err.splitlines()
    assert "the build command `sh build.sh` is not found on the base" in first
    assert ("it runs `bundt`, which is not on PATH in the worktree: a dependency of the project? A `setup` command "
            'in the spec installs them in the worktree; this repository has package-lock.json: setup = "npm ci"'
            ) in first
    assert len(output) == 1 and "bundt: " in output[0] and "not found" in output[0]


def test_a_program_setup_did_not_install_is_named_with_the_setup(tmp_path):
    repo, _ = project(tmp_path, SPEC.replace('setup = "sh install.sh"', 'setup = "mkdir -p node_modules"'))
    res = retcon(repo, "run", "-m", "retcon-paths")
    assert res.code == 1, res.text
    assert ("it runs `bundt`, which is not on PATH after the setup `mkdir -p node_modules`: a dependency the setup "
            "does not install") in res.err


def test_a_program_installed_but_not_on_path_is_found_where_it_is(tmp_path):
    repo, _ = project(tmp_path, SPEC.replace('build = "sh build.sh"', 'build = "sh test.sh && bundt"'))
    res = retcon(repo, "run", "-m", "retcon-paths")
    assert res.code == 1, res.text
    assert "it runs `bundt`, which is in the worktree's node_modules/.bin/ but not on PATH" in res.err


def test_the_jobs_pool_sets_up_its_own_worktrees_and_keeps_them(tmp_path):
    repo, log = project(tmp_path)
    res = retcon(repo, "run", "-m", "retcon-paths", "--jobs", "2")
    assert res.code == 0, res.text
    pool = worktrees(repo.path) / "kept" / "pool" / "feature-clean" / "1"
    assert (pool / "node_modules" / "dep.txt").is_file()
    assert runs(log) >= 3          # the build worktree's at the base, the pool's own
    assert re.search(re.escape(shown(kept(repo))) + r" and \d of the --jobs pool\. Free them with", res.out)
    assert listed(repo) == [str(repo.path)]
    assert repo.tree("feature-clean") == repo.tree("feature")


def test_a_commit_stuck_on_its_setup_goes_back_to_the_fix_loop_after_resolve(tmp_path):
    # The lockfile asks for dep 2, whose package no commit adds: setup fails on commit 2, nothing
    # in the remaining diff mends it, so the run stops stuck; resolved, the next run tries the fix
    # loop again (the commit's failure), not an error about the setup command.
    repo, log = project(tmp_path, SPEC.replace('paths = ["package-lock.json", "registry/", "app.txt"]',
                                               'paths = ["package-lock.json", "app.txt"]'))
    repo.git("checkout", "-q", "feature")
    repo.commit("no dep two", {"registry/dep-2": None})
    repo.git("checkout", "-q", "main")
    res = retcon(repo, "run", "-m", "retcon-paths")
    assert res.code == 3, res.text
    assert "Setup `sh install.sh` (package-lock.json changed)... FAIL (setup: " in res.out
    assert "Setup failed: `sh install.sh` (exit 254)" in res.err
    assert retcon(repo, "resolve", "-m", "will publish dep 2").code == 0
    res = retcon(repo, "run", "-m", "retcon-paths")
    assert res.code == 3, res.text
    assert ("Setup `sh install.sh` (it failed last time)... FAIL (setup: enoent ENOENT: no such file or directory, "
            "open 'registry/dep-2')") in res.out
    assert "Resolved: will publish dep 2" in res.out and "error:" not in res.err
