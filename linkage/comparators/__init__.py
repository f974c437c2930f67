"""Comparisons: each turns a candidate pair into a level and a raw similarity."""

from linkage.comparators._base import NULL_LEVEL, Comparison, SimilarityComparison, is_missing
from linkage.comparators._date import Date, iso_days
from linkage.comparators._exact import Exact, Phonetic, phonetic_code
from linkage.comparators._names import NameList, name_tokens, names_of
from linkage.comparators._numeric import Numeric
from linkage.comparators._string import DamerauLevenshtein, JaroWinkler, Levenshtein, TokenSort
from linkage.comparators._tokens import (
    CodeMatch,
    TokenCosine,
    codes_of,
    idf_weights,
    tfidf_rows,
    token_matrix,
    tokens_of,
)

__all__ = [
    "NULL_LEVEL",
    "CodeMatch",
    "Comparison",
    "DamerauLevenshtein",
    "Date",
    "Exact",
    "JaroWinkler",
    "Levenshtein",
    "NameList",
    "Numeric",
    "Phonetic",
    "SimilarityComparison",
    "TokenCosine",
    "TokenSort",
    "codes_of",
    "idf_weights",
    "is_missing",
    "iso_days",
    "name_tokens",
    "names_of",
    "phonetic_code",
    "tfidf_rows",
    "token_matrix",
    "tokens_of",
]
