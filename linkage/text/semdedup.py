"""SemDeDup: semantic near-duplicates found by k-means, then compared inside each cluster.

After Abbas et al., "SemDeDup: Data-efficient learning at web-scale through semantic
deduplication" (2023). Embeddings are made unit length and clustered with k-means (FAISS when
installed and the data is large, scikit-learn otherwise; seeded, so runs repeat). Inside each
k-means cluster every pair with cosine similarity above `1 - epsilon` is a duplicate pair.
Duplicate pairs are joined into groups (connected components, never across k-means clusters),
and each group keeps one record: the one farthest from its k-means centroid (largest cosine
distance; ties to the smallest row), which is the `farthest_from_centroid` keeper policy.

One difference from the paper's greedy pass: the paper drops a record when any record farther
from the centroid is its near-duplicate, so in a chain A~B~C with A and C far apart it can keep
both A and C. Here a group is a connected component, as everywhere else in `linkage`
(clusters are connected components of the pair graph), so the chain keeps only one record.

Every record's `centroid_distance` is reported so the pipeline's keeper can rank by it.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass

import numpy as np

from linkage.errors import LinkageError

_FAISS_FROM = 10_000  # below this many vectors scikit-learn's k-means is fast enough


@dataclass
class SemDeDupResult:
    """What `semdedup` found; unpacks as `keep_mask, pairs = semdedup(...)`.

    - `keep_mask`: bool per record, False for the duplicates to drop.
    - `pairs`: (m, 2) int64 row numbers i < j of duplicate pairs (cosine > 1 - epsilon, same
      k-means cluster), sorted.
    - `similarity`: float32 cosine similarity of each pair.
    - `cluster`: int64 k-means cluster of each record.
    - `group`: int64 duplicate group of each record (connected components of `pairs`; a
      record without duplicates is alone in its group).
    - `centroid_distance`: float32 cosine distance of each record to its k-means centroid
      (the `farthest_from_centroid` keeper keeps the largest).
    """

    keep_mask: np.ndarray
    pairs: np.ndarray
    similarity: np.ndarray
    cluster: np.ndarray
    group: np.ndarray
    centroid_distance: np.ndarray

    def __iter__(self):
        yield self.keep_mask
        yield self.pairs


def unit_vectors(x: np.ndarray) -> np.ndarray:
    """Each row scaled to unit length (a zero row kept), as float32."""
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    return (x / np.where(norms == 0, 1.0, norms)).astype(np.float32)


_unit = unit_vectors


def kmeans(x: np.ndarray, n_clusters: int, *, seed: int = 0, backend: str = "auto"
           ) -> tuple[np.ndarray, np.ndarray]:
    """(cluster of each row, unit centroids), seeded. backend: auto, faiss or sklearn."""
    n_clusters = max(1, min(n_clusters, len(x)))
    use_faiss = backend == "faiss" or (backend == "auto" and len(x) >= _FAISS_FROM)
    if use_faiss:
        try:
            faiss = importlib.import_module("faiss")
        except ImportError:
            if backend == "faiss":
                raise LinkageError(
                    'k-means through FAISS needs `faiss-cpu`: pip install "linkage[text]"'
                ) from None
            use_faiss = False
    if use_faiss:
        km = faiss.Kmeans(x.shape[1], n_clusters, niter=25, seed=seed, spherical=True,
                          verbose=False)
        km.train(np.ascontiguousarray(x, dtype=np.float32))
        centroids = km.centroids
        _, labels = km.index.search(np.ascontiguousarray(x, dtype=np.float32), 1)
        labels = labels.ravel().astype(np.int64)
    else:
        from sklearn.cluster import KMeans

        km = KMeans(n_clusters=n_clusters, random_state=seed, n_init=1).fit(x)
        centroids = km.cluster_centers_
        labels = km.labels_.astype(np.int64)
    return labels, _unit(np.asarray(centroids, dtype=np.float32))


def cluster_pairs(xc: np.ndarray, members: np.ndarray, cut: np.float32, chunk: int = 2048
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The pairs (min, max of `members`) of one k-means cluster's unit vectors `xc` (members
    in ascending order) whose cosine is above `cut`, with their cosines: `chunk` rows of the
    all-against-all product at a time."""
    lefts, rights, sims = [], [], []
    for start in range(0, len(members) if len(members) >= 2 else 0, chunk):
        block = xc[start : start + chunk] @ xc.T  # rows start.., all columns
        r, c = np.nonzero(block > cut)
        r = r + start
        upper = r < c
        r, c = r[upper], c[upper]
        a, b = members[r], members[c]
        lefts.append(np.minimum(a, b))
        rights.append(np.maximum(a, b))
        sims.append(block[r - start, c])
    if not lefts:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, np.zeros(0, dtype=np.float32)
    return np.concatenate(lefts), np.concatenate(rights), np.concatenate(sims)


