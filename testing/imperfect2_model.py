"""`imperfect2`: a second imperfect model, with other mistakes than `imperfect`'s (issue 11:
"it will be judged with other models and mistakes than these").

It plays the same extraction as testing/imperfect_model.py (its Plan: read, apply, maybe
rewrite a file, commit; seeded, stateless, replayed from the conversation) and makes the
mistakes seen from Qwen, Llama, Mistral and small GPTs: calls in their chat templates'
text shapes (<tool_call>, <function=...>, [TOOL_CALLS]), `default_api.` names, ids dressed
(`hunk 3f2a9c`, backticks, `#`, `(path)`, upper case), selections written otherwise
(`[1-4]`, `lines 1-4`, `1..4`, `1–4`), paths from diff headers (`a/x`, `b/x`) or with a
trailing space, an unknown extra argument, a missing one, a page out of range, hunks applied
twice, and the same failing call sent again until the answer says it is the same.

A mistake the tools accept (a dressed id, a diff-header path) is believed done when the
answer is no error; one they refuse is corrected only when the answer says what went wrong.
$RETCON_IMPERFECT_SEED and $RETCON_IMPERFECT_LOG as for `imperfect`; each logged turn also
holds the answer the turn before it got, so a test reads what each mistake was told.
"""
from __future__ import annotations

import json
import random

from git_retcon import diff
from testing.imperfect_model import RAN, ImperfectModel, Mistake, Plan, Turn, call, say
from testing.scripted_model import ModelPlugin

ACCEPTED = r"^(Error|Cancelled)"   # a mistake the tools accept: corrected if refused, else believed done


def line_counts(prompt: str) -> dict[str, int]:
    """The numbered lines of each hunk the prompt's whole diff shows (selectable ones)."""
    return {h.id: h.numbered for h in diff.read_hunks(prompt) if h.kind in ("modify", "add")}


class Plan2(Plan):
    """imperfect's plan, with imperfect2's mistakes."""

    def __init__(self, prompt: str, seed: str):
        super().__init__(prompt, seed)
        self.counts = line_counts(prompt)

    def mistakes(self, intent: str, turns: list[Turn]) -> list[Mistake]:
        ids, first = self.ids, (self.hunks[0][1] if self.hunks else "README")
        if intent == "read":
            return [
                Mistake("diff header path", lambda: call("read_diff", path="a/" + first), ACCEPTED),
                Mistake("page out of range", lambda: call("read_diff", page="2"), r"valid pages are 1 to 1"),
                Mistake("unknown extra argument", lambda: call("read_diff", path="", file_filter="*.py"),
                        r"read_diff has no parameter 'file_filter': call read_diff\(path: string, page: integer\)"),
                Mistake("Hermes tool_call text", lambda: say(
                    '<tool_call>\n{"name": "read_diff", "arguments": {}}\n</tool_call>'), RAN),
                Mistake("Llama function tag", lambda: say("<function=read_diff>{}</function>"), RAN),
                Mistake("default_api name", lambda: call("default_api.read_diff"), r"did you mean read_diff\?"),
            ]
        if intent == "apply":
            paths = list(dict.fromkeys(p for _, p, _ in self.hunks))
            # One way of dressing the ids, and one of writing a selection, per step (tests/model/
            # test_dressed_items.py has each form's answer).
            form = random.Random(f"{self.seed}/form")
            dress = form.choice(["`{}`", "hunk {}", "#{}", "{} ({})", "upper"])
            written = form.choice(["{}[1-{}]", "{} lines 1-{}", "{}:1..{}", "{}:1\u2013{}"])
            out = [
                Mistake("ids dressed", lambda: call("apply_hunks", hunk_ids=[
                    i.upper() if dress == "upper" else dress.format(i, p) for i, p, _ in self.hunks]), ACCEPTED),
                Mistake("diff header paths", lambda: call("apply_hunks", hunk_ids=["b/" + p for p in paths]),
                        ACCEPTED),
                Mistake("extra argument", lambda: call("apply_hunks", hunk_ids=ids, path=self.prefix),
                        r"apply_hunks has no parameter 'path'"),
                Mistake("default_api name", lambda: call("default_api.apply_hunks", hunk_ids=ids),
                        r"did you mean apply_hunks\?"),
                Mistake("Mistral TOOL_CALLS text", lambda: say(
                    "[TOOL_CALLS]apply_hunks[ARGS]" + json.dumps({"hunk_ids": ids})), RAN),
            ]
            if ids and all(self.counts.get(i) for i in ids):
                # Every line of each hunk, as a selection written the way some models write one.
                out.append(Mistake("selection written otherwise", lambda: call(
                    "apply_hunks", hunk_ids=[written.format(i, self.counts[i]) for i in ids]), ACCEPTED))
            return out
        if intent == "reread":
            return [
                Mistake("diff header path", lambda: call("read_file", path="a/" + str(self.rewrite)), ACCEPTED),
                Mistake("trailing space", lambda: call("read_file", path=str(self.rewrite) + " "), ACCEPTED),
            ]
        if intent == "rewrite":
            return [Mistake("missing content", lambda: call("write_file", path=self.rewrite),
                            r"write_file needs content")]
        return [
            Mistake("apply again", lambda: call("apply_hunks", hunk_ids=ids[:1]),
                    r"in the worktree already \(applied in this step\)"),
            Mistake("same failing call", lambda: call("create_commit", message=self.message, amend=False),
                    r"This is the same call", "repeat"),
            Mistake("Llama function tag", lambda: say(
                "<function=create_commit>" + json.dumps({"message": self.message}) + "</function>"), RAN),
        ]


class Imperfect2Model(ImperfectModel):
    model_id = "imperfect2"
    plan = Plan2


PLUGIN = ModelPlugin("retcon-imperfect2", Imperfect2Model())
register = PLUGIN.register
unregister = PLUGIN.unregister
