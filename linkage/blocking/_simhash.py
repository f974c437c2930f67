"""The SimHash blocker: near-duplicate free text as pairs of 64-bit SimHash fingerprints within
a few bits, found by permuted tables and verified (`linkage.text.simhash` computes them)."""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from linkage._schema import check
from linkage.blocking._blockers import Blocker, BlockingInput, Proposal, SkippedBlock
from linkage.options import ShingleMode
from linkage.text.lsh import pairs_in_buckets_count, sorted_buckets
from linkage.text.shingles import check_shingling, shingle
from linkage.text.simhash import BITS, fingerprints, near_pairs, table_masks


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
            in_order, _, sizes = sorted_buckets((fp & mask)[docs], docs)
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
