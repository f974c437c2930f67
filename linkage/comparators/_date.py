"""Date comparison on ISO dates (run the `date` normalizer first for other spellings)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from rapidfuzz import process
from rapidfuzz.distance import DamerauLevenshtein as _DL

from linkage._schema import check
from linkage.comparators._base import Comparison, workers
from linkage.errors import InputError

_TEN_YEARS = 3652.0


def iso_days(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(datetime64[D] per value, whether it is not an ISO `YYYY-MM-DD` date): a time part is
    ignored; parsed by numpy in days, so every year 0001-9999 is a date on any pandas (pandas
    2's nanosecond timestamps end in 2262)."""
    text = pd.Series(values, dtype=object).astype(str).str.slice(0, 10)
    parts = text.str.extract(r"^(\d{4})-(\d{1,2})-(\d{1,2})$")
    bad = parts.isna().any(axis=1).to_numpy()
    year, month, day = parts.fillna("1").astype(np.int64).to_numpy().T
    bad = bad | (month < 1) | (month > 12) | (day < 1) | (day > 31)
    first = ((year - 1970) * 12 + np.clip(month, 1, 12) - 1).astype("datetime64[M]")
    dates = first.astype("datetime64[D]") + (np.clip(day, 1, 31) - 1)
    return dates, bad | (dates.astype("datetime64[M]") != first)  # 31 April runs into May


def parse_iso(values: np.ndarray, column: str) -> pd.DatetimeIndex:
    """Parse ISO `YYYY-MM-DD` strings (`iso_days`); anything else is an error."""
    dates, bad = iso_days(values)
    if bad.any():
        examples = ", ".join(repr(v) for v in pd.unique(np.asarray(values)[bad])[:3])
        msg = (
            f"column `{column}`: {int(bad.sum())} value(s) are not ISO dates (e.g. {examples}). "
            f"Add a `date` normalizer for `{column}` in the rules' `normalize:` list, "
            "which reads other spellings, or fix the values."
        )
        raise InputError(msg)
    return pd.DatetimeIndex(dates.astype("datetime64[s]"))


