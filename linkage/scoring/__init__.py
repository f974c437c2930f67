"""Scorers: estimators over the comparison matrix."""

from linkage.scoring._base import ComparisonMatrix, Scorer
from linkage.scoring._fellegi_sunter import FellegiSunter
from linkage.scoring._rulesum import RuleSum, default_weights

__all__ = ["ComparisonMatrix", "FellegiSunter", "RuleSum", "Scorer", "default_weights"]
