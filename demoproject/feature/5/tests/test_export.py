from invoicing import Invoice
from invoicing.export import to_csv


def test_csv_has_a_row_per_line_and_a_total():
    inv = Invoice("3").add("Widget, large", 2, 1999)
    assert to_csv(inv).splitlines() == [
        "description,quantity,unit,amount",
        '"Widget, large",2,19.99,39.98',
        "total,,,39.98",
    ]
