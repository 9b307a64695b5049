"""The man page's absorb synopsis: GLOB=K is a value of --into (`--into 'src/*=2'`), never an
argument of its own, as a new user read it."""
from __future__ import annotations

import re
from pathlib import Path

MAN = Path(__file__).resolve().parents[2] / "man" / "git-retcon.1"


def test_glob_k_is_always_written_as_a_value_of_into():
    text = MAN.read_text()
    plain = re.sub(r"\\f[BIRP]|\\", "", text.replace("\\(aq", "'"))
    uses = [m.start() for m in re.finditer(r"GLOB=K", plain)]
    assert uses
    for at in uses:
        before = plain[max(0, at - 12):at]
        assert re.search(r"-into '?$", before), plain[max(0, at - 60):at + 10]
