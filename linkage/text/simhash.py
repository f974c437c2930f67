"""SimHash: one 64-bit fingerprint per text, a cheaper near-duplicate signature than MinHash.

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
from typing import ClassVar

import numpy as np

from linkage._schema import check
from linkage.blocking import Blocker, BlockingInput, Proposal, SkippedBlock, groups
from linkage.comparators import SimilarityComparison
from linkage.options import ShingleMode
from linkage.text.lsh import bucket_pairs, check_shingling, pairs_in_buckets_count
from linkage.text.minhash import chunks
from linkage.text.shingles import Shingles, shingle

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


def _buckets(keys: np.ndarray, docs: np.ndarray):
    """Texts `docs` grouped by key: (texts sorted by key, bucket starts, bucket sizes)."""
    rows, starts, sizes = groups(keys[docs])
    return docs[rows], starts, sizes


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
        in_order, starts, sizes = _buckets(fp & mask, docs)
        code, big = bucket_pairs(in_order, starts, sizes, n=n, source=source,
                                 max_bucket=max_bucket or len(fp) + 1)
        codes.append(code)
        skipped += [(table, size, first) for size, first in big]
    code = np.unique(np.concatenate(codes)) if codes else np.zeros(0, np.int64)
    left, right = code // n, code % n
    distance = hamming(fp[left], fp[right])
    ok = distance <= max_distance
    return left[ok], right[ok], distance[ok], len(code), skipped


class SimHashBlocker(Blocker):
    """Near-duplicate free text by SimHash: pairs whose 64-bit fingerprints differ in at most
    `max_distance` bits, found by `blocks` permuted tables and verified. Texts with fewer than
    `min_tokens` words are left to the exact and fuzzy comparators, as with `minhash`."""

    kind: ClassVar[str] = "simhash"

    def __init__(self, column: str, *, max_distance: int = 3, blocks: int | None = None,
                 shingle: ShingleMode = "auto", k: int | None = None, min_tokens: int = 5,
                 name: str | None = None):
        check(isinstance(column, str) and column != "", self, "column",
              "must name a text column", column)
        check(isinstance(max_distance, int) and 0 <= max_distance < BITS // 2, self,
              "max_distance", f"must be a whole number of bits in [0, {BITS // 2})",
              max_distance)
        check(blocks is None or (isinstance(blocks, int) and max_distance < blocks <= 16), self,
              "blocks", f"must be more than `max_distance` = {max_distance} and at most 16 (or "
              "left out for max_distance + 1)", blocks)
        check_shingling(self, shingle, k, min_tokens)
        self.column = column
        self.max_distance = max_distance
        self.blocks = blocks
        self.shingle = shingle
        self.k = k
        self.min_tokens = min_tokens
        self.name = name
        self._cache: tuple | None = None

    @property
    def columns(self) -> list[str]:
        return [self.column]

    def describe(self) -> str:
        blocks = self.blocks or self.max_distance + 1
        tables = len(table_masks(self.max_distance, blocks))
        return (f"SimHash on {self.column}: 64-bit fingerprints within {self.max_distance} bits "
                f"({blocks} blocks, {tables} tables, every such pair found and verified; texts "
                f"under {self.min_tokens} words skipped)")

    def prepare(self, texts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Fingerprints and eligibility of a column, cached for estimate then propose."""
        if self._cache is not None and self._cache[0] is texts:
            return self._cache[1:]
        sh = shingle(texts, mode=self.shingle, k=self.k)
        eligible = (sh.tokens >= self.min_tokens) & (sh.counts > 0)
        self._cache = (texts, fingerprints(sh), eligible)
        return self._cache[1:]

    def estimate(self, data: BlockingInput, max_block_size: int) -> int:
        fp, eligible = self.prepare(data.columns[self.column])
        docs = np.flatnonzero(eligible)
        total = 0
        for mask in table_masks(self.max_distance, self.blocks):
            in_order, _, sizes = _buckets(fp & mask, docs)
            total += pairs_in_buckets_count(in_order, sizes, data.source, max_block_size)
        return total

    def propose(self, data: BlockingInput, max_block_size: int) -> Proposal:
        texts = data.columns[self.column]
        fp, eligible = self.prepare(texts)
        left, right, _, _, skipped = near_pairs(
            fp, self.max_distance, blocks=self.blocks, eligible=eligible, source=data.source,
            max_bucket=max_block_size)
        listed, seen = [], set()
        for table, size, first in skipped:
            if (size, first) in seen:  # identical texts fill the same bucket in every table
                continue
            seen.add((size, first))
            value = str(texts[first])
            value = value if len(value) <= 60 else value[:57] + "..."
            listed.append(SkippedBlock(self.name or "", f"simhash table {table} of "
                                       f"{self.column}", value, size))
        return Proposal(left, right, listed)


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
