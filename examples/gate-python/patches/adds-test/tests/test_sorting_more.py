from shop.sorting import by_price


def test_empty_listing():
    assert by_price([]) == []
