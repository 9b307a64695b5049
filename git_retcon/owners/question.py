"""One small question per hunk in doubt: which of its few plausible commits it belongs to. A few
adjacent hunks of one file whose evidence is the same are asked as one question (one change to a
function is often cut into hunks a few lines apart): fewer questions, and each shows more context.

The commits' messages and hints come first and are the same in every question (one shared
prefix, so a server's prompt cache serves it); the choices, in an order that favours none
(shuffled with a seed from the hunk's id), and the hunk with its file name come last. The reply
is constrained by a JSON schema where the model supports one, else it is one number read
strictly, asked once more after a bad reply. An answer that differs from the evidence's best
score is asked again with the choices and the commits' list both reversed (a small model favours
the last choices, and the commit listed last: the 1.5B model put 47 of pflag's 62 atoms in its
third commit, 30 of is's 63 in its third); two answers that differ leave the hunk uncertain.
Every question is asked once before any is asked again, so each phase shares one prefix.
"""
from __future__ import annotations

import json
import random
import re
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import llm

from git_retcon import diff
from git_retcon.diff import atoms
from git_retcon.diff.select import interleave, numbered
from git_retcon.model.ask import Asking, Question, ask
from git_retcon.model.logs import ExchangeLog
from git_retcon.model.prompt import template
from git_retcon.owners import names
from git_retcon.owners.evidence import Evidence, Who
from git_retcon.state import spec as specmod

HEAD, TAIL = 24, 8            # lines of a long hunk shown from its start and its end
HINTS = 400                   # characters of a commit's hints shown
NEAR = 8                      # lines between two hunks of one file asked as one question
GROUP = 3                     # hunks asked as one question at most
_NUMBER = re.compile(r"^\s*(?:commit\s*)?#?\s*(\d+)\s*[.)]?\s*$", re.I)


@dataclass(frozen=True)
class Answer:
    k: int
    who: Who
    replies: tuple[int | None, ...]     # what the model answered, in the order asked


@dataclass
class Tally:
    questions: int = 0
    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def said(self) -> str:
        """The questions' cost in words, as run and plan print it."""
        return (f"{self.questions} questions, {self.calls} calls, {self.input_tokens} tokens in, "
                f"{self.output_tokens} out")

    def add(self, usage: Any) -> None:
        with self.lock:
            self.calls += 1
            self.input_tokens += getattr(usage, "input", None) or 0
            self.output_tokens += getattr(usage, "output", None) or 0


def schema(choices: list[int]) -> dict[str, Any]:
    """The reply's JSON schema: one of the choices' numbers (1-based, as people count)."""
    numbers = [specmod.number(k) for k in choices]
    return {"type": "object", "properties": {"commit": {"type": "integer", "enum": numbers}}, "required": ["commit"]}


def order(hid: str, choices: list[int]) -> list[int]:
    """The choices in an order that favours none, the same for the same hunk every time."""
    out = list(choices)
    random.Random(int(hid[:10], 16) if re.fullmatch(r"[0-9a-f]+", hid[:10]) else hid).shuffle(out)
    return out


def commits_text(spec: specmod.Spec, last_first: bool = False) -> str:
    """The commits with their numbers and hints, in order or listed from the last to the first."""
    out = []
    listed = list(enumerate(spec.commits))
    for k, c in reversed(listed) if last_first else listed:
        line = f"{k + 1}. {c.summary}"
        hints = " ".join(c.hints.split())
        if hints:
            line += f"\n   hints: {hints[:HINTS]}{'…' if len(hints) > HINTS else ''}"
        out.append(line)
    return "\n".join(out)


CONTEXT = 3      # lines of an atom's hunk shown around it, as a unified diff shows context


def atom_text(atom: diff.Hunk, whole: diff.Hunk) -> str:
    """An atom as a unified diff: its own lines with - and +, the rest of its hunk as context
    lines (a leading space), CONTEXT of them around the atom's, in the order the hunk shows them;
    a long atom by its head and tail, as a hunk is."""
    part = atoms.parse_id(atom.id)
    if part is None or whole.kind != "modify":
        return hunk_text(atom)
    old, new = numbered(whole)
    m = len(old)
    rows: list[tuple[bool, str]] = []
    for sign, i in interleave(old, new):
        number = i + 1 if sign == "-" else m + i + 1
        text = (old[i] if sign == "-" else new[i]).decode("utf-8", "replace").rstrip("\r\n")
        rows.append((number in part[1], (sign if number in part[1] else " ") + text))  # another atom's: context
    mine = [i for i, (own, _) in enumerate(rows) if own]
    lo, hi = max(mine[0] - CONTEXT, 0), min(mine[-1] + CONTEXT + 1, len(rows))
    body = [text for _, text in rows[lo:hi]]
    if len(body) > HEAD + TAIL:
        body = body[:HEAD] + [f"... {len(body) - HEAD - TAIL} lines not shown ..."] + body[-TAIL:]
    head = f"@@ -{whole.old_start},{whole.old_lines} +{whole.new_start},{whole.new_lines} @@"
    return "\n".join(ln[:200] for ln in [head, *body])


