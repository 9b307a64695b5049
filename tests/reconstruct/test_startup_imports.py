"""What `run` imports before its first model call: the failure parsers (rework: many regexes
compiled at import) only when a build or test fails."""
from __future__ import annotations

import subprocess
import sys


def test_the_loop_imports_no_rework_until_something_fails():
    code = ("import sys\n"
            "import git_retcon.cli, git_retcon.reconstruct.loop, git_retcon.reconstruct.ahead\n"
            "print(sorted(m for m in sys.modules if m.startswith('git_retcon.rework')))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
