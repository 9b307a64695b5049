"""Choosing and checking the model, before anything is touched, and how it calls the tools."""
from __future__ import annotations

import llm
import pygit2

from git_retcon.errors import RetconError
from git_retcon.git import config
from git_retcon.model.protocol import ToolsMode

BUILTIN = "retcon-paths"


def choose(repo: pygit2.Repository, cli: str | None, spec_model: str | None) -> str | None:
    """-m, then the spec's `model`, then git config retcon.model, then llm's default (None)."""
    if cli:
        return cli
    if spec_model:
        return spec_model
    return config.value(repo, "retcon.model") or None


def _ensure_builtin() -> None:
    """Register retcon-paths when git-retcon runs without its entry point installed.

    llm's plugins are loaded first, as llm would: registered before them, ours would
    clash with llm registering the same entry point (LLM_LOAD_PLUGINS=git-retcon)."""
    from git_retcon.model import builtin as paths_model

    llm.plugins.load_plugins()  # type: ignore[no-untyped-call]  # unannotated in llm
    if llm.plugins.pm.is_registered(paths_model):
        return
    names = {name for name, _ in llm.plugins.pm.list_name_plugin()}
    if "retcon" not in names:
        llm.plugins.pm.register(paths_model, name="retcon")


def tools_mode(model: llm.Model, forced: ToolsMode | None = None) -> ToolsMode:
    """How the model calls the tools: llm's tool calling when it has it, else the text protocol
    (model/protocol.py); `--tools` forces one."""
    if forced is not None:
        return forced
    return "native" if getattr(model, "supports_tools", False) else "text"


def load(name: str | None, tools: bool = True, mode: ToolsMode | None = None) -> llm.Model:
    """The llm model, refused with a one-line reason if it cannot be used.

    Any model drives a run: one without tool calling through the text protocol. Only
    `--tools native` (mode) asks for llm's tool calling, and a model without it is refused.
    `plan` passes tools=False: it takes structured output from any model."""
    if tools and name == BUILTIN:
        # The built-in model needs no other plugin: skip loading them all (1-2 s of imports).
        from git_retcon.model.builtin import PathsModel

        return PathsModel()
    _ensure_builtin()
    try:
        model = llm.get_model(name)
    except llm.UnknownModelError:
        shown = name or llm.get_default_model()  # type: ignore[no-untyped-call]  # llm leaves it unannotated
        raise RetconError(
            f"unknown model '{shown}': see `llm models` for the installed ones, "
            f"or use the built-in offline model with -m {BUILTIN}"
        ) from None
    if tools and mode == "native" and not getattr(model, "supports_tools", False):
        raise RetconError(
            f"model '{model.model_id}' does not support tool calling, which --tools native asks for: "
            "leave --tools out (or use --tools text) and it calls the tools through git-retcon's text protocol"
        )
    needs = getattr(model, "needs_key", None)
    if needs:
        env = getattr(model, "key_env_var", None)
        if not llm.get_key(alias=needs, env=env):
            how = f"`llm keys set {needs}`" + (f" or set {env}" if env else "")
            raise RetconError(f"model '{model.model_id}' needs an API key: run {how}")
    return model
