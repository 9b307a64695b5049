"""The spec's confinement fields (network, sandbox, writable): read, checked with one line that
names the field, and written back as they were read."""
from __future__ import annotations

import pytest

from git_retcon.state.spec import SpecError
from git_retcon.state.specparse import parse
from git_retcon.state.spectoml import dump

BASE = 'source = "a"\nremote = "b"\ncleaned = "c"\n{}\n[[commit]]\nmessage = "m"\n'


def test_the_fields_round_trip():
    spec = parse(BASE.format('network = true\nsandbox = "require"\nwritable = ["~/.cache/tool", "/srv/x"]'), "s")
    assert (spec.network, spec.sandbox, spec.writable) == (True, "require", ["~/.cache/tool", "/srv/x"])
    assert parse(dump(spec), "s") == spec
    off = parse(BASE.format("network = false"), "s")
    assert off.network is False and "network = false" in dump(off)
    unset = parse(BASE.format(""), "s")
    assert (unset.network, unset.sandbox, unset.writable) == (None, None, [])
    assert "network" not in dump(unset) and "sandbox" not in dump(unset) and "writable" not in dump(unset)


@pytest.mark.parametrize(("line", "words"), [
    ("network = 1", "'network' must be true or false, not an integer"),
    ('sandbox = "maybe"', "'sandbox' must be \"auto\", \"require\" or \"off\", not 'maybe'"),
    ('writable = ["relative/dir"]', "'writable' must be an array of absolute folder paths"),
    ('writable = "/tmp"', "'writable' must be an array"),
])
def test_bad_values_are_one_line_naming_the_field(line, words):
    with pytest.raises(SpecError, match="^s line 4: " + words.replace("(", r"\(").replace(")", r"\)")):
        parse(BASE.format(line), "s")
