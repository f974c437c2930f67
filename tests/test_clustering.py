"""Tests for linkage.clustering: connected components against networkx, greedy one-to-one."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from linkage.clustering import connected_components, one_to_one


@st.composite
def graphs(draw, max_n: int = 60):
    n = draw(st.integers(0, max_n))
    if n == 0:
        return 0, []
    node = st.integers(0, n - 1)
    edges = draw(st.lists(st.tuples(node, node), max_size=2 * n))
    return n, edges


def as_arrays(edges):
    left = np.array([a for a, _ in edges], dtype=np.int64)
    right = np.array([b for _, b in edges], dtype=np.int64)
    return left, right


def partition(labels) -> set[frozenset[int]]:
    groups: dict[int, set[int]] = {}
    for node, lab in enumerate(labels):
        groups.setdefault(int(lab), set()).add(node)
    return {frozenset(g) for g in groups.values()}


# --- connected components -------------------------------------------------------------------


@settings(max_examples=150, deadline=None)
@given(graph=graphs(), seed=st.integers(0, 2**32 - 1))
def test_components_match_networkx(graph, seed):
    n, edges = graph
    labels = connected_components(n, *as_arrays(edges))
    assert labels.shape == (n,)

    reference = nx.Graph()
    reference.add_nodes_from(range(n))
    reference.add_edges_from(edges)
    assert partition(labels) == {frozenset(c) for c in nx.connected_components(reference)}

    # Deterministic: shuffling the edges and flipping their direction changes nothing.
    rng = np.random.default_rng(seed)
    shuffled = [edges[i] for i in rng.permutation(len(edges))]
    shuffled = [(b, a) if rng.random() < 0.5 else (a, b) for a, b in shuffled]
    np.testing.assert_array_equal(connected_components(n, *as_arrays(shuffled)), labels)

    # Numbered by smallest member: labels 0..k-1, in the order of each cluster's first node.
    if n:
        firsts = sorted(min(c) for c in partition(labels))
        assert [int(labels[f]) for f in firsts] == list(range(len(firsts)))
        assert labels[0] == 0
        # A node's label never exceeds the number of clusters that start before it.
        seen_max = -1
        for lab in labels:
            assert lab <= seen_max + 1
            seen_max = max(seen_max, int(lab))


def test_components_small_examples():
    labels = connected_components(6, np.array([4, 1, 5]), np.array([5, 3, 1]))
    # Clusters: {0}, {1, 3, 4, 5}, {2}; numbered by smallest member 0, 1, 2.
    assert labels.tolist() == [0, 1, 2, 1, 1, 1]
    assert connected_components(0, np.array([], dtype=np.int64), np.array([], dtype=np.int64)
                                ).tolist() == []
    assert connected_components(3, np.array([], dtype=np.int64), np.array([], dtype=np.int64)
                                ).tolist() == [0, 1, 2]


def test_components_self_loops_and_duplicate_edges():
    left = np.array([2, 2, 0] + [0] * 300)
    right = np.array([2, 2, 0] + [1] * 300)
    assert connected_components(3, left, right).tolist() == [0, 0, 1]


# --- one to one -----------------------------------------------------------------------------


def greedy_reference(left, right, weight) -> np.ndarray:
    """Sort by weight descending, then left, then right; accept a pair if both ends are free."""
    order = sorted(range(len(left)), key=lambda i: (-weight[i], left[i], right[i], i))
    used_l, used_r = set(), set()
    accepted = np.zeros(len(left), dtype=bool)
    for i in order:
        if left[i] not in used_l and right[i] not in used_r:
            accepted[i] = True
            used_l.add(left[i])
            used_r.add(right[i])
    return accepted


@st.composite
def bipartite(draw):
    n_left = draw(st.integers(1, 12))
    n_right = draw(st.integers(1, 12))
    # Few distinct weights so that ties are common and the tie-break matters.
    weight = st.one_of(st.sampled_from([0.5, 1.0, 2.0, 3.0]), st.floats(-5, 5))
    edges = draw(
        st.lists(
            st.tuples(st.integers(0, n_left - 1), st.integers(0, n_right - 1), weight),
            max_size=40,
            unique_by=lambda e: (e[0], e[1]),
        )
    )
    return edges


@settings(max_examples=200, deadline=None)
@given(edges=bipartite())
def test_one_to_one_matches_reference_greedy(edges):
    left = np.array([e[0] for e in edges], dtype=np.int64)
    right = np.array([e[1] for e in edges], dtype=np.int64)
    weight = np.array([e[2] for e in edges], dtype=float)
    accepted = one_to_one(left, right, weight)
    assert accepted.dtype == bool and accepted.shape == (len(edges),)
    # Each left and each right node at most once.
    assert len(set(left[accepted].tolist())) == int(accepted.sum())
    assert len(set(right[accepted].tolist())) == int(accepted.sum())
    np.testing.assert_array_equal(accepted, greedy_reference(left, right, weight))
    # Maximal: every rejected pair touches an accepted node.
    taken_l, taken_r = set(left[accepted].tolist()), set(right[accepted].tolist())
    for i in np.flatnonzero(~accepted):
        assert left[i] in taken_l or right[i] in taken_r


def test_one_to_one_prefers_weight_then_ties_by_left_then_right():
    # Left 0 likes right 0 (0.9) and right 1 (0.8); left 1 likes right 0 (0.95).
    accepted = one_to_one(np.array([0, 0, 1]), np.array([0, 1, 0]), np.array([0.9, 0.8, 0.95]))
    assert accepted.tolist() == [False, True, True]
    # All equal weights: (0, 0) first, then (1, 1).
    accepted = one_to_one(
        np.array([1, 0, 1, 0]), np.array([1, 1, 0, 0]), np.array([1.0, 1.0, 1.0, 1.0])
    )
    assert accepted.tolist() == [True, False, False, True]


def test_one_to_one_chain_needs_several_rounds():
    # A chain where each pair is only freed by the previous acceptance.
    left = np.array([0, 1, 1, 2, 2, 3])
    right = np.array([0, 0, 1, 1, 2, 2])
    weight = np.array([6, 5, 4, 3, 2, 1], dtype=float)
    accepted = one_to_one(left, right, weight)
    np.testing.assert_array_equal(accepted, greedy_reference(left, right, weight))
    assert accepted.tolist() == [True, False, True, False, True, False]


def test_one_to_one_empty():
    out = one_to_one(np.array([], dtype=np.int64), np.array([], dtype=np.int64), np.array([]))
    assert out.tolist() == []


def _best_and_others(best: np.ndarray, others: int = 9, other_weight: float = -10.0):
    """Pairs (left row, right row, weight): left record i has its best candidate at `best[i]`
    and `others` more at `other_weight`; right rows follow the left ones."""
    n = len(best)
    left = np.repeat(np.arange(n), others + 1)
    right = n + np.arange(n * (others + 1))
    weight = np.tile(np.r_[0.0, np.full(others, other_weight)], n)
    weight[:: others + 1] = best
    return left, right, weight


def test_record_prior_moves_little_where_most_records_have_no_match():
    """300 of 1,000 left records have a match (best candidate at +8), 700 only a near miss
    (best at -3), 10 candidates each: the pairwise prior is 300 / 10,000. A record's chance of
    having a match is about 0.3, so the best candidate's threshold moves by about
    log2(0.97 / 0.7) ~ 0.5 or a little more, not by log2(10) = 3.3 (which would link all 700
    near misses)."""
    from linkage.clustering import record_prior_shift

    best = np.r_[np.full(300, 8.0), np.full(700, -3.0)]
    left, right, weight = _best_and_others(best)
    found = record_prior_shift(left, right, weight, 1000, 10_000, prior=0.03)
    # each near miss still counts its own small chance (about 1 in 7 at the moved threshold)
    assert 0.3 < found["rho"] < 0.45 and 0.4 < found["shift"] < 0.9
    assert -found["shift"] > -3.0 > -np.log2(10)  # the near misses stay out
    assert found["candidates_per_record"] == 10.0


def test_record_prior_moves_to_the_cap_where_every_record_has_a_match():
    """Every left record's best candidate at +2: nearly every record has a match, so its best
    candidate is held only against the others, and the move reaches log2(candidates)."""
    from linkage.clustering import record_prior_shift

    left, right, weight = _best_and_others(np.full(1000, 2.0))
    found = record_prior_shift(left, right, weight, 1000, 10_000, prior=0.1)
    assert found["shift"] == pytest.approx(np.log2(10), abs=1e-6)
    # the smaller table decides: the same pairs seen from a right table of 1,000 records
    swapped = record_prior_shift(right - 1000, left + 10_000, weight, 10_000, 1000, prior=0.1)
    assert swapped == found


def test_labelled_matches_join_their_clusters_unless_a_labelled_non_match_forbids():
    from linkage.clustering import labelled_joins

    clusters = np.array([0, 0, 1, 1, 2, 3, 3])
    # rows 1~2: a match the clusters keep apart (joins 0 and 1); 0~3 then joins nothing new;
    # 4~5: would put the labelled non-match 4~6 in one cluster (refused); 6~0: joins 3 and 0+1
    left = np.array([1, 0, 4, 4, 6])
    right = np.array([2, 3, 5, 6, 0])
    label = np.array([1, 1, 1, 0, 1])
    joined = labelled_joins(clusters, left, right, label)
    assert joined.tolist() == [True, False, False, False, True]
    # where two labelled matches conflict through a labelled non-match (0~1, 1~2, not 0~2),
    # the stronger is joined
    three, a, b, y = np.arange(3), np.array([0, 1, 0]), np.array([1, 2, 2]), np.array([1, 1, 0])
    assert labelled_joins(three, a, b, y).tolist() == [True, False, False]
    assert labelled_joins(three, a, b, y, np.array([1.0, 5.0, 0.0])).tolist() == [False, True,
                                                                                   False]
    assert not labelled_joins(clusters, left, right, np.zeros(5)).any()


def test_join_labelled_is_a_rules_key_that_round_trips():
    from linkage.settings import Rules

    rules = Rules.from_dict({"comparisons": [{"type": "exact", "column": "name"}],
                             "blocking": [{"type": "keys", "keys": [["name"]]}],
                             "join_labelled": False})
    assert rules.join_labelled is False
    again = Rules.from_dict(yaml.safe_load(rules.to_yaml(explicit=True)))
    assert again.join_labelled is False
    assert Rules.from_dict({"comparisons": [{"type": "exact", "column": "name"}],
                            "blocking": [{"type": "keys", "keys": [["name"]]}]}).join_labelled