def hunk_text(h: diff.Hunk) -> str:
    """The hunk as -/+ lines; a long one by its head and tail and the names it defines."""
    removed, added = names.hunk_lines(h)
    if h.kind == "modify":
        head = f"@@ -{h.old_start},{h.old_lines} +{h.new_start},{h.new_lines} @@"
    else:
        head = f"({h.kind}{' from ' + h.old_path if h.old_path else ''})"
    lines = [head] + ["-" + ln for ln in removed] + ["+" + ln for ln in added]
    if len(lines) > HEAD + TAIL + 1:
        defined = names.defined(added or removed)
        cut = len(lines) - HEAD - TAIL
        lines = lines[:HEAD] + [f"... {cut} lines not shown"
                                + (f"; it defines {', '.join(defined[:12])}" if defined else "") + " ..."] \
            + lines[-TAIL:]
    return "\n".join(ln[:200] for ln in lines)


def read_reply(text: str, choices: list[int], structured: bool) -> int | None:
    """The commit (0-based) a reply names, if it is one of the choices: {"commit": N} from a
    schema, else one number alone."""
    number: int | None = None
    if structured:
        try:
            value = json.loads(text)
            got = value.get("commit") if isinstance(value, dict) else None
            number = got if isinstance(got, int) and not isinstance(got, bool) else None
        except ValueError:
            number = None
    if number is None and (m := _NUMBER.match(text.strip().strip("`").strip())):
        number = int(m.group(1))
    return number - 1 if number is not None and number - 1 in choices else None


class Asker:
    """The questions of one placement, thread-safe."""

    def __init__(self, model: llm.Model, spec: specmod.Spec, log: ExchangeLog | None = None,
                 say: Callable[[str], None] | None = None):
        self.model = model
        self.structured = bool(getattr(model, "supports_schema", False))
        self.prefix = commits_text(spec)
        self.prefix_last_first = commits_text(spec, last_first=True)
        self.log = log
        self.say = say
        self.tally = Tally()
        self.index: dict[str, int] = {}     # hunk id -> its place among the questions (Part k/n)
        self.whole: dict[str, diff.Hunk] = {}   # an atom's hunk, by the hunk's id: the context it is shown in

    def _prompt(self, hs: list[diff.Hunk], choices: list[int], again: str, last_first: bool = False) -> str:
        listed = ", ".join(str(specmod.number(k)) for k in choices)
        h = hs[0]
        how = ('Reply with JSON: {"commit": N}, N one of those numbers.' if self.structured
               else "Reply with the number only.")
        return template("owner.md").substitute(commits=self.prefix_last_first if last_first else self.prefix,
                                               listed="listed from the last to the first" if last_first
                                               else "in order", part=str(self.index.get(h.id, 0) + 1),
                                               n=str(max(len(self.index), 1)), choices=listed,
                                               how=how + again, path=h.path,
                                               hunk="\n\n".join(self._text(x) for x in hs),
                                               attempt=" (attempt 2)" if again else "")

    def _text(self, h: diff.Hunk) -> str:
        whole = self.whole.get(h.id.split(":")[0]) if ":" in h.id else None
        return atom_text(h, whole) if whole is not None else hunk_text(h)

    def _call(self, prompt: str, choices: list[int]) -> str:
        question = Question(prompt, schema(choices), route="schema" if self.structured else "text")
        return str(ask(self.model, question, Asking(self.log, self.tally.add, self.say)))

    def choose(self, h: diff.Hunk | list[diff.Hunk], choices: list[int], last_first: bool = False) -> int | None:
        """One question (about one hunk, or a few adjacent ones), asked once more after a reply
        that names none of the choices."""
        h = h if isinstance(h, list) else [h]
        text = self._call(self._prompt(h, choices, "", last_first), choices)
        got = read_reply(text, choices, self.structured)
        if got is None:
            shown = " ".join(text.split())[:60]
            listed = ", ".join(str(specmod.number(k)) for k in choices)
            again = f"\nYour last reply ({shown!r}) named none of them: reply with one of {listed}."
            got = read_reply(self._call(self._prompt(h, choices, again, last_first), choices), choices,
                             self.structured)
        return got

    def first(self, h: diff.Hunk | list[diff.Hunk], ranked: list[tuple[int, float]], top: int | None) -> Answer:
        """The first asking: settled when there is one choice or the answer is the evidence's best;
        else an Answer whose who is "model, uncertain" until settle() has asked again."""
        with self.tally.lock:
            self.tally.questions += 1
        h = h if isinstance(h, list) else [h]
        shown = order(h[0].id, [k for k, _ in ranked])
        a = self.choose(h, shown)
        if len(shown) == 1:
            return Answer(shown[0], "model", (a,))
        if a is not None and a == top:
            return Answer(a, "model", (a,))
        return Answer(a if a is not None else -1, "model, uncertain", (a,))

    def settled(self, got: Answer) -> bool:
        return got.who == "model" or len(got.replies) > 1

    def settle(self, h: diff.Hunk | list[diff.Hunk], ranked: list[tuple[int, float]], top: int | None,
               got: Answer) -> Answer:
        """The second asking of an answer first() left open: the choices in the reversed order and
        the commits listed from the last to the first; the same answer twice is the model's, two
        answers are uncertain: the evidence's best if it is one of them, else the first answer;
        where the evidence has no best, its order (the best score, the earliest commit of those
        scored alike) rather than an answer the list's order led (on the bench's real histories,
        7 of 16 such atoms right, the first answer 5)."""
        if self.settled(got):
            return got
        h = h if isinstance(h, list) else [h]
        a = got.replies[0]
        b = self.choose(h, list(reversed(order(h[0].id, [k for k, _ in ranked]))), last_first=True)
        if a is not None and a == b:
            return Answer(a, "model", (a, b))
        if top is None:     # two answers and no evidence between them: the evidence's order decides
            pick = ranked[0][0]
        else:
            pick = top if top in (a, b) else a if a is not None else b if b is not None else top
        return Answer(pick, "model, uncertain", (a, b))

    def answer(self, h: diff.Hunk | list[diff.Hunk], ranked: list[tuple[int, float]], top: int | None) -> Answer:
        """Which commit h (a hunk, or a few adjacent ones) belongs to: asked once, and again (the
        choices and the commits' list reversed) unless the answer is the evidence's best."""
        return self.settle(h, ranked, top, self.first(h, ranked, top))


