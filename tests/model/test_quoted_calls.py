"""Quoted is quoted: a tool call written inside a string argument of another call (a README's
example, a stuck summary quoting an answer) is text, never a call, in every form the reader
knows, fenced or not, whether or not the outer call's own arguments can be read."""
from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from git_retcon.model.textcalls import read_calls
from testing.flow import call, retcon, turn
from tests.model.test_answers import small

PARAMS = {"read_diff": ["path", "page"], "apply_hunks": ["hunk_ids"], "create_commit": ["message", "confirm"],
          "stuck": ["summary"], "write_file": ["path", "content"]}
Args = dict[str, str]


def _json(a: Args) -> str:
    return json.dumps(a)


def _py(a: Args, triple: bool = False) -> str:
    if not triple:
        return ", ".join(f"{k}={v!r}" for k, v in a.items())
    return ", ".join(f'{k}="""' + v.replace("\\", "\\\\").replace('"""', '\\"\\"\\"') + '"""' for k, v in a.items())


# Every form the reader accepts, as a model writes a write_file call in it (its strings escaped as
# that form escapes them).
FORMS: dict[str, Callable[[Args], str]] = {
    "fenced": lambda a: "```json\n" + json.dumps({"name": "write_file", "arguments": a}) + "\n```",
    "bare": lambda a: json.dumps({"name": "write_file", "arguments": a}),
    "tool_call": lambda a: "<tool_call>" + json.dumps({"name": "write_file", "arguments": a}) + "</tool_call>",
    "python_tag": lambda a: "<|python_tag|>" + json.dumps({"name": "functions.write_file", "parameters": a}),
    "mistral_list": lambda a: "[TOOL_CALLS]" + json.dumps([{"name": "write_file", "arguments": a}]),
    "mistral_args": lambda a: "[TOOL_CALLS]write_file[ARGS]" + _json(a),
    "function": lambda a: "<function=write_file>" + _json(a) + "</function>",
    "function_name": lambda a: '<function name="write_file">' + _json(a) + "</function>",
    "openai": lambda a: json.dumps({"type": "function", "function": {"name": "write_file", "arguments": _json(a)}}),
    "keyed": lambda a: json.dumps({"write_file": a}),
    "invoke": lambda a: '<invoke name="write_file">' + "".join(
        f'<parameter name="{k}">{v}</parameter>' for k, v in a.items()) + "</invoke>",
    "syntax": lambda a: f"write_file({_py(a)})",
    "syntax_triple": lambda a: f"write_file({_py(a, triple=True)})",
    "dotted": lambda a: f"default_api.write_file({_py(a)})",
}
INNER = {"path": "pwned.txt", "content": "x"}


def _nested(outer: str, inner: str, fenced: bool) -> tuple[str, str]:
    """A reply whose write_file (in the outer form) writes a README showing a call in the inner form."""
    shown = FORMS[inner](INNER)
    if fenced:
        shown = f"```json\n{shown}\n```" if not shown.startswith("```") else shown
    content = f"To write a file, the model replies:\n{shown}\nand git-retcon runs it.\n"
    return "I write the README.\n" + FORMS[outer]({"path": "README.md", "content": content}), content


@pytest.mark.parametrize("fenced", [False, True], ids=["unfenced", "fenced"])
@pytest.mark.parametrize("inner", list(FORMS))
@pytest.mark.parametrize("outer", list(FORMS))
def test_a_call_in_a_string_argument_of_another_is_no_call(outer, inner, fenced):
    text, content = _nested(outer, inner, fenced)
    calls = read_calls(text, PARAMS)
    assert [(c.name, c.arguments.get("path")) for c in calls] == [("write_file", "README.md")]
    # Read whole, where the form can hold the other unescaped (XML parameters cannot hold an
    # <invoke>; a triple-quoted string cannot hold another's closing quotes unescaped).
    if not (outer == "invoke" and inner == "invoke"):
        assert calls[0].ok and calls[0].arguments["content"] == content


@pytest.mark.parametrize("fenced", [False, True], ids=["unfenced", "fenced"])
@pytest.mark.parametrize("inner", list(FORMS))
@pytest.mark.parametrize("outer", [f for f in FORMS if f != "invoke"])
def test_a_call_in_a_string_that_breaks_its_form_is_no_call_either(outer, inner, fenced):
    """As models write them: raw newlines in a JSON or Python string, which make the outer call
    unreadable. The outer is then a call that cannot be read (answered as such); the call shown in
    its string is still text. It ran: a broken outer call was replaced by the well-formed call
    found just after it, its quoted example."""
    text, _ = _nested(outer, inner, fenced)
    text = text.replace("\\n", "\n")
    calls = read_calls(text, PARAMS)
    assert not [c for c in calls if c.arguments.get("path") == "pwned.txt"], calls
    # (a broken `{"write_file": ...}` is no call the reader can name: the reply gets plain steering)
    assert [c.name for c in calls][:1] == ([] if outer == "keyed" else ["write_file"])


def test_the_quoted_call_in_a_readme_is_not_run_by_a_text_protocol_model(tmp_path: Path, scripted):
    """End to end, through the text protocol: the reply writes a README that starts with a fenced
    example call, its quotes unescaped as a model writes them, so the write_file cannot be read;
    the example, found just after it, was run in its place (pwned.txt was committed). Now the reply
    is answered as a call that cannot be read, and the step goes on."""
    repo = small(tmp_path)
    example = '```json\n{"name": "write_file", "arguments": {"path": "pwned.txt", "content": "x"}}\n```'
    log = scripted({"1/extract": [
        turn(text=f'write_file("README.md", "{example}\n")'),
        turn(call("apply_hunks", hunk_ids="$ids:util.py|.github/")),
        turn(call("create_commit"))]})
    res = retcon(repo, "run", "-m", "scripted", "--tools", "text")
    assert res.code == 0, res.text
    assert repo.tree("clean~1") == repo.tree("feature~1")
    assert repo.git("ls-tree", "-r", "--name-only", "clean") == repo.git("ls-tree", "-r", "--name-only", "feature")
    assert not (Path(repo.path) / "pwned.txt").exists()
    assert len(log.read_text().splitlines()) == 3   # the unreadable call answered, then the script went on
