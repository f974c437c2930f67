"""What deduplication changed in the table beyond its size (summary.json's `before_after`):
for the whole table and per `source_column` value, the records, the mean length (characters)
and mean token count (white-space separated) of the text columns, and each `report_columns`
value's share, before and after the duplicates go. A text mean is over the records that have
a value (a missing text is not a length of 0); null when none has one."""

from __future__ import annotations

import numpy as np
import pandas as pd

MISSING = "(missing)"


def value_labels(values: pd.Series) -> pd.Series:
    """A column's values as the strings summary.json keys them by, missing as "(missing)"."""
    return values.astype(object).where(values.notna(), MISSING).astype(str)


def text_columns(rules) -> list[str]:
    """`text_columns` of the rules, else the input columns of the comparisons that compare
    text by similarity (the column a normalizer's `output` was made from)."""
    if rules.text_columns:
        return list(rules.text_columns)
    from linkage.comparators import SimilarityComparison

    made_from = {n.output: n.column for n in rules.normalize if n.output}
    columns = [made_from.get(c.column, c.column) for c in rules.comparisons
               if isinstance(c, SimilarityComparison)]
    return list(dict.fromkeys(columns))


def before_after(records: pd.DataFrame, removed: np.ndarray, rules) -> dict:
    """The metrics of `records` (every input record) before and after the `removed` ones go."""
    columns = text_columns(rules)
    measures = {column: _lengths(records[column]) for column in columns}
    kept = ~np.asarray(removed, dtype=bool)
    categories = {c: pd.factorize(value_labels(records[c]), sort=True)
                  for c in rules.report_columns}
    whole = np.zeros(len(records), dtype=np.int64)
    out: dict = {"text_columns": columns,
                 "table": _groups(whole, ["table"], kept, measures, categories)["table"]}
    if rules.source_column:
        codes, names = pd.factorize(value_labels(records[rules.source_column]), sort=True)
        out["by_source"] = _groups(codes, list(names), kept, measures, categories)
    return out


# The ASCII bytes Python's `str.isspace` calls white space (what `\S+` does not match).
_ASCII_SPACE = np.zeros(256, dtype=bool)
_ASCII_SPACE[[9, 10, 11, 12, 13, 28, 29, 30, 31, 32]] = True


