"""The embedding blocker: candidate pairs are near neighbours in embedding space. The encoder,
its cache and the neighbour search live in `linkage.text.embeddings`, which imports nothing
heavy until a blocker proposes."""

from __future__ import annotations

from typing import Any

import numpy as np

from linkage._schema import check
from linkage.blocking._blockers import Blocker, BlockingInput, NeighbourJoin, Proposal
from linkage.comparators import is_missing
from linkage.text.embeddings import BUNDLED_MODEL, Encoder, knn


class EmbeddingBlocker(Blocker):
    """Candidate pairs are near neighbours in embedding space.

    Each record's text in `column` is embedded (`model`, cached), its `k` nearest neighbours
    are found with FAISS (exact inner product below `hnsw_above` indexed vectors, HNSW above),
    and a pair is proposed when its cosine similarity is at least `threshold`. In link mode the
    right source is indexed and the left one queried, so only cross-source pairs come out.
    Missing texts propose nothing. `threshold` is calibrated for `model`: both are written to
    the rules together.

    YAML::

        blocking:
          - {type: embedding, column: description, model: all-MiniLM-L6-v2, threshold: 0.85, k: 10}
    """

    kind = "embedding"

    def __init__(
        self,
        column: str,
        *,
        model: str = BUNDLED_MODEL,
        threshold: float = 0.85,
        k: int = 10,
        hnsw_above: int = 50_000,
        name: str | None = None,
    ):
        check(isinstance(column, str) and column != "", self, "column", "must be a column name",
              column)
        check(isinstance(model, str) and model != "", self, "model",
              f"must be a model name ({BUNDLED_MODEL!r}, 'static') or a local model folder",
              model)
        check(isinstance(threshold, int | float) and -1.0 <= threshold <= 1.0, self,
              "threshold", "must be a cosine similarity in [-1, 1]", threshold)
        check(isinstance(k, int) and not isinstance(k, bool) and k >= 1, self, "k",
              "must be a whole number of at least 1 (neighbours per record)", k)
        check(isinstance(hnsw_above, int) and hnsw_above >= 0, self, "hnsw_above",
              "must be a whole number of at least 0", hnsw_above)
        self.column = column
        self.model = model
        self.threshold = float(threshold)
        self.k = k
        self.hnsw_above = hnsw_above
        self.name = name
        self.encoder: Encoder | None = None  # set one to change the cache folder or batch size

    def to_dict(self) -> dict[str, Any]:
        out = super().to_dict()
        out.setdefault("model", self.model)  # a threshold belongs to its model: keep both
        out.setdefault("threshold", self.threshold)
        return out

    @property
    def embedding_model(self) -> str:
        """The model whose vectors this blocker reads (for the run's manifest)."""
        return self.model

    @property
    def columns(self) -> list[str]:
        return [self.column]

    def describe(self) -> str:
        return (f"embedding neighbours of {self.column} ({self.model}, cosine >= "
                f"{self.threshold:g}, k={self.k})")

    def _rows(self, data: BlockingInput) -> tuple[np.ndarray, np.ndarray]:
        values = np.asarray(data.columns[self.column], dtype=object)
        rows = np.flatnonzero(~is_missing(values))
        return rows, values

    def estimate(self, data: BlockingInput, max_block_size: int) -> int:
        rows, _ = self._rows(data)
        left = len(rows) if data.source is None else int((data.source[rows] == 0).sum())
        return self._estimate(len(rows), left)

    def _estimate(self, records: int, left_records: int) -> int:
        return left_records * self.k

    def _vectors(self, texts: list[str]) -> np.ndarray:
        encoder = self.encoder or Encoder(self.model, normalize=True)
        return encoder.encode(texts)

    def propose(self, data: BlockingInput, max_block_size: int) -> Proposal:
        rows, values = self._rows(data)
        if len(rows) < 2:
            empty = np.zeros(0, dtype=np.int64)
            return Proposal(empty, empty)
        source = None if data.source is None else data.source[rows]
        return Proposal(*self._neighbours(rows, self._vectors(values[rows].tolist()), source))

    def _neighbours(self, rows: np.ndarray, vectors: np.ndarray, source: np.ndarray | None
                    ) -> tuple[np.ndarray, np.ndarray]:
        """The pairs (l < r, unique) among the records `rows` holding `vectors`: each one's
        `k` nearest (of the other table in a link) at cosine `threshold` or more."""
        empty = np.zeros(0, dtype=np.int64)
        if len(rows) < 2:
            return empty, empty
        if source is None:
            q_rows, b_rows = rows, rows
            q_vec = b_vec = vectors
            k = self.k + 1  # the record itself comes back too
        else:
            q_rows, b_rows = rows[source == 0], rows[source == 1]
            q_vec, b_vec = vectors[source == 0], vectors[source == 1]
            k = self.k
            if len(q_rows) == 0 or len(b_rows) == 0:
                return empty, empty
        _, ids = knn(b_vec, q_vec, k, hnsw_above=self.hnsw_above)
        qi = np.repeat(np.arange(len(q_rows)), ids.shape[1])
        bi = ids.ravel()
        ok = bi >= 0
        qi, bi = qi[ok], bi[ok]
        a, b = q_rows[qi], b_rows[bi]
        ok = a != b
        qi, bi, a, b = qi[ok], bi[ok], a[ok], b[ok]
        # Exact cosine from the vectors (HNSW distances are approximate only in recall).
        sims = np.einsum("ij,ij->i", q_vec[qi], b_vec[bi])
        ok = sims >= np.float32(self.threshold) - np.float32(1e-6)
        lo, hi = np.minimum(a[ok], b[ok]), np.maximum(a[ok], b[ok])
        if len(lo) == 0:
            return empty, empty
        pairs = np.unique(np.stack([lo, hi], axis=1).astype(np.int64), axis=0)
        return pairs[:, 0], pairs[:, 1]

    def join_plan(self) -> NeighbourJoin:
        """Vectors made where the records are; the neighbour search over all of them."""
        return NeighbourJoin(self.column, self._vectors, self._neighbours, self._estimate)
