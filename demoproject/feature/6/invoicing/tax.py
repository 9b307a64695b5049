"""VAT: a rate per invoice, rounded on each line as the tax office requires."""
from dataclasses import dataclass

from .invoice import Invoice
from .money import percent_of


@dataclass(frozen=True)
class VatRate:
    name: str
    percent: str

    def on(self, cents: int) -> int:
        return percent_of(cents, self.percent)


STANDARD = VatRate("standard", "20")
REDUCED = VatRate("reduced", "5.5")


def vat(invoice: Invoice, rate: VatRate) -> int:
    """Rounded per line, then summed: not rounded once on the subtotal."""
    return sum(rate.on(line.cents) for line in invoice.lines)


def total_with_vat(invoice: Invoice, rate: VatRate) -> int:
    return invoice.subtotal() + vat(invoice, rate)
