"""Tab completion as a shell runs it: git's own bash completion calling `_git_retcon`,
and zsh's completion system with `_git-retcon` in fpath, in a repository with specs,
branches and a remote. The options offered are the CLI's, so neither can drift.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import click
import pytest

from git_retcon.cli import cli
from testing.flow import SPEC, feature_repo, retcon
from testing.gitrepo import GitRepo

ROOT = Path(__file__).resolve().parents[2]
BASH_COMPLETION = ROOT / "completion" / "git-retcon"
BIN = Path(sys.executable).parent
GIT_COMPLETIONS = ["/usr/share/bash-completion/completions/git", "/usr/share/git/completion/git-completion.bash",
                   "/usr/share/git-core/contrib/completion/git-completion.bash",
                   "/etc/bash_completion.d/git", "/usr/local/etc/bash_completion.d/git-completion.bash"]

BASH_DRIVER = r"""
source "$1"; source "$2"; shift 2
for line in "$@"; do
    COMP_LINE="$line"; COMP_POINT=${#line}
    read -ra COMP_WORDS <<<"$line"
    [[ $line == *" " ]] && COMP_WORDS+=("")
    COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
    COMPREPLY=()
    if [[ ${COMP_WORDS[0]} == git ]]; then __git_wrap__git_main; else __git_wrap_git_retcon; fi
    printf '== %s\n' "$line"
    printf '%s\n' "${COMPREPLY[@]}"
done
"""

# The terminal echoes what is typed: a marker typed whole would be read back from the echo before
# compinit has run, and the tab would reach a shell still loading (on a busy machine). Typed split
# ('<<REA''DY>>'), it matches only when printed.
ZSH_DRIVER = r"""
zmodload zsh/zpty
zpty z zsh -f -i
zpty -w z "PS1= ; fpath=($1 \$fpath); autoload -Uz compinit; compinit -u -D"
zpty -w z "zstyle ':completion:*:*:git:*' user-commands retcon:'clean up'"
zpty -w z 'comppostfuncs=(_done); _done() { print -r -- "<<END>>" }'
zpty -w z 'compadd () { builtin compadd -O __hits "$@"; print -l -r -- "<<M>>"${^__hits}; builtin compadd "$@" }'
zpty -w z "bindkey '^I' complete-word; print '<<REA''DY>>'"
zpty -r z line '*<<READY>>*'
zpty -n -w z "$2"$'\t'
while zpty -r z line; do
  [[ $line == *'<<END>>'* ]] && break
  [[ $line == *'<<M>>'* ]] && print -r -- "${${line##*<<M>>}%$'\r'}"
done
zpty -d z
"""


def leaf_commands(group: click.Group = cli, path: tuple[str, ...] = ()) -> dict[tuple[str, ...], click.Command]:
    out: dict[tuple[str, ...], click.Command] = {}
    for name, cmd in group.commands.items():
        if isinstance(cmd, click.Group):
            out.update(leaf_commands(cmd, path + (name,)))
        else:
            out[path + (name,)] = cmd
    return out


def long_options(cmd: click.Command) -> set[str]:
    return {o for p in cmd.params for o in getattr(p, "opts", []) + getattr(p, "secondary_opts", [])
            if o.startswith("--")} | {"--help"}


@pytest.fixture
def project(tmp_path) -> GitRepo:
    """Two specs, the branches they name, and a remote."""
    repo = feature_repo(tmp_path / "repo")
    (tmp_path / "spec.toml").write_text(SPEC)
    assert retcon(repo, "plan", "--from-file", str(tmp_path / "spec.toml"), "--no-edit").code == 0
    other = SPEC.replace('cleaned = "feature-clean"', 'cleaned = "feature-x/tidy"')
    (tmp_path / "other.toml").write_text(other)
    assert retcon(repo, "plan", "--from-file", str(tmp_path / "other.toml"), "--no-edit").code == 0
    GitRepo.init(tmp_path / "origin.git")
    repo.git("remote", "add", "upstream", str(tmp_path / "origin.git"))
    return repo


def shell_env() -> dict[str, str]:
    return {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"}


def bash_complete(repo: GitRepo, *lines: str) -> dict[str, set[str]]:
    git_completion = next((p for p in GIT_COMPLETIONS if Path(p).exists()), None)
    if git_completion is None:
        pytest.skip("git's bash completion script is not installed here (it ships with git's packages)")
    res = subprocess.run(["bash", "-c", BASH_DRIVER, "driver", git_completion, str(BASH_COMPLETION), *lines],
                         cwd=repo.path, env=shell_env(), capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr
    out: dict[str, set[str]] = {}
    for chunk in res.stdout.split("== ")[1:]:
        line, _, rest = chunk.partition("\n")
        out[line] = {w.strip() for w in rest.splitlines() if w.strip()}
    return out


def test_bash_completes_commands_specs_branches_remotes_and_options(project):
    leaves = leaf_commands()
    groups = {name: cmd for name, cmd in cli.commands.items() if isinstance(cmd, click.Group)}
    queries = ["git retcon ", "git retcon r", "git retcon run ", "git retcon check feat", "git retcon spec ",
               "git retcon spec show ", "git retcon spec import ", "git retcon hooks ", "git retcon plan --source ",
               "git retcon plan --onto=ma", "git retcon push ", "git ret", "git-retcon ch", "git retcon -"]
    queries += [f"git retcon {' '.join(path)} --" for path in leaves]
    got = bash_complete(project, *queries)

    assert got["git retcon "] == set(cli.commands)
    assert got["git retcon r"] == {"run", "resolve"}
    assert got["git retcon run "] == {"feature-clean", "feature-x/tidy"}
    assert got["git retcon check feat"] == {"feature-clean", "feature-x/tidy"}
    for name, group in groups.items():
        assert got[f"git retcon {name} "] == set(group.commands), name
    assert got["git retcon spec show "] == {"feature-clean", "feature-x/tidy"}
    assert got["git retcon spec import "] <= {""}, "a file name: left to readline"
    assert {"feature", "main"} <= got["git retcon plan --source "]
    assert got["git retcon plan --onto=ma"] == {"--onto=main"}
    assert got["git retcon push "] == {"upstream"}
    assert "retcon" in got["git ret"], "git lists git-retcon among its commands"
    assert got["git-retcon ch"] == {"check"}
    assert got["git retcon -"] == {"--help", "--version"}
    for path, cmd in leaves.items():
        offered = {w.rstrip("=") for w in got[f"git retcon {' '.join(path)} --"]}
        assert offered == long_options(cmd), f"git retcon {' '.join(path)}: {offered ^ long_options(cmd)}"


def zsh_complete(repo: GitRepo, line: str) -> set[str]:
    res = subprocess.run(["zsh", "-f", "-c", ZSH_DRIVER, "driver", str(ROOT / "completion"), line],
                         cwd=repo.path, env=shell_env(), capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr
    return {w.strip() for w in res.stdout.splitlines() if w.strip()}


@pytest.mark.skipif(shutil.which("zsh") is None, reason="zsh is not installed here: its completion is not exercised")
def test_zsh_completes_commands_specs_and_options(project):
    assert zsh_complete(project, "git-retcon ") == set(cli.commands)
    assert zsh_complete(project, "git retcon ") == set(cli.commands)
    assert zsh_complete(project, "git retcon spec show ") == {"feature-clean", "feature-x/tidy"}
    assert {"feature", "main"} <= zsh_complete(project, "git-retcon plan --source ")
    run = leaf_commands()[("run",)]
    assert long_options(run) <= zsh_complete(project, "git retcon run -")
