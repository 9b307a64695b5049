"""The model's context window, and the prompt budgets that follow from it.

The first that is set: the user's setting (`run --context N`), git config `retcon.context`, a
context option the user set for the model in llm (`llm models options set MODEL num_ctx 8192`),
the window of a known model, else DEFAULT. A step never sends more than the window holds: the
prompt's index, read_diff's pages and read_file's answers are cut to budgets that leave room
for a few rounds, and a conversation that would outgrow the window is cut back (model/step.py).
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass

import llm
import pygit2

from git_retcon.errors import RetconError
from git_retcon.git import config

DEFAULT = 32768
CHARS_PER_TOKEN = 3.0          # code, paths and hex ids: about 3 characters a token
MIN_TOKENS = 2048
# Options by which llm plugins set a local model's window (llm-ollama, llm-gguf, llm-mlx, ...).
OPTION_NAMES = ("num_ctx", "n_ctx", "context_length", "context_window", "max_context", "ctx_size")
# Known windows, by a pattern of the model id (the first that matches).
KNOWN: list[tuple[str, int]] = [
    (r"gpt-4\.1", 1_047_576), (r"gpt-5", 400_000), (r"^o[134]", 200_000), (r"gpt-4o|chatgpt-4o", 128_000),
    (r"gpt-4-turbo|gpt-4-1106|gpt-4-0125", 128_000), (r"gpt-4-32k", 32_768), (r"gpt-4", 8_192),
    (r"gpt-3\.5-turbo-instruct", 4_096), (r"gpt-3\.5", 16_385), (r"claude", 200_000),
    (r"gemini-1\.0", 32_768), (r"gemini", 1_048_576), (r"codestral", 256_000),
    (r"mistral-large|mistral-medium|mistral-small|ministral|pixtral", 128_000), (r"mistral|mixtral", 32_768),
    (r"llama-?3\.[123]|llama3\.[123]", 131_072), (r"llama-?3|llama3", 8_192), (r"llama-?2|llama2", 4_096),
    (r"qwen2\.5-coder-(?:0\.5|1\.5|3)b|qwen2\.5-coder:(?:0\.5|1\.5|3)b", 32_768), (r"qwen", 32_768),
    (r"deepseek", 65_536), (r"phi-?3|phi3", 4_096), (r"phi-?4|phi4", 16_384), (r"gemma-?2|gemma2", 8_192),
    (r"gemma", 32_768), (r"smollm", 8_192),
]


@dataclass(frozen=True)
class Window:
    """A context window in tokens, and where that number came from (said in the run's output)."""

    tokens: int
    source: str

    @property
    def answer_tokens(self) -> int:
        """Room kept for the model's reply."""
        return max(512, min(4096, self.tokens // 8))

    @property
    def prompt_chars(self) -> int:
        """The most characters one request may send: system, tools and messages together."""
        return int((self.tokens - self.answer_tokens) * CHARS_PER_TOKEN)

    def share(self, fraction: float, cap: int, fixed: int = 0) -> int:
        """A budget in characters: fraction of what the request leaves beside `fixed` characters
        (the system prompt and the tools), at most cap, at least a few hundred."""
        return max(400, min(cap, int((self.prompt_chars - fixed) * fraction)))

    def full(self, tokens: int, reserve_chars: int) -> bool:
        """Whether a conversation of `tokens` has no room left for one more answer of
        reserve_chars and the reply."""
        return tokens + reserve_chars / CHARS_PER_TOKEN > self.tokens - self.answer_tokens


def known(model_id: str) -> int | None:
    low = model_id.lower()
    for pattern, tokens in KNOWN:
        if re.search(pattern, low):
            return tokens
    return None


def _option(model_id: str) -> tuple[int, str] | None:
    """A window the user set as a default option of the model in llm (model_options.json)."""
    try:
        path = llm.user_dir() / "model_options.json"  # type: ignore[no-untyped-call]  # unannotated in llm
        options = json.loads(path.read_text()).get(model_id) or {}
    except (OSError, ValueError, AttributeError):
        return None
    for name in OPTION_NAMES:
        value = options.get(name)
        if isinstance(value, (int, str)) and str(value).strip().isdigit() and int(value) > 0:
            return int(value), f"llm's option {name} for {model_id}"
    return None


def parse(value: str, where: str) -> int:
    """A window as a user writes it: 8192, 8k, 16K, 1m."""
    text = value.strip().lower().replace("_", "").replace(",", "")
    m = re.fullmatch(r"(\d+)\s*([km]?)", text)
    if not m:
        raise RetconError(f"{where} = {value!r} is not a number of tokens: write e.g. 8192 or 16k")
    tokens = int(m[1]) * {"": 1, "k": 1024, "m": 1024 * 1024}[m[2]]
    if tokens < MIN_TOKENS:
        raise RetconError(f"{where} = {value!r} is too small: git-retcon needs a window of at least "
                          f"{MIN_TOKENS} tokens")
    return tokens


def configured(repo: pygit2.Repository | None) -> int | None:
    """git config retcon.context in tokens (None: unset); a value that is not a size is refused."""
    value = config.value(repo, "retcon.context")
    return parse(value, "git config retcon.context") if value else None


def window(repo: pygit2.Repository | None, model: llm.Model, setting: int | None = None) -> Window:
    """The model's window: the user's setting, git config retcon.context, llm's option, known, default."""
    if setting:
        return Window(setting, "--context")
    if tokens := configured(repo):
        return Window(tokens, "git config retcon.context")
    found = _option(model.model_id)
    if found is not None:
        return Window(max(found[0], MIN_TOKENS), found[1])
    ids = [model.model_id, str(getattr(model, "model_name", "") or "")]
    for name in ids:
        tokens = known(name) if name else None
        if tokens is not None:
            return Window(tokens, f"known for {name}")
    return Window(DEFAULT, "the default for a model git-retcon does not know; set git config retcon.context")
