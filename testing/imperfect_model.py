"""`imperfect`: an llm model that extracts logical commits the way a mid-size model does,
mistakes and all, registered through llm's plugin manager like the scripted model.

What it means to do, for an extraction: read the diff, apply the hunks of the prompt's
index whose paths match the commit's `Paths:` (or, with none, the globs its hints list after
`Files:`, as a spec that names files only in prose), sometimes rewrite one of those files
whole (read_file, then write_file), and commit. Before each of these it may first make
one of the mistakes mid-size models make with tool calling: an unknown tool, a wrong
argument type, invented ids, `./` and absolute paths, text instead of a call, a tool
call written as JSON in its text (which git-retcon runs: it believes it ran, rightly), an
empty commit, a missing file, a whole file written with CRLF or without its final newline.

It corrects a mistake only when the answer says what went wrong (each mistake has the
words it understands); otherwise it believes the call did what it meant, or makes it
again -- which is how real models end stuck or commit a wrong tree. Every choice is
drawn from a random generator seeded by $RETCON_IMPERFECT_SEED, the step and the turn,
and the model is stateless (it replays the conversation), so a run is reproducible.
Each turn is appended to $RETCON_IMPERFECT_LOG (JSON lines: step, turn, mistake).
"""
from __future__ import annotations

import json
import os
import random
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import llm
from llm.parts import Message, TextPart, ToolCallPart, ToolResultPart

from git_retcon import diff
from git_retcon.model.builtin import user_text
from git_retcon.model.prompt import read_step
from git_retcon.state.spec import paths_match as matches
from testing.scripted_model import ModelPlugin, step_keys

P_MISTAKE = 0.5          # before an intent
P_AGAIN = 0.2            # once more, right after a corrected mistake
RAN = r"(?!)"            # a "mistake" git-retcon runs as meant (a call written as text): nothing to correct


@dataclass
class Action:
    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    text: str = ""


@dataclass
class Mistake:
    name: str
    act: Callable[[], Action]
    understood: str          # a regex of the answer that says what went wrong
    unclear: str = "believe"  # what it does when the answer does not: "believe" it worked, or "repeat"


@dataclass
class Turn:
    calls: list[tuple[str, dict[str, Any]]]
    text: str
    answer: str = ""          # the tool results, then any user message (steering) that followed


def turns_of(messages: list[Message]) -> list[Turn]:
    out: list[Turn] = []
    for m in messages:
        if m.role == "assistant":
            out.append(Turn([(p.name, dict(p.arguments or {})) for p in m.parts if isinstance(p, ToolCallPart)],
                            "".join(p.text for p in m.parts if isinstance(p, TextPart))))
        elif out:
            for p in m.parts:
                if isinstance(p, ToolResultPart):
                    out[-1].answer += (p.output if isinstance(p.output, str) else json.dumps(p.output)) + "\n"
                elif isinstance(p, TextPart):
                    out[-1].answer += p.text + "\n"
    return out


def call(name: str, **arguments: Any) -> Action:
    return Action([(name, arguments)])


def say(text: str) -> Action:
    return Action(text=text)


