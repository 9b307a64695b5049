"""The house bar: modules small enough to read, classes small enough to hold in mind, and imports
that run one way, down the floors ARCHITECTURE.md draws (a room imports only the rooms below it)."""
from __future__ import annotations

import ast
import re
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "git_retcon"
MAX_MODULE_LINES = 400
MAX_CLASS_LINES = 250

# Each room (a package of git_retcon) and the rooms it may import (ARCHITECTURE.md, "The rooms").
BELOW: dict[str, set[str]] = {
    "git": set(),
    "state": {"git"},
    "diff": {"git"},
    "sandbox": {"state", "git"},
    "rework": {"diff", "git"},
    "model": {"sandbox", "diff", "state", "git"},
    "owners": {"model", "diff", "state", "git"},
    "plan": {"owners", "model", "diff", "state", "git"},
    "reconstruct": {"owners", "model", "rework", "sandbox", "diff", "state", "git"},
}
# Modules at the package's top that every room may use: errors, the test hook, the terminal.
GROUND = {"errors", "failpoint", "ui", "text"}


def _modules() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts)


def test_no_module_is_over_the_bar_and_no_class_either():
    over: list[str] = []
    for path in _modules():
        text = path.read_text()
        lines = text.count("\n")
        if lines > MAX_MODULE_LINES:
            over.append(f"{path.relative_to(PACKAGE)}: {lines} lines")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.ClassDef) and node.end_lineno is not None:
                size = node.end_lineno - node.lineno + 1
                if size > MAX_CLASS_LINES:
                    over.append(f"{path.relative_to(PACKAGE)}: class {node.name}, {size} lines")
    assert not over, over


def _imported(tree: ast.Module) -> set[str]:
    """The git_retcon modules a module imports (type-checking imports too: they are arrows)."""
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("git_retcon"):
            out.add(node.module)
            out |= {f"{node.module}.{a.name}" for a in node.names}
        elif isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name.startswith("git_retcon")}
    return out


def test_every_room_imports_only_the_rooms_below_it():
    climbs: list[str] = []
    for path in _modules():
        rel = path.relative_to(PACKAGE)
        room = rel.parts[0] if len(rel.parts) > 1 else None
        if room not in BELOW:
            continue
        for name in _imported(ast.parse(path.read_text())):
            parts = name.split(".")
            target = parts[1] if len(parts) > 1 else ""
            if target == room or not target:
                continue
            if target in BELOW and target not in BELOW[room]:
                climbs.append(f"{rel} imports {name}")
            elif target not in BELOW and (PACKAGE / f"{target}.py").exists() and target not in GROUND:
                climbs.append(f"{rel} imports {name} (a module that sits above the rooms)")
    assert not climbs, climbs


# Where a function may be no longer than a screen: the rooms that hold the run's and a step's logic.
LONG_FUNCTION_ROOMS = ("model", "reconstruct")
MAX_FUNCTION_LINES = 60


def test_no_function_in_the_loop_rooms_is_over_a_screen():
    over = [f"{p.relative_to(PACKAGE)}:{n.lineno} {n.name}, {n.end_lineno - n.lineno + 1} lines"
            for room in LONG_FUNCTION_ROOMS for p in sorted((PACKAGE / room).rglob("*.py"))
            for n in ast.walk(ast.parse(p.read_text()))
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.end_lineno is not None
            and n.end_lineno - n.lineno + 1 > MAX_FUNCTION_LINES]
    assert not over, over


def _is_k(node: ast.expr) -> bool:
    return (isinstance(node, ast.Name) and node.id == "k") or (isinstance(node, ast.Attribute) and node.attr == "k")


