"""Tool calls written in text in the shapes chat templates of mid-size models use: each is
found, so the step answers "not executed" instead of the generic steering."""
from __future__ import annotations

import pytest

from git_retcon.model.textcalls import written_calls
from git_retcon.model.tools import TOOL_NAMES

ARGS = '{"hunk_ids": ["3f2a9c"]}'


@pytest.mark.parametrize("text", [
    f'<tool_call>{{"name": "apply_hunks", "arguments": {ARGS}}}</tool_call>',          # Hermes, Qwen
    f'```json\n{{"name": "apply_hunks", "arguments": {ARGS}}}\n```',
    f'{{"name": "apply_hunks", "parameters": {ARGS}}}',                                  # Llama 3
    f'<|python_tag|>{{"name": "functions.apply_hunks", "parameters": {ARGS}}}',
    f'[TOOL_CALLS][{{"name": "apply_hunks", "arguments": {ARGS}}}]',                    # Mistral
    f'[TOOL_CALLS]apply_hunks[ARGS]{ARGS}',                                              # Mistral, newer
    f'<function=apply_hunks>{ARGS}</function>',                                          # Llama 3.1
    f'<function name="apply_hunks">{ARGS}</function>',
    '{"type": "function", "function": {"name": "apply_hunks", "arguments": "{}"}}',   # OpenAI's shape
    'apply_hunks(hunk_ids=["3f2a9c"])',
    'default_api.apply_hunks(hunk_ids=["3f2a9c"])',
])
def test_a_call_in_text_is_found_in_every_shape(text):
    assert written_calls("I will apply the hunks.\n" + text, TOOL_NAMES) == ["apply_hunks"]


@pytest.mark.parametrize("text", ["Next I will call apply_hunks with the CI hunk.",
                                  "The function apply_hunks is the one to use.", "<function=apply_patch>{}"])
def test_naming_a_tool_in_prose_is_no_call(text):
    assert written_calls(text, TOOL_NAMES) == []