class Plan:
    """One extraction step: its intents, their right calls and the mistakes before them."""

    def __init__(self, prompt: str, seed: str):
        self.seed = seed
        fields = read_step(prompt)
        self.message = fields.summary or "commit"
        files = re.search(r"^Files: (.*)$", prompt, re.M)
        self.patterns: list[str] = fields.paths or ([p.strip() for p in files[1].split(",")] if files else [])
        # The prompt's index ("<id> <path> <kind> +a -r ..."), or the whole diff ("hunk <id> <path> (<kind>)").
        index = diff.read_index(prompt) + diff.read_hunks(prompt)
        self.hunks = [(h.id, h.path, h.kind) for h in index if matches(h.path, self.patterns)]
        self.ids = [i for i, _, _ in self.hunks]
        first = self.hunks[0][1] if self.hunks else "README"
        self.prefix = first.rsplit("/", 1)[0] + "/" if "/" in first else first
        plan = random.Random(f"{seed}/plan")
        files = sorted({p for _, p, k in self.hunks if k in ("add", "modify")})
        self.rewrite = plan.choice(files) if files and plan.random() < 0.5 else None
        self.intents = ["read", "apply"] + (["reread", "rewrite"] if self.rewrite else []) + ["commit"]

    # -- the right calls --

    def right(self, intent: str, rng: random.Random, turns: list[Turn]) -> Action:
        if intent == "read":
            return call("read_diff", path=rng.choice(["", self.prefix, "./" + self.prefix]))
        if intent == "apply":
            form = rng.choice(["list", "json", "csv"])   # all three are how models send a list
            ids: object = self.ids if form == "list" else json.dumps(self.ids) if form == "json" \
                else ", ".join(self.ids)
            return call("apply_hunks", hunk_ids=ids)
        if intent == "reread":
            return call("read_file", path=rng.choice([self.rewrite, "./" + str(self.rewrite)]))
        if intent == "rewrite":
            return call("write_file", path=self.rewrite, content=self.content(turns))
        return call("create_commit", message=rng.choice(["", self.message]))

    def content(self, turns: list[Turn]) -> str:
        """The file as read_file answered it: what a model rewriting it starts from."""
        for t in reversed(turns):
            if t.calls and t.calls[0][0] == "read_file" and not t.answer.startswith("Error"):
                return t.answer[:-1]   # the answer, less the separator turns_of added
        return ""

    # -- the mistakes --

    def mistakes(self, intent: str, turns: list[Turn]) -> list[Mistake]:
        ids = self.ids
        if intent == "read":
            return [
                Mistake("unknown tool", lambda: call("view_diff", file=""), r"there is no tool"),
                Mistake("missing file", lambda: call("read_file", path="src/helpers_missing.py"), r"no such file"),
                Mistake("absolute path", lambda: call("read_file", path="/workspace/project/" + self.hunks[0][1]),
                        r"absolute paths are refused"),
                Mistake("text, not a call", lambda: say("Let me look at the remaining diff first."),
                        r"ended your turn"),
                Mistake("page as a string", lambda: call("read_diff", page="1"), r"Remaining diff"),
                Mistake("namespaced tool name", lambda: call("functions.read_diff"), r"did you mean read_diff\?"),
            ]
        if intent == "apply":
            return [
                Mistake("invented ids", lambda: call("apply_hunks", hunk_ids=["0123abcd99", "feedface00"]),
                        r"unknown hunk ids"),
                Mistake("ids in an object", lambda: call("apply_hunks", hunk_ids={"ids": ids}),
                        r"hunk_ids must be an array", "repeat"),
                Mistake("call as JSON text", lambda: say(
                    'I will apply them now:\n```json\n' + json.dumps({"name": "apply_hunks",
                                                                       "arguments": {"hunk_ids": ids}}) + "\n```"),
                    RAN),
                Mistake("call as code text", lambda: say(f"apply_hunks(hunk_ids={json.dumps(ids)})"), RAN),
                Mistake("empty commit", lambda: call("create_commit", message=self.message), r"nothing to commit"),
                Mistake("unknown tool", lambda: call("apply_patch", hunks=ids), r"there is no tool"),
                Mistake("tool name in another case", lambda: call("ApplyHunks", hunk_ids=ids),
                        r"did you mean apply_hunks\?"),
                Mistake("plural dropped", lambda: call("apply_hunk", hunk_ids=ids), r"did you mean apply_hunks\?"),
                Mistake("text, not a call", lambda: say("The hunks for this commit are clear; applying them."),
                        r"ended your turn"),
            ]
        if intent == "reread":
            return [Mistake("absolute path", lambda: call("read_file", path="/repo/" + str(self.rewrite)),
                            r"absolute paths are refused")]
        if intent == "rewrite":
            text = self.content(turns)
            return [
                Mistake("CRLF file", lambda: call("write_file", path=self.rewrite,
                                                  content=text.replace("\n", "\r\n")), r"only in line endings"),
                Mistake("no final newline", lambda: call("write_file", path=self.rewrite, content=text.rstrip("\n")),
                        r"only in the final newline"),
            ]
        return [
            Mistake("message as an object", lambda: call("create_commit", message={"title": self.message}),
                    r"message must be a string", "repeat"),
            Mistake("commit as JSON text", lambda: say(json.dumps(
                {"tool": "create_commit", "parameters": {"message": self.message}})), RAN),
            Mistake("believes it committed", lambda: say("All changes are committed."), r"ended your turn"),
        ]

    # -- playing --

    def play(self, key: str, turns: list[Turn]) -> tuple[Action, str | None]:
        """The action of the turn after `turns`, replaying every earlier decision."""
        intent = 0
        retried = False
        repeat: Mistake | None = None
        for j in range(len(turns) + 1):
            if intent >= len(self.intents):
                return say("Done."), None
            rng = random.Random(f"{self.seed}/{key}/{j}")
            name = self.intents[intent]
            mistake = repeat
            options = self.mistakes(name, turns[:j])
            if mistake is None and options and rng.random() < (P_AGAIN if retried else P_MISTAKE):
                mistake = rng.choice(options)
            action = mistake.act() if mistake else self.right(name, rng, turns[:j])
            if j == len(turns):
                return action, mistake.name if mistake else None
            answer = turns[j].answer
            if mistake is None:
                # A right call that an answer refuses is made again, the same way.
                if not answer.startswith(("Error", "Cancelled")):
                    intent += 1
                retried = False
            elif re.search(mistake.understood, answer):
                repeat, retried = None, True
            elif mistake.unclear == "repeat":
                repeat = mistake
            else:
                repeat, retried = None, False
                intent += 1          # believed: what it meant to do is not done
        raise AssertionError("unreachable")


class ImperfectModel(llm.Model):
    model_id = "imperfect"
    supports_tools = True
    can_stream = False
    plan: type[Plan] = Plan      # what it means to do, and the mistakes it makes on the way

    def execute(self, prompt: llm.Prompt, stream: bool, response: llm.Response,
                conversation: llm.Conversation | None) -> Iterator[str]:
        user = user_text(prompt.messages)
        key = step_keys(user)[0]
        seed = os.environ.get("RETCON_IMPERFECT_SEED", "0")
        turns = turns_of(prompt.messages)
        action: Action
        if "/extract/" in key:
            action, mistake = self.plan(user, f"{seed}/{key}").play(key, turns)
        else:   # it only extracts; a fix step is a failure of the test's spec
            action, mistake = call("stuck", summary=f"{self.model_id} only extracts"), None
        log = os.environ.get("RETCON_IMPERFECT_LOG")
        if log:
            with open(log, "a") as f:
                f.write(json.dumps({"seed": seed, "step": key, "turn": len(turns), "mistake": mistake,
                                    "calls": action.calls, "answer": turns[-1].answer if turns
                                    else ""}) + "\n")
        for name, arguments in action.calls:
            response.add_tool_call(llm.ToolCall(name=name, arguments=arguments))
        response.set_usage(input=100, output=10)
        yield action.text


PLUGIN = ModelPlugin("retcon-imperfect", ImperfectModel())
register = PLUGIN.register
unregister = PLUGIN.unregister
