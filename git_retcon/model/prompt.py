"""The prompt templates (prompts/, shipped in the wheel as git_retcon.prompts), and the reader
of a step prompt's fields: what retcon-paths and the test models learn from the prompt they
are sent. The templates are the writer; `read_step` is tested against them, so a change of
wording is one change here.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from importlib import resources
from string import Template


def template(name: str) -> Template:
    """A prompt template shipped in the wheel (prompts/, as git_retcon.prompts)."""
    return Template(resources.files("git_retcon.prompts").joinpath(name).read_text("utf-8"))


# The heading every step prompt starts with (plan's chunked prompts name a chunk or a part).
_HEADING = re.compile(r"^(?:Commit|Chunk|Part) (?P<number>\d+)/(?P<n>\d+)(?:: (?P<summary>.*))?$", re.M)
_STEP = re.compile(r"^Step: (?P<step>[\w-]+)(?: \(attempt (?P<attempt>\d+)\))?", re.M)
_BRIEF = re.compile(r"<brief>\n?(.*?)\n?</brief>", re.S)
_APPLIED = re.compile(r"^Applied for you: .*\n((?:  \S.*\n?)+)", re.M)


@dataclass
class StepPrompt:
    """A step prompt's fields, read back."""

    number: int = 0                 # the heading's count, from 1; 0 when the prompt has no heading
    n: int = 0
    summary: str = ""
    step: str = "extract"           # extract, fix, or one of plan's steps
    attempt: int = 1
    paths: list[str] = field(default_factory=list)
    assigned: str = ""              # the `Assigned hunks:` value (diff.read_assigned reads its ids)
    brief: str = ""                 # a fix prompt's rework brief
    applied: list[str] = field(default_factory=list)   # ids of the hunks git-retcon applied before the model


def read_step(prompt: str) -> StepPrompt:
    out = StepPrompt()
    if m := _HEADING.search(prompt):
        out.number, out.n, out.summary = int(m["number"]), int(m["n"]), (m["summary"] or "").strip()
    if m := _STEP.search(prompt):
        out.step, out.attempt = m["step"], int(m["attempt"] or 1)
    try:
        paths = json.loads(_field(prompt, "Paths"))
    except ValueError:
        paths = None
    out.paths = [str(p) for p in paths] if isinstance(paths, list) else []
    out.assigned = _field(prompt, "Assigned hunks")
    if m := _BRIEF.search(prompt):
        out.brief = m.group(1).strip()
    if m := _APPLIED.search(prompt):
        out.applied = [ln.split()[0] for ln in m.group(1).splitlines() if re.match(r"  [0-9a-f]{4,40} ", ln)]
    return out


def _field(prompt: str, name: str) -> str:
    m = re.search(rf"^{name}: (.*)$", prompt, re.M)
    return m.group(1).strip() if m else ""
