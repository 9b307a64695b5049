"""`git retcon demo [DIR]`: the whole idea in one command, offline, in seconds.

Builds a small Python package whose feature branch has a messy history (three
concerns interleaved in "wip" and "fix" commits), writes a spec with `paths`
per logical commit, and runs the real commands on it with the built-in
`retcon-paths` model: plan, run (build and tests really run), then the log of
both branches and check. DIR is left for the user to explore.
"""
from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import shlex
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from git_retcon.errors import RetconError
from git_retcon.git.plumbing import git
from git_retcon.ui import UI

Invoke = Callable[[list[str]], None]   # runs a git-retcon command line in this process

SOURCE, REMOTE, CLEANED = "feature", "main", "feature-clean"
SPEC_FILE = "spec.toml"          # left untracked in DIR, for the user to edit and re-import
HOUR = 3600

# -- the project on main ----------------------------------------------------------

BASE: dict[str, str] = {
    ".gitignore": "__pycache__/\n.pytest_cache/\n*.egg-info/\n",
    "pyproject.toml": '''\
[project]
name = "invoicing"
version = "0.3.0"
description = "Invoices with exact money arithmetic"
requires-python = ">=3.10"

[tool.pytest.ini_options]
testpaths = ["tests"]
''',
    "README.md": '''\
# invoicing

Invoices with exact money arithmetic: every amount is an integer number of cents.

```python
from invoicing import Invoice

inv = Invoice("2024-017").add("Consulting", 3, 45000).add("Travel", 1, 12050)
print(inv.summary())   # Invoice 2024-017: 2 lines, 1470.50
```
''',
    "invoicing/__init__.py": '''\
"""Invoices with exact money arithmetic: every amount is integer cents."""
from .invoice import Invoice, Line
from .money import format_cents, parse_amount

__all__ = ["Invoice", "Line", "format_cents", "parse_amount"]
''',
    "invoicing/money.py": '''\
"""Money as integer cents: no float ever touches an amount."""
from decimal import Decimal, InvalidOperation


def parse_amount(text: str) -> int:
    """'12.30' -> 1230. At most two decimals; anything else is a ValueError."""
    try:
        value = Decimal(text.strip())
    except InvalidOperation:
        raise ValueError(f"not an amount: {text!r}") from None
    if value.as_tuple().exponent < -2:
        raise ValueError(f"more than two decimals: {text!r}")
    return int(value * 100)


def format_cents(cents: int) -> str:
    """1230 -> '12.30'; a negative amount keeps its sign."""
    sign = "-" if cents < 0 else ""
    whole, part = divmod(abs(cents), 100)
    return f"{sign}{whole}.{part:02d}"
''',
    "invoicing/invoice.py": '''\
"""Invoice lines and totals."""
from dataclasses import dataclass, field

from .money import format_cents


@dataclass(frozen=True)
class Line:
    description: str
    quantity: int
    unit_cents: int

    @property
    def cents(self) -> int:
        return self.quantity * self.unit_cents


@dataclass
class Invoice:
    number: str
    lines: list[Line] = field(default_factory=list)

    def add(self, description: str, quantity: int, unit_cents: int) -> "Invoice":
        if quantity <= 0:
            raise ValueError("quantity must be positive")
        self.lines.append(Line(description, quantity, unit_cents))
        return self

    def subtotal(self) -> int:
        return sum(line.cents for line in self.lines)

    def summary(self) -> str:
        return f"Invoice {self.number}: {len(self.lines)} lines, {format_cents(self.subtotal())}"
''',
    "tests/test_money.py": '''\
import pytest

from invoicing.money import format_cents, parse_amount


def test_parse_amount():
    assert parse_amount("12.30") == 1230
    assert parse_amount(" 7 ") == 700


def test_parse_amount_refuses_fractions_of_cents():
    with pytest.raises(ValueError):
        parse_amount("0.001")


def test_format_cents():
    assert format_cents(1230) == "12.30"
    assert format_cents(-5) == "-0.05"
''',
    "tests/test_invoice.py": '''\
import pytest

from invoicing import Invoice


def test_subtotal_and_summary():
    inv = Invoice("2024-017").add("Consulting", 3, 45000).add("Travel", 1, 12050)
    assert inv.subtotal() == 147050
    assert inv.summary() == "Invoice 2024-017: 2 lines, 1470.50"


def test_quantity_must_be_positive():
    with pytest.raises(ValueError):
        Invoice("x").add("Nothing", 0, 100)
''',
}

