"""Scorers turn the comparison matrix of candidate pairs into match weights.

The estimator contract follows scikit-learn: `__init__` only stores parameters, `fit` returns
`self`, learned state ends in `_`, and an unfitted scorer says how to fix that.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np
import pandas as pd

from linkage._schema import Configurable
from linkage.comparators import Comparison
from linkage.errors import NotFittedError


@dataclass
class ComparisonMatrix:
    """Levels (int8, -1 = null) and similarities (float32) of each pair, one column each."""

    comparisons: list[Comparison]
    levels: np.ndarray  # shape (n_pairs, n_comparisons)
    similarities: np.ndarray
    # For term-frequency adjustment: per comparison name, the share of records holding the
    # pair's agreed value (NaN where the pair is not at the exact level). Filled by the
    # pipeline only for the comparisons a scorer asks for (`Scorer.tf_columns`).
    term_frequencies: dict[str, np.ndarray] = field(default_factory=dict)
    # For random pairs: how many record pairs they were drawn from (n(n-1)/2 within a table,
    # left x right when linking), which puts a prior on random pairs on the candidates' scale.
    population: int | None = None

    @property
    def names(self) -> list[str]:
        return [c.output_name for c in self.comparisons]

    def __len__(self) -> int:
        return self.levels.shape[0]


class Scorer(Configurable):
    """Base of scorers; `type:` in the rules picks the kind (default: rule_sum)."""

    family: ClassVar[str] = "scorer"
    default_kind: ClassVar[str] = "rule_sum"
    threshold: float

    @property
    def tf_columns(self) -> list[str]:
        """Comparison names whose exact level needs term frequencies (none by default)."""
        return []

    @property
    def needs_random_pairs(self) -> bool:
        """Whether `fit` wants the comparison matrix of random record pairs (for u)."""
        return False

    @property
    def weighs_rows_apart(self) -> bool:
        """Whether a pair's weight depends, to the last bit, on its own row alone, whatever
        rows are weighed with it; False where arithmetic over the block (a BLAS product)
        depends on the block's size, so an engine weighs the blocks `weights_in_blocks` does."""
        return True

    def fit(
        self,
        X: ComparisonMatrix,
        y: np.ndarray | None = None,
        *,
        random: ComparisonMatrix | None = None,
    ) -> Scorer:
        """Learn from the candidate pairs `X` (and labels `y`, or random pairs, if used)."""
        raise NotImplementedError

    def contributions(self, X: ComparisonMatrix) -> pd.DataFrame:
        """Each comparison's contribution to each pair's match weight (they sum to it)."""
        raise NotImplementedError

    def match_weight(self, X: ComparisonMatrix) -> np.ndarray:
        return self.contributions(X).to_numpy(dtype=np.float64).sum(axis=1) + self.bias()

    def match_probability(self, X: ComparisonMatrix) -> np.ndarray:
        """The probability of a match; NaN where the scorer has no probability model."""
        return np.full(len(X), np.nan)

    def predict(self, X: ComparisonMatrix) -> np.ndarray:
        """True for the pairs at or above the threshold."""
        return self.match_weight(X) >= self.threshold

    def bias(self) -> float:
        """The match weight no comparison contributes to (the prior's log2 odds): a pair's
        contributions plus the bias are its match weight."""
        return 0.0

    def _check_fitted(self, attribute: str) -> None:
        if not hasattr(self, attribute):
            msg = f"This {type(self).__name__} instance is not fitted yet. Call `fit` first."
            raise NotFittedError(msg)
