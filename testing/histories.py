"""Small real histories whose commits change the same files: the owners room's tests and bench."""
from __future__ import annotations

from pathlib import Path

from testing.gitrepo import GitRepo

CALC = ("def add(a, b):\n    return a + b\n\n\n"
        "def scale(a, k):\n    return a * k\n\n\n"
        "def clamp(a, lo, hi):\n    return min(max(a, lo), hi)\n")


def keyword_repo(path: Path) -> GitRepo:
    """Three commits, each changing a different function of one file, their messages naming it;
    and a test file for the last."""
    repo = GitRepo.init(path)
    repo.commit("base", {"calc.py": CALC, "README": "calc\n"})
    repo.git("checkout", "-q", "-b", "feature")
    step1 = CALC.replace("    return a + b\n", "    a = int(a)\n    return a + b\n")
    repo.commit("add: accept strings", {"calc.py": step1})
    step2 = step1.replace("    return a * k\n", "    k = float(k)\n    return a * k\n")
    repo.commit("scale: accept a float factor", {"calc.py": step2})
    step3 = step2.replace("    return min(max(a, lo), hi)\n", "    if lo > hi:\n        lo, hi = hi, lo\n"
                          "    return min(max(a, lo), hi)\n")
    repo.commit("clamp: swap bounds given in the wrong order",
                {"calc.py": step3, "test_calc.py": "from calc import clamp\n\n\ndef test_swap():\n"
                 "    assert clamp(5, 9, 1) == 5\n"})
    return repo


KEYWORD_SPEC = """\
source = "feature"
remote = "main"
cleaned = "feature-clean"

[[commit]]
message = "add: accept strings"

[[commit]]
message = "scale: accept a float factor"

[[commit]]
message = "clamp: swap bounds given in the wrong order"
"""
