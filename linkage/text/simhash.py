"""SimHash: one 64-bit fingerprint per text, a cheaper near-duplicate signature than MinHash
(the blocker that uses it is `linkage.blocking.SimHashBlocker`).

Charikar's SimHash over the same shingles MinHash uses: bit `i` of a text's fingerprint is set
when more of its shingle occurrences (weighted by how often each occurs) have bit `i` set than
not. Texts that share most shingles differ in few bits, so near copies are pairs at a small
Hamming distance `k`; 8 bytes a text instead of MinHash's 512.

Candidates by the permuted-table trick (Manku, Jain and Das Sarma 2007): cut the 64 bits into
`m > k` blocks; two fingerprints within distance `k` differ in at most `k` blocks, so they agree
on some `m - k` of them. One table per choice of `m - k` blocks, keyed by those bits, finds
every pair within `k` (no probability involved); each candidate's exact distance is then
checked before it counts.
"""

from __future__ import annotations

from itertools import combinations, pairwise

import numpy as np

from linkage._moved import moved_names
from linkage.comparators import SimilarityComparison
from linkage.text.lsh import bucket_pairs, sorted_buckets
from linkage.text.minhash import chunks
from linkage.text.shingles import Shingles, shingle

# The SimHash blocker moved to `linkage.blocking` (issue 15); older scripts import it from here.
__getattr__ = moved_names(__name__, "linkage.blocking", ("SimHashBlocker",))

BITS = 64
_SHIFTS = np.arange(BITS, dtype=np.uint64)
_POPCOUNT8 = np.array([bin(i).count("1") for i in range(256)], dtype=np.uint8)


def fingerprints(shingles: Shingles, *, chunk_size: int = 8192) -> np.ndarray:
    """One uint64 SimHash per text (0 for a text without shingles).

    Shingles repeated in a text weigh as often as they occur; a tie leaves the bit clear.
    """
    n = len(shingles)
    out = np.zeros(n, dtype=np.uint64)
    offsets = shingles.offsets
    for d0, d1 in chunks(offsets, chunk_size):
        lo, hi = int(offsets[d0]), int(offsets[d1])
        if hi == lo:
            continue
        bits = ((shingles.hashes[lo:hi, None] >> _SHIFTS) & np.uint64(1)).astype(np.uint8)
        sizes = np.diff(offsets[d0 : d1 + 1])
        docs = np.flatnonzero(sizes) + d0
        ones = np.add.reduceat(bits, offsets[docs] - lo, axis=0, dtype=np.int64)
        majority = 2 * ones > sizes[docs - d0, None]
        out[docs] = (majority.astype(np.uint64) << _SHIFTS).sum(axis=1, dtype=np.uint64)
    return out


def hamming(left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """Bits that differ between aligned uint64 fingerprints."""
    xor = np.bitwise_xor(np.asarray(left, np.uint64), np.asarray(right, np.uint64))
    if hasattr(np, "bitwise_count"):  # numpy >= 2.0
        return np.bitwise_count(xor).astype(np.int64)
    return popcount_bytes(xor)


def popcount_bytes(values: np.ndarray) -> np.ndarray:
    """Set bits of each uint64, by a table of the 256 bytes (numpy < 2 has no popcount)."""
    return _POPCOUNT8[values.reshape(-1, 1).view(np.uint8)].sum(axis=1).astype(np.int64)


def table_masks(max_distance: int, blocks: int | None = None) -> list[np.uint64]:
    """The bits each table keys on: every choice of `blocks - max_distance` of `blocks` near
    equal blocks of the 64 bits (default `max_distance + 1` blocks, one per table)."""
    blocks = max_distance + 1 if blocks is None else blocks
    edges = np.linspace(0, BITS, blocks + 1).round().astype(int)
    block_mask = [sum(1 << b for b in range(lo, hi)) for lo, hi in pairwise(edges)]
    return [np.uint64(sum(block_mask[i] for i in chosen))
            for chosen in combinations(range(blocks), blocks - max_distance)]


def near_pairs(fp: np.ndarray, max_distance: int, *, blocks: int | None = None,
               eligible: np.ndarray | None = None, source: np.ndarray | None = None,
               max_bucket: int | None = None):
    """Unique pairs (i < j) of fingerprints within `max_distance` bits, each verified; in link
    mode (`source` given) only pairs from different sources. Buckets above `max_bucket` texts
    are skipped and listed. Returns (left, right, distance, candidates, skipped)."""
    docs = np.flatnonzero(np.ones(len(fp), bool) if eligible is None else eligible)
    n = np.int64(max(len(fp), 1))
    codes, skipped = [], []
    for table, mask in enumerate(table_masks(max_distance, blocks)):
        in_order, starts, sizes = sorted_buckets((fp & mask)[docs], docs)
        code, big = bucket_pairs(in_order, starts, sizes, n=n, source=source,
                                 max_bucket=max_bucket or len(fp) + 1)
        codes.append(code)
        skipped += [(table, size, first) for size, first in big]
    code = np.unique(np.concatenate(codes)) if codes else np.zeros(0, np.int64)
    left, right = code // n, code % n
    distance = hamming(fp[left], fp[right])
    ok = distance <= max_distance
    return left[ok], right[ok], distance[ok], len(code), skipped


class SimHash(SimilarityComparison):
    """SimHash similarity of two texts, 1 - (differing bits) / 64, over auto shingles.

    Levels: else, one per threshold (lowest first), exact (identical text). 0.95 is within
    3 bits, 0.9 within 6.
    """

    kind = "simhash"

    def __init__(self, column: str, *, thresholds: list[float] = (0.95, 0.9),
                 name: str | None = None):
        super().__init__(column, thresholds=thresholds, name=name)

    def _similarity(self, left: np.ndarray, right: np.ndarray) -> np.ndarray:
        fp = fingerprints(shingle(np.concatenate([left, right])))
        return 1.0 - hamming(fp[: len(left)], fp[len(left) :]) / BITS

    def _similarity_codes(self, uniques: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        fp = fingerprints(shingle(uniques))  # each distinct text once
        return 1.0 - hamming(fp[a], fp[b]) / BITS