def _lengths(values: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """Characters and tokens of each record's text; NaN where it has none."""
    arrow = _ascii_arrow(values) if _mostly_distinct(values) else None
    if arrow is not None:  # e-mails and phones: counted in their bytes, not hashed first
        counted = [_ascii_counts(chunk) for chunk in arrow.chunks]
        if not counted:
            return np.zeros(0), np.zeros(0)
        return (np.concatenate([c for c, _ in counted]),
                np.concatenate([t for _, t in counted]))
    has = values.notna().to_numpy()
    # Measured once per distinct text (names repeat: a few thousand among a million records).
    codes, distinct = pd.factorize(values[has].astype(str))
    distinct = pd.Series(distinct, dtype=object)
    chars, tokens = np.full(len(values), np.nan), np.full(len(values), np.nan)
    chars[has] = distinct.str.len().to_numpy(dtype=float)[codes]
    tokens[has] = distinct.str.count(r"\S+").to_numpy(dtype=float)[codes]
    return chars, tokens


def _groups(codes: np.ndarray, names: list[str], kept: np.ndarray, measures: dict,
            categories: dict) -> dict[str, dict]:
    """Per group (rows coded 0..len(names)-1): records, text means and category shares,
    before (every record) and after (the kept ones)."""
    g = len(names)
    sides = {"before": slice(None), "after": kept}
    # (each side's codes taken once: per column and measure, ten million records took 2.4 s)
    side_codes = {side: codes[rows] for side, rows in sides.items()}
    counts = {side: np.bincount(side_codes[side], minlength=g) for side in sides}
    means = {side: {column: [_means(codes, m, g, rows) for m in pair]
                    for column, pair in measures.items()}
             for side, rows in sides.items()}
    # Records per (group, category value), one bincount over both codes.
    tallies = {side: {column: np.bincount(side_codes[side] * len(values) + value_codes[rows],
                                          minlength=g * len(values)).reshape(g, len(values))
                      for column, (value_codes, values) in categories.items()}
               for side, rows in sides.items()}

    def share(side: str, column: str, k: int, v: int) -> float:
        total = counts[side][k]
        return _round(tallies[side][column][k, v] / total) if total else 0.0

    return {
        name: {
            "records": {side: int(counts[side][k]) for side in sides},
            "mean_chars": {column: {side: means[side][column][0][k] for side in sides}
                           for column in measures},
            "mean_tokens": {column: {side: means[side][column][1][k] for side in sides}
                            for column in measures},
            "shares": {column: {str(values[v]): {side: share(side, column, k, v)
                                                 for side in sides}
                                for v in np.flatnonzero(tallies["before"][column][k])}
                       for column, (_, values) in categories.items()},
        }
        for k, name in enumerate(names)
    }


def _means(codes: np.ndarray, values: np.ndarray, groups: int, rows) -> list[float | None]:
    """Mean of the non-NaN values of `rows` (a mask or a slice) per group code, rounded; None
    where a group has none."""
    if groups == 1:  # the whole table: no codes to take, no copies (lengths are whole
        # numbers: any order of summing gives the same total)
        has = ~np.isnan(values)
        if not isinstance(rows, slice):
            has &= rows
        total = [float(np.sum(values, where=has))]
        count = [int(np.count_nonzero(has))]
    else:
        codes, values = codes[rows], values[rows]
        has = ~np.isnan(values)
        total = np.bincount(codes[has], weights=values[has], minlength=groups)
        count = np.bincount(codes[has], minlength=groups)
    return [_round(t / c) if c else None for t, c in zip(total, count, strict=True)]


def _round(x: float) -> float:
    return round(float(x), 6)


# A column whose strided sample of this many values is at least this share distinct is
# measured value by value (`_ascii_counts`); one with fewer distinct values, once per value.
DISTINCT_SAMPLE = 10_000
DISTINCT_SHARE = 0.5


def _mostly_distinct(values: pd.Series) -> bool:
    from linkage.ordering import distinct_share

    return distinct_share(values, DISTINCT_SAMPLE) >= DISTINCT_SHARE


def _ascii_arrow(values: pd.Series):
    """The Arrow strings behind a column of ASCII text (pandas' `str` dtype and the like), as
    one array; None for any other column, which `_lengths` measures as Python text."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from linkage.io import arrow_data

    data = arrow_data(values)
    if data is None or not (pa.types.is_string(data.type) or pa.types.is_large_string(data.type)):
        return None
    if not pc.all(pc.string_is_ascii(data), min_count=0).as_py():
        return None
    return data


def _ascii_counts(chunk) -> tuple[np.ndarray, np.ndarray]:
    """Characters and tokens (runs of bytes that are not white space) of each value of an
    Arrow array of ASCII strings, from its offsets and bytes; NaN where a value is missing."""
    import pyarrow as pa

    n = len(chunk)
    missing = ~chunk.is_valid().to_numpy(zero_copy_only=False) if chunk.null_count else None
    if missing is not None:  # a missing value's slot may hold bytes (Arrow allows it)
        chunk = chunk.fill_null("")
    width = np.int64 if pa.types.is_large_string(chunk.type) else np.int32
    offsets = np.frombuffer(chunk.buffers()[1], dtype=width)[chunk.offset:chunk.offset + n + 1]
    offsets = offsets.astype(np.int64)
    data = chunk.buffers()[2]
    raw = np.frombuffer(data, dtype=np.uint8) if data is not None else np.zeros(0, np.uint8)
    raw = raw[offsets[0]:offsets[-1]]
    offsets -= offsets[0]
    lengths = np.diff(offsets)
    word = ~_ASCII_SPACE[raw]
    start = np.empty_like(word)  # a token starts where a word byte follows a space byte,
    start[:1] = word[:1]
    np.greater(word[1:], word[:-1], out=start[1:])
    filled = np.flatnonzero(lengths > 0)
    first = offsets[filled]
    start[first] = word[first]  # and at a value's first byte, whatever came before it
    tokens = np.zeros(n)
    if len(filled):  # each value's bytes run to the next filled value's first byte
        tokens[filled] = np.add.reduceat(start, first, dtype=np.int64)
    chars = lengths.astype(float)
    if missing is not None:
        chars[missing] = np.nan
        tokens[missing] = np.nan
    return chars, tokens

