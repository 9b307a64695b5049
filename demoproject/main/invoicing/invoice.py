"""Invoice lines and totals."""
from dataclasses import dataclass, field

from .money import format_cents


@dataclass(frozen=True)
class Line:
    description: str
    quantity: int
    unit_cents: int

    @property
    def cents(self) -> int:
        return self.quantity * self.unit_cents


@dataclass
class Invoice:
    number: str
    lines: list[Line] = field(default_factory=list)

    def add(self, description: str, quantity: int, unit_cents: int) -> "Invoice":
        if quantity <= 0:
            raise ValueError("quantity must be positive")
        self.lines.append(Line(description, quantity, unit_cents))
        return self

    def subtotal(self) -> int:
        return sum(line.cents for line in self.lines)

    def summary(self) -> str:
        return f"Invoice {self.number}: {len(self.lines)} lines, {format_cents(self.subtotal())}"
