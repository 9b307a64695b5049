"""git-retcon as it was at an earlier commit, for a bench's "before" column.

The package is extracted with its prompts and demo project moved inside it: an editable install
maps `git_retcon.prompts` to this tree's prompts/ otherwise, and the old code would read the new
templates (a "before" of nothing but errors).
"""
from __future__ import annotations

import io
import shutil
import subprocess
import tarfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def old_tree(rev: str, where: Path, also: tuple[str, ...] = ()) -> Path:
    """The package of commit rev under where (put where first on PYTHONPATH), and the folders also
    names as they were then (bench/ for a bench that runs its own entry point); extracted once."""
    mark = where / f".extracted-{rev}-{'-'.join(also)}"
    if mark.exists():
        return where
    shutil.rmtree(where, ignore_errors=True)
    where.mkdir(parents=True)
    data = subprocess.run(["git", "-C", str(ROOT), "archive", rev, "git_retcon", "prompts", "demoproject", *also],
                          check=True, capture_output=True).stdout
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        tar.extractall(where, filter="data")
    (where / "prompts").rename(where / "git_retcon" / "prompts")
    (where / "demoproject").rename(where / "git_retcon" / "demoproject")
    mark.write_text(rev + "\n")
    return where
