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
        return cents - off


def parse_code(code: str) -> Discount:
    """'SAVE10' is 10% off; 'OFF5.50' is 5.50 off."""
    code = code.strip().upper()
    if code.startswith("SAVE") and code[4:].isdigit():
        return Discount(code, percent=code[4:])
    if code.startswith("OFF"):
        return Discount(code, amount_cents=parse_amount(code[3:]))
    raise ValueError(f"unknown discount code: {code!r}")
