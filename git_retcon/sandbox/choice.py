"""Which sandbox a spec's commands run under: the mode (--sandbox, the spec's `sandbox`, git config
retcon.sandbox, else auto) and the strongest mechanism that works here (sandbox/probe.py).
"""
from __future__ import annotations

from collections.abc import Callable
from typing import cast

import pygit2

from git_retcon.errors import RetconError
from git_retcon.git import config
from git_retcon.sandbox.confine import HOW_TO_GET, MODES, Mechanism, Mode, Sandbox
from git_retcon.sandbox.probe import available
from git_retcon.state.spec import Spec


def mode_of(repo: pygit2.Repository | None, option: str | None, spec_mode: str | None) -> Mode:
    """--sandbox, else the spec's `sandbox`, else git config retcon.sandbox, else auto."""
    if option:
        return cast(Mode, option)
    if spec_mode:
        return cast(Mode, spec_mode)
    return config.choice(repo, "retcon.sandbox", MODES) or "auto"


def choose(repo: pygit2.Repository | None, option: str | None = None, spec_mode: str | None = None,
           network: bool | None = None, writable: tuple[str, ...] | list[str] = (),
           probe: Callable[[], tuple[list[Mechanism], str]] | None = None) -> Sandbox:
    """The sandbox a spec's commands run under; `require` with none working is refused here, before
    anything is written. network: the spec's (None: setup only)."""
    mode = mode_of(repo, option, spec_mode)
    build_net, setup_net = bool(network), network is not False
    if mode == "off":
        return Sandbox("off", None, build_net, setup_net, tuple(writable))
    found, tried = (probe or available)()
    if not found:
        if mode == "require":
            raise RetconError(f"--sandbox require: no sandbox works on this machine ({tried}): {HOW_TO_GET}, "
                              "or run with --sandbox auto")
        return Sandbox(mode, None, build_net, setup_net, tuple(writable), tried)
    return Sandbox(mode, found[0], build_net, setup_net, tuple(writable), tried)


def for_spec(repo: pygit2.Repository | None, spec: Spec, option: str | None = None) -> Sandbox:
    """The sandbox of a spec's commands: --sandbox (option), the spec's fields, git config."""
    return choose(repo, option, spec.sandbox, spec.network, spec.writable)
