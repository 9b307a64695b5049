"""Identity and signing as `git commit` does them: no identity is refused with git's advice
before any model call; commit.gpgSign signs every commit git-retcon makes."""
from __future__ import annotations

import shutil
import subprocess

import pytest

from testing.fixcase import make
from testing.flow import SPEC, feature_repo, retcon, take
from tests.reconstruct.test_squash import SCRIPT as SQUASH_SCRIPT

IDENTITY_VARS = ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "EMAIL")


def planned(tmp_path):
    repo = feature_repo(tmp_path / "repo")
    (tmp_path / "s.toml").write_text(SPEC)
    assert retcon(repo, "plan", "--from-file", str(tmp_path / "s.toml"), "--no-edit").code == 0
    return repo


def no_identity(repo, monkeypatch):
    for var in IDENTITY_VARS:
        monkeypatch.delenv(var, raising=False)
    # Like a user with nothing configured, on any machine: git guesses no identity from the host.
    repo.git("config", "user.useConfigOnly", "true")
    assert subprocess.run(["git", "commit", "--allow-empty", "-m", "x"], cwd=repo.path,
                          capture_output=True).returncode != 0    # git commit refuses too


def test_no_identity_is_refused_with_gits_advice_before_any_model_call(tmp_path, monkeypatch, scripted):
    repo = planned(tmp_path)
    log = scripted({"*/extract": take("")})
    no_identity(repo, monkeypatch)
    before = repo.git("for-each-ref")

    res = retcon(repo, "run", "-m", "scripted")

    assert res.code == 1, res.text
    lines = [ln for ln in res.err.splitlines() if ln.strip()]
    assert len(lines) == 1 and "Traceback" not in res.text, res.err
    assert "git does not know who you are" in lines[0]
    assert 'git config --global user.email "you@example.com"' in lines[0]
    assert not log.exists(), log.read_text()                 # the model was never called
    assert repo.git("for-each-ref") == before                # nothing was made

    res = retcon(repo, "plan", "--from-commits", "--cleaned", "other", "--no-edit")
    assert res.code == 1 and "git does not know who you are" in res.err, res.text


def test_the_users_identity_is_on_the_commits(tmp_path, monkeypatch):
    repo = planned(tmp_path)
    for var in IDENTITY_VARS:
        monkeypatch.delenv(var, raising=False)
    repo.git("config", "user.name", "Ada Lovelace")
    repo.git("config", "user.email", "ada@example.org")
    assert retcon(repo, "run", "-m", "retcon-paths").code == 0
    assert set(repo.log("main..feature-clean", "%an <%ae>|%cn <%ce>")) == {
        "Ada Lovelace <ada@example.org>|Ada Lovelace <ada@example.org>"}


@pytest.fixture(autouse=True)
def _no_gpg_agent_left(tmp_path):
    """gpg starts an agent for the test's GNUPGHOME, which would outlive the test (and the suite)."""
    yield
    home = tmp_path / "gnupg"
    if home.exists() and shutil.which("gpgconf"):
        subprocess.run(["gpgconf", "--homedir", str(home), "--kill", "gpg-agent"], capture_output=True, check=False)


def gpg_key(tmp_path, monkeypatch) -> str:
    if shutil.which("gpg") is None:
        pytest.skip("gpg is not installed")
    home = tmp_path / "gnupg"
    home.mkdir(mode=0o700)
    monkeypatch.setenv("GNUPGHOME", str(home))
    subprocess.run(["gpg", "--batch", "--passphrase", "", "--quick-gen-key", "Test Author <author@example.com>",
                    "ed25519", "sign", "never"], check=True, capture_output=True)
    out = subprocess.run(["gpg", "--batch", "--with-colons", "--list-secret-keys"], check=True,
                         capture_output=True, text=True).stdout
    return next(line.split(":")[9] for line in out.splitlines() if line.startswith("fpr:"))


def ssh_key(tmp_path, repo) -> str:
    if shutil.which("ssh-keygen") is None:
        pytest.skip("ssh-keygen is not installed")
    key = tmp_path / "id_ed25519"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)], check=True)
    signers = tmp_path / "allowed_signers"
    signers.write_text(f"author@example.com {(tmp_path / 'id_ed25519.pub').read_text()}")
    repo.git("config", "gpg.format", "ssh")
    repo.git("config", "gpg.ssh.allowedSignersFile", str(signers))
    return str(key)


@pytest.mark.parametrize("kind", ["gpg", "ssh"])
def test_commit_gpgsign_signs_every_commit_as_git_commit_would(tmp_path, monkeypatch, scripted, kind):
    repo = make(tmp_path, docs=1)
    key = gpg_key(tmp_path, monkeypatch) if kind == "gpg" else ssh_key(tmp_path, repo)
    repo.git("config", "user.signingKey", key)
    repo.git("config", "commit.gpgSign", "true")
    scripted(SQUASH_SCRIPT)   # a WIP fix commit, so that squash makes a commit too

    res = retcon(repo, "run", "-m", "scripted", "--squash-wip")

    assert res.code == 0, res.text
    assert "Squashed 1 WIP commit into" in res.out
    made = repo.git("rev-list", "main..feature-clean").split()
    assert len(made) == 2
    for sha in made:
        check = subprocess.run(["git", "verify-commit", sha], cwd=repo.path, capture_output=True, text=True)
        assert check.returncode == 0, check.stderr
    assert repo.tree("feature-clean") == repo.tree("feature")
    assert repo.log("main..feature-clean", "%an <%ae>")[0] == "Test Author <author@example.com>"


def test_a_signing_failure_is_one_line_not_an_unsigned_commit(tmp_path, scripted):
    repo = planned(tmp_path)
    repo.git("config", "commit.gpgSign", "true")
    repo.git("config", "gpg.program", "false")          # a signer that fails, as a locked card would
    scripted({"*/extract": take("util.py")})

    res = retcon(repo, "run", "-m", "scripted")

    assert res.code == 1, res.text
    lines = [ln for ln in res.err.splitlines() if ln.strip()]
    assert len(lines) == 1 and "signing a commit failed" in lines[0], res.err
    assert repo.git("rev-list", "main..feature-clean", check=False) == ""


def test_git_c_commit_gpgsign_counts_as_git_commit_would(tmp_path, monkeypatch, scripted):
    # `git -c commit.gpgSign=true -c user.signingKey=K retcon run` hands its -c options over as
    # GIT_CONFIG_PARAMETERS, as to any git subcommand; libgit2 alone would not see them.
    repo = planned(tmp_path)
    key = gpg_key(tmp_path, monkeypatch)
    monkeypatch.setenv("GIT_CONFIG_PARAMETERS", f"'commit.gpgsign'='true' 'user.signingkey'='{key}'")
    scripted({"1/extract": take("util.py"), "2/extract": take("app.py"), "3/extract": take("")})

    res = retcon(repo, "run", "-m", "scripted")

    assert res.code == 0, res.text
    for sha in repo.git("rev-list", "main..feature-clean").split():
        check = subprocess.run(["git", "verify-commit", sha], cwd=repo.path, capture_output=True, text=True)
        assert check.returncode == 0, check.stderr
