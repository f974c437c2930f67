"""Normalizers: one function per kind of value, each `normalize_<kind>(values, **options)`.

Every normalizer takes a pandas Series of strings (missing as None, NaN or pd.NA) and returns a
Series with the same index and name, dtype object, holding `str` or `None`. Work is done once per
distinct value, so a million rows with repeated values take seconds.

`NORMALIZATION_VERSION` changes whenever any normalizer's output could change, so that caches of
normalized columns can be invalidated.
"""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd

from ._company import normalize_company
from ._date import PARTS_SEPARATOR, normalize_date, normalize_date_parts, parse_dates
from ._email import normalize_email
from ._encoded import (
    LOST_EXAMPLES,
    EncodedColumn,
    encode_chunks,
    encode_distinct,
    encode_series,
    examples,
    hashed_tuple_codes,
    lost_values,
    normalize_encoded,
    renumbered,
    tuple_codes,
)
from ._name import normalize_name
from ._phone import normalize_phone, region_code
from ._postcode import normalize_postcode
from ._text import ASCII_SPACE, as_text, ascii_digits_column, distinct_arrow, normalize_text
from ._url import normalize_url

NORMALIZATION_VERSION = "1"

NORMALIZERS: dict[str, Callable[..., pd.Series]] = {
    "text": normalize_text,
    "name": normalize_name,
    "phone": normalize_phone,
    "email": normalize_email,
    "date": normalize_date,
    "date_parts": normalize_date_parts,
    "company": normalize_company,
    "postcode": normalize_postcode,
    "url": normalize_url,
}

__all__ = [
    "ASCII_SPACE",
    "LOST_EXAMPLES",
    "NORMALIZATION_VERSION",
    "NORMALIZERS",
    "PARTS_SEPARATOR",
    "EncodedColumn",
    "as_text",
    "ascii_digits_column",
    "distinct_arrow",
    "encode_chunks",
    "encode_distinct",
    "encode_series",
    "examples",
    "hashed_tuple_codes",
    "lost_values",
    "normalize_company",
    "normalize_date",
    "normalize_date_parts",
    "normalize_email",
    "normalize_encoded",
    "normalize_name",
    "normalize_phone",
    "normalize_postcode",
    "normalize_text",
    "normalize_url",
    "parse_dates",
    "region_code",
    "renumbered",
    "tuple_codes",
]
