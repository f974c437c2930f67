"""E-mail addresses: trimmed and lower-cased, optionally without plus tags and Gmail dots."""

from __future__ import annotations

import unicodedata

import pandas as pd

from ._text import ASCII_SPACE, check_series, map_unique

# Gmail ignores dots in the local part; googlemail.com is the same mailbox as gmail.com.
_GMAIL_DOMAINS = frozenset({"gmail.com", "googlemail.com"})


def _normalize_one(text: str, *, dots: bool, plus_tags: bool) -> str:
    # NFKC so that a full-width "＠" or letters typed on an East Asian keyboard still match.
    text = unicodedata.normalize("NFKC", text).strip().lower()
    local, at, domain = text.rpartition("@")
    if not at:
        return text
    if plus_tags:
        untagged = local.split("+", 1)[0]
        # "+abc@x.com" is all tag; keeping it beats turning it into "@x.com".
        local = untagged or local
    if dots and domain in _GMAIL_DOMAINS:
        local = local.replace(".", "") or local
        domain = "gmail.com"
    return f"{local}@{domain}"


def normalize_email(values: pd.Series, *, dots: bool = False, plus_tags: bool = False) -> pd.Series:
    """Normalize e-mail addresses: NFKC, trimmed, lower-cased.

    A value without "@" is kept as its lower-cased text, so that bad addresses still compare
    with each other instead of failing the run.

    Options:
        dots: remove dots from the local part of gmail.com / googlemail.com addresses and
            write the domain as gmail.com (default False).
        plus_tags: remove a "+tag" from the local part ("ann+news@x.com" → "ann@x.com")
            (default False).
    """
    check_series(values, "email")
    plain = None if dots or plus_tags else _plain_ascii
    return map_unique(values, lambda s: _normalize_one(s, dots=dots, plus_tags=plus_tags),
                      plain)


def _plain_ascii(values):
    """`_normalize_one` without options, for ASCII text over an Arrow array: NFKC leaves
    ASCII as it is, and splitting at the last "@" and joining again gives the text back, so
    what is left is strip() and lower()."""
    import pyarrow.compute as pc

    return pc.ascii_lower(pc.utf8_trim(values, characters=ASCII_SPACE))
