"""Derived blocking keys: `surname`, `soundex(surname)`, `first(given_name, 3)`, `year(dob)`.

A key part is written as a column name, or a function applied to one column with an optional
whole-number argument. Each is computed once per distinct value.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from linkage.comparators import phonetic_code
from linkage.normalize import EncodedColumn, tuple_codes
from linkage.normalize.hangul import chosung


def _first(v: str, n: int) -> str:
    return v[:n]


def _last(v: str, n: int) -> str:
    return v[-n:]


def _year(v: str, n: int) -> str:
    match = re.search(r"\d{4}", v)
    return match.group(0) if match else ""


def _local_part(v: str, n: int) -> str:
    return v.split("@", 1)[0]


def _domain(v: str, n: int) -> str:
    return v.split("@", 1)[1] if "@" in v else ""


def _digits(v: str, n: int) -> str:
    return re.sub(r"\D", "", v)


def _phonetic(algorithm: str) -> Callable[[str, int], str]:
    def code(v: str, n: int) -> str:
        return phonetic_code(v, algorithm)

    return code


# name -> (function(value, arg), argument required?, description)
KEY_FUNCTIONS: dict[str, tuple[Callable[[str, int], str], bool, str]] = {
    "first": (_first, True, "the first N characters: first(given_name, 3)"),
    "last": (_last, True, "the last N characters: last(phone, 4)"),
    "soundex": (_phonetic("soundex"), False, "the Soundex code: soundex(surname)"),
    "metaphone": (_phonetic("metaphone"), False, "the Metaphone code: metaphone(surname)"),
    "nysiis": (_phonetic("nysiis"), False, "the NYSIIS code: nysiis(surname)"),
    "chosung": (lambda v, n: chosung(v), False, "Hangul initial consonants: chosung(name)"),
    "year": (_year, False, "the first four-digit run, a year: year(birth_date)"),
    "local_part": (_local_part, False, "the e-mail part before @: local_part(email)"),
    "domain": (_domain, False, "the e-mail part after @: domain(email)"),
    "digits": (_digits, False, "the digits only: digits(phone)"),
}

# Key functions over an Arrow array of ASCII text at once, the same strings as the functions
# above give each value (on ASCII text Python's \d is [0-9], and slices count bytes).
_ARROW_KEYS: dict[str, Callable] = {
    "first": lambda pc, a, n: pc.utf8_slice_codeunits(a, 0, n),
    "last": lambda pc, a, n: pc.utf8_slice_codeunits(a, -n),
    "year": lambda pc, a, n: pc.struct_field(pc.extract_regex(a, "(?P<y>[0-9]{4})"), [0]),
    "local_part": lambda pc, a, n: pc.list_element(pc.split_pattern(a, "@", max_splits=1), 0),
}
_ARROW_FROM = 1_000  # distinct values from which Arrow is worth its conversion


def keyed_codes(function: str, argument: int, values: list[str]) -> np.ndarray:
    """A code per value (each a str) for its key `function(value, argument)`, -1 where that is
    empty: `pd.factorize` of the keys, empty ones missing, the same numbers. Many ASCII values
    go through Arrow at once where the function has an Arrow form (`_ARROW_KEYS`)."""
    fn = KEY_FUNCTIONS[function][0]
    arrow = _ARROW_KEYS.get(function)
    if arrow is not None and len(values) >= _ARROW_FROM:
        import pyarrow as pa
        import pyarrow.compute as pc

        text = pa.array(values, type=pa.large_string())
        if pc.all(pc.string_is_ascii(text), min_count=0).as_py():
            keys = arrow(pc, text, argument)
            keys = pc.if_else(pc.equal(keys, ""), pa.scalar(None, keys.type), keys)
            codes = pc.fill_null(pc.dictionary_encode(keys).indices, -1)
            return codes.to_numpy(zero_copy_only=False).astype(np.int64)
    keyed = [fn(v, argument) or None for v in values]
    codes, _ = pd.factorize(np.array(keyed, dtype=object), use_na_sentinel=True)
    return codes.astype(np.int64)


_PART = re.compile(r"^\s*(?:(?P<fn>[a-z_]+)\s*\(\s*(?P<col>[^,()]+?)\s*(?:,\s*(?P<arg>\d+)\s*)?\)"
                   r"|(?P<bare>[^()]+?))\s*$")


@dataclass(frozen=True)
class KeyPart:
    """One part of a blocking key: a column, optionally through a key function."""

    column: str
    function: str | None = None
    argument: int | None = None

    @classmethod
    def parse(cls, text: str) -> KeyPart:
        """Parse `col`, `fn(col)` or `fn(col, n)`; raise ValueError with the expected form."""
        match = _PART.match(text) if isinstance(text, str) else None
        if not match:
            hint = ""
            if isinstance(text, str) and text.count("(") != text.count(")"):
                hint = (
                    '; a comma inside a YAML flow list [a, b] splits the item, so quote it: '
                    '"first(given_name, 3)"'
                )
            raise ValueError(
                f"must be a column name or fn(column[, n]), e.g. soundex(surname){hint}"
            )
        if match.group("bare"):
            return cls(match.group("bare").strip())
        fn = match.group("fn")
        if fn not in KEY_FUNCTIONS:
            names = ", ".join(sorted(KEY_FUNCTIONS))
            raise ValueError(
                f"must use a known key function, not the unknown key function {fn!r}; "
                f"known: {names}"
            )
        arg = match.group("arg")
        needs_arg = KEY_FUNCTIONS[fn][1]
        if needs_arg and (arg is None or int(arg) < 1):
            raise ValueError(f"must give a length of at least 1: {KEY_FUNCTIONS[fn][2]}")
        if not needs_arg and arg is not None:
            raise ValueError(f"must not take an argument: {KEY_FUNCTIONS[fn][2]}")
        return cls(match.group("col"), fn, int(arg) if arg is not None else None)

    def __str__(self) -> str:
        if self.function is None:
            return self.column
        arg = f", {self.argument}" if self.argument is not None else ""
        return f"{self.function}({self.column}{arg})"

    def compute(self, values: np.ndarray) -> np.ndarray:
        """The key value per record (object array; None where missing or empty)."""
        series = pd.Series(values, dtype=object)
        missing = series.isna().to_numpy() | (series == "").to_numpy()
        out = np.full(len(series), None, dtype=object)
        if self.function is None:
            out[~missing] = series[~missing].astype(str).to_numpy()
            return out
        fn = KEY_FUNCTIONS[self.function][0]
        codes, uniques = pd.factorize(series[~missing].astype(str))
        mapped = np.array([fn(u, self.argument or 0) or None for u in uniques], dtype=object)
        out[~missing] = mapped[codes] if len(codes) else mapped[:0]
        return out

    def codes(self, column: EncodedColumn | np.ndarray) -> np.ndarray:
        """An int64 code per record for this part's value (-1 where missing or empty); equal
        values, equal codes. An encoded column is keyed once per distinct value."""
        if not isinstance(column, EncodedColumn):
            codes, _ = pd.factorize(pd.Series(self.compute(column), dtype=object))
            return codes.astype(np.int64)
        if self.function is None:
            return np.where(column.present(column.codes), column.codes, -1).astype(np.int64)
        keyed, _ = pd.factorize(pd.Series(self.compute(column.all_uniques()), dtype=object))
        keyed = np.append(keyed.astype(np.int64), -1)  # code -1 (missing) picks up the last
        return keyed[column.codes]


def key_codes(parts: list[KeyPart], columns) -> np.ndarray:
    """One int64 code per record for a compound key; -1 where any part is missing.

    Codes are numbered by first appearance, whatever the columns' own numbering
    (`tuple_codes`): the final numbering sees only which records share a value.
    """
    each = [part.codes(columns[part.column]) for part in parts]  # a few parts: kept
    missing = np.logical_or.reduce([codes < 0 for codes in each]) if len(each) > 1 else None
    return tuple_codes(lambda: iter(each), len(each[0]), missing)


def key_values(parts: list[KeyPart], columns, rows: np.ndarray) -> str:
    """The readable key value of one record, for warnings: `smith|1990`."""
    row = int(rows[0])
    values = []
    for p in parts:
        column = columns[p.column]
        cell = (column.values(np.array([row])) if isinstance(column, EncodedColumn)
                else column[row : row + 1])
        values.append(str(p.compute(cell)[0]))
    return "|".join(values)
