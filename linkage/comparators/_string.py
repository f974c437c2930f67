"""String similarity comparisons through RapidFuzz's C++ kernels.

Hangul is compared at jamo level, so 김민수 and 김민슈 differ by one vowel, not a syllable.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

import numpy as np
from rapidfuzz import fuzz, process
from rapidfuzz.distance import DamerauLevenshtein as _DL
from rapidfuzz.distance import JaroWinkler as _JW
from rapidfuzz.distance import Levenshtein as _Lev

from linkage.comparators._base import SimilarityComparison, workers
from linkage.normalize.hangul import has_hangul, to_jamo


def _prepare(values: np.ndarray) -> list[str]:
    return [to_jamo(v) if has_hangul(v) else v for v in map(str, values)]


class _StringComparison(SimilarityComparison):
    scorer: ClassVar[Callable[..., float]]
    scale: ClassVar[float] = 1.0
    per_pair = True

    def _similarity(self, left: np.ndarray, right: np.ndarray) -> np.ndarray:
        return process.cpdist(
            _prepare(left), _prepare(right), scorer=type(self).scorer, workers=workers(len(left))
        ) / self.scale

    def _similarity_codes(self, uniques: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        # Each distinct value is prepared (Hangul to jamo) once, not once per pair.
        needed = np.unique(np.concatenate([a, b]))
        prepared = np.empty(len(uniques), dtype=object)
        prepared[needed] = _prepare(uniques[needed])
        return process.cpdist(
            prepared[a].tolist(), prepared[b].tolist(), scorer=type(self).scorer,
            workers=workers(len(a)),
        ) / self.scale


class JaroWinkler(_StringComparison):
    """Jaro-Winkler similarity: forgiving of typos late in the string; good for names."""

    kind = "jaro_winkler"
    scorer = staticmethod(_JW.normalized_similarity)


class Levenshtein(_StringComparison):
    """Normalised Levenshtein similarity: 1 - edits / length of the longer string."""

    kind = "levenshtein"
    scorer = staticmethod(_Lev.normalized_similarity)


class DamerauLevenshtein(_StringComparison):
    """Like Levenshtein, but a swap of two neighbouring characters counts as one edit."""

    kind = "damerau_levenshtein"
    scorer = staticmethod(_DL.normalized_similarity)


class TokenSort(_StringComparison):
    """Token-sort ratio: word order does not matter ("삼성전자 주식회사" = "주식회사 삼성전자")."""

    kind = "token_sort"
    scorer = staticmethod(fuzz.token_sort_ratio)
    scale = 100.0
