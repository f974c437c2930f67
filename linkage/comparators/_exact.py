"""Equality comparisons: exact values and phonetic codes."""

from __future__ import annotations

import re

import jellyfish
import numpy as np

from linkage._schema import check
from linkage.comparators._base import NULL_LEVEL, Comparison
from linkage.options import PhoneticAlgorithm

_LATIN = re.compile("[A-Za-z]")

PHONETIC = {
    "soundex": jellyfish.soundex,
    "metaphone": jellyfish.metaphone,
    "nysiis": jellyfish.nysiis,
    "match_rating": jellyfish.match_rating_codex,
}


class Exact(Comparison):
    """Levels: null, else, exact. Similarity is 1 for equal values, 0 otherwise."""

    kind = "exact"
    per_pair = True

    @property
    def level_labels(self) -> list[str]:
        return ["else", "exact"]

    def _score(self, left: np.ndarray, right: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        exact = np.asarray(left == right, dtype=bool)
        return exact.astype(np.int8), exact.astype(np.float32)

    def compare_codes(self, column, left: np.ndarray, right: np.ndarray):
        # Equal values have equal codes: no string is looked at.
        cl, cr = column.codes[left], column.codes[right]
        present = column.present(cl) & column.present(cr)
        exact = cl == cr
        levels = np.where(present, exact.astype(np.int8), np.int8(NULL_LEVEL)).astype(np.int8)
        sims = np.where(present, exact.astype(np.float32), np.float32(np.nan))
        return levels, sims.astype(np.float32)


def phonetic_code(value: str, algorithm: str) -> str:
    """The phonetic code of `value`; text without Latin letters is its own code.

    Phonetic algorithms are for English spellings; jellyfish would code 김민수 by its first
    jamo alone and lump every ㄱ-name together.
    """
    if not _LATIN.search(value):
        return value
    try:
        code = PHONETIC[algorithm](value)
    except Exception:  # jellyfish rejects some non-Latin input; fall back to the value itself
        code = value
    return code or value


class Phonetic(Comparison):
    """Levels: null, else, same phonetic code (soundex, metaphone, NYSIIS), exact."""

    kind = "phonetic"
    per_pair = True

    def __init__(
        self, column: str, *, algorithm: PhoneticAlgorithm = "soundex", name: str | None = None
    ):
        super().__init__(column, name=name)
        check(algorithm in PHONETIC, self, "algorithm", f"must be one of {sorted(PHONETIC)}",
              algorithm)
        self.algorithm = algorithm

    @property
    def level_labels(self) -> list[str]:
        return ["else", self.algorithm, "exact"]

    def _score(self, left: np.ndarray, right: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        exact = np.asarray(left == right, dtype=bool)
        cl = np.array([phonetic_code(str(v), self.algorithm) for v in left], dtype=object)
        cr = np.array([phonetic_code(str(v), self.algorithm) for v in right], dtype=object)
        same = np.asarray(cl == cr, dtype=bool)
        levels = np.where(exact, 2, np.where(same, 1, 0)).astype(np.int8)
        return levels, same.astype(np.float32)
