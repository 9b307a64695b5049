"""Real git repositories for tests: built with the git binary, hermetically."""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

# Fixed identity and dates so commit ids are reproducible run to run.
HERMETIC_ENV = {
    "GIT_AUTHOR_NAME": "Test Author",
    "GIT_AUTHOR_EMAIL": "author@example.com",
    "GIT_AUTHOR_DATE": "@1700000000 +0000",
    "GIT_COMMITTER_NAME": "Test Committer",
    "GIT_COMMITTER_EMAIL": "committer@example.com",
    "GIT_COMMITTER_DATE": "@1700000000 +0000",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_EDITOR": "false",
    "GIT_TERMINAL_PROMPT": "0",
    "EDITOR": "false",
    "VISUAL": "false",
    "NO_COLOR": "1",
    "LANG": "C.UTF-8",
}


def hermetic_env(home: Path) -> dict[str, str]:
    """The variables a test process runs with: temp HOME, no user config."""
    env = dict(HERMETIC_ENV)
    env["HOME"] = str(home)
    env["XDG_CONFIG_HOME"] = str(home / ".config")
    env["LLM_USER_PATH"] = str(home / ".llm")
    return env


class GitRepo:
    """A repository on disk driven through the real git binary."""

    def __init__(self, path: Path):
        self.path = Path(path)

    @classmethod
    def init(cls, path: Path, branch: str = "main") -> GitRepo:
        path.mkdir(parents=True, exist_ok=True)
        subprocess.run(["git", "init", "-q", "-b", branch, str(path)], check=True)
        return cls(path)

    def git(self, *args: str, check: bool = True, input: str | None = None) -> str:
        proc = subprocess.run(
            ["git", *args], cwd=self.path, check=False, text=True,
            capture_output=True, input=input,
        )
        if check and proc.returncode != 0:
            raise AssertionError(f"git {' '.join(args)} failed:\n{proc.stderr}")
        return proc.stdout.strip()

    def write(self, rel: str, content: str | bytes, mode: int | None = None) -> Path:
        p = self.path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, str):
            p.write_bytes(content.encode())
        else:
            p.write_bytes(content)
        if mode is not None:
            os.chmod(p, mode)
        return p

    def delete(self, rel: str) -> None:
        (self.path / rel).unlink()

    def commit(self, message: str, files: dict[str, str | bytes | None] | None = None) -> str:
        """Write (or delete, for None) files, stage everything, commit; return the sha."""
        for rel, content in (files or {}).items():
            if content is None:
                self.delete(rel)
            else:
                self.write(rel, content)
        self.git("add", "-A")
        self.git("commit", "-q", "--allow-empty", "-m", message)
        return self.rev("HEAD")

    def rev(self, what: str) -> str:
        return self.git("rev-parse", what)

    def tree(self, what: str) -> str:
        return self.git("rev-parse", f"{what}^{{tree}}")

    def status(self) -> str:
        return self.git("status", "--porcelain", "--untracked-files=all")

    def log(self, what: str, fmt: str = "%s") -> list[str]:
        out = self.git("log", f"--format={fmt}", what)
        return out.splitlines() if out else []
