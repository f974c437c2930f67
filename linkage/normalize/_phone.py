"""Phone numbers: digits only, Korean numbers in national form."""

from __future__ import annotations

import pandas as pd

from ._text import ascii_digits, ascii_digits_column, check_choice, check_series, map_unique

_COUNTRIES = ("KR", None)
_KR_CALLING_CODE = "82"
# A Korean national number without its trunk 0 has 8 (02-123-4567) to 10 (010-1234-5678)
# digits; one more is allowed for "+82 (0)10 ..." where the trunk 0 was kept.
_KR_REST_LENGTHS = range(8, 12)


def _korean_national(digits: str) -> str:
    """Rewrite an international Korean number (82..., 0082...) to national form (0...)."""
    # 00 is the international dialling prefix used from Korea and most of the world.
    for prefix in (_KR_CALLING_CODE, "00" + _KR_CALLING_CODE):
        rest = digits[len(prefix) :]
        if digits.startswith(prefix) and len(rest) in _KR_REST_LENGTHS:
            return rest if rest.startswith("0") else "0" + rest
    return digits


def normalize_phone(values: pd.Series, *, country: str | None = "KR") -> pd.Series:
    """Normalize phone numbers to digits only.

    With country="KR" every common spelling of a Korean number becomes its national form:
    "+82 10-1234-5678", "82 10 1234 5678", "(010) 1234.5678" → "01012345678", and
    "+82 2 123 4567" → "021234567". Full-width digits are read as digits.

    Options:
        country: "KR" (default) to rewrite Korean international forms to national form, or
            None to keep the digits only (a leading "+" is dropped).
    """
    check_series(values, "phone")
    check_choice("phone", "country", country, _COUNTRIES)
    if country == "KR":
        return map_unique(values, lambda s: _korean_national(ascii_digits(s)))
    return map_unique(values, ascii_digits, ascii_digits_column)