# -- the feature's files, in their final state ----------------------------------------

MONEY_IMPORT_OLD = "from decimal import Decimal, InvalidOperation\n"
MONEY_IMPORT = "from decimal import ROUND_HALF_EVEN, Decimal, InvalidOperation\n"
PERCENT_OF = '''

def percent_of(cents: int, percent: str) -> int:
    """percent% of cents, rounded half to even, as accountants round."""
    exact = Decimal(cents) * Decimal(percent) / 100
    return int(exact.quantize(Decimal(1), rounding=ROUND_HALF_EVEN))
'''
MONEY_TESTS = '''

def test_percent_of_rounds_half_to_even():
    assert percent_of(1000, "20") == 200
    assert percent_of(250, "1") == 2       # 2.5 -> 2
    assert percent_of(350, "1") == 4       # 3.5 -> 4
'''
TAX = '''\
"""VAT: a rate per invoice, rounded on each line as the tax office requires."""
from dataclasses import dataclass

from .invoice import Invoice
from .money import percent_of


@dataclass(frozen=True)
class VatRate:
    name: str
    percent: str

    def on(self, cents: int) -> int:
        return percent_of(cents, self.percent)


STANDARD = VatRate("standard", "20")
REDUCED = VatRate("reduced", "5.5")


def vat(invoice: Invoice, rate: VatRate) -> int:
    """Rounded per line, then summed: not rounded once on the subtotal."""
    return sum(rate.on(line.cents) for line in invoice.lines)


def total_with_vat(invoice: Invoice, rate: VatRate) -> int:
    return invoice.subtotal() + vat(invoice, rate)
'''
TAX_TESTS = '''\
from invoicing import Invoice
from invoicing.tax import REDUCED, STANDARD, total_with_vat, vat


def test_vat_is_rounded_per_line():
    inv = Invoice("1").add("Pen", 1, 5).add("Pad", 1, 5)
    assert vat(inv, REDUCED) == 0          # 0.275 cents per line, rounded away
    assert vat(inv, STANDARD) == 2


def test_total_with_vat():
    inv = Invoice("2").add("Consulting", 2, 50000)
    assert total_with_vat(inv, STANDARD) == 120000
'''
DISCOUNTS = '''\
"""Discount codes: SAVE<n> takes n% off, OFF<amount> a fixed amount; never below zero."""
from dataclasses import dataclass

from .money import parse_amount, percent_of


@dataclass(frozen=True)
class Discount:
    code: str
    percent: str = "0"
    amount_cents: int = 0

    def apply(self, cents: int) -> int:
        off = percent_of(cents, self.percent) + self.amount_cents
        return max(cents - off, 0)


def parse_code(code: str) -> Discount:
    """'SAVE10' is 10% off; 'OFF5.50' is 5.50 off."""
    code = code.strip().upper()
    if code.startswith("SAVE") and code[4:].isdigit():
        return Discount(code, percent=code[4:])
    if code.startswith("OFF"):
        return Discount(code, amount_cents=parse_amount(code[3:]))
    raise ValueError(f"unknown discount code: {code!r}")
'''
DISCOUNT_TESTS = '''\
import pytest

from invoicing.discounts import parse_code


def test_percentage_code():
    assert parse_code("save10").apply(5000) == 4500


def test_fixed_amount_code_never_goes_below_zero():
    assert parse_code("OFF5.50").apply(1000) == 450
    assert parse_code("OFF5.50").apply(300) == 0


def test_unknown_code():
    with pytest.raises(ValueError):
        parse_code("FREE")
'''
EXPORT_V1 = '''\
"""CSV export: one row per line, for spreadsheets."""
import csv
import io

from .invoice import Invoice
from .money import format_cents


def to_csv(invoice: Invoice) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\\n")
    writer.writerow(["description", "quantity", "unit", "amount"])
    for line in invoice.lines:
        writer.writerow([line.description, line.quantity, format_cents(line.unit_cents),
                         format_cents(line.cents)])
    return out.getvalue()
'''
EXPORT = EXPORT_V1.replace("one row per line, for spreadsheets", "one row per line and a total row,"
                           " for spreadsheets").replace(
    "    return out.getvalue()", '    writer.writerow(["total", "", "", format_cents(invoice.subtotal())])\n'
    "    return out.getvalue()")