def semdedup(
    embeddings: np.ndarray,
    *,
    n_clusters: int,
    epsilon: float,
    seed: int = 0,
    backend: str = "auto",
    chunk: int = 2048,
) -> SemDeDupResult:
    """Semantic deduplication of `embeddings` (n, d); see the module docstring.

    `epsilon` is a cosine distance: pairs with similarity above `1 - epsilon` are duplicates
    (0.05 to 0.1 is typical for MiniLM on near-paraphrases; 0.01 keeps only near-copies).
    `n_clusters` trades time (each cluster is compared all against all) for recall (duplicates
    split across clusters are missed); about n / 1000 is a reasonable start.
    """
    x = np.asarray(embeddings, dtype=np.float32)
    if x.ndim != 2:
        raise LinkageError(f"`embeddings` must be a 2-D array (n, d). Got shape {x.shape}.")
    if not (isinstance(n_clusters, int) and n_clusters >= 1):
        raise LinkageError(f"`n_clusters` must be a whole number >= 1. Got {n_clusters!r}.")
    if not (isinstance(epsilon, int | float) and 0.0 <= epsilon <= 2.0):
        raise LinkageError(f"`epsilon` must be a cosine distance in [0, 2]. Got {epsilon!r}.")
    n = len(x)
    empty_pairs = np.zeros((0, 2), dtype=np.int64)
    if n == 0:
        z = np.zeros(0, dtype=np.int64)
        return SemDeDupResult(np.zeros(0, bool), empty_pairs, np.zeros(0, np.float32), z, z,
                              np.zeros(0, np.float32))
    x = _unit(x)
    labels, centroids = kmeans(x, n_clusters, seed=seed, backend=backend)
    distance = (1.0 - np.einsum("ij,ij->i", x, centroids[labels])).astype(np.float32)

    cut = np.float32(1.0 - epsilon)
    lefts, rights, sims = [], [], []
    order = np.argsort(labels, kind="stable")
    bounds = np.flatnonzero(np.diff(labels[order])) + 1
    for members in np.split(order, bounds):
        a, b, sim = cluster_pairs(x[members], members, cut, chunk)
        lefts.append(a)
        rights.append(b)
        sims.append(sim)
    if lefts:
        pairs = np.stack([np.concatenate(lefts), np.concatenate(rights)], axis=1).astype(np.int64)
        sim = np.concatenate(sims).astype(np.float32)
        idx = np.lexsort((pairs[:, 1], pairs[:, 0]))
        pairs, sim = pairs[idx], sim[idx]
    else:
        pairs, sim = empty_pairs, np.zeros(0, dtype=np.float32)

    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    graph = coo_matrix((np.ones(len(pairs), dtype=np.int8), (pairs[:, 0], pairs[:, 1])),
                       shape=(n, n))
    _, group = connected_components(graph, directed=False)
    group = group.astype(np.int64)
    # Keeper: per group, the largest centroid distance; ties to the smallest row.
    rank = np.lexsort((np.arange(n), -distance, group))
    first = np.ones(n, dtype=bool)
    first[1:] = group[rank][1:] != group[rank][:-1]
    keep = np.zeros(n, dtype=bool)
    keep[rank[first]] = True
    return SemDeDupResult(keep, pairs, sim, labels, group, distance)


__all__ = ["SemDeDupResult", "cluster_pairs", "kmeans", "semdedup", "unit_vectors"]
