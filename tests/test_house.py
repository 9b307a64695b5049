"""The house bar: modules small enough to read, classes small enough to hold in mind, and imports
that run one way, down the floors ARCHITECTURE.md draws (a room imports only the rooms below it)."""
from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "git_retcon"
MAX_MODULE_LINES = 400
MAX_CLASS_LINES = 250

# Each room (a package of git_retcon) and the rooms it may import (DESIGN.md, "Layout").
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
