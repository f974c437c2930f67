"""Scorers: estimators over the comparison matrix."""

from linkage.scoring._base import ComparisonMatrix, Scorer
from linkage.scoring._fellegi_sunter import (
    MAJORITY,
    FellegiSunter,
    decode_patterns,
    majority_confirmed,
    pattern_codes,
)
from linkage.scoring._rulesum import RuleSum, default_weights
from linkage.scoring._supervised import (
    MIN_LABELLED,
    Supervised,
    feature_matrix,
    labels_for_pairs,
    read_labels,
)

__all__ = [
    "MAJORITY",
    "MIN_LABELLED",
    "ComparisonMatrix",
    "FellegiSunter",
    "RuleSum",
    "Scorer",
    "Supervised",
    "decode_patterns",
    "default_weights",
    "feature_matrix",
    "labels_for_pairs",
    "majority_confirmed",
    "pattern_codes",
    "read_labels",
]
