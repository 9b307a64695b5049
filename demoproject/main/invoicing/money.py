"""Money as integer cents: no float ever touches an amount."""
from decimal import Decimal, InvalidOperation


def parse_amount(text: str) -> int:
    """'12.30' -> 1230. At most two decimals; anything else is a ValueError."""
    try:
        value = Decimal(text.strip())
    except InvalidOperation:
        raise ValueError(f"not an amount: {text!r}") from None
    if value.as_tuple().exponent < -2:
        raise ValueError(f"more than two decimals: {text!r}")
    return int(value * 100)


def format_cents(cents: int) -> str:
    """1230 -> '12.30'; a negative amount keeps its sign."""
    sign = "-" if cents < 0 else ""
    whole, part = divmod(abs(cents), 100)
    return f"{sign}{whole}.{part:02d}"
