"""Suggested rules for a table never seen before.

Profile each column (ids, person names, Hangul names, dates, e-mails, phones, postcodes,
addresses, companies, numbers, categories, free text), pick its normalizer and comparison,
choose blocking keys by their measured pair counts under the budget, and score with
Fellegi-Sunter. The result is written as commented YAML that a person can edit.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import pandas as pd

from linkage.blocking.choose import KeyTrial, choose_keys, sample_table
from linkage.io import as_text
from linkage.normalize import NORMALIZERS
from linkage.normalize.hangul import has_hangul

_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")
_SAMPLE = 20_000

KINDS = ("id", "email", "phone", "date", "postcode", "hangul_name", "name", "company",
         "address", "numeric", "category", "text", "other")


@dataclass
class ColumnProfile:
    """What suggest learned about one column."""

    column: str
    kind: str
    filled: float  # share of records with a value
    distinct: float  # distinct values / filled values
    why: str
    values: int = 0  # distinct values seen


def _hint(column: str, *words: str) -> bool:
    name = column.lower()
    return any(w in name for w in words)


def _share(mask: pd.Series) -> float:
    return float(mask.mean()) if len(mask) else 0.0


def profile_column(column: str, values: pd.Series) -> ColumnProfile:
    """Guess what a column holds from its name and a sample of its values."""
    present = values.dropna().astype(str).str.strip()
    present = present[present != ""]
    filled = len(present) / max(len(values), 1)
    if len(present) == 0:
        return ColumnProfile(column, "other", 0.0, 0.0, "empty")
    distinct = present.nunique() / len(present)
    sample = present.sample(min(len(present), _SAMPLE), random_state=0)
    digits = sample.str.replace(r"[\s\-+().]", "", regex=True)

    def profile(kind: str, why: str) -> ColumnProfile:
        return ColumnProfile(column, kind, round(filled, 4), round(distinct, 4), why,
                             int(present.nunique()))

    if _hint(column, "id", "key", "uuid") and distinct > 0.98 and not _hint(column, "idx_"):
        return profile("id", "named like an id and unique")
    if _share(sample.str.match(_EMAIL)) > 0.8:
        return profile("email", "values look like e-mail addresses")
    if _hint(column, "phone", "tel", "mobile", "cell", "fax") or (
        _share(digits.str.fullmatch(r"\d{9,13}")) > 0.8 and _share(sample.str.contains(r"[-\s]"))
        > 0.3
    ):
        return profile("phone", "named like a phone, or digits with separators")
    if _hint(column, "post", "zip"):
        return profile("postcode", "named like a postcode")
    from linkage.normalize import parse_dates

    parsed = parse_dates(pd.Series(sample.to_numpy()[:2000], dtype=object), order="DMY")
    if _share(parsed["valid"]) > 0.8 and (
        _hint(column, "date", "dob", "birth", "day") or _share(sample.str.contains(r"\D")) > 0.5
        or _share(sample.str.fullmatch(r"(19|20)\d{6}")) > 0.8
    ):
        return profile("date", "values parse as dates")
    numeric = pd.to_numeric(sample, errors="coerce")
    # Numbers only when every value is one: the numeric comparison stops on "151.27 gbp".
    if numeric.notna().mean() > 0.95 and pd.to_numeric(present, errors="coerce").notna().all():
        if _hint(column, "id", "ssn", "soc", "number", "no") and distinct > 0.3:
            return profile("category", "a numeric identifier: compared exactly and by edits")
        if distinct < 0.01 or present.nunique() <= 30:
            return profile("category", "few distinct numbers")
        return profile("numeric", "values are numbers")
    if _share(sample.map(has_hangul)) > 0.5 and _hint(column, "name", "이름", "성명"):
        return profile("hangul_name", "Hangul values in a name column")
    tokens = sample.str.split().str.len()
    if _hint(column, "company", "corp", "employer", "organi", "firm", "business", "회사"):
        return profile("company", "named like a company")
    if _hint(column, "address", "street", "addr", "road", "주소"):
        return profile("address", "named like an address")
    if _hint(column, "name", "surname", "given", "first", "last", "이름", "성명"):
        return profile("name", "named like a person name")
    if present.nunique() <= 50 or distinct < 0.002:
        return profile("category", f"{present.nunique()} distinct values")
    if tokens.mean() >= 5:
        return profile("text", "free text (five or more words on average)")
    if _share(sample.str.contains(r"\d")) > 0.5 and tokens.mean() >= 2:
        return profile("address", "words with numbers, like an address")
    return profile("other", "short text")


_NORMALIZER = {"email": "email", "phone": "phone", "date": "date", "postcode": "postcode",
               "hangul_name": "name", "name": "name", "company": "company", "address": "text",
               "text": "text", "other": "text", "category": "text"}


_FEW_VALUES = 12  # a category with at most this many values is compared exactly


def _comparison(p: ColumnProfile) -> dict | None:
    c = p.column
    if p.kind == "category" and 0 < p.values <= _FEW_VALUES:
        # sex, status flags: an edit between two codes is not a near match
        return {"type": "exact", "column": c}
    return {
        "name": {"type": "jaro_winkler", "column": c, "thresholds": [0.92, 0.8]},
        "hangul_name": {"type": "jaro_winkler", "column": c, "thresholds": [0.92, 0.85]},
        "date": {"type": "date", "column": c, "within_days": [31]},
        "email": {"type": "levenshtein", "column": c, "thresholds": [0.85]},
        "phone": {"type": "levenshtein", "column": c, "thresholds": [0.85]},
        "postcode": {"type": "levenshtein", "column": c, "thresholds": [0.8]},
        "company": {"type": "token_sort", "column": c, "thresholds": [0.9]},
        "address": {"type": "token_sort", "column": c, "thresholds": [0.9, 0.7]},
        "text": {"type": "token_sort", "column": c, "thresholds": [0.9, 0.7]},
        "other": {"type": "jaro_winkler", "column": c, "thresholds": [0.9]},
        "category": {"type": "levenshtein", "column": c, "thresholds": [0.8]},
        "numeric": {"type": "numeric", "column": c, "rel_tolerance": [0.05]},
    }.get(p.kind)


@dataclass
class Suggestion:
    """Suggested rules, and the evidence behind them."""

    rules: dict
    profiles: list[ColumnProfile]
    measured: list[KeyTrial]  # every candidate key, its estimated pairs and what became of it
    budget_per_key: int
    sample_rows: int = 0  # rows profiled and measured (a sample of a large table)

    def to_yaml(self) -> str:
        """The rules as commented YAML, ready for a person to edit."""
        import yaml

        lines = [
            "# Suggested by `linkage suggest`. Edit freely; `linkage validate` checks the file.",
            "#",
            "# Column profiles (kind: why; share filled; share distinct):",
        ]
        for p in self.profiles:
            lines.append(f"#   {p.column}: {p.kind}: {p.why}; {p.filled:.0%} filled, "
                         f"{p.distinct:.0%} distinct")
        lines += ["#", "# Blocking keys tried, with their candidate pairs on the whole table, "
                  f"measured on {self.sample_rows:,} records", f"# (a sample of a larger "
                  f"table, scaled to its size); a key fits at most {self.budget_per_key:,} "
                  "pairs, one above is refined:"]
        for trial in self.measured:
            lines.append(f"#   [{', '.join(trial.key)}]: {trial.pairs:,} ({trial.outcome})")
        lines += ["#", "# Scoring: Fellegi-Sunter learns its weights from the data (m by EM, u "
                  "from random pairs);", "# threshold is a match weight: 0 is probability 0.5, "
                  "each +1 doubles the odds.", ""]
        body = yaml.safe_dump(self.rules, sort_keys=False, allow_unicode=True, width=100,
                              default_flow_style=None)
        return "\n".join(lines) + "\n" + body


def suggest_rules(frames: list[pd.DataFrame], *, max_pairs: int = 20_000_000) -> Suggestion:
    """Profile the table(s) and suggest rules, keeping the evidence."""
    # Profiles and keys come from a sample of the rows; key pair counts are scaled to `sizes`.
    frame, source, sizes = sample_table(frames)
    profiles = [profile_column(str(c), frame[c]) for c in frame.columns]
    usable = [p for p in profiles if p.kind != "id" and p.filled > 0.05]
    ids = [p.column for p in profiles if p.kind == "id"]
    id_column = ids[0] if ids and all(f[ids[0]].is_unique for f in frames if ids[0] in f) else None

    normalize = []
    for p in usable:
        if p.kind not in _NORMALIZER:
            continue
        step = {"column": p.column, "type": _NORMALIZER[p.kind]}
        if p.kind == "date":
            step.update({"order": "DMY", "on_error": "null"})
        if p.kind == "phone":
            step["country"] = "KR" if _looks_korean(frame[p.column]) else None
        normalize.append(step)

    work = _normalized(frame, normalize)
    blocking, measured, per_key_budget = choose_keys(usable, work, source, max_pairs, sizes)
    derived = _derived_columns(work, usable)
    comparisons = [c for c in map(_comparison, usable) if c and c["column"] not in derived]
    # Agreeing on a common value (Smith, 김, London) is weaker evidence than on a rare one.
    tf = [c["column"] for c in comparisons
          if next(p for p in usable if p.column == c["column"]).kind
          in ("name", "hangul_name", "other")]
    rules = {
        "id_column": id_column,
        "normalize": normalize,
        "blocking": blocking,
        "comparisons": comparisons,
        "scoring": {"type": "fellegi_sunter", "threshold": 6.0, "tf_adjust": tf},
        "max_pairs": max_pairs,
    }
    # Tables of text (products, citations): word-based rules (linkage/suggest_text.py).
    from linkage.suggest_text import text_rules

    rules = text_rules(frames, profiles, rules) or rules
    return Suggestion(rules, profiles, measured, per_key_budget, len(frame))


_TOKENS = re.compile(r"[^\W_]+")
_WORDY = ("name", "text", "other", "address", "company")


def _derived_columns(work: dict[str, np.ndarray], profiles: list[ColumnProfile]) -> set[str]:
    """Columns whose words are mostly those of two other columns together (a full name that
    holds the first name and the surname, a "first and surname" column).

    Comparing them as well would count the same evidence two or three times, as if it were
    independent; they stay available to blocking.
    """
    columns = [p.column for p in profiles if p.kind in _WORDY]
    if len(columns) < 3:
        return set()
    n = len(next(iter(work.values())))
    rows = np.random.default_rng(0).choice(n, min(n, 5_000), replace=False)
    words = {
        c: [frozenset(_TOKENS.findall(str(v).lower())) if v is not None and v == v else None
            for v in work[c][rows]]
        for c in columns
    }
    derived = set()
    for a in columns:
        for b in columns:
            for c in columns:
                if len({a, b, c}) < 3 or b > c or a in derived:
                    continue
                rows_abc = [(x, y, z) for x, y, z in zip(words[a], words[b], words[c],
                                                          strict=True) if x and y and z]
                if len(rows_abc) < 50:
                    continue
                covered = np.mean([y | z <= x for x, y, z in rows_abc])
                distinct = np.mean([not (y <= z or z <= y) for _, y, z in rows_abc])
                if covered > 0.6 and distinct > 0.6:
                    derived.add(a)
    return derived


def _looks_korean(values: pd.Series) -> bool:
    text = values.dropna().astype(str).head(2000)
    return bool(len(text)) and _share(text.str.contains(r"^(?:\+?82|0)1[016789]")) > 0.2


def _normalized(frame: pd.DataFrame, normalize: list[dict]) -> dict[str, np.ndarray]:
    work = {str(column): as_text(frame[column]) for column in frame.columns}
    for step in normalize:
        options = {k: v for k, v in step.items() if k not in ("column", "type")}
        series = pd.Series(work[step["column"]], name=step["column"], dtype=object)
        work[step["column"]] = NORMALIZERS[step["type"]](series, **options).to_numpy(dtype=object)
    return work