EXPORT_TESTS = '''\
from invoicing import Invoice
from invoicing.export import to_csv


def test_csv_has_a_row_per_line_and_a_total():
    inv = Invoice("3").add("Widget, large", 2, 1999)
    assert to_csv(inv).splitlines() == [
        "description,quantity,unit,amount",
        '"Widget, large",2,19.99,39.98',
        "total,,,39.98",
    ]
'''
README_VAT = '''
## VAT

`invoicing.tax.vat(invoice, STANDARD)` rounds the tax on each line, half to even.
'''
README_MORE = '''
## Discount codes

`parse_code("SAVE10")` takes 10% off; `parse_code("OFF5.50")` takes 5.50 off.

## CSV export

`invoicing.export.to_csv(invoice)` writes one row per line and a total row.
'''


def _money(percent_rounding: str = "ROUND_HALF_EVEN") -> str:
    text = BASE["invoicing/money.py"].replace(MONEY_IMPORT_OLD, MONEY_IMPORT) + PERCENT_OF
    return text.replace("ROUND_HALF_EVEN", percent_rounding)


# The messy history: what a week of real work looks like before review.
FEATURE: list[tuple[str, dict[str, str]]] = [
    ("wip", {"invoicing/money.py": _money("ROUND_HALF_UP"),
             "invoicing/tax.py": TAX.replace(', "5.5"', ', "5"'),
             "invoicing/export.py": EXPORT_V1}),
    ("fix", {"invoicing/money.py": _money(),
             "tests/test_money.py": BASE["tests/test_money.py"].replace(
                 "import format_cents, parse_amount", "import format_cents, parse_amount, percent_of")
             + MONEY_TESTS}),
    ("more wip", {"invoicing/discounts.py": DISCOUNTS.replace(
                      "        return max(cents - off, 0)", "        return cents - off"),
                  "tests/test_tax.py": TAX_TESTS,
                  "README.md": BASE["README.md"] + README_VAT}),
    ("fix tests", {"invoicing/discounts.py": DISCOUNTS,
                   "tests/test_discounts.py": DISCOUNT_TESTS,
                   "invoicing/export.py": EXPORT}),
    ("wip docs + export test", {"tests/test_export.py": EXPORT_TESTS,
                                "README.md": BASE["README.md"] + README_VAT + README_MORE}),
    ("reduced rate is 5.5", {"invoicing/tax.py": TAX}),
]

SPEC = '''\
# The history you want: one [[commit]] per logical commit, in order.
source = "{source}"
remote = "{remote}"
cleaned = "{cleaned}"
build = {build}
test = {test}
model = "retcon-paths"        # the built-in offline model: takes the files under `paths`
# (The tests need no pytest plugins: not loading the environment's saves a second a run.)

[[commit]]
message = "money: add percent_of() with half-even rounding"
hints = "The helper VAT and discounts need, with its tests."
paths = ["invoicing/money.py", "tests/test_money.py"]

[[commit]]
message = "tax: VAT per invoice, rounded on each line"
paths = ["invoicing/tax.py", "tests/test_tax.py"]

[[commit]]
message = "discounts: SAVE<n> and OFF<amount> codes"
paths = ["invoicing/discounts.py", "tests/test_discounts.py"]

[[commit]]
message = "export: invoices as CSV, with a total row"
paths = ["invoicing/export.py", "tests/test_export.py"]

[[commit]]
message = "docs: VAT, discount codes and CSV export"
paths = ["README.md"]
'''


def spec_text() -> str:
    """The demo's spec; build and test run with the Python running git-retcon."""
    python = shlex.quote(sys.executable)
    # json.dumps writes a valid TOML basic string, whatever the interpreter's path holds.
    return SPEC.format(source=SOURCE, remote=REMOTE, cleaned=CLEANED,
                       build=json.dumps(f"{python} -m compileall -q invoicing"),
                       test=json.dumps(f"PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 {python} -m pytest -q"))


