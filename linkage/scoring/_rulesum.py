"""The rule-sum scorer: a weight per comparison level, summed, compared with a threshold."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from linkage._schema import SchemaViolation, check, did_you_mean
from linkage.comparators import NULL_LEVEL, Comparison
from linkage.scoring._base import ComparisonMatrix, Scorer


def default_weights(comparison: Comparison) -> dict[str, float]:
    """Else -1, then rising evenly to +2 at exact. Null is always 0: it is no evidence."""
    labels = comparison.level_labels
    top = len(labels) - 1
    weights = {"else": -1.0}
    for level in range(1, len(labels)):
        weights[labels[level]] = round(2.0 * level / top, 4)
    return weights


class RuleSum(Scorer):
    """Sum of per-level weights; a pair is a match at or above `threshold`.

    `weights` maps a comparison's name to `{level label: weight}`; a comparison left out gets
    `default_weights`, a level left out gets 0. The null level always weighs 0.

    Example (YAML)::

        scoring:
          type: rule_sum
          threshold: 4.0
          weights:
            surname: {exact: 2.5, ">=0.92": 2.0, ">=0.8": 1.0, else: -2.0}
    """

    kind = "rule_sum"

    def __init__(
        self, *, threshold: float = 3.0, weights: dict[str, dict[str, float]] | None = None
    ):
        check(isinstance(threshold, int | float) and math.isfinite(threshold), self,
              "threshold", "must be a finite number", threshold)
        self.threshold = float(threshold)
        self.weights = weights

    def validate_against(self, comparisons: list[Comparison]) -> None:
        """Every weighted comparison and level must exist; raise `RulesError` naming the key."""
        by_name = {c.output_name: c for c in comparisons}
        for name, levels in (self.weights or {}).items():
            if name not in by_name:
                known = ", ".join(sorted(by_name))
                raise SchemaViolation(
                    f"weights.{name}",
                    f"must name a comparison; the comparisons are: {known}."
                    + did_you_mean(name, sorted(by_name)),
                    name,
                    "RuleSum",
                )
            if not levels:
                raise SchemaViolation(
                    f"weights.{name}",
                    f"is given no weights, so comparison `{name}` counts for nothing (every "
                    "level weighs 0). Weigh its levels (e.g. {exact: 2.0, else: -1.0}), leave "
                    f"`{name}` out of `weights` for the default weights, or remove the "
                    "comparison",
                    levels,
                    "RuleSum",
                )
            labels = by_name[name].level_labels
            for label in levels:
                if label not in labels:
                    raise SchemaViolation(
                        f"weights.{name}.{label}",
                        f"must be a level of comparison `{name}`: {', '.join(labels)} "
                        "(null always weighs 0)." + did_you_mean(str(label), labels),
                        label,
                        "RuleSum",
                    )

    def fit(
        self,
        X: ComparisonMatrix,
        y: np.ndarray | None = None,
        *,
        random: ComparisonMatrix | None = None,
    ) -> RuleSum:
        self.validate_against(X.comparisons)
        tables = []
        for comparison in X.comparisons:
            given = (self.weights or {}).get(comparison.output_name)
            weights = default_weights(comparison) if given is None else given
            # One extra slot at the end holds the null level (-1 indexes it).
            table = np.array(
                [float(weights.get(label, 0.0)) for label in comparison.level_labels] + [0.0]
            )
            tables.append(table)
        self.weight_tables_ = tables
        return self

    def contributions(self, X: ComparisonMatrix) -> pd.DataFrame:
        self._check_fitted("weight_tables_")
        out = {}
        for k, name in enumerate(X.names):
            out[name] = self.weight_tables_[k][X.levels[:, k].astype(np.int64)]
        return pd.DataFrame(out)


assert NULL_LEVEL == -1  # the weight tables rely on -1 indexing their last slot
