"""Which sandbox works on this machine, found by trying it (never by platform name alone), and
remembered per machine in the user's cache folder: a probe costs a few tens of milliseconds, and
the answer changes only with the kernel, bubblewrap's binary or the user."""
from __future__ import annotations

import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from git_retcon.sandbox import confine
from git_retcon.sandbox.admin import cache_dir
from git_retcon.sandbox.confine import FORCE_ENV, Mechanism


def _key() -> str:
    bwrap = shutil.which("bwrap") or ""
    try:
        stamp = str(os.stat(bwrap).st_mtime_ns) if bwrap else ""
    except OSError:
        stamp = ""
    return "|".join([platform.release(), bwrap, stamp, str(os.geteuid()), sys.platform])


def available() -> tuple[list[Mechanism], str]:
    """The mechanisms that work here, strongest first, and a few words on what was found (for a
    message when none works). GIT_RETCON_SANDBOX_MECHANISM=<name|none> narrows it to one."""
    forced = os.environ.get(FORCE_ENV, "").strip()
    works, notes = _cached()
    if forced:
        keep = [m for m in works if m == forced]
        return keep, (f"{FORCE_ENV}={forced}" if not keep else notes)
    return works, notes


def _cached() -> tuple[list[Mechanism], str]:
    path = cache_dir() / "sandbox.json"
    key = _key()
    try:
        doc = json.loads(path.read_text())
        if doc.get("key") == key:
            return [m for m in doc["works"] if m in confine.MECHANISMS], str(doc.get("notes", ""))
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        pass
    works, notes = probe()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".sandbox.json.{os.getpid()}")
        tmp.write_text(json.dumps({"key": key, "works": works, "notes": notes}) + "\n")
        tmp.replace(path)
    except OSError:
        pass   # a read-only cache: probe again next time
    return works, notes


def probe() -> tuple[list[Mechanism], str]:
    """Try each mechanism on `true`, in a throwaway folder, with the network off."""
    works: list[Mechanism] = []
    said: list[str] = []
    with tempfile.TemporaryDirectory(prefix="git-retcon-probe-") as tmp:
        for mech in confine.MECHANISMS:
            why = _try(mech, Path(tmp))
            if why is None:
                works.append(mech)
            else:
                said.append(f"{mech}: {why}")
    return works, "; ".join(said)


def _try(mech: Mechanism, tmp: Path) -> str | None:
    """None when mech confines `true` here, else why not, in a few words."""
    if mech == "bubblewrap" and shutil.which("bwrap") is None:
        return "not installed"
    if mech == "landlock":
        from git_retcon.sandbox.landlock import abi

        if not abi():
            return "not in this kernel"
    if mech == "seatbelt" and (sys.platform != "darwin" or shutil.which("sandbox-exec") is None):
        return "not macOS"
    box = confine.Sandbox("require", mech)
    launch = box.launch("true", tmp, {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp)})
    try:
        proc = subprocess.run(launch.argv, cwd=tmp, env=launch.env, capture_output=True, timeout=20,
                              stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"does not start ({exc})"
    finally:
        launch.done()
    if proc.returncode != 0:
        err = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        return f"fails here ({err[-1] if err else f'exit {proc.returncode}'})"
    return None
