"""Where a failure comes from, said by plain code before a model is asked.

parsed.py (Location, Parsed, evidence) < parsers.py (the table of formats: parse) <
blame.py (candidates in the remaining diff) < brief.py (the rework brief) and
escalation.py (the rules that stop a fix loop) < diagnose.py (one failure, all of it).
"""
from git_retcon.rework.blame import Blame, Candidate, blame, repo_path
from git_retcon.rework.brief import CONSTRAINT, Brief, brief
from git_retcon.rework.diagnose import Diagnosis, Failure, diagnose
from git_retcon.rework.escalation import PERSISTENT_ATTEMPTS, Escalation, Observation, better, observe, signature
from git_retcon.rework.parsed import Location, Parsed, evidence
from git_retcon.rework.parsers import parse

__all__ = [
    "CONSTRAINT",
    "PERSISTENT_ATTEMPTS",
    "Blame",
    "Brief",
    "Candidate",
    "Diagnosis",
    "Escalation",
    "Failure",
    "Location",
    "Observation",
    "Parsed",
    "blame",
    "better",
    "brief",
    "diagnose",
    "evidence",
    "observe",
    "parse",
    "repo_path",
    "signature",
]
