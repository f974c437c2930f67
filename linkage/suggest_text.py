"""Suggested rules for tables of text: products, citations, titles, descriptions.

A table whose records are told apart by their words (product titles with model numbers,
bibliographic records) rather than by person fields (names, dates of birth, e-mails, phones) is
matched on rare-word overlap, not on edit distances of whole strings or equal keys:

- blocking: each record's nearest records by TF-IDF word cosine over its short text columns
  (`token_neighbours`), so every record gets a few candidates whatever the table's size, and a
  word out of place does not lose a pair as an equal key would;
- comparisons: IDF-weighted word cosine for each text column (`token_cosine`), alphanumeric code
  agreement (`codes`) where the texts hold model or part numbers, and the usual comparison for
  the other columns (numbers, categories);
- links: one-to-one when neither side repeats its records (each record's text is distinct
  within its source), as two catalogues or two bibliographies are;
- scoring: Fellegi-Sunter at even odds; under one-to-one, the even odds of a record's best
  candidate against the record having no match (`one_to_one_threshold: record_prior`).

Every decision comes from the values; column names play no part. `text_rules` is called by
`linkage.suggest.suggest_rules`; `looks_like_text` tells a column of short titles (product names,
paper titles) from one of person names, and profilers may call it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from linkage.comparators import codes_of, tokens_of

_SAMPLE = 2_000
_ROWS = 50_000  # rows a statistic reads at most, where a sample answers as well
# Kinds that identify people or places: a table with any of these is matched on them.
_PERSON = ("given_name", "surname", "full_name", "hangul_name", "email", "phone", "postcode",
           "date")
# A column of short capitalised words with many values ("name") is a person's name in a table
# of people, but a brand, maker or publisher next to titles: it decides only where no column
# holds titles or free text (kind "text").
_WORDY = ("text", "name", "full_name", "other", "company", "address")
_SKIP = ("id", "row_number", "constant")
_TEXT_THRESHOLDS = [0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3]
_SHORT_THRESHOLDS = [0.8, 0.5]
_NEIGHBOURS = 10  # candidates each record proposes from the other side (or its own table)


@dataclass
class TextStats:
    """Value statistics of one column, from a sample."""

    filled: float  # share of records with a value
    tokens: float  # mean word tokens per value
    codes: float  # share of values holding an alphanumeric code
    vocabulary: float  # distinct tokens / tokens: low for names and categories that repeat


def text_stats(values: pd.Series) -> TextStats:
    """Word and code statistics of a column (a sample of at most 2,000 values). Of a column
    longer than `_ROWS`, a seeded sample of `_ROWS` rows is read: the share filled is then an
    estimate (within half a percent), the other statistics come from 2,000 values either
    way."""
    if len(values) > _ROWS:
        from linkage.profiling import sample_rows

        values = values.iloc[sample_rows(len(values), _ROWS)]
    present = values.dropna().astype(str).str.strip()
    present = present[present != ""]
    filled = len(present) / max(len(values), 1)
    if len(present) == 0:
        return TextStats(0.0, 0.0, 0.0, 0.0)
    sample = present.sample(min(len(present), _SAMPLE), random_state=0)
    toks = [tokens_of(v) for v in sample]
    total = sum(len(t) for t in toks)
    return TextStats(
        filled=filled,
        tokens=total / len(toks),
        codes=float(np.mean([bool(codes_of(v)) for v in sample])),
        vocabulary=len({w for t in toks for w in t}) / max(total, 1),
    )


def looks_like_text(values: pd.Series) -> bool:
    """Short titles or free text, not person names: at least 3.5 words a value on average, or
    two or more words with alphanumeric codes (model numbers) in at least 30% of the values.
    Person names average two to three words and hold no codes."""
    return _is_text(text_stats(values))


def _is_text(s: TextStats) -> bool:
    return s.tokens >= 3.5 or (s.tokens >= 2.0 and s.codes >= 0.3)


def looks_like_codes(values: pd.Series) -> bool:
    """A column of codes (model numbers, part numbers): mostly one or two tokens, and at least
    half of the values hold an alphanumeric code."""
    return _is_codes(text_stats(values))


def _is_codes(s: TextStats) -> bool:
    return s.tokens < 2.0 and s.codes >= 0.5


def _row_number(frames: list[pd.DataFrame], column: str) -> bool:
    """Whole numbers unique within each source and spanning about as many values as records:
    a row number, which says nothing about whether two records match.

    A seeded sample of a large table's rows is tried first: a value that is no whole number,
    or one repeated, in the sample is one in the table, so most columns (names, codes) are
    ruled out without reading the whole column; only a column the sample leaves possible is
    read whole (exact either way)."""
    for frame in frames:
        if column not in frame:
            continue
        if len(frame) > _SAMPLE and not _row_number_possible(frame[column], len(frame)):
            return False
        numbers = pd.to_numeric(frame[column], errors="coerce")
        if numbers.isna().any() or not numbers.is_unique or len(numbers) < 2:
            return False
        if (numbers % 1 != 0).any() or numbers.max() - numbers.min() + 1 > 1.1 * len(numbers):
            return False
    return True


def _row_number_possible(values: pd.Series, n: int) -> bool:
    """False where a seeded sample of `_SAMPLE` rows already shows `values` (a column of `n`
    rows) is no row number: a missing or fractional value, a repeat, or a span wider than the
    whole table's rows allow."""
    from linkage.profiling import sample_rows

    numbers = pd.to_numeric(values.iloc[sample_rows(len(values), _SAMPLE)], errors="coerce")
    if numbers.isna().any() or not numbers.is_unique or (numbers % 1 != 0).any():
        return False
    return not numbers.max() - numbers.min() + 1 > 1.1 * n


