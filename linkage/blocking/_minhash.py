"""The MinHash blocker: near-duplicate free text by MinHash-LSH candidates, verified by exact
Jaccard. The algorithms (shingles, signatures, banding, verification) are `linkage.text`'s;
this module makes them a `Blocker`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

import numpy as np
import pandas as pd

from linkage._schema import check
from linkage.blocking._blockers import (
    BandJoin,
    Blocker,
    BlockingInput,
    Proposal,
    SkippedBlock,
)
from linkage.options import ShingleMode
from linkage.text.lsh import (
    band_keys,
    bucket_pair_count,
    jaccard,
    resolve_params,
    similar_pairs,
)
from linkage.text.minhash import EMPTY, signatures
from linkage.text.shingles import Shingles, check_shingling, shingle


@dataclass
class MinHashProposal(Proposal):
    """A `Proposal` that also carries each pair's exact Jaccard and the unverified count."""

    jaccard: np.ndarray = field(default_factory=lambda: np.zeros(0))
    candidates: int = 0


class MinHashBlocker(Blocker):
    """Near-duplicate free text: MinHash-LSH candidates, verified by exact Jaccard.

    `threshold` derives bands and rows (weighing misses 9 to 1, as candidates are verified);
    `bands` and `rows` override it. Texts with fewer than `min_tokens` words (Hangul texts: also
    counting one per 3 letters) are left to the exact and fuzzy comparators.
    """

    kind: ClassVar[str] = "minhash"

    def __init__(
        self,
        column: str,
        *,
        threshold: float = 0.8,
        num_perm: int = 128,
        bands: int | None = None,
        rows: int | None = None,
        shingle: ShingleMode = "auto",
        k: int | None = None,
        min_tokens: int = 5,
        seed: int = 0,
        signatures_dir: str | None = None,
        name: str | None = None,
    ):
        check(isinstance(column, str) and column != "", self, "column",
              "must name a text column", column)
        check(isinstance(threshold, int | float) and 0.0 < threshold < 1.0, self, "threshold",
              "must be in (0, 1)", threshold)
        check(isinstance(num_perm, int) and num_perm >= 2, self, "num_perm",
              "must be an integer of at least 2", num_perm)
        check_shingling(self, shingle, k, min_tokens)
        check(isinstance(seed, int), self, "seed", "must be an integer", seed)
        self.column = column
        self.threshold = float(threshold)
        self.num_perm = num_perm
        self.bands = bands
        self.rows = rows
        self.shingle = shingle
        self.k = k
        self.min_tokens = min_tokens
        self.seed = seed
        self.signatures_dir = signatures_dir
        self.name = name
        for field_name, value in (("bands", bands), ("rows", rows)):
            check(value is None or (isinstance(value, int) and value >= 1), self, field_name,
                  "must be a positive integer (or left out to derive it from `threshold`)", value)
        used = (bands or num_perm // (rows or 1)) * (rows or num_perm // (bands or 1))
        check((bands is None and rows is None) or used <= num_perm, self,
              "bands" if bands is not None else "rows",
              f"must keep bands x rows within `num_perm` = {num_perm}", (bands, rows))
        self._bands, self._rows = resolve_params(self.threshold, num_perm, bands, rows)
        self._cache: tuple | None = None

    @property
    def banding(self) -> tuple[int, int]:
        """The (bands, rows) this blocker hashes with: as given, or derived from `threshold`."""
        return self._bands, self._rows

    @property
    def columns(self) -> list[str]:
        return [self.column]

    def describe(self) -> str:
        unit = {"auto": "auto shingles", "word": f"word {self.k or 3}-grams",
                "char": f"character {self.k or 5}-grams"}[self.shingle]
        b, r = self._bands, self._rows
        return (f"MinHash-LSH on {self.column}: Jaccard ≥ {self.threshold:g} ({unit}, "
                f"{self.num_perm} permutations, {b} bands × {r} rows, S-curve threshold "
                f"{(1 / b) ** (1 / r):.2f}; texts under {self.min_tokens} words skipped)")

    def _stored_signatures(self, texts: np.ndarray, sh: Shingles) -> np.ndarray:
        """Signatures from `signatures_dir` when this column was signed with these settings
        before (a new threshold or band layout reuses them), else computed and stored."""
        if self.signatures_dir is None:
            return signatures(sh, self.num_perm, self.seed)
        import hashlib

        from linkage.text.exact import row_hashes
        from linkage.text.minhash import SCHEME, load_signatures, save_signatures

        content = row_hashes(pd.DataFrame({"t": texts}), ["t"], normalize=False)
        settings = f"{SCHEME}|{self.num_perm}|{self.seed}|{self.shingle}|{self.k}"
        key = hashlib.blake2b(content.tobytes() + settings.encode(), digest_size=12).hexdigest()
        path = Path(self.signatures_dir) / f"minhash-{key}.parquet"
        if path.exists():
            sig, _, _ = load_signatures(path)
            self.signatures_loaded_ = True
            return sig
        sig = signatures(sh, self.num_perm, self.seed)
        path.parent.mkdir(parents=True, exist_ok=True)
        save_signatures(path, sig, np.arange(len(texts)),
                        {"seed": self.seed, "shingle": self.shingle, "k": self.k})
        self.signatures_loaded_ = False
        return sig

    def prepare(self, texts: np.ndarray) -> tuple[Shingles, np.ndarray, np.ndarray]:
        """Shingles, signatures and eligibility of a column, cached for estimate then propose."""
        if self._cache is not None and self._cache[0] is texts:
            return self._cache[1:]
        sh = shingle(texts, mode=self.shingle, k=self.k)
        sig = self._stored_signatures(texts, sh)
        eligible = (sh.tokens >= self.min_tokens) & (sh.counts > 0)
        self._cache = (texts, sh, sig, eligible)
        return sh, sig, eligible

    def estimate(self, data: BlockingInput, max_block_size: int) -> int:
        _, sig, eligible = self.prepare(data.columns[self.column])
        return bucket_pair_count(sig, self._bands, self._rows, eligible=eligible,
                                 source=data.source, max_bucket=max_block_size)

    def propose(self, data: BlockingInput, max_block_size: int) -> MinHashProposal:
        texts = data.columns[self.column]
        sh, sig, eligible = self.prepare(texts)
        left, right, j, cand = similar_pairs(
            sh, sig, self.threshold, self._bands, self._rows, eligible=eligible,
            source=data.source, max_bucket=max_block_size)
        skipped = self.skipped_blocks([(band, size, first, texts[first])
                                       for band, size, first in cand.skipped])
        return MinHashProposal(left, right, skipped, jaccard=j, candidates=len(cand.left))

    def skipped_blocks(self, buckets: list[tuple[int, int, int, object]]) -> list[SkippedBlock]:
        """The oversized buckets (band, size, first record, its text), in band order, as
        skipped blocks: a bucket of the same records in a later band is listed once."""
        skipped, seen = [], set()
        for band, size, first, text in buckets:
            if (size, first) in seen:  # identical texts fill the same bucket in every band
                continue
            seen.add((size, first))
            value = str(text)
            value = value if len(value) <= 60 else value[:57] + "..."
            skipped.append(SkippedBlock(self.name or "", f"minhash band {band} of {self.column}",
                                        value, size))
        return skipped

    def band_keys(self, texts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Each text's band keys as int64 (the uint64 keys' bits) and whether it takes part,
        from its own shingles and signature alone: what `prepare` and LSH compute for it."""
        sh = shingle(texts, mode=self.shingle, k=self.k)
        sig = signatures(sh, self.num_perm, self.seed)
        eligible = (sh.tokens >= self.min_tokens) & (sh.counts > 0) & (sig[:, 0] != EMPTY)
        return band_keys(sig, self._bands, self._rows).view(np.int64), eligible

    def verify(self, left: np.ndarray, right: np.ndarray) -> np.ndarray:
        """Whether each candidate pair of texts has the exact Jaccard `similar_pairs` keeps
        (of their shingle sets, at least `threshold`)."""
        sh = shingle(np.concatenate([left, right]), mode=self.shingle, k=self.k)
        m = len(left)
        j = jaccard(sh, np.arange(m), np.arange(m, 2 * m))
        return j >= self.threshold - 1e-12

    def join_plan(self) -> BandJoin:
        """Bands as join keys, candidates verified by exact Jaccard (`signatures_dir` is not
        read: the signatures are computed where the records are)."""
        return BandJoin(self.column, self._bands, self.band_keys, self.verify,
                        self.skipped_blocks)
