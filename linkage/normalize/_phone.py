"""Phone numbers: digits only, Korean numbers in national form, or any country's numbers in
E.164 (`+447700900123`) where the region is known, for the whole column or per record."""

from __future__ import annotations

import functools

import pandas as pd

from ._text import (
    INTEGRAL_FLOAT,
    ON_ERROR,
    OptionValueError,
    ascii_digits,
    ascii_digits_column,
    check_choice,
    check_series,
    integral_text,
    map_unique,
    raise_unreadable,
    replace_integral,
    unreadable,
)

_LEGACY = ("KR", None)  # national Korean form, or digits only
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


def _digits(text: str, country: str | None) -> str | None:
    """The number's digits, or None when the value holds letters: "010-CALL-NOW" is not the
    number 010, and "n/a" is not a number at all."""
    text = integral_text(text)
    if any(ch.isalpha() for ch in text):
        return None
    digits = ascii_digits(text)
    return _korean_national(digits) if country == "KR" else digits


def _ascii_digits_column(values):
    """`_digits` of ASCII text without a country, over an Arrow string array."""
    import pyarrow as pa
    import pyarrow.compute as pc

    values = replace_integral(values, f"^{INTEGRAL_FLOAT.pattern}$")
    lettered = pc.match_substring_regex(values, "[A-Za-z]")
    return pc.if_else(lettered, pa.scalar(None, values.type), ascii_digits_column(values))


_REGION_SEPARATOR = "\x1f"  # as `Normalize.joined` puts a step's input columns together
_ALIASES = {"UK": "GB"}  # the one code in everyday use that ISO 3166 does not assign
_LANGUAGES = ("en", "fr", "de", "es", "it", "pt", "nl", "ko", "ja", "zh")


@functools.cache
def _region_names() -> dict[str, str]:
    """Region code by its code or its country's name in a few languages, casefolded."""
    import phonenumbers

    names: dict[str, str] = {}
    for region in sorted(phonenumbers.SUPPORTED_REGIONS):
        names[region.casefold()] = region
        for lang in _LANGUAGES:
            name = _display_name(region, lang)
            if name:
                names.setdefault(name.casefold(), region)
    names.update({a.casefold(): r for a, r in _ALIASES.items()})
    return names


def _display_name(region: str, lang: str) -> str:
    """A region's name in `lang`, by phonenumbers' public geocoder: the country of the
    region's example number (empty for the few regions that share another's numbering plan,
    such as Saint Barthélemy: their codes still name them)."""
    from phonenumbers import example_number, geocoder

    number = example_number(region)
    return geocoder.country_name_for_number(number, lang) if number is not None else ""


def region_code(value: object) -> str | None:
    """The phone region (ISO 3166 code) a country value names: "GB", "gb", "UK",
    "United Kingdom", "대한민국", or None when it names none."""
    if value is None or value != value:
        return None
    text = str(value).strip().strip(".").casefold()
    return _region_names().get(text) if text else None


def _e164(text: str, default: str | None) -> str | None:
    """A number in E.164 ("+447700900123"): written with a + or 00 it is international
    whatever the region; else national in `text`'s own region (after the separator, where the
    step reads a column of regions) or `default`. Digits only where no region is known or the
    number does not parse; None for a value with letters."""
    import phonenumbers

    text, _, own = text.partition(_REGION_SEPARATOR)
    digits = _digits(text, None)
    if digits is None or not digits:
        return digits
    stripped = text.strip()
    if stripped.startswith("+"):
        number, region = "+" + digits, None
    elif digits.startswith("00"):
        number, region = "+" + digits[2:], None
    else:
        number, region = digits, region_code(own) or default
        if region is None:
            return digits
    try:
        parsed = phonenumbers.parse(number, region)
    except phonenumbers.NumberParseException:
        return digits
    return phonenumbers.format_number(parsed, phonenumbers.PhoneNumberFormat.E164)


def normalize_phone(values: pd.Series, *, country: str | None = "KR",
                    region_column: str | None = None,
                    on_error: str | None = "null") -> pd.Series:
    """Normalize phone numbers to digits only.

    With country="KR" every common spelling of a Korean number becomes its national form:
    "+82 10-1234-5678", "82 10 1234 5678", "(010) 1234.5678" → "01012345678", and
    "+82 2 123 4567" → "021234567". Full-width digits are read as digits; a float holding an
    integer (1012345678.0) is that integer. A value with letters ("010-CALL-NOW", "n/a") is
    unreadable: its digits alone would be another number.

    Any other country code (ISO 3166: "GB", "US", "DE", ...) writes every number in E.164
    ("+447700900123"): one written with a + or 00 is read as international whatever the
    region, any other as a national number of `country`. With `region_column`, a national
    number is read in the region its record's value in that column names (a code such as "GB"
    or "UK", or a country name such as "Germany"), and in `country` where that value is
    missing or names no country; the output is E.164 then whatever `country` is.

    Options:
        country: "KR" (default) to rewrite Korean international forms to national form, None
            to keep the digits only (a leading "+" is dropped), or another region code for
            E.164.
        region_column: the input column that holds each record's country (optional).
        on_error: "null" (default) treats unreadable values as missing (a run counts them in
            a warning); "raise" raises InputError naming the column and a few of them.
    """
    check_series(values, "phone")
    if country not in _LEGACY:
        import phonenumbers

        if country not in phonenumbers.SUPPORTED_REGIONS:
            raise OptionValueError(
                f"normalizer 'phone': option country={country!r} is not supported; use 'KR', "
                "None or another region code of ISO 3166 (such as 'GB', 'US', 'DE')")
    check_choice("phone", "on_error", on_error, ON_ERROR)
    if region_column is not None and not (isinstance(region_column, str) and region_column):
        raise OptionValueError(f"normalizer 'phone': option region_column={region_column!r} "
                               "must name the column of countries")
    if region_column is not None or country not in _LEGACY:
        out = map_unique(values, lambda s: _e164(s, country))
    elif country == "KR":
        out = map_unique(values, lambda s: _digits(s, country))
    else:
        out = map_unique(values, lambda s: _digits(s, None), _ascii_digits_column)
    if on_error == "raise":
        raise_unreadable(values, unreadable(values, out), "a phone number",
                         "phone numbers are digits with separators, such as 010-1234-5678 "
                         "or +82 10 1234 5678, without letters")
    return out


normalize_phone.input_options = ("region_column",)
normalize_phone.optional_inputs = ("region_column",)
