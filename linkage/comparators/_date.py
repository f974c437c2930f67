"""Date comparison on ISO dates (run the `date` normalizer first for other spellings)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from rapidfuzz import process
from rapidfuzz.distance import DamerauLevenshtein as _DL

from linkage._schema import check
from linkage.comparators._base import Comparison
from linkage.errors import InputError

_TEN_YEARS = 3652.0


def parse_iso(values: np.ndarray, column: str) -> pd.DatetimeIndex:
    """Parse ISO `YYYY-MM-DD` strings (a time part is ignored); anything else is an error."""
    text = pd.Series(values, dtype=object).astype(str).str.slice(0, 10)
    parsed = pd.to_datetime(text, format="%Y-%m-%d", errors="coerce")
    bad = parsed.isna().to_numpy()
    if bad.any():
        examples = ", ".join(repr(v) for v in pd.unique(np.asarray(values)[bad])[:3])
        msg = (
            f"column `{column}`: {int(bad.sum())} value(s) are not ISO dates (e.g. {examples}). "
            f"Add a `date` normalizer for `{column}` in the rules' `normalize:` list, "
            "which reads other spellings, or fix the values."
        )
        raise InputError(msg)
    return pd.DatetimeIndex(parsed)


class Date(Comparison):
    """Levels, strongest first: exact, day and month swapped, one typo (an edit of one digit),
    within each of `within_days`, same year, else. Similarity: 1 - |days| / 3652, floored at 0.
    """

    kind = "date"

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
        days = np.abs((dl - dr).days.to_numpy()).astype(np.float64)
        sims = np.clip(1.0 - days / _TEN_YEARS, 0.0, 1.0).astype(np.float32)
        labels = self.level_labels
        levels = np.zeros(len(left), dtype=np.int8)
        # Assign from weakest to strongest so that the strongest level that applies wins.
        if self.same_year:
            levels[dl.year.to_numpy() == dr.year.to_numpy()] = labels.index("same_year")
        for d in sorted(self.within_days, reverse=True):
            levels[days <= d] = labels.index(f"within_{d}_days")
        if self.typo:
            sl = [str(v)[:10] for v in left]
            sr = [str(v)[:10] for v in right]
            edits = process.cpdist(sl, sr, scorer=_DL.distance, workers=-1)
            levels[(edits == 1)] = labels.index("one_typo")
        if self.swapped:
            swap = (
                (dl.year.to_numpy() == dr.year.to_numpy())
                & (dl.month.to_numpy() == dr.day.to_numpy())
                & (dl.day.to_numpy() == dr.month.to_numpy())
                & (dl.day.to_numpy() != dl.month.to_numpy())
            )
            levels[swap] = labels.index("day_month_swapped")
        exact = days == 0
        levels[exact] = len(labels) - 1
        sims[exact] = 1.0
        return levels, sims