def groups(doubt: list[diff.Hunk], ev: Evidence) -> list[list[diff.Hunk]]:
    """The hunks in doubt, in diff order, a few adjacent ones inside one definition of one file
    with the same evidence (the same plausible commits, scored alike) together."""
    out: list[list[diff.Hunk]] = []
    for h in doubt:
        last = out[-1][-1] if out else None
        # Atoms (`id:LINES`) are parts of one hunk split because their lines say different things:
        # each is asked alone, or one answer would join them again.
        if (last is not None and len(out[-1]) < GROUP and h.path == last.path and h.id in ev.around
                and ":" not in h.id and ":" not in last.id
                and ev.around[h.id] == ev.around.get(last.id) and ev.ranked[h.id] == ev.ranked[last.id]
                and 0 <= h.old_start - (last.old_start + last.old_lines) <= NEAR):
            out[-1].append(h)
        else:
            out.append([h])
    return out


def ask_all(asker: Asker, ev: Evidence, jobs: int = 1, say: Callable[[str], None] | None = None) -> dict[str, Answer]:
    """Every hunk in doubt asked (adjacent ones alike as one question), `jobs` questions in flight."""
    doubt = groups([h for h in ev.hunks if h.id in ev.ranked], ev)
    asker.index = {g[0].id: i for i, g in enumerate(doubt)}
    out: dict[str, Answer] = {}
    if not doubt:
        return out
    done = [0]
    lock = threading.Lock()

    def one(g: list[diff.Hunk]) -> Answer:
        got = asker.first(g, ev.ranked[g[0].id], ev.top(g[0].id))
        with lock:
            done[0] += 1
            if say is not None and (done[0] % 10 == 0 or done[0] == len(doubt)):
                say(f"  asked {done[0]}/{len(doubt)} questions")
        return got

    def again(pair: tuple[list[diff.Hunk], Answer]) -> Answer:
        g, got = pair
        return asker.settle(g, ev.ranked[g[0].id], ev.top(g[0].id), got)

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        firsts = list(pool.map(one, doubt))
        open_ = sum(not asker.settled(a) for a in firsts)
        if say is not None and open_:
            say(f"  asking {open_} again, the commits listed from the last to the first")
        for g, got in zip(doubt, pool.map(again, zip(doubt, firsts, strict=True)), strict=True):
            for h in g:
                out[h.id] = got
    return out
