"""Person names: text normalization, English nicknames to canonical forms, Hangul spacing."""

from __future__ import annotations

import csv
import functools
import io
from importlib import resources

import pandas as pd

from ..errors import LinkageError
from ._text import check_series, map_unique, text_core
from .hangul import has_hangul

_NICKNAME_FILE = "nicknames.csv"


@functools.cache
def nickname_table() -> dict[str, str]:
    """The nickname → canonical table from `linkage/data/nicknames.csv`, read once on first use.

    The file is validated so that mapping a name twice gives the same result as mapping it once:
    no nickname may appear twice or also be a canonical name.
    """
    text = resources.files("linkage.data").joinpath(_NICKNAME_FILE).read_text(encoding="utf-8")
    table: dict[str, str] = {}
    reader = csv.DictReader(io.StringIO(text))
    for line, row in enumerate(reader, start=2):
        nickname = (row.get("nickname") or "").strip().casefold()
        canonical = (row.get("canonical") or "").strip().casefold()
        if not nickname or not canonical:
            raise LinkageError(f"{_NICKNAME_FILE} line {line}: both columns must be filled in")
        if nickname in table and table[nickname] != canonical:
            raise LinkageError(
                f"{_NICKNAME_FILE} line {line}: nickname {nickname!r} maps to both "
                f"{table[nickname]!r} and {canonical!r}; keep one row"
            )
        table[nickname] = canonical
    chained = sorted(set(table) & set(table.values()))
    if chained:
        raise LinkageError(
            f"{_NICKNAME_FILE}: {chained[:3]} are both nicknames and canonical names; "
            "a canonical name must not be mapped again"
        )
    return table


def _is_hangul_only(text: str) -> bool:
    """True when every non-space character is Hangul (a Korean name written in Hangul only)."""
    return all(ch == " " or has_hangul(ch) for ch in text)


def _match_case(word: str, template: str) -> str:
    """`word` in the capitalization of `template` (for lowercase=False)."""
    if template.isupper():
        return word.upper()
    if template[:1].isupper():
        return word.capitalize()
    return word


def _normalize_one(text: str, *, nicknames: bool, lowercase: bool) -> str:
    text = text_core(text, lowercase=lowercase)
    if has_hangul(text) and _is_hangul_only(text):
        # Korean names are written with or without a space between family and given name.
        return text.replace(" ", "")
    if not nicknames:
        return text
    table = nickname_table()
    tokens = []
    for token in text.split(" "):
        canonical = table.get(token.casefold())
        tokens.append(_match_case(canonical, token) if canonical else token)
    return " ".join(tokens)


def normalize_name(
    values: pd.Series, *, nicknames: bool = True, lowercase: bool = True
) -> pd.Series:
    """Normalize person names.

    Text normalization first (NFKC, case-fold, punctuation to spaces). Names written only in
    Hangul lose their inner spaces ("김 민수" → "김민수"); other Hangul is kept as text.
    Each other token is then looked up in the English nickname table ("Bill Smith" →
    "william smith").

    Options:
        nicknames: replace English nicknames by their canonical name (default True).
        lowercase: case-fold the name (default True); when False a replaced nickname takes the
            capitalization of the original token.
    """
    check_series(values, "name")
    return map_unique(values, lambda s: _normalize_one(s, nicknames=nicknames, lowercase=lowercase),
                      functools.partial(_ascii_names, nicknames=nicknames) if lowercase else None)


def _ascii_names(values, *, nicknames: bool):
    """`_normalize_one` of ASCII text (lower-cased) over an Arrow array: its text core (no
    Hangul in ASCII), then each word found in the nickname table replaced by its canonical
    name (a lower-case word: no case to match)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from ._text import ascii_text_core

    core = ascii_text_core(values)
    if not nicknames or not len(core):
        return core
    table = nickname_table()
    words = pc.split_pattern(core, " ")
    flat = pc.list_flatten(words)
    found = pc.index_in(flat, value_set=pa.array(list(table), type=flat.type))
    canonical = pa.array(list(table.values()), type=flat.type).take(found)
    flat = pc.if_else(found.is_valid(), canonical, flat)
    words = type(words).from_arrays(words.offsets, flat)
    return pc.binary_join(words, pa.scalar(" ", flat.type))
