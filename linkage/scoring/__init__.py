"""Scorers: estimators over the comparison matrix."""

from linkage.scoring._base import ComparisonMatrix, Scorer
from linkage.scoring._fellegi_sunter import FellegiSunter
from linkage.scoring._rulesum import RuleSum, default_weights
from linkage.scoring._supervised import Supervised, labels_for_pairs, read_labels

__all__ = [
    "ComparisonMatrix",
    "FellegiSunter",
    "RuleSum",
    "Scorer",
    "Supervised",
    "default_weights",
    "labels_for_pairs",
    "read_labels",
]
