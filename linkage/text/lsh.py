"""Locality-sensitive hashing over MinHash signatures (the MinHash blocker that uses it is
`linkage.blocking.MinHashBlocker`).

A signature is cut into `b` bands of `r` rows; two texts become candidates when all rows of at
least one band agree, which happens with probability P(J) = 1 - (1 - J^r)^b: an S-curve whose
steepest point sits near (1/b)^(1/r). Candidates are then verified by the exact Jaccard of their
shingle sets, so only pairs at or above the threshold are proposed.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from linkage._moved import moved_names
from linkage.errors import ParameterError
from linkage.text.minhash import EMPTY
from linkage.text.shingles import Shingles, unique_sets
from linkage.text.shingles import check_shingling as check_shingling  # moved there; kept here

# The MinHash blocker moved to `linkage.blocking` (issue 15); older scripts import it from here.
__getattr__ = moved_names(__name__, "linkage.blocking", ("MinHashBlocker", "MinHashProposal"))

# A blocker's candidates are verified, so a false positive costs one Jaccard computation while a
# false negative loses a duplicate: it weighs misses 9 to 1 (J = 0.8, 128 permutations: 14 bands
# of 9 rows, 98% of pairs with J in [0.8, 1] found, against 83% with equal weights).
VERIFIED_WEIGHTS = (0.1, 0.9)

_GRID = np.linspace(0.0, 1.0, 2001)


def s_curve(bands: int, rows: int, js: np.ndarray | float) -> np.ndarray:
    """Probability that a pair with Jaccard `js` shares at least one band: 1 - (1 - J^r)^b."""
    js = np.asarray(js, dtype=float)
    return 1.0 - (1.0 - js**rows) ** bands


def _areas(threshold: float, bands: np.ndarray, rows: np.ndarray):
    """False-positive area (below the threshold) and false-negative area (above), trapezoids."""
    p = s_curve(bands[:, None], rows[:, None], _GRID[None, :])
    below = threshold >= _GRID
    fp = np.trapezoid(np.where(below, p, 0.0), _GRID, axis=1)
    fn = np.trapezoid(np.where(~below, 1.0 - p, 0.0), _GRID, axis=1)
    return fp, fn


def _check_threshold(threshold: float, num_perm: int) -> None:
    if not isinstance(threshold, int | float) or not 0.0 < threshold < 1.0:
        msg = f"`threshold` must be a number in (0, 1). Got {threshold!r} instead."
        raise ParameterError(msg)
    if not isinstance(num_perm, int) or num_perm < 2:
        msg = f"`num_perm` must be an integer of at least 2. Got {num_perm!r} instead."
        raise ParameterError(msg)


def lsh_params(
    threshold: float, num_perm: int, fp_weight: float = 0.5, fn_weight: float = 0.5
) -> tuple[int, int]:
    """Bands and rows (b * r <= num_perm) minimising the weighted false-positive and
    false-negative areas under the S-curve, integrated numerically over J in [0, 1]."""
    _check_threshold(threshold, num_perm)
    if fp_weight < 0 or fn_weight < 0 or fp_weight + fn_weight <= 0:
        msg = (f"`fp_weight` and `fn_weight` must be non-negative, not both zero. "
               f"Got {fp_weight!r} and {fn_weight!r} instead.")
        raise ParameterError(msg)
    b, r = np.array([(b, r) for b in range(1, num_perm + 1)
                     for r in range(1, num_perm // b + 1)]).T
    fp, fn = _areas(float(threshold), b, r)
    best = int(np.argmin(fp_weight * fp + fn_weight * fn))
    return int(b[best]), int(r[best])


def resolve_params(
    threshold: float,
    num_perm: int,
    bands: int | None = None,
    rows: int | None = None,
    weights: tuple[float, float] = VERIFIED_WEIGHTS,
) -> tuple[int, int]:
    """Bands and rows: given ones win (one alone takes as many of the other as fit)."""
    _check_threshold(threshold, num_perm)
    for name, value in (("bands", bands), ("rows", rows)):
        if value is not None and (not isinstance(value, int) or value < 1):
            msg = f"`{name}` must be a positive integer or None. Got {value!r} instead."
            raise ParameterError(msg)
    if bands is None and rows is None:
        return lsh_params(threshold, num_perm, *weights)
    bands = bands or num_perm // rows  # type: ignore[operator]
    rows = rows or num_perm // bands
    if bands * rows > num_perm or bands < 1 or rows < 1:
        msg = (f"`bands` x `rows` must be at most `num_perm` = {num_perm}. Got {bands} x {rows} "
               f"= {bands * rows} instead; lower one of them or raise `num_perm`.")
        raise ParameterError(msg)
    return bands, rows


def format_lsh_params(
    threshold: float,
    num_perm: int,
    bands: int | None = None,
    rows: int | None = None,
    *,
    fp_weight: float = VERIFIED_WEIGHTS[0],
    fn_weight: float = VERIFIED_WEIGHTS[1],
) -> str:
    """What `linkage lsh-params` prints: the bands and rows the minhash blocker would use, the
    S-curve threshold (1/b)^(1/r), and P(candidate) for J from 0.5 to 0.95."""
    derived = bands is None and rows is None
    b, r = resolve_params(threshold, num_perm, bands, rows, (fp_weight, fn_weight))
    fp, fn = _areas(float(threshold), np.array([b]), np.array([r]))
    how = (f"derived from the threshold, weighing false positives {fp_weight:g} and false "
           f"negatives {fn_weight:g}; pass --bands/--rows to override" if derived else "as given")
    lines = [
        f"MinHash LSH for Jaccard threshold {threshold:g} with {num_perm} permutations",
        f"  bands b = {b}, rows r = {r} ({how})",
        f"  uses {b * r} of {num_perm} signature rows",
        f"  S-curve threshold (1/b)^(1/r) = {(1 / b) ** (1 / r):.3f}",
        f"  false-positive area {fp[0]:.4f} below {threshold:g}, false-negative area "
        f"{fn[0]:.4f} above (candidates are verified by exact Jaccard)",
        "",
        "     J   P(candidate)",
    ]
    for j in np.round(np.arange(0.50, 0.951, 0.05), 2):
        p = float(s_curve(b, r, j))
        mark = " <- threshold" if abs(j - threshold) < 1e-9 else ""
        lines.append(f"  {j:4.2f}   {p:6.3f}  {'#' * round(p * 40)}{mark}")
    return "\n".join(lines)


# ---------------------------------------------------------------- candidates and verification


def _band_keys(sig: np.ndarray, band: int, rows: int) -> np.ndarray:
    """One uint64 key per text for the rows of one band (a polynomial hash of its values)."""
    cols = sig[:, band * rows : (band + 1) * rows].astype(np.uint64)
    key = np.full(len(sig), band + 1, dtype=np.uint64)
    for c in range(rows):
        key = (key ^ cols[:, c]) * np.uint64(0x100000001B3)
    return key ^ (key >> np.uint64(29))


def band_keys(sig: np.ndarray, bands: int, rows: int) -> np.ndarray:
    """Each text's key of every band, an (n, bands) uint64 array: what LSH buckets by, each
    row computed from its own signature alone (so an engine can compute it anywhere)."""
    out = np.empty((len(sig), bands), dtype=np.uint64)
    for band in range(bands):
        out[:, band] = _band_keys(sig, band, rows)
    return out


def sorted_buckets(keys: np.ndarray, docs: np.ndarray):
    """Texts `docs` grouped by their `keys` (one each): (texts sorted by key, ties in the order
    given; bucket starts; bucket sizes)."""
    order = np.argsort(keys, kind="stable")
    docs, keys = docs[order], keys[order]
    if len(docs) == 0:
        empty = np.zeros(0, dtype=np.int64)
        return docs, empty, empty
    starts = np.concatenate([[0], np.flatnonzero(keys[1:] != keys[:-1]) + 1]).astype(np.int64)
    sizes = np.diff(np.append(starts, len(docs)))
    return docs, starts, sizes


def _buckets(sig: np.ndarray, eligible: np.ndarray, band: int, rows: int):
    """Texts grouped by their band key: (texts sorted by key, bucket starts, bucket sizes)."""
    docs = np.flatnonzero(eligible)
    return sorted_buckets(_band_keys(sig[docs], band, rows), docs)


def _pairs_in_buckets(docs, starts, sizes):
    group_end = np.repeat(starts + sizes, sizes)
    pos = np.arange(len(docs), dtype=np.int64)
    counts = group_end - pos - 1
    left = np.repeat(pos, counts)
    step = np.arange(len(left), dtype=np.int64) - np.repeat(np.cumsum(counts) - counts, counts)
    a, b = docs[left], docs[left + 1 + step]
    return np.minimum(a, b), np.maximum(a, b)


@dataclass
class Candidates:
    left: np.ndarray
    right: np.ndarray
    skipped: list[tuple[int, int, int]] = field(default_factory=list)  # (band, size, first text)


def bucket_pair_count(
    sig: np.ndarray, bands: int, rows: int, *, eligible=None, source=None, max_bucket=None
) -> int:
    """Pairs the band buckets hold, summed over bands (before de-duplication and verification)."""
    eligible = _eligible(sig, eligible)
    total = 0
    for band in range(bands):
        docs, _starts, sizes = _buckets(sig, eligible, band, rows)
        total += pairs_in_buckets_count(docs, sizes, source, max_bucket or len(sig) + 1)
    return total


def pairs_in_buckets_count(docs: np.ndarray, sizes: np.ndarray, source: np.ndarray | None,
                           max_bucket: int) -> int:
    """Pairs inside the buckets of at most `max_bucket` texts (in link mode, across sources);
    `docs` are the texts sorted by bucket, `sizes` the buckets' sizes."""
    ok = sizes <= max_bucket
    if source is None:
        return int((sizes * (sizes - 1) // 2)[ok].sum())
    bucket = np.repeat(np.arange(len(sizes)), sizes)
    right = np.bincount(bucket, weights=source[docs] == 1, minlength=len(sizes))
    return int(((sizes - right) * right)[ok].sum())


def _eligible(sig: np.ndarray, eligible: np.ndarray | None) -> np.ndarray:
    nonempty = sig[:, 0] != EMPTY if sig.shape[1] else np.zeros(len(sig), bool)
    return nonempty if eligible is None else nonempty & eligible


def candidate_pairs(
    sig: np.ndarray,
    bands: int,
    rows: int,
    *,
    eligible: np.ndarray | None = None,
    source: np.ndarray | None = None,
    max_bucket: int | None = None,
) -> Candidates:
    """Unique pairs (i < j) of texts sharing a band; in link mode (`source` given) only pairs
    from different sources. Buckets above `max_bucket` texts are skipped and listed."""
    if bands * rows > sig.shape[1]:
        msg = (f"`bands` x `rows` must be at most the signature length {sig.shape[1]}. "
               f"Got {bands} x {rows} instead.")
        raise ParameterError(msg)
    eligible = _eligible(sig, eligible)
    n = np.int64(max(len(sig), 1))
    codes, skipped = [], []
    for band in range(bands):
        docs, starts, sizes = _buckets(sig, eligible, band, rows)
        code, big = bucket_pairs(docs, starts, sizes, n=n, source=source,
                                 max_bucket=max_bucket or len(sig) + 1)
        codes.append(code)
        skipped += [(band, size, first) for size, first in big]
    code = np.unique(np.concatenate(codes)) if codes else np.zeros(0, np.int64)
    return Candidates(code // n, code % n, skipped)


def bucket_pairs(docs: np.ndarray, starts: np.ndarray, sizes: np.ndarray, *, n: np.int64,
                 source: np.ndarray | None, max_bucket: int):
    """Unique codes (i * n + j, i < j) of the pairs inside each bucket of at most `max_bucket`
    texts (from different sources in link mode), and each larger bucket as (size, first text).
    `docs` are the texts sorted by bucket, which starts at `starts` and holds `sizes`."""
    big = sizes > max_bucket
    skipped = [(int(z), int(docs[s])) for s, z in zip(starts[big], sizes[big], strict=True)]
    keep = (sizes >= 2) & ~big
    docs, sizes = docs[np.repeat(keep, sizes)], sizes[keep]
    a, b = _pairs_in_buckets(docs, np.cumsum(sizes) - sizes, sizes)
    if source is not None:
        cross = source[a] != source[b]
        a, b = a[cross], b[cross]
    return np.unique(a * n + b), skipped


def jaccard(shingles: Shingles, left: np.ndarray, right: np.ndarray, *, chunk: int = 200_000):
    """Exact Jaccard of the shingle sets of each pair, by sparse row products (sort-merge in C)."""
    import scipy.sparse as sp

    left = np.asarray(left, dtype=np.int64)
    right = np.asarray(right, dtype=np.int64)
    out = np.zeros(len(left), dtype=float)
    if len(left) == 0:
        return out
    docs, inverse = np.unique(np.concatenate([left, right]), return_inverse=True)
    sets = unique_sets(shingles.take(docs))
    _, col = np.unique(sets.hashes, return_inverse=True)
    matrix = sp.csr_matrix(
        (np.ones(len(col), dtype=np.int32), col.astype(np.int64), sets.offsets),
        shape=(len(docs), int(col.max()) + 1 if len(col) else 0),
    )
    sizes = np.diff(sets.offsets)
    li, ri = inverse[: len(left)], inverse[len(left) :]
    for lo in range(0, len(left), chunk):
        a, b = li[lo : lo + chunk], ri[lo : lo + chunk]
        inter = np.asarray(matrix[a].multiply(matrix[b]).sum(axis=1)).ravel()
        union = sizes[a] + sizes[b] - inter
        out[lo : lo + chunk] = np.where(union > 0, inter / np.maximum(union, 1), 0.0)
    return out


def similar_pairs(
    shingles: Shingles,
    sig: np.ndarray,
    threshold: float,
    bands: int,
    rows: int,
    *,
    eligible: np.ndarray | None = None,
    source: np.ndarray | None = None,
    max_bucket: int | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, Candidates]:
    """Verified pairs: LSH candidates whose exact Jaccard is at least `threshold`.

    Returns (left, right, jaccard, candidates before verification).
    """
    cand = candidate_pairs(sig, bands, rows, eligible=eligible, source=source,
                           max_bucket=max_bucket)
    j = jaccard(shingles, cand.left, cand.right)
    ok = j >= threshold - 1e-12
    return cand.left[ok], cand.right[ok], j[ok], cand
