"""Comparisons: each turns a candidate pair into a level and a raw similarity."""

from linkage.comparators._base import NULL_LEVEL, Comparison
from linkage.comparators._date import Date
from linkage.comparators._exact import Exact, Phonetic
from linkage.comparators._numeric import Numeric
from linkage.comparators._string import DamerauLevenshtein, JaroWinkler, Levenshtein, TokenSort
from linkage.comparators._tokens import CodeMatch, TokenCosine

__all__ = [
    "NULL_LEVEL",
    "CodeMatch",
    "Comparison",
    "DamerauLevenshtein",
    "Date",
    "Exact",
    "JaroWinkler",
    "Levenshtein",
    "Numeric",
    "Phonetic",
    "TokenCosine",
    "TokenSort",
]
