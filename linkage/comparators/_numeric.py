"""Numeric comparison with absolute and relative tolerances."""

from __future__ import annotations

import numpy as np
import pandas as pd

from linkage._schema import check
from linkage.comparators._base import Comparison
from linkage.errors import InputError


def to_numbers(values: np.ndarray, column: str) -> np.ndarray:
    numbers = pd.to_numeric(pd.Series(values, dtype=object), errors="coerce").to_numpy(float)
    bad = np.isnan(numbers)
    if bad.any():
        examples = ", ".join(repr(v) for v in pd.unique(np.asarray(values)[bad])[:3])
        msg = (
            f"column `{column}`: {int(bad.sum())} value(s) are not numbers (e.g. {examples}). "
            "Fix the values, or compare this column with a string comparison instead."
        )
        raise InputError(msg)
    return numbers


class Numeric(Comparison):
    """Levels, strongest first: exact, within each `abs_tolerance` (smallest first), within each
    `rel_tolerance` (a fraction of the larger magnitude), else.
    Similarity: 1 - |a - b| / max(|a|, |b|), in [0, 1].
    """

    kind = "numeric"
    per_pair = True

    def __init__(
        self,
        column: str,
        *,
        abs_tolerance: list[float] = (),
        rel_tolerance: list[float] = (),
        name: str | None = None,
    ):
        super().__init__(column, name=name)
        for t in abs_tolerance:
            check(isinstance(t, int | float) and t > 0, self, "abs_tolerance",
                  "must hold positive numbers", list(abs_tolerance))
        for t in rel_tolerance:
            check(isinstance(t, int | float) and 0 < t < 1, self, "rel_tolerance",
                  "must hold fractions in (0, 1)", list(rel_tolerance))
        self.abs_tolerance = sorted(float(t) for t in abs_tolerance)
        self.rel_tolerance = sorted(float(t) for t in rel_tolerance)

    @property
    def level_labels(self) -> list[str]:
        rel = [f"within_{t:g}_rel" for t in sorted(self.rel_tolerance, reverse=True)]
        ab = [f"within_{t:g}_abs" for t in sorted(self.abs_tolerance, reverse=True)]
        return ["else", *rel, *ab, "exact"]

    def _score(self, left: np.ndarray, right: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        a = to_numbers(left, self.column)
        b = to_numbers(right, self.column)
        diff = np.abs(a - b)
        scale = np.maximum(np.abs(a), np.abs(b))
        with np.errstate(divide="ignore", invalid="ignore"):
            rel = np.where(scale > 0, diff / scale, 0.0)
        sims = np.clip(1.0 - rel, 0.0, 1.0).astype(np.float32)
        labels = self.level_labels
        levels = np.zeros(len(a), dtype=np.int8)
        # A tolerance written in decimal (0.1) is not exact in binary: allow the rounding slack.
        for t in sorted(self.rel_tolerance, reverse=True):
            levels[rel <= t * (1 + 1e-9)] = labels.index(f"within_{t:g}_rel")
        for t in sorted(self.abs_tolerance, reverse=True):
            levels[diff <= t * (1 + 1e-9)] = labels.index(f"within_{t:g}_abs")
        levels[diff == 0] = len(labels) - 1
        return levels, sims
