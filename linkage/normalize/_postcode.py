"""Postal codes: upper case without spaces or hyphens, leading zeros kept."""

from __future__ import annotations

import unicodedata

import numpy as np
import pandas as pd

from ._text import (
    ASCII_SPACE,
    ascii_digits,
    ascii_digits_column,
    ascii_keep,
    check_series,
    integral_text,
    map_unique,
    replace_integral,
)


def _normalize_one(text: str, *, digits_only: bool) -> str:
    text = integral_text(text)  # 2119.0: a column of codes read by pandas as floats
    if digits_only:
        return ascii_digits(text)
    text = unicodedata.normalize("NFKC", text).upper()
    # Spaces and dashes of every kind are only layout ("06 236", "SW1A 1AA", "100‐0001").
    text = "".join(ch for ch in text if not ch.isspace() and unicodedata.category(ch) != "Pd")
    # Again: upper-casing can decompose ("ΐ" → "Ϊ́") and a removed space can let a letter and
    # an accent meet ("A´" is "A" + space + accent), so the result must be recomposed.
    return unicodedata.normalize("NFKC", text)


_SPACE_CLASS = "[" + "".join(f"\\x{ord(c):02x}" for c in ASCII_SPACE) + "]"
# `integral_text` in RE2 (Arrow's regex): Python's \s on ASCII text is `ASCII_SPACE`.
_INTEGRAL = f"^{_SPACE_CLASS}*([+-]?[0-9]+)\\.0+{_SPACE_CLASS}*$"


def _normalize_ascii(values, *, digits_only: bool):
    """`_normalize_one` of ASCII text, over an Arrow string array: NFKC leaves ASCII as it is,
    and the only ASCII dash (Unicode category Pd) is the hyphen-minus."""
    import pyarrow.compute as pc

    values = replace_integral(values, _INTEGRAL)
    if digits_only:
        return ascii_digits_column(values)
    return ascii_keep(pc.ascii_upper(values), _LAYOUT_KEPT)


_LAYOUT_KEPT = np.ones(256, dtype=bool)  # every byte but ASCII white space and "-"
_LAYOUT_KEPT[[ord(c) for c in ASCII_SPACE + "-"]] = False


def normalize_postcode(values: pd.Series, *, digits_only: bool = False) -> pd.Series:
    """Normalize postal codes: NFKC, upper case, white space and hyphens removed.

    Values are kept as strings, so "06236" keeps its leading zero; a float holding an
    integer (2119.0) is that integer.

    Options:
        digits_only: keep only the digits (default False), for countries whose codes are
            numeric but often carry a prefix or stray letters.
    """
    check_series(values, "postcode")
    return map_unique(values, lambda s: _normalize_one(s, digits_only=digits_only),
                      lambda a: _normalize_ascii(a, digits_only=digits_only))
