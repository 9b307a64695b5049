"""Invoices with exact money arithmetic: every amount is integer cents."""
from .invoice import Invoice, Line
from .money import format_cents, parse_amount

__all__ = ["Invoice", "Line", "format_cents", "parse_amount"]
