import pytest

from invoicing.money import format_cents, parse_amount


def test_parse_amount():
    assert parse_amount("12.30") == 1230
    assert parse_amount(" 7 ") == 700


def test_parse_amount_refuses_fractions_of_cents():
    with pytest.raises(ValueError):
        parse_amount("0.001")


def test_format_cents():
    assert format_cents(1230) == "12.30"
    assert format_cents(-5) == "-0.05"
