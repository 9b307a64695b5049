import pytest

from invoicing.discounts import parse_code


def test_percentage_code():
    assert parse_code("save10").apply(5000) == 4500


def test_fixed_amount_code_never_goes_below_zero():
    assert parse_code("OFF5.50").apply(1000) == 450
    assert parse_code("OFF5.50").apply(300) == 0


def test_unknown_code():
    with pytest.raises(ValueError):
        parse_code("FREE")
