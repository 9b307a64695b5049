"""Models that answer the owners' questions (prompts/owner.md) the way small models do, registered
through llm's plugin manager like the scripted model.

- `owners-last` (schema support): always the last choice offered, the bias the 1.5B model showed
  ("4" or "5" for almost every hunk, whatever the hunk).
- `owners-recent` (schema support): of the choices offered, the commit listed last in the prompt's
  list of commits: the 1.5B model's other bias (pflag's third commit took 47 of its 62 atoms).
- `owners-last-text` (no schema): the same as one plain number; its first reply to a question is
  prose ("I think it is the last one") when $RETCON_OWNERS_CHATTY is set, so the reply is asked again.
- `owners-erring` (schema support): the truth from $RETCON_OWNERS_TRUTH (JSON: a hunk's text as
  the prompt shows it -> the commit number), right for a share $RETCON_OWNERS_RIGHT (default 0.7)
  of the hunks (seeded by the hunk's text), else the last choice; no truth known: the last choice.

`owners-truth`, which answers as the authors did, is testing/truth_model.py's.

`imperfect-owners-last` and `imperfect-owners-erring` answer the questions so, and extract as the
`imperfect` model does (testing/imperfect_model.py): the benches' "after", beside `imperfect` alone.

Each answers `plan --outline`'s request for commits (prompts/plan-outline.md) with the reply in
$RETCON_OWNERS_OUTLINE, as it is, or else one commit per file of the overview; and its request to
name a commit plain code proposed (prompts/plan-name.md) with its entry of $RETCON_OWNERS_NAMES, or
else "Change" and the commit's files.

Every question is appended to $RETCON_SCRIPT_LOG (JSON lines) when set.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import llm

from testing.flow import Outcome, retcon
from testing.gitrepo import GitRepo
from testing.imperfect_model import ImperfectModel
from testing.scripted_model import ModelPlugin, _log

_CHOICES = re.compile(r"^Choose one of: ([\d, ]+)\.$", re.M)
_CHANGE = re.compile(r"^The change, in .*?:\n(.*)\Z", re.M | re.S)
_FILE = re.compile(r"^- (\S+) \(\+\d+ -\d+\)", re.M)


def choices(prompt: str) -> list[int]:
    m = _CHOICES.search(prompt)
    return [int(x) for x in m.group(1).split(",")] if m else []


def change(prompt: str) -> str:
    """The hunk's text as the prompt shows it (the key of the truth file)."""
    m = _CHANGE.search(prompt)
    return m.group(1).strip() if m else ""


def outline(prompt: str) -> str:
    """The commits `plan --outline` asks for: $RETCON_OWNERS_OUTLINE, else one per file."""
    given = os.environ.get("RETCON_OWNERS_OUTLINE")
    if given is not None:
        return given
    return json.dumps({"commits": [{"message": f"Change {p}", "holds": p} for p in _FILE.findall(prompt)]})


_PROPOSED = re.compile(r"^Commit \d+ \(\+\d+ -\d+\): (.*)$", re.M)
_NUMBER = re.compile(r"Write the message of commit (\d+) only")


def naming(prompt: str) -> str:
    """The message `plan --outline` asks for, for commit k: the k-th of $RETCON_OWNERS_NAMES (a JSON
    list; null, or no k-th: a reply in prose, unusable), else "Change" and its files."""
    k = int(m[1]) if (m := _NUMBER.search(prompt)) else 1
    given = os.environ.get("RETCON_OWNERS_NAMES")
    if given is not None:
        names = json.loads(given)
        said = names[k - 1] if k <= len(names) else None
        return json.dumps({"message": said}) if isinstance(said, str) else "Sure! This commit changes things."
    files = _PROPOSED.findall(prompt)
    return json.dumps({"message": f"Change {files[k - 1]}" if k <= len(files) else ""})


