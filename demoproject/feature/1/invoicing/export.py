"""CSV export: one row per line, for spreadsheets."""
import csv
import io

from .invoice import Invoice
from .money import format_cents


def to_csv(invoice: Invoice) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["description", "quantity", "unit", "amount"])
    for line in invoice.lines:
        writer.writerow([line.description, line.quantity, format_cents(line.unit_cents),
                         format_cents(line.cents)])
    return out.getvalue()
