"""Tool calls written in text in the shapes chat templates of mid-size models use: each is
found, so the step answers "not executed" instead of the generic steering."""
from __future__ import annotations

import pytest

from git_retcon.model.textcalls import read_calls, written_calls
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


PARAMS = {"read_diff": ["path", "page"], "apply_hunks": ["hunk_ids"], "create_commit": ["message", "confirm"],
          "stuck": ["summary"], "write_file": ["path", "content"]}


@pytest.mark.parametrize("text", [
    f'<tool_call>{{"name": "apply_hunks", "arguments": {ARGS}}}</tool_call>',
    f'```json\n{{"name": "apply_hunks", "arguments": {ARGS}}}\n```',
    f'{{"name": "functions.apply_hunks", "parameters": {ARGS}}}',
    f'[TOOL_CALLS]apply_hunks[ARGS]{ARGS}',
    f'<function=apply_hunks>{ARGS}</function>',
    '{"type": "function", "function": {"name": "apply_hunks", "arguments": "{\\"hunk_ids\\": [\\"3f2a9c\\"]}"}}',
    'apply_hunks(hunk_ids=["3f2a9c"])',
    "default_api.apply_hunks(['3f2a9c'])",
    '<invoke name="apply_hunks"><parameter name="hunk_ids">["3f2a9c"]</parameter></invoke>',
    '```json\n{"name": "apply_hunks", "arguments": ["3f2a9c"]}\n```',          # the one parameter's value, bare
    '```json\n{"name": "apply_hunks", "arguments": [{"hunk_ids": ["3f2a9c"]}]}\n```',   # the object, in a list
])
def test_a_call_in_text_is_read_with_its_arguments(text):
    calls = read_calls("I will apply the hunks.\n" + text, PARAMS)
    assert [(c.name, c.arguments, c.problem) for c in calls] == [("apply_hunks", {"hunk_ids": ["3f2a9c"]}, "")]


def test_calls_are_read_in_order_and_a_bare_string_is_the_first_parameter():
    text = ('```json\n{"name": "read_diff", "arguments": {}}\n```\nthen\n'
            '```json\n{"name": "stuck", "arguments": "the hints contradict the paths"}\n```\n'
            'and create_commit(message="x")')
    calls = read_calls(text, PARAMS)
    assert [(c.name, c.arguments) for c in calls] == [
        ("read_diff", {}), ("stuck", {"summary": "the hints contradict the paths"}),
        ("create_commit", {"message": "x"})]


@pytest.mark.parametrize("text, problem", [
    ('```json\n{"name": "apply_hunks", "arguments": {"hunk_ids": [}}\n```',
     "the call to apply_hunks is not valid JSON"),
    ('apply_hunks(hunk_ids=ids)', "the arguments of apply_hunks(...) are not literal values"),
    ('create_commit(message="x"', "the call to create_commit has no closing parenthesis"),
])
def test_a_call_whose_arguments_cannot_be_read_says_why(text, problem):
    calls = read_calls(text, PARAMS)
    assert len(calls) == 1 and not calls[0].ok and calls[0].problem.startswith(problem)


def test_a_reply_nested_thousands_deep_is_no_crash():
    text = '{"name": "apply_hunks", "arguments": {"hunk_ids": ' + "[" * 5000 + "]" * 5000 + "}}"
    calls = read_calls(text, PARAMS)
    assert [c.name for c in calls] == ["apply_hunks"] and not calls[0].ok


def test_a_call_quoted_in_another_calls_arguments_is_no_call_of_its_own():
    """The 1.5B model's stuck summary quoted git-retcon's answer, `apply_hunks([...])` within it; that
    was read as a second call, and the answer said "Not run: apply_hunks (the call before failed)"."""
    text = ('```json\n{"name": "stuck", "arguments": {"summary": "Take this commit\'s changes first: '
            'apply_hunks([\'invoicing/money.py\', \'tests/test_money.py\']) takes their remaining hunks"}}\n```\n'
            'Then: create_commit(message="money")')
    calls = read_calls(text, PARAMS)
    assert [c.name for c in calls] == ["stuck", "create_commit"]
    assert calls[0].arguments["summary"].startswith("Take this commit's changes first: apply_hunks([")


def test_a_name_passed_as_an_argument_is_the_literal_the_reply_assigned_it():
    """What the 1.5B model wrote, sampling, on the hints-only demo: its calls as a Python script."""
    text = ('```python\n# Step 1\ndiff = read_diff()\n\n# Step 2: Apply Hunks\nhunk_ids = [\n    "d5f7", "399983",\n'
            '    "9fd6"\n]\napply_hunks(hunk_ids)\nconfirm = "true"  # a string\n'
            'create_commit(message="money", confirm=confirm)\n```')
    calls = read_calls(text, PARAMS)
    assert [(c.name, c.arguments, c.problem) for c in calls] == [
        ("read_diff", {}, ""), ("apply_hunks", {"hunk_ids": ["d5f7", "399983", "9fd6"]}, ""),
        ("create_commit", {"message": "money", "confirm": "true"}, "")]


def test_a_name_the_reply_never_assigned_is_no_literal():
    (call,) = read_calls("apply_hunks(ids)", PARAMS)
    assert call.problem.startswith("the arguments of apply_hunks(...) are not literal values")


def test_a_call_written_inside_another_calls_argument_is_no_call():
    """A README that write_file writes may show a fenced JSON call as an example: it is content,
    not a second call (issue 32: it was run as one)."""
    tools = {"write_file": ["path", "content"], "create_commit": ["message", "confirm"], "stuck": ["summary"]}
    text = ('write_file("README.md", """To commit, the model replies:\n```json\n'
            '{"name": "create_commit", "arguments": {"message": "x"}}\n```\n""")')
    calls = read_calls(text, tools)
    assert [c.name for c in calls] == ["write_file"] and calls[0].ok
    assert '"create_commit"' in calls[0].arguments["content"]
    # Beside it, not inside: two calls.
    beside = text + '\n{"name": "create_commit", "arguments": {}}'
    assert [c.name for c in read_calls(beside, tools)] == ["write_file", "create_commit"]
    # A stuck summary that quotes a call, in JSON, is one stuck.
    quoted = '{"name": "stuck", "arguments": {"summary": "I tried apply_hunks([\\"a.py\\"]) and it failed"}}'
    assert [c.name for c in read_calls(quoted, tools)] == ["stuck"]
