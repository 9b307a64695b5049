"""Help a user can find: `git retcon --help` opens the man page, which documents every
command and option; `git retcon COMMAND --help` is click's help with an example.

The man page is checked where users get it: a wheel is built from this tree, and
`make install` puts it into a virtualenv of its own under a temporary PREFIX; then
`git retcon --help` must open it both with PREFIX/bin and with the virtualenv's bin
on PATH.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from git_retcon.cli import cli

ROOT = Path(__file__).resolve().parents[2]
MAN = ROOT / "man" / "git-retcon.1"
BIN = Path(sys.executable).parent
_NOT_ANYWHERE = shutil.ignore_patterns("__pycache__", "*.egg-info", ".pytest_cache")
_NOT_AT_TOP = {".git", ".venv", "build", "dist", "tests", "bench"}


def not_source(directory: str, names: list[str]) -> set[str]:
    """What a source distribution leaves out; `tests` only at the top (the demo project has its own)."""
    left_out = set(_NOT_ANYWHERE(directory, names))
    return left_out | (_NOT_AT_TOP & set(names) if Path(directory) == ROOT else set())


def leaves(group: click.Group = cli, path: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], click.Command]]:
    out = []
    for name, cmd in sorted(group.commands.items()):
        if isinstance(cmd, click.Group):
            out += leaves(cmd, path + (name,))
        else:
            out.append((path + (name,), cmd))
    return out


def long_options(cmd: click.Command) -> set[str]:
    return {o for p in cmd.params for o in getattr(p, "opts", []) + getattr(p, "secondary_opts", [])
            if o.startswith("--") and o != "--help"}


def man_text() -> str:
    """The roff source as a reader sees its words: escapes and fonts removed."""
    text = MAN.read_text(encoding="utf-8").replace(r"\-", "-").replace(r"\ ", " ")
    return re.sub(r"\\f[BIRP]", "", text)


def test_every_command_has_help_with_an_example():
    runner = CliRunner()
    for path, _ in leaves():
        res = runner.invoke(cli, [*path, "--help"], prog_name="git retcon")
        assert res.exit_code == 0, res.output
        assert f"Usage: git retcon {' '.join(path)}" in res.output
        example = re.search(r"\bExamples?\b[^\n]*:$", res.output, re.M)
        assert example, f"`git retcon {' '.join(path)} --help` shows no example:\n{res.output}"
        assert f"git retcon {' '.join(path)}" in res.output[example.end():res.output.index("Options:")], res.output


def test_the_man_page_documents_every_command_and_option():
    text = man_text()
    synopsis = text[text.index(".SH SYNOPSIS"):text.index(".SH DESCRIPTION")]
    for path, cmd in leaves():
        *group, name = path
        assert re.search(rf"git retcon {' '.join(group)}.*\b{name}\b", synopsis), f"SYNOPSIS lacks {path}"
        for opt in sorted(long_options(cmd)):
            assert opt in text, f"the man page does not document `git retcon {' '.join(path)} {opt}`"
    for section in ("COMMANDS", "THE HISTORY SPEC", "MODELS", "STATE", "HOOKS", "EXIT STATUS",
                    "ENVIRONMENT", "FILES", "EXAMPLES"):
        assert f".SH {section}\n" in text
    # Every spec field the parser accepts.
    from git_retcon.state import specparse as spec
    for field in (*spec._TOP, *spec._COMMIT):
        written = "[[commit]]" if field == "commit" else f"{field} = "
        assert written in text, f"the man page does not describe the spec field {field}"
    for entry in spec._ENTRY:
        assert f"{{ {entry} = " in text, f"the man page does not describe the history entry {entry}"


@pytest.mark.skipif(shutil.which("groff") is None, reason="groff is not installed: cannot lint the roff")
def test_the_man_page_renders_without_warnings():
    res = subprocess.run(["make", "-s", "man"], cwd=ROOT, capture_output=True, text=True)
    assert res.returncode == 0, res.stdout + res.stderr


def test_subcommand_help_goes_through_git_to_click(hermetic):
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"}
    res = subprocess.run(["git", "retcon", "run", "--help"], env=env, capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    assert "Usage: git retcon run" in res.stdout and "--max-fix" in res.stdout


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """A wheel of this tree, built offline with the setuptools of this environment."""
    src = tmp_path_factory.mktemp("src") / "git-retcon"
    shutil.copytree(ROOT, src, ignore=not_source)
    out = tmp_path_factory.mktemp("wheel")
    res = subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
                          "--wheel-dir", str(out), str(src)], capture_output=True, text=True)
    assert res.returncode == 0, ("building the wheel needs setuptools>=77 here "
                                 "(the test extra has it): " + res.stderr[-2000:])
    (built,) = out.glob("*.whl")
    return built


def test_the_wheel_ships_the_man_page_and_completions(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    data = {n.split(".data/data/", 1)[1]: n for n in names if ".data/data/" in n}
    assert set(data) >= {"share/man/man1/git-retcon.1", "share/bash-completion/completions/git-retcon",
                         "share/zsh/site-functions/_git-retcon"}
    with zipfile.ZipFile(wheel) as z:
        assert z.read(data["share/man/man1/git-retcon.1"]) == MAN.read_bytes()


def test_the_wheel_ships_every_module_of_the_package(wheel):
    """pyproject lists the packages by hand: a subpackage left out works from a checkout (the
    editable install) and fails in a real install, as git_retcon.rework.formats once did."""
    modules = sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "git_retcon").rglob("*.py")
                     if "__pycache__" not in p.parts)
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
    assert [m for m in modules if m not in names] == []


def test_the_wheel_ships_the_demo_project(wheel):
    """`git retcon demo` reads its project from package data: every file, byte for byte."""
    shipped = ROOT / "demoproject"
    files = sorted(p.relative_to(shipped).as_posix() for p in shipped.rglob("*")
                   if p.is_file() and "__pycache__" not in p.parts)
    assert {"main/.gitignore", "main/tests/test_money.py", "feature.toml", "spec.toml.in"} <= set(files)
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
        for rel in files:
            assert f"git_retcon/demoproject/{rel}" in names, rel
            assert z.read(f"git_retcon/demoproject/{rel}") == (shipped / rel).read_bytes(), rel


def test_make_install_then_git_retcon_help_opens_the_manual(wheel, tmp_path, hermetic):
    prefix = tmp_path / "prefix"
    libdir = prefix / "lib" / "git-retcon"
    # The install recipe as users run it, made fast: the pip of this environment puts the
    # wheel into the new virtualenv, without dependencies (the manual needs none).
    res = subprocess.run(
        ["make", "-s", "install", f"PREFIX={prefix}", f"PYTHON={sys.executable}", f"PACKAGE={wheel}",
         "VENV_FLAGS=--without-pip", f"PIP={sys.executable} -m pip --python {libdir}/bin/python",
         "PIP_FLAGS=--no-deps"], cwd=ROOT, capture_output=True, text=True)
    assert res.returncode == 0, res.stdout + res.stderr
    for rel in ("bin/git-retcon", "share/man/man1/git-retcon.1", "share/bash-completion/completions/git-retcon",
                "share/zsh/site-functions/_git-retcon"):
        assert (prefix / rel).exists(), rel
    assert (prefix / "bin/git-retcon").resolve() == libdir / "bin" / "git-retcon"
    assert (libdir / "share/man/man1/git-retcon.1").read_bytes() == MAN.read_bytes()  # the wheel's own copy

    if shutil.which("man") is None:
        pytest.skip("man is not installed: the files are in place, but `git retcon --help` cannot open them")
    env = {k: v for k, v in os.environ.items() if k not in ("MANPATH", "MANOPT")}
    env.update(MANPAGER="cat", PAGER="cat", MANWIDTH="80")
    for bindir in (prefix / "bin", libdir / "bin"):
        env["PATH"] = f"{bindir}{os.pathsep}/usr/bin{os.pathsep}/bin"
        res = subprocess.run(["git", "retcon", "--help"], env=env, capture_output=True, text=True, cwd=tmp_path)
        assert res.returncode == 0, res.stderr
        assert "GIT-RETCON(1)" in res.stdout and "THE HISTORY SPEC" in res.stdout, (bindir, res.stdout[:500])

    res = subprocess.run(["make", "-s", "uninstall", f"PREFIX={prefix}"], cwd=ROOT, capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    assert not any(p.is_file() or p.is_symlink() for p in prefix.rglob("*"))
