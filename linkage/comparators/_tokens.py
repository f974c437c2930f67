"""Token comparisons for text: IDF-weighted token cosine and model-number (code) agreement.

Product titles, citations and addresses share many words with their non-matches ("black",
"digital", "proceedings"); what identifies them is the rare words and the codes ("kdl40v4100",
"pslx350h"). `token_cosine` weighs each word by its inverse document frequency over the whole
column (every record of both sources), so agreeing on a rare word counts more than agreeing on a
common one; `codes` compares only the alphanumeric codes two texts hold.

Work is one sparse matrix per column (rows: distinct values, columns: tokens), built once and
cached on the encoded column; a pair's cosine is a row-wise product, no Python loop per pair.
"""

from __future__ import annotations

import re
import unicodedata

import numpy as np
import pandas as pd

from linkage._schema import check
from linkage.comparators._base import Comparison, SimilarityComparison, levels_from_thresholds

_WORD = re.compile(r"[^\W_]+")
_CHUNK = re.compile(r"\S+")
_DIGIT = re.compile(r"\d")
_ALPHA = re.compile(r"[^\W\d_]")


def _fold(text: str) -> str:
    return unicodedata.normalize("NFKC", text).casefold()


def is_code(token: str) -> bool:
    """An alphanumeric code (model or part number, ISBN, catalogue number): a digit and a letter
    and at least four characters, or five or more digits. Years (1995) and sizes (40) are not."""
    if len(token) < 4 or not _DIGIT.search(token):
        return False
    return bool(_ALPHA.search(token)) or len(token) >= 5


def codes_of(text: str) -> set[str]:
    """The codes a text holds, with their punctuation removed ("KDL-40V4100" -> "kdl40v4100")."""
    out = set()
    for chunk in _CHUNK.findall(_fold(text)):
        joined = "".join(_WORD.findall(chunk))
        if _ALPHA.search(joined) and is_code(joined):  # not "1,299.99" or "1984-01-01"
            out.add(joined)
        for word in _WORD.findall(chunk):
            if is_code(word):
                out.add(word)
    return out


def tokens_of(text: str) -> list[str]:
    """Word tokens (NFKC, case-folded), plus each code written with punctuation inside it
    joined up, so "KTC-D320/1G" and "ktcd3201g" share a token."""
    folded = _fold(text)
    words = _WORD.findall(folded)
    for chunk in _CHUNK.findall(folded):
        parts = _WORD.findall(chunk)
        if len(parts) > 1:
            joined = "".join(parts)
            if _ALPHA.search(joined) and is_code(joined):
                words.append(joined)
    return words


def token_matrix(texts, *, vocabulary: dict[str, int] | None = None, weights=None,
                 tokens=None):
    """A CSR matrix of binary token occurrence (rows: texts); grows `vocabulary` in place.
    `tokens` splits a text into its tokens (`tokens_of` by default)."""
    from scipy import sparse

    vocab = {} if vocabulary is None else vocabulary
    split = tokens_of if tokens is None else tokens
    indptr, indices = [0], []
    for text in texts:
        toks = {vocab.setdefault(t, len(vocab)) for t in split(str(text))}
        indices.extend(sorted(toks))
        indptr.append(len(indices))
    return sparse.csr_matrix(
        (np.ones(len(indices), dtype=np.float32), np.asarray(indices, dtype=np.int64),
         np.asarray(indptr, dtype=np.int64)),
        shape=(len(indptr) - 1, max(len(vocab), 1)),
    )


def idf_weights(occurrence, records_per_row: np.ndarray) -> np.ndarray:
    """Smoothed inverse document frequency of each token column: log((1 + N) / (1 + df)) + 1,
    with df counted over records (a row of `occurrence` stands for `records_per_row` of them)."""
    n = float(records_per_row.sum())
    df = np.asarray(occurrence.T @ records_per_row.astype(np.float64)).ravel()
    return (np.log((1.0 + n) / (1.0 + df)) + 1.0).astype(np.float32)


def tfidf_rows(occurrence, idf: np.ndarray):
    """Rows of `occurrence` weighted by `idf` and scaled to unit length."""
    from scipy import sparse

    weighted = occurrence @ sparse.diags(idf[: occurrence.shape[1]])
    norms = np.sqrt(np.asarray(weighted.multiply(weighted).sum(axis=1)).ravel())
    norms[norms == 0] = 1.0
    return sparse.csr_matrix(sparse.diags(1.0 / norms) @ weighted, dtype=np.float32)


def row_dots(mat, a: np.ndarray, b: np.ndarray, chunk: int = 200_000) -> np.ndarray:
    """Dot products of rows a[i] and b[i] of a CSR matrix."""
    out = np.empty(len(a), dtype=np.float32)
    for start in range(0, len(a), chunk):
        sl = slice(start, start + chunk)
        out[sl] = np.asarray(mat[a[sl]].multiply(mat[b[sl]]).sum(axis=1)).ravel()
    return out