# -- building the repository -------------------------------------------------------


def target_dir(given: str | None) -> Path:
    """DIR, created if new and refused unless empty; without DIR, a new temporary directory."""
    if given is None:
        return Path(tempfile.mkdtemp(prefix="retcon-demo-"))
    path = Path(given).expanduser().absolute()
    if path.exists() and (not path.is_dir() or any(path.iterdir())):
        raise RetconError(f"{given} exists and is not an empty directory: "
                          "give a new or empty directory for the demo")
    path.mkdir(parents=True, exist_ok=True)
    return path


def write_files(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")


def commit(root: Path, message: str, when: int) -> None:
    git(root, "add", "-A")
    # --no-verify: the user's global hooks have no say in a demo repository.
    git(root, "commit", "-q", "--no-verify", "-m", message, f"--date={when} +0000")


def build_repo(root: Path) -> None:
    """main with the package; `feature` with the messy history, checked out."""
    git(root, "init", "-q", "-b", REMOTE)
    # A local identity, so the demo works on a machine where git has none yet.
    for key, value in (("user.name", "Demo Developer"), ("user.email", "dev@example.com"),
                       ("commit.gpgsign", "false")):
        git(root, "config", key, value)
    when = int(time.time()) - 7 * 24 * HOUR
    write_files(root, BASE)
    commit(root, "invoicing: lines, totals and exact money", when)
    git(root, "checkout", "-q", "-b", SOURCE)
    for i, (message, files) in enumerate(FEATURE):
        write_files(root, files)
        commit(root, message, when + (i + 1) * 19 * HOUR)


# -- the flow ------------------------------------------------------------------------


@contextlib.contextmanager
def cwd(path: Path) -> Iterator[None]:
    old = os.getcwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(old)


def retcon(ui: UI, invoke: Invoke, *args: str) -> None:
    """Run a git-retcon command in-process, shown as the user would type it."""
    ui.command("git retcon " + " ".join(shlex.quote(a) for a in args))
    invoke(list(args))


def show_git(ui: UI, root: Path, *args: str) -> None:
    ui.command("git " + " ".join(args))
    color = ["--color=always"] if ui.color else ["--color=never"]
    ui.line(git(root, *args[:1], *color, *args[1:]).rstrip())


def run(directory: str | None, ui: UI, invoke: Invoke) -> None:
    """invoke runs a git-retcon command line in this process (the cli passes its own)."""
    if importlib.util.find_spec("pytest") is None:
        raise RetconError(f"the demo's tests run with pytest, which {sys.executable} lacks: "
                          f"install it with `{shlex.quote(sys.executable)} -m pip install pytest`")
    started = time.monotonic()
    root = target_dir(directory)
    build_repo(root)
    ui.heading(f"1. A project with a messy feature branch, in {root}")
    show_git(ui, root, "log", "--oneline", "--stat=60", f"{REMOTE}..{SOURCE}")
    ui.heading(f"2. The history you want: a spec with `paths` per logical commit, in {SPEC_FILE}")
    (root / SPEC_FILE).write_text(spec_text(), encoding="utf-8")
    ui.line(spec_text().rstrip())
    with cwd(root):
        retcon(ui, invoke, "plan", "--from-file", SPEC_FILE, "--no-edit")
        ui.heading("3. Rebuild it, one logical commit at a time, building and testing each")
        retcon(ui, invoke, "run")
        ui.heading("4. The result: a reviewable branch with the same final tree")
        show_git(ui, root, "log", "--oneline", "--graph", "--decorate", SOURCE, CLEANED)
        retcon(ui, invoke, "check")
    ui.heading(f"Done in {time.monotonic() - started:.1f}s. The repository is yours to explore:")
    tips = [(f"cd {shlex.quote(str(root))}", ""),
            (f"git log --notes=retcon --stat {CLEANED}", "each commit, with what git-retcon recorded"),
            ("git retcon status", "build, tests and tokens per logical commit"),
            ("git retcon spec show", "the spec, with the run's history"),
            (f"git diff {SOURCE} {CLEANED}", "nothing: the same final tree")]
    width = max(len(cmd) for cmd, _ in tips)
    for cmd, why in tips:
        ui.line(f"  {cmd:<{width}}   # {why}" if why else f"  {cmd}")