def _distinct_within_sources(frames: list[pd.DataFrame], columns: list[str]) -> bool:
    """Neither source repeats its records: at most 10% of each source's records repeat another
    on every compared column (a repeated title alone, "Editorial", is not a repeated record).
    One-to-one then costs at most that share of the links, and spares each record's many
    near-miss candidates."""
    for frame in frames:
        cols = [c for c in columns if c in frame]
        if not cols:
            return False
        # column by column (vectorised), not a join per row: seconds at 20k records
        values = pd.DataFrame({c: frame[c].fillna("").astype(str).str.strip().str.lower()
                               for c in cols})
        values = values[(values != "").any(axis=1)]
        if len(values) and values.duplicated().mean() > 0.10:
            return False
    return True


def text_rules(frames: list[pd.DataFrame], profiles: list, rules: dict,
               sample: pd.DataFrame | None = None) -> dict | None:
    """Rules for a table of text, or None when the table is not one (then `rules` stand).

    `profiles` are the suggester's column profiles (`column`, `kind`); `rules` the rules it
    suggested, whose normalization and comparisons of non-text columns are kept. `sample`, in
    a dedupe: the rows `sample_rows` picks of the one table, already taken (the statistics
    read those rows either way).
    """
    frame = pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]
    read = frame if sample is None or len(frames) > 1 else sample
    link = len(frames) > 1
    text, codes, others = [], [], []
    stats = {}
    titled = any(p.kind == "text" for p in profiles if p.column in frame and p.compare)
    for p in profiles:
        column = p.column
        if column not in frame or p.kind in _SKIP or _row_number(frames, column):
            continue
        if link and not all(column in f for f in frames):
            continue  # compared only where both sides have it
        stats[column] = text_stats(read[column])
        if stats[column].filled < 0.05:
            continue
        if p.kind in _WORDY and _is_text(stats[column]):
            text.append(column)
        elif p.kind in _PERSON or (p.kind == "name" and not titled):
            return None  # person fields decide; the general suggestion stands
        elif p.kind in (*_WORDY, "category") and _is_codes(stats[column]):
            codes.append(column)
        else:
            others.append(column)
    main = [c for c in text if stats[c].filled >= 0.5]
    if not main:
        return None
    # Blocking reads the short texts (titles, authors, venues), not long descriptions, whose
    # many words would drown the few that identify the record.
    block = [c for c in main if stats[c].tokens <= 30] or main[:1]

    handled = set(text) | set(codes)
    # Text and code columns are read as they are: the token comparators and blocker fold case
    # and width themselves, and keep the punctuation inside codes ("KTC-D320/1G") that tells
    # them where a code starts and ends.
    normalize = [s for s in rules.get("normalize", []) if s["column"] not in handled]
    comparisons = []
    for c in text:
        comparisons.append({"type": "token_cosine", "column": c,
                            "thresholds": list(_TEXT_THRESHOLDS)})
        if stats[c].codes >= 0.3:
            comparisons.append({"type": "codes", "column": c, "name": f"{c}_codes"})
    for c in codes:
        comparisons.append({"type": "codes", "column": c})
    kept = {c["column"] for c in comparisons}
    for c in rules.get("comparisons", []):
        if c["column"] in others and c["column"] not in kept:
            if c["type"] in ("jaro_winkler", "levenshtein", "token_sort") and \
                    stats[c["column"]].tokens >= 1.5:
                # short multi-word text (brands, publishers): words, not characters
                c = {"type": "token_cosine", "column": c["column"],
                     "thresholds": list(_SHORT_THRESHOLDS)}
            comparisons.append(c)

    one_to_one = link and _distinct_within_sources(frames, text + codes + others)
    threshold = 0.0  # even odds; under one-to-one, of a record's best candidate (below)
    out = dict(rules)
    out["id_column"] = rules.get("id_column") or _id_column(frames, profiles)
    out["normalize"] = normalize
    out["blocking"] = [{"type": "token_neighbours", "name": "text_neighbours",
                        "columns": block, "k": _NEIGHBOURS, "threshold": 0.1}]
    out["comparisons"] = comparisons
    compared = {c["column"] for c in comparisons}
    out["normalize"] = [s for s in normalize if s["column"] in compared]
    # A record of text is identified by its short texts (a title, a model number; the blocking
    # columns) and the codes they hold: two records of one entity differ there only by a
    # recording error, so EM may not take "same kind of product" or "same venue" for the match
    # class (m at "else" held at or below one half; see FellegiSunter `identifying`).
    identifying = [c.get("name", c["column"]) for c in comparisons
                   if c["column"] in block and c["type"] in ("token_cosine", "codes")]
    out["scoring"] = {"type": "fellegi_sunter", "threshold": threshold,
                      "identifying": identifying}
    if one_to_one:
        # A record keeps only its best candidate: it is weighed against the record's own
        # chance of having a match (estimated from the fitted model), not the pairwise prior
        # (`one_to_one_threshold: record_prior`, see `linkage.clustering.record_prior_shift`).
        out["one_to_one"] = True
        out["one_to_one_threshold"] = "record_prior"
    return out


def _id_column(frames: list[pd.DataFrame], profiles: list) -> str | None:
    """A row-number column unique within each source, to write as the record id."""
    for p in profiles:
        if all(p.column in f for f in frames) and _row_number(frames, p.column):
            return p.column
    return None


__all__ = ["TextStats", "looks_like_codes", "looks_like_text", "text_rules", "text_stats"]