def test_k_becomes_a_number_only_in_text_or_in_one_function():
    """`k` is a logical commit's 0-based index; people's number is state/spec.number(k). A `k + 1`
    may stand in text (an f-string) or start the range of the commits after k, nowhere else."""
    found: list[str] = []
    for path in _modules():
        tree = ast.parse(path.read_text())
        allowed: set[int] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.JoinedStr) or (
                    isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "range"):
                allowed |= {id(n) for n in ast.walk(node)}
            if isinstance(node, ast.FunctionDef) and node.name == "number" and path.name == "spec.py":
                allowed |= {id(n) for n in ast.walk(node)}
        for node in ast.walk(tree):
            if (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add) and _is_k(node.left)
                    and isinstance(node.right, ast.Constant) and node.right.value == 1 and id(node) not in allowed):
                found.append(f"{path.relative_to(PACKAGE)}:{node.lineno}")
    assert not found, found


ROOT = PACKAGE.parent
# What the repository's own files name: a room's module (`reconstruct/journal.py`, `model/meaning`),
# a definition in one (`git/ownership.move_branch`, `model/tools.Tools.apply_hunks`), a top folder's
# file (`prompts/owner.md`), and the design documents. Paths under tests/ are checked in
# ARCHITECTURE.md only: elsewhere `tests/test_money.py` is as often a demo repository's file.
_ROOMS = sorted(p.name for p in PACKAGE.iterdir() if (p / "__init__.py").exists())
_TOPS = ["testing", "bench", "prompts", "man", "hooks", "demoproject", "completion", ".ci"]


def _ref_pattern(tops: list[str]) -> re.Pattern[str]:
    rooms = "|".join(map(re.escape, _ROOMS + tops))
    return re.compile(rf"(?<![\w./-])((?:git_retcon/)?(?:{rooms})/[A-Za-z_][\w/-]*(?:\.\w+)*)")


def _defines(module: Path, names: list[str]) -> bool:
    """Whether module defines names[0] (and, inside it, names[1] ...)."""
    scope: list[ast.stmt] = ast.parse(module.read_text()).body
    for name in names:
        found = None
        for node in scope:
            assigned = node.targets if isinstance(node, ast.Assign) else \
                [node.target] if isinstance(node, ast.AnnAssign) else []
            targets = [t.id for t in assigned if isinstance(t, ast.Name)]
            if getattr(node, "name", None) == name or name in targets:
                found = node
                break
        if found is None:
            return False
        scope = getattr(found, "body", [])
    return True


def _resolves(ref: str) -> bool:
    ref = ref.removeprefix("git_retcon/")
    for base in (ROOT, PACKAGE):
        if (base / ref).exists() or (base / f"{ref}.py").exists():
            return True
        parts = ref.split(".")
        for cut in range(len(parts) - 1, 0, -1):
            head = ".".join(parts[:cut])
            for module in (base / f"{head}.py", base / head):
                if module.is_file() and module.suffix == ".py":
                    return _defines(module, parts[cut:])
                if module.is_file():
                    return True     # a file's name with its suffix: `prompts/owner.md`
    return False


def test_every_reference_in_docs_and_comments_resolves_inside_the_repository():
    texts = [ROOT / "ARCHITECTURE.md", ROOT / "README.md", ROOT / "man" / "git-retcon.1", ROOT / "Makefile"]
    texts += [p for d in ("git_retcon", "tests", "testing", "bench") for p in sorted((ROOT / d).rglob("*.py"))]
    broken: list[str] = []
    for path in texts:
        text = path.read_text()
        pattern = _ref_pattern(_TOPS + (["tests"] if path.name == "ARCHITECTURE.md" else []))
        broken += [f"{path.relative_to(ROOT)}: {m.group(1)}" for m in pattern.finditer(text)
                   if not _resolves(m.group(1).rstrip("."))]
        # The design card lives outside the repository: cite ARCHITECTURE.md, which is inside.
        broken += [f"{path.relative_to(ROOT)}: {m.group(0)}" for m in re.finditer(r"\b(?:DESIGN|API-FACTS)\.md\b", text)
                   if path != Path(__file__)]
    assert not broken, broken