class OwnersLast(llm.Model):
    model_id = "owners-last"
    supports_schema = True
    can_stream = False

    def pick(self, prompt: str, offered: list[int]) -> int:
        return offered[-1] if offered else 1

    def execute(self, prompt: llm.Prompt, stream: bool, response: llm.Response,
                conversation: llm.Conversation | None) -> Iterator[str]:
        text = prompt.prompt or ""
        offered = choices(text)
        got = self.pick(text, offered)
        reply = outline(text) if "\nStep: outline" in text else naming(text) if "\nStep: name" in text else \
            self.reply(text, got, bool(prompt.schema))
        entry: dict[str, Any] = {"model": self.model_id, "choices": offered, "reply": reply,
                                 "schema": bool(prompt.schema), "prompt": text}
        _log(os.environ.get("RETCON_SCRIPT_LOG"), entry)
        response.set_usage(input=max(len(text) // 4, 1), output=3)
        yield reply

    def reply(self, prompt: str, got: int, structured: bool) -> str:
        return json.dumps({"commit": got}) if structured else str(got)


class OwnersLastText(OwnersLast):
    model_id = "owners-last-text"
    supports_schema = False

    def reply(self, prompt: str, got: int, structured: bool) -> str:
        if os.environ.get("RETCON_OWNERS_CHATTY") and "(attempt 2)" not in prompt:
            return "I think it is the last one."
        return str(got)


class OwnersRecent(OwnersLast):
    model_id = "owners-recent"

    def pick(self, prompt: str, offered: list[int]) -> int:
        listed = [int(n) for n in re.findall(r"^(\d+)\. ", prompt.split("\nPart ", 1)[0], re.M)]
        mine = [n for n in listed if n in offered]
        return mine[-1] if mine else super().pick(prompt, offered)


class OwnersErring(OwnersLast):
    model_id = "owners-erring"

    def pick(self, prompt: str, offered: list[int]) -> int:
        path = os.environ.get("RETCON_OWNERS_TRUTH")
        truth: dict[str, int] = json.loads(Path(path).read_text()) if path else {}
        hunk = change(prompt)
        # A few adjacent hunks asked as one: the commit most of them belong to.
        parts = [truth.get(part) for part in re.split(r"\n\n(?=@@ |\()", hunk)]
        known = [k for k in parts if k is not None]
        right = truth.get(hunk) or (max(set(known), key=known.count) if known else None)
        share = float(os.environ.get("RETCON_OWNERS_RIGHT", "0.7"))
        luck = int(hashlib.sha1(hunk.encode()).hexdigest()[:8], 16) / 0xFFFFFFFF
        if right is not None and right in offered and luck < share:
            return right
        return super().pick(prompt, offered)


class _Extracts(ImperfectModel):
    """Questions answered by `answers`, every other prompt by the imperfect model."""

    supports_schema = True
    answers: OwnersLast = OwnersLast()

    def execute(self, prompt: llm.Prompt, stream: bool, response: llm.Response,
                conversation: llm.Conversation | None) -> Iterator[str]:
        if re.search(r"\nStep: (owner|outline)", prompt.prompt or ""):
            yield from self.answers.execute(prompt, stream, response, conversation)
        else:
            yield from super().execute(prompt, stream, response, conversation)


class ImperfectOwnersLast(_Extracts):
    model_id = "imperfect-owners-last"


class ImperfectOwnersErring(_Extracts):
    model_id = "imperfect-owners-erring"
    answers = OwnersErring()


PLUGIN = ModelPlugin("retcon-owners", OwnersLast(), OwnersRecent(), OwnersLastText(), OwnersErring(),
                     ImperfectOwnersLast(), ImperfectOwnersErring())
register = PLUGIN.register
unregister = PLUGIN.unregister


def questions(log: Path, step: str) -> list[dict[str, Any]]:
    """The questions of one step ("outline", "name", ...) the log of $RETCON_SCRIPT_LOG holds."""
    return [e for e in map(json.loads, log.read_text().splitlines()) if f"\nStep: {step}" in e["prompt"]]


def plan_outline(repo: GitRepo, *extra: str) -> Outcome:
    """`git retcon plan --outline` of feature onto main, the questions to owners-last."""
    return retcon(repo, "plan", "--outline", "-m", "owners-last", "--source", "feature", "--onto", "main",
                  "--no-edit", *extra)
