import pytest

from invoicing import Invoice


def test_subtotal_and_summary():
    inv = Invoice("2024-017").add("Consulting", 3, 45000).add("Travel", 1, 12050)
    assert inv.subtotal() == 147050
    assert inv.summary() == "Invoice 2024-017: 2 lines, 1470.50"


def test_quantity_must_be_positive():
    with pytest.raises(ValueError):
        Invoice("x").add("Nothing", 0, 100)
