"""Prompt tokens a backend served from its cache, read from llm's Usage.details.

Backends report them in their own words: OpenAI's chat API (and llama.cpp's server, vLLM,
LM Studio) as prompt_tokens_details.cached_tokens, OpenAI's responses API as
input_tokens_details.cached_tokens, both counted in the prompt's tokens; Anthropic as
cache_read_input_tokens, beside its input tokens (so they are added to them); Gemini as
cachedContentTokenCount.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple


class Cached(NamedTuple):
    tokens: int          # prompt tokens served from the cache
    extra: int           # of them, those the backend left out of its input count (to add to it)


def _int(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def cached_tokens(details: Mapping[str, Any] | None) -> Cached:
    if not isinstance(details, Mapping):
        return Cached(0, 0)
    for key in ("prompt_tokens_details", "input_tokens_details"):
        inner = details.get(key)
        if isinstance(inner, Mapping) and _int(inner.get("cached_tokens")):
            return Cached(_int(inner.get("cached_tokens")), 0)
    if _int(details.get("cache_read_input_tokens")):
        n = _int(details.get("cache_read_input_tokens"))
        return Cached(n, n)
    for key in ("cachedContentTokenCount", "cached_content_token_count", "cached_tokens"):
        if _int(details.get(key)):
            return Cached(_int(details.get(key)), 0)
    return Cached(0, 0)
