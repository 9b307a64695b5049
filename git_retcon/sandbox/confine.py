"""Confinement of the commands git-retcon runs for a spec (setup, build, test): what they may
write, what they may not see, whether they reach the network (ARCHITECTURE.md, "Promises", 5).

A command writes only to its worktree, a private temp folder (TMPDIR) and the package caches
(CACHES), plus the folders the spec's `writable` names; everything else is read-only, the user's
repository included (config, hooks, refs, objects, working tree), so read-only git commands still
work; the secrets under HIDDEN are not there at all. Build and test have no network unless the
spec says `network = true`; setup has it unless the spec says `network = false`.

The mechanism is the strongest that works here (sandbox/probe.py): bubblewrap (a mount namespace,
a private network and pid namespace), else Landlock (the kernel's own rules, applied by
sandbox/landlock.py in the child), else sandbox-exec on macOS. `--sandbox auto` runs unconfined
where none works (said once), `require` refuses, `off` never confines.
"""
from __future__ import annotations

import os
import shutil
import sys
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal

from git_retcon.state.spec import SANDBOX_MODES, SandboxMode

Mode = SandboxMode
MODES = SANDBOX_MODES
Mechanism = Literal["bubblewrap", "landlock", "seatbelt"]
MECHANISMS: tuple[Mechanism, ...] = ("bubblewrap", "landlock", "seatbelt")   # strongest first
# Forces one mechanism (or "none") for the tests: the probe answers only for it.
FORCE_ENV = "GIT_RETCON_SANDBOX_MECHANISM"
HOW_TO_GET = "install bubblewrap (apt-get install bubblewrap, dnf install bubblewrap), or use a kernel with Landlock"

# The package caches a command may write, one list (the man page's CONFINEMENT lists them): the
# variable that moves a cache, its default under HOME, and the files at the worktree's root that
# say the project uses it (a missing cache of such a project is made, so the tool can fill it).
# Data folders only: never a folder of programs a shell runs (~/.cargo/bin, ~/go/bin).
CACHES: tuple[tuple[str | None, str, tuple[str, ...]], ...] = (
    ("npm_config_cache", ".npm", ("package.json",)),
    ("YARN_CACHE_FOLDER", ".cache/yarn", ("yarn.lock",)),
    (None, ".yarn/berry", ("yarn.lock", ".yarnrc.yml")),
    ("PNPM_STORE_DIR", ".local/share/pnpm", ("pnpm-lock.yaml",)),
    (None, ".cache/pnpm", ("pnpm-lock.yaml",)),
    (None, ".bun/install/cache", ("bun.lockb", "bun.lock")),
    ("PIP_CACHE_DIR", ".cache/pip", ("pyproject.toml", "setup.py", "requirements.txt")),
    ("UV_CACHE_DIR", ".cache/uv", ("uv.lock", "pyproject.toml")),
    (None, ".cache/pypoetry", ("poetry.lock",)),
    (None, ".cache/pre-commit", (".pre-commit-config.yaml",)),
    (None, ".cargo/registry", ("Cargo.toml",)),
    (None, ".cargo/git", ("Cargo.toml",)),
    ("GOMODCACHE", "go/pkg/mod", ("go.mod",)),
    ("GOCACHE", ".cache/go-build", ("go.mod",)),
    (None, ".m2/repository", ("pom.xml",)),
    (None, ".gradle/caches", ("build.gradle", "build.gradle.kts")),
    (None, ".gradle/wrapper", ("build.gradle", "build.gradle.kts")),
    ("BUNDLE_USER_CACHE", ".bundle/cache", ("Gemfile",)),
    (None, ".cache/composer", ("composer.json",)),
    (None, ".pub-cache", ("pubspec.yaml",)),
    (None, ".hex", ("mix.exs",)),
    (None, ".nuget/packages", ("packages.lock.json",)),
)
# What no command sees (under HOME unless absolute): keys, tokens and credentials. The variables
# that move one (GNUPGHOME, llm's LLM_USER_PATH, ...) are followed too (hidden_paths).
HIDDEN: tuple[str, ...] = (
    ".ssh", ".gnupg", ".aws", ".azure", ".config/gcloud", ".config/gh", ".config/hub", ".netrc",
    ".git-credentials", ".config/git/credentials", ".docker/config.json", ".kube", ".pypirc",
    ".cargo/credentials", ".cargo/credentials.toml", ".gem/credentials", ".config/io.datasette.llm",
    "Library/Application Support/io.datasette.llm", ".password-store", ".vault-token", ".terraform.d",
)
_HIDDEN_ENV = ("GNUPGHOME", "LLM_USER_PATH", "AWS_SHARED_CREDENTIALS_FILE", "AWS_CONFIG_FILE", "KUBECONFIG",
               "DOCKER_CONFIG", "GH_CONFIG_DIR", "NETRC", "CLOUDSDK_CONFIG")
# Device files a command may write (Landlock: every other write below / is refused).
_DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/tty", "/dev/random", "/dev/urandom")
_LANDLOCK = Path(__file__).with_name("landlock.py")


