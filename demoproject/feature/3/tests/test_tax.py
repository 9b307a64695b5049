from invoicing import Invoice
from invoicing.tax import REDUCED, STANDARD, total_with_vat, vat


def test_vat_is_rounded_per_line():
    inv = Invoice("1").add("Pen", 1, 5).add("Pad", 1, 5)
    assert vat(inv, REDUCED) == 0          # 0.275 cents per line, rounded away
    assert vat(inv, STANDARD) == 2


def test_total_with_vat():
    inv = Invoice("2").add("Consulting", 2, 50000)
    assert total_with_vat(inv, STANDARD) == 120000