class TokenCosine(SimilarityComparison):
    """Cosine of the two texts' TF-IDF word vectors, the IDF counted over the whole column.

    Agreeing on rare words (model numbers, unusual title words) weighs more than agreeing on
    common ones; word order and repeats do not matter. Codes written with punctuation inside
    ("KDL-40V4100") also count joined up ("kdl40v4100"). Levels: else, one per threshold
    (lowest first), exact (identical text).

    YAML: `{type: token_cosine, column: title, thresholds: [0.8, 0.6, 0.4]}`
    """

    kind = "token_cosine"
    distinct_pairs = True
    # How a text splits into the tokens weighed (a subclass reads other units: names)
    tokens = staticmethod(tokens_of)

    def __init__(
        self, column: str, *, thresholds: list[float] = (0.8, 0.6, 0.4), name: str | None = None
    ):
        super().__init__(column, thresholds=thresholds, name=name)

    def compare_codes(self, column, left, right):
        # The IDF is counted over every record of the column (both sources), once.
        cl, cr = column.codes[left], column.codes[right]
        levels = np.full(len(cl), -1, dtype=np.int8)
        sims = np.full(len(cl), np.nan, dtype=np.float32)
        present = column.present(cl) & column.present(cr)
        if not present.any():
            return levels, sims
        a, b = cl[present], cr[present]
        s = np.clip(row_dots(self._vectors(column), a, b), 0.0, 1.0)
        exact = a == b
        s[exact] = 1.0
        levels[present] = levels_from_thresholds(s, exact, self.thresholds)
        sims[present] = s
        return levels, sims

    def _vectors(self, column):
        def vectors():
            occurrence = token_matrix(column.all_uniques(), tokens=self.tokens)
            counts = column.counts().astype(np.float64)
            return tfidf_rows(occurrence, idf_weights(occurrence, counts))

        return column.cached(self.kind, vectors)

    def _similarity(self, left: np.ndarray, right: np.ndarray) -> np.ndarray:
        # Without the whole column, the IDF is counted over the texts compared.
        n = len(left)
        if n == 0:
            return np.zeros(0, dtype=np.float32)
        codes, uniques = pd.factorize(pd.Series([str(v) for v in left] + [str(v) for v in right],
                                                dtype=object))
        occurrence = token_matrix(uniques, tokens=self.tokens)
        counts = np.bincount(codes, minlength=len(uniques)).astype(np.float64)
        mat = tfidf_rows(occurrence, idf_weights(occurrence, counts))
        return row_dots(mat, codes[:n], codes[n:])


class CodeMatch(Comparison):
    """Do two texts share an alphanumeric code (a model or part number)?

    A code is a token with a digit and a letter and at least four characters, or five or more
    digits, its punctuation removed ("KDL-40V4100" -> "kdl40v4100"). Levels: null (either text
    holds no code: no evidence), else (codes on both sides, none alike), `similar` (two codes
    within `similar` normalised edit similarity: "kdl40v4100" / "kdl40v4100b"), `shared` (a code
    in common). Similarity: the best edit similarity between a code of each side.

    YAML: `{type: codes, column: title}`
    """

    kind = "codes"
    distinct_pairs = True

    def __init__(self, column: str, *, similar: float = 0.8, name: str | None = None):
        super().__init__(column, name=name)
        check(isinstance(similar, int | float) and 0.0 < similar < 1.0, self, "similar",
              "must be a similarity strictly between 0 and 1", similar)
        self.similar = float(similar)

    @property
    def level_labels(self) -> list[str]:
        return ["else", "similar", "shared"]

    def _score(self, left: np.ndarray, right: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        from rapidfuzz import process
        from rapidfuzz.distance import Levenshtein

        n = len(left)
        levels = np.full(n, -1, dtype=np.int8)
        sims = np.full(n, np.nan, dtype=np.float32)
        if n == 0:
            return levels, sims
        # Each distinct value's codes once, then code pairs as flat arrays (no loop per pair).
        codes, uniques = pd.factorize(pd.Series([str(v) for v in left] + [str(v) for v in right],
                                                dtype=object))
        held = [sorted(codes_of(v)) for v in uniques]
        count = np.array([len(h) for h in held], dtype=np.int64)
        start = np.concatenate([[0], np.cumsum(count)[:-1]])
        flat = np.array([c for h in held for c in h], dtype=object)
        lc, rc = codes[:n], codes[n:]
        both = np.flatnonzero((count[lc] > 0) & (count[rc] > 0))
        if len(both) == 0:
            return levels, sims
        # every (left code, right code) combination of each pair
        per_pair = count[lc[both]] * count[rc[both]]
        pair = np.repeat(np.arange(len(both)), per_pair)
        offset = np.arange(len(pair)) - np.repeat(np.cumsum(per_pair) - per_pair, per_pair)
        right_n = count[rc[both]][pair]
        li = start[lc[both]][pair] + offset // right_n
        ri = start[rc[both]][pair] + offset % right_n
        sim = process.cpdist(flat[li].tolist(), flat[ri].tolist(),
                             scorer=Levenshtein.normalized_similarity,
                             workers=-1 if len(li) >= 10_000 else 1).astype(np.float32)
        best = np.zeros(len(both), dtype=np.float32)
        np.maximum.at(best, pair, sim)
        sims[both] = best
        levels[both] = np.where(best >= 1.0, 2, np.where(best >= self.similar, 1, 0))
        return levels, sims


__all__ = ["CodeMatch", "TokenCosine", "codes_of", "idf_weights", "is_code", "tfidf_rows",
           "token_matrix", "tokens_of"]