@dataclass(frozen=True)
class Sandbox:
    """How a spec's commands run: the mechanism in force (None: unconfined) and what it allows."""

    mode: Mode
    mechanism: Mechanism | None
    network: bool = False                  # in force for the commands this sandbox runs
    setup_network: bool = True             # what setup gets (for_setup)
    writable: tuple[str, ...] = ()         # the spec's extra folders
    tried: str = ""                        # auto with none: what the probe found

    @property
    def label(self) -> str:
        """What a result ran under, as records keep it: the mechanism, "off", or "none" (auto, none works)."""
        return self.mechanism or ("off" if self.mode == "off" else "none")

    def describe(self) -> str:
        """The run header's words: "bubblewrap, network off"."""
        if self.mode == "off":
            return "off (--sandbox off): commands run with your full rights"
        if self.mechanism is None:
            return f"none works on this machine ({self.tried}); commands run unconfined: {HOW_TO_GET}"
        net = "network on" if self.network else "network off"
        if self.setup_network != self.network:
            net += f" (setup: network {'on' if self.setup_network else 'off'})"
        return f"{self.mechanism}, {net}"

    def for_setup(self) -> Sandbox:
        return replace(self, network=self.setup_network)

    def launch(self, command: str, cwd: Path, env: dict[str, str]) -> Launch:
        """How to start command in cwd under this sandbox: argv, environment, and the private temp
        folder to remove after it."""
        if self.mechanism is None:
            return Launch(["/bin/sh", "-c", command], env, None, self)
        _sweep_once()
        tmp = tempfile.mkdtemp(prefix=f"{_TMP_PREFIX}{os.getpid()}-")
        env = {**env, "TMPDIR": tmp, "TMP": tmp, "TEMP": tmp}
        home = Path(env.get("HOME") or Path.home())
        writable = _unique([str(cwd), tmp, *caches(home, env, cwd), *self.extra(home)])
        hidden = hidden_paths(home, env)
        argv = ["/bin/sh", "-c", command]
        if self.mechanism == "bubblewrap":
            argv = bwrap_argv(writable, hidden, self.network, cwd) + argv
        elif self.mechanism == "landlock":
            argv = landlock_argv(writable, hidden, self.network) + argv
        else:
            from git_retcon.sandbox.seatbelt import profile

            argv = ["sandbox-exec", "-p", profile(writable, hidden, self.network)] + argv
        return Launch(argv, env, tmp, self, tuple(writable), tuple(hidden))

    def extra(self, home: Path) -> list[str]:
        """The spec's `writable` folders, made where missing (a tool fills them). A missing path whose
        name has an extension (`result.txt`) names a file: never made as a folder, which would stand
        where the command writes its file (its folder is what `writable` takes)."""
        out = []
        for w in self.writable:
            path = Path(os.path.expanduser(w.replace("~", str(home), 1) if w.startswith("~") else w))
            if not os.path.lexists(path):
                if path.suffix:
                    continue
                path.mkdir(parents=True, exist_ok=True)
            out.append(os.path.realpath(path))
        return out


@dataclass
class Launch:
    argv: list[str]
    env: dict[str, str]
    tmp: str | None
    sandbox: Sandbox
    writable: tuple[str, ...] = ()
    hidden: tuple[str, ...] = ()

    def done(self) -> None:
        if self.tmp is not None:
            shutil.rmtree(self.tmp, ignore_errors=True)


UNCONFINED = Sandbox("off", None)
_TMP_PREFIX = "git-retcon-tmp-"
_swept: list[bool] = []


def _sweep_once() -> None:
    """Remove the private temp folders of git-retcon processes that are gone (a kill -9 leaves its
    own behind): once per process, before its first confined command."""
    if _swept:
        return
    _swept.append(True)
    root = Path(tempfile.gettempdir())
    try:
        names = [n for n in os.listdir(root) if n.startswith(_TMP_PREFIX)]
    except OSError:
        return
    for name in names:
        pid = name[len(_TMP_PREFIX):].split("-", 1)[0]
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            shutil.rmtree(root / name, ignore_errors=True)
        except OSError:
            continue   # alive, another user's


def _unique(paths: list[str]) -> list[str]:
    return list(dict.fromkeys(os.path.realpath(p) for p in paths))


def caches(home: Path, env: dict[str, str], cwd: Path) -> list[str]:
    """The package caches a command may write: those that exist, and those of the ecosystems whose
    files are at the worktree's root (made now, so the tool can fill them)."""
    try:
        names = set(os.listdir(cwd))
    except OSError:
        names = set()
    out = []
    for var, default, files in CACHES:
        path = Path(env[var]) if var and env.get(var) else home / default
        if not path.is_dir() and names.intersection(files) and home.is_dir():
            try:
                path.mkdir(parents=True, exist_ok=True)
            except OSError:
                continue
        if path.is_dir():
            out.append(str(path))
    return out


def hidden_paths(home: Path, env: dict[str, str]) -> list[str]:
    """The secrets no command sees, as they are on this machine (those that exist)."""
    found = [home / p for p in HIDDEN] + [Path(env[v]) for v in _HIDDEN_ENV if env.get(v)]
    return list(dict.fromkeys(os.path.realpath(p) for p in found if os.path.lexists(p)))


def bwrap_argv(writable: list[str], hidden: list[str], network: bool, cwd: Path) -> list[str]:
    argv = ["bwrap", "--die-with-parent", "--unshare-pid", "--unshare-ipc", "--ro-bind", "/", "/",
            "--dev", "/dev", "--proc", "/proc"]
    if not network:
        argv.append("--unshare-net")
    if os.geteuid() == 0:
        argv += ["--cap-drop", "ALL"]   # root inside could remount / writable
    for w in writable:
        argv += ["--bind", w, w]
    for h in hidden:
        argv += ["--tmpfs", h] if os.path.isdir(h) else ["--ro-bind", "/dev/null", h]
    return [*argv, "--chdir", str(cwd), "--"]


def landlock_argv(writable: list[str], hidden: list[str], network: bool) -> list[str]:
    argv = [sys.executable, "-I", "-S", str(_LANDLOCK)] + (["--network"] if network else [])
    for flag, paths in (("-w", writable), ("-f", [d for d in _DEVICES if os.path.exists(d)]), ("-x", hidden)):
        for p in paths:
            argv += [flag, p]
    return [*argv, "--"]
