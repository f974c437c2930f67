"""Comparisons turn a candidate pair into a level, keeping the raw similarity beside it.

Levels are small integers: -1 is null (either side missing: neither agreement nor
disagreement), 0 is "else", and higher levels are stronger agreement, the top one "exact".
`level_labels[k]` names level k. Work is done once per distinct value pair, vectorised over
whole columns; there is no Python loop per pair.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np
import pandas as pd

from linkage._schema import Configurable, check

NULL_LEVEL = -1


def is_missing(values: np.ndarray) -> np.ndarray:
    """Boolean mask of missing entries in an object array (None, NaN, pd.NA, empty string)."""
    mask = np.asarray(pd.isna(values), dtype=bool)
    if values.dtype == object:
        # Compare only the present values: pd.NA == "" is NA, not False.
        present = ~mask
        mask[present] = values[present] == ""
    return mask


class Comparison(Configurable):
    """Base of every comparison; subclasses implement `_score` over distinct value pairs."""

    family: ClassVar[str] = "comparison"

    def __init__(self, column: str, *, name: str | None = None):
        check(isinstance(column, str) and column != "", self, "column", "must be a column name",
              column)
        self.column = column
        self.name = name

    @property
    def output_name(self) -> str:
        """The name used for this comparison's columns in `pairs` and in scorer weights."""
        return self.name or self.column

    @property
    def level_labels(self) -> list[str]:
        raise NotImplementedError

    def label_of(self, level: int) -> str:
        return "null" if level == NULL_LEVEL else self.level_labels[level]

    def compare(self, left: np.ndarray, right: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Levels (int8) and similarities (float32, NaN where null) for aligned value arrays."""
        left = np.asarray(left, dtype=object)
        right = np.asarray(right, dtype=object)
        n = len(left)
        levels = np.full(n, NULL_LEVEL, dtype=np.int8)
        sims = np.full(n, np.nan, dtype=np.float32)
        present = ~(is_missing(left) | is_missing(right))
        if not present.any():
            return levels, sims
        # One code space for both sides, then one computation per distinct (left, right) pair.
        lv, rv = left[present], right[present]
        codes, uniques = pd.factorize(np.concatenate([lv, rv]))
        k = len(uniques)
        pair_codes = codes[: len(lv)].astype(np.int64) * k + codes[len(lv) :]
        distinct, inverse = np.unique(pair_codes, return_inverse=True)
        uniq = np.asarray(uniques, dtype=object)
        lev_u, sim_u = self._score(uniq[distinct // k], uniq[distinct % k])
        levels[present] = lev_u[inverse]
        sims[present] = sim_u[inverse]
        return levels, sims

    def _score(self, left: np.ndarray, right: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        raise NotImplementedError


def levels_from_thresholds(
    sims: np.ndarray, exact: np.ndarray, thresholds: list[float]
) -> np.ndarray:
    """Level 0 below every threshold, k for the k-th lowest threshold met, top for exact."""
    levels = np.zeros(len(sims), dtype=np.int8)
    for k, t in enumerate(sorted(thresholds)):
        levels[sims >= t] = k + 1
    levels[exact] = len(thresholds) + 1
    return levels


def check_thresholds(owner: object, thresholds: list[float]) -> list[float]:
    thresholds = list(thresholds)
    for t in thresholds:
        check(isinstance(t, int | float) and 0.0 <= t <= 1.0, owner, "thresholds",
              "must hold numbers in [0, 1]", thresholds)
    check(len(set(thresholds)) == len(thresholds), owner, "thresholds",
          "must not repeat a value", thresholds)
    return sorted(thresholds, reverse=True)


class SimilarityComparison(Comparison):
    """A similarity in [0, 1] cut into levels: else, one per threshold (lowest first), exact
    (equal values). Subclasses give `_similarity` over arrays of distinct value pairs."""

    def __init__(
        self, column: str, *, thresholds: list[float] = (0.92, 0.8), name: str | None = None
    ):
        super().__init__(column, name=name)
        self.thresholds = check_thresholds(self, thresholds)

    @property
    def level_labels(self) -> list[str]:
        return ["else", *(f">={t:g}" for t in sorted(self.thresholds)), "exact"]

    def _similarity(self, left: np.ndarray, right: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def _score(self, left: np.ndarray, right: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        exact = np.asarray(left == right, dtype=bool)
        sims = np.clip(np.asarray(self._similarity(left, right), dtype=np.float32), 0.0, 1.0)
        sims[exact] = 1.0
        return levels_from_thresholds(sims, exact, self.thresholds), sims