class Date(Comparison):
    """Levels, strongest first: exact, day and month swapped, one typo (an edit of one digit),
    within each of `within_days`, same year, else. Similarity: 1 - |days| / 3652, floored at 0.
    """

    kind = "date"
    per_pair = True
    equal_is_exact = True  # the same ISO text is the same day
    distinct_pairs = False  # each date is parsed once; pairs only read its parts

    def __init__(
        self,
        column: str,
        *,
        within_days: list[int] = (30, 365),
        swapped: bool = True,
        typo: bool = True,
        same_year: bool = False,
        name: str | None = None,
    ):
        super().__init__(column, name=name)
        within_days = list(within_days)
        for d in within_days:
            check(isinstance(d, int) and d > 0, self, "within_days",
                  "must hold positive whole numbers of days", within_days)
        self.within_days = sorted(within_days)
        self.swapped = swapped
        self.typo = typo
        self.same_year = same_year

    @property
    def level_labels(self) -> list[str]:
        labels = ["else"]
        if self.same_year:
            labels.append("same_year")
        labels += [f"within_{d}_days" for d in sorted(self.within_days, reverse=True)]
        if self.typo:
            labels.append("one_typo")
        if self.swapped:
            labels.append("day_month_swapped")
        return [*labels, "exact"]

    def _score(self, left: np.ndarray, right: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        dl = parse_iso(left, self.column)
        dr = parse_iso(right, self.column)
        return self._levels(_Parts(dl, left), _Parts(dr, right))

    def _check_values(self, values: np.ndarray) -> None:
        parse_iso(values, self.column)  # a value that is not a date is an error, paired or not

    def _score_codes(
        self, uniques: np.ndarray, a: np.ndarray, b: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        # Each distinct date is parsed once (`compare_codes` passes only the values its pairs
        # hold), then read per pair.
        try:
            parsed = _Parts(parse_iso(uniques, self.column), uniques)
        except InputError:
            return self._score(uniques[a], uniques[b])  # its error counts the pairs' values
        return self._levels(parsed.take(a), parsed.take(b))

    def _levels(self, dl: _Parts, dr: _Parts) -> tuple[np.ndarray, np.ndarray]:
        days = np.abs(dl.day_number - dr.day_number).astype(np.float64)
        sims = np.clip(1.0 - days / _TEN_YEARS, 0.0, 1.0).astype(np.float32)
        labels = self.level_labels
        levels = np.zeros(len(days), dtype=np.int8)
        # Assign from weakest to strongest so that the strongest level that applies wins.
        if self.same_year:
            levels[dl.year == dr.year] = labels.index("same_year")
        for d in sorted(self.within_days, reverse=True):
            levels[days <= d] = labels.index(f"within_{d}_days")
        if self.typo:
            levels[_one_edit(dl, dr)] = labels.index("one_typo")
        if self.swapped:
            swap = (
                (dl.year == dr.year)
                & (dl.month == dr.day)
                & (dl.day == dr.month)
                & (dl.day != dl.month)
            )
            levels[swap] = labels.index("day_month_swapped")
        exact = days == 0
        levels[exact] = len(labels) - 1
        sims[exact] = 1.0
        return levels, sims


def _one_edit(dl: _Parts, dr: _Parts) -> np.ndarray:
    """Whether each pair of date texts is one Damerau-Levenshtein edit apart.

    Two ASCII texts of the same length are one edit apart exactly when they differ in one
    position, or in two neighbouring positions that hold each other's character (an insertion
    or a deletion would change the length). That is read on bytes, for whole columns at once;
    any other pair goes to RapidFuzz.
    """
    out = np.zeros(len(dl), dtype=bool)
    fixed = dl.fixed & dr.fixed
    if fixed.any():
        a, b = dl.bytes[fixed], dr.bytes[fixed]
        differ = a != b
        count = differ.sum(axis=1)
        first = differ.argmax(axis=1)
        rows = np.arange(len(a))
        second = np.minimum(first + 1, a.shape[1] - 1)
        swapped = ((count == 2) & differ[rows, second]
                   & (a[rows, first] == b[rows, second]) & (a[rows, second] == b[rows, first]))
        out[fixed] = (count == 1) | swapped
    if not fixed.all():
        rest = ~fixed
        edits = process.cpdist(dl.texts(rest), dr.texts(rest), scorer=_DL.distance,
                               workers=workers(int(rest.sum())))
        out[rest] = edits == 1
    return out


class _Parts:
    """Parsed dates as arrays: day number, year, month, day, and the first ten characters as
    bytes where they are ten ASCII characters (`fixed`); `texts(mask)` gives the text itself
    (taken rows keep a reference to the parsed values rather than a copy of every text)."""

    def __init__(self, dates: pd.DatetimeIndex | None, values: np.ndarray, *, arrays=None):
        if arrays is not None:
            (self.day_number, self.year, self.month, self.day, self.bytes, self.fixed,
             self._text, self._rows) = arrays
            return
        # Dates parsed from YYYY-MM-DD are midnights: whole days apart.
        self.day_number = dates.to_numpy().astype("datetime64[D]").astype(np.int64)
        self.year = dates.year.to_numpy()
        self.month = dates.month.to_numpy()
        self.day = dates.day.to_numpy()
        self._text = np.array([str(v)[:10] for v in values], dtype=object)
        self._rows = None
        self.fixed = np.array([len(t) == 10 and t.isascii() for t in self._text], dtype=bool)
        padded = [t if ok else "" for t, ok in zip(self._text, self.fixed, strict=True)]
        self.bytes = np.array(padded, dtype="S10").view(np.uint8).reshape(-1, 10)

    def __len__(self) -> int:
        return len(self.day_number)

    def texts(self, mask: np.ndarray) -> list[str]:
        rows = np.flatnonzero(mask) if self._rows is None else self._rows[mask]
        return self._text[rows].tolist()

    def take(self, rows: np.ndarray) -> _Parts:
        base = rows if self._rows is None else self._rows[rows]
        return _Parts(None, np.zeros(0), arrays=(
            self.day_number[rows], self.year[rows], self.month[rows], self.day[rows],
            self.bytes[rows], self.fixed[rows], self._text, base))
