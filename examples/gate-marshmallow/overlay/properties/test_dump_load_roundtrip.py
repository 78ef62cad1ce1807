"""A schema's load undoes its dump, for plain field values."""

from hypothesis import given, settings, strategies as st

from marshmallow import Schema, fields


class Row(Schema):
    n = fields.Integer()
    s = fields.String()
    b = fields.Boolean()
    xs = fields.List(fields.Integer())
    d = fields.Dict(keys=fields.String(), values=fields.Integer())


@settings(max_examples=200, deadline=None)
@given(st.fixed_dictionaries({
    "n": st.integers(),
    "s": st.text(),
    "b": st.booleans(),
    "xs": st.lists(st.integers(), max_size=20),
    "d": st.dictionaries(st.text(max_size=8), st.integers(), max_size=8),
}))
def test_dump_load_roundtrip(row):
    schema = Row()
    assert schema.load(schema.dump(row)) == row
