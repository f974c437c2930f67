"""Clustering matched pairs: connected components, and one-to-one assignment for links."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd


def connected_components(n: int, left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """A cluster label per node 0..n-1. Labels are numbered by each cluster's smallest node,
    so the same graph always gets the same labels, whatever order its edges come in.
    """
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    # scipy here, not at import: `linkage validate` and runs refused at the door never cluster.
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components as _scipy_components

    graph = coo_matrix(
        (np.ones(len(left), dtype=np.int8), (np.asarray(left), np.asarray(right))), shape=(n, n)
    )
    _, raw = _scipy_components(graph, directed=False)
    # Relabel: a cluster's id is the rank of its smallest member among all clusters' smallest.
    first_member = np.full(raw.max() + 1, n, dtype=np.int64)
    np.minimum.at(first_member, raw, np.arange(n))
    rank = np.empty_like(first_member)
    rank[np.argsort(first_member, kind="stable")] = np.arange(len(first_member))
    return rank[raw]


def one_to_one(left: np.ndarray, right: np.ndarray, weight: np.ndarray) -> np.ndarray:
    """Greedy one-to-one matching: highest weight first, ties by (left, right).

    Returns a boolean mask over the input pairs. Each round accepts the pairs that are the
    best choice of both their nodes (the greedy order's next picks cannot conflict with them),
    then drops every pair touching an accepted node; vectorised per round.
    """
    frame = pd.DataFrame(
        {"l": np.asarray(left), "r": np.asarray(right), "w": np.asarray(weight, dtype=float)}
    )
    frame["pos"] = np.arange(len(frame))
    accepted = np.zeros(len(frame), dtype=bool)
    live = frame
    while len(live):
        ordered = live.sort_values(["w", "l", "r"], ascending=[False, True, True], kind="stable")
        best_l = ordered.drop_duplicates("l")["pos"]
        best_r = ordered.drop_duplicates("r")["pos"]
        mutual = np.intersect1d(best_l.to_numpy(), best_r.to_numpy())
        accepted[mutual] = True
        taken = frame.iloc[mutual]
        live = live[~live["l"].isin(taken["l"]) & ~live["r"].isin(taken["r"])]
    return accepted


def record_prior_shift(left: np.ndarray, right: np.ndarray, weight: np.ndarray, n_left: int,
                       n_right: int, prior: float) -> dict:
    """How far a one-to-one link's threshold goes down when a record's best candidate is
    weighed against the record's own chance of having a match, not against the pairwise prior.

    A match weight holds the pairwise prior: the share `prior` of all candidate pairs that
    match. Under one-to-one a record of the smaller table has at most one match, so the
    question for its best candidate is "this one, or none": the odds against it are those of
    the record having no match at all, 1 - rho, where rho is the share of the smaller table's
    records that have one. Bayes: the weight that decides moves by log2((1 - prior) / (1 -
    rho)). rho comes from the model itself, as a fixed point: the mean, over every record of
    the smaller table (one without candidates counts 0), of its best candidate's match
    probability with the moved threshold. The move is at most log2 of the candidates per record
    (the best of k candidates is at most k times likelier a match than one picked at random)
    and never below 0. `left`/`right` are the pairs' rows (right rows after the left ones).

    Returns {"shift", "rho", "candidates_per_record", "iterations"}."""
    left = np.asarray(left, dtype=np.int64)
    right = np.asarray(right, dtype=np.int64)
    weight = np.asarray(weight, dtype=np.float64)
    small = left if n_left <= n_right else right - n_left
    n_small = min(n_left, n_right)
    out = {"shift": 0.0, "rho": 0.0, "candidates_per_record": 0.0, "iterations": 0}
    if n_small < 2 or len(weight) == 0 or not 0.0 < prior < 1.0:
        return out
    best = np.full(n_small, -np.inf)
    np.maximum.at(best, small, weight)
    has = np.isfinite(best)
    best = best[has]
    k = len(weight) / int(has.sum())
    cap = max(math.log2(k), 0.0)
    ceiling = 1.0 - 1.0 / n_small
    shift, rho, iterations = 0.0, 0.0, 0
    while iterations < 200:  # rho and the move grow together, up to the cap: it converges
        iterations += 1
        z = np.clip(best + shift, -60.0, 60.0)
        rho = min(float(np.sum(1.0 / (1.0 + np.exp2(-z)))) / n_small, ceiling)
        moved = min(max(math.log2((1.0 - prior) / (1.0 - rho)), 0.0), cap)
        done = abs(moved - shift) < 1e-9
        shift = moved
        if done:
            break
    return {"shift": round(shift, 6), "rho": round(rho, 6),
            "candidates_per_record": round(k, 6), "iterations": iterations}


# --- splitting clusters held together by weak links --------------------------------------------

CHAIN_FACTOR = 10  # a cluster this many times larger than its pairs support is a chain


def _supported(size: np.ndarray, edges: np.ndarray, max_degree: np.ndarray) -> np.ndarray:
    """Whether a piece of `size` records, `edges` matched pairs among them and `max_degree`
    (the most pairs one member is matched in) holds together by itself (see
    `split_weak_links`)."""
    size = np.asarray(size, dtype=np.int64)
    edges = np.asarray(edges, dtype=np.int64)
    possible = size * (size - 1) // 2
    return ((size <= 2) | (3 * np.asarray(max_degree) >= 2 * (size - 1))
            | (2 * edges >= possible) | (size * size <= CHAIN_FACTOR * (size + 2 * edges)))


def split_weak_links(n: int, left: np.ndarray, right: np.ndarray, weight: np.ndarray,
                     unbreakable: np.ndarray | None = None, *,
                     labels: np.ndarray | None = None) -> tuple[np.ndarray, list[dict]]:
    """Split the clusters that only weak links hold together. Returns a mask over the matched
    pairs (True: kept) and one record per cluster split: its rows, size, matched pairs, the
    most pairs one member had, the pieces it ended in, the pairs removed and the strongest
    weight removed.

    The rule. The records of one real thing are versions of one another: one of them (the
    original the others were copied or retyped from) is matched with most of the rest, or
    many pairs among them match. A cluster of k records and m matched pairs is *supported*
    when any of these holds:

    - k <= 2;
    - a hub: some member is matched with at least two thirds of the other members;
    - dense: at least half of all k(k-1)/2 pairs among its members are matched;
    - not far above what its pairs support: k is at most 10 times 1 + 2m/k (the size of a
      cluster in which every member matches all others, for the m pairs it has).

    A cluster that is none of these is a chain: A looks like B and B like C, but A and C are
    not the same (households sharing a surname and an address, a common name, a shared
    phone); a chain of k records with k - 1 pairs is supported up to 30 records. Such a
    cluster is split where it is weakest, as single linkage would: its matched pairs are
    joined strongest first into a merge tree, and from the top, a piece that is not supported
    is cut at its weakest join, with every join inside it as weak (ties go together), until
    every piece is supported. The matched pairs between pieces are the ones removed; each is
    weaker than the pairs that hold its pieces together. `unbreakable` pairs (matched by a
    stage: identical records) are joined first and never cut. Nothing here is fitted to a data
    set: a star of any size (one original and its copies) and any set of records half of whose
    pairs match are never split, and neither are the sparse clusters of a citation table (55
    citations of one paper with 16% of their pairs matched are 5.7 times what their pairs
    support).

    Only unsupported clusters reach the (linear, per-edge) merge step; the test itself is
    vectorised over all clusters, so a run of a million records whose clusters are all
    supported costs a few array passes.
    """
    left = np.asarray(left, dtype=np.int64)
    right = np.asarray(right, dtype=np.int64)
    weight = np.asarray(weight, dtype=float)
    keep = np.ones(len(left), dtype=bool)
    if n == 0 or len(left) == 0:
        return keep, []
    if labels is None:  # else the caller's `connected_components(n, left, right)`
        labels = connected_components(n, left, right)
    k = int(labels.max()) + 1
    size = np.bincount(labels, minlength=k)
    edge_label = labels[left]
    edges = np.bincount(edge_label, minlength=k)
    degree = np.bincount(left, minlength=n) + np.bincount(right, minlength=n)
    max_degree = np.zeros(k, dtype=np.int64)
    np.maximum.at(max_degree, labels, degree)
    weak = np.flatnonzero(~_supported(size, edges, max_degree))
    if len(weak) == 0:
        return keep, []
    strength = weight.copy()
    if unbreakable is not None:
        strength[np.asarray(unbreakable, dtype=bool)] = np.inf
    in_weak = np.isin(edge_label, weak)
    pos = np.flatnonzero(in_weak)
    pos = pos[np.lexsort((right[pos], left[pos], -strength[pos]))]  # strongest first
    piece = _cut_merge_tree(n, left[pos].tolist(), right[pos].tolist(),
                            strength[pos].tolist())
    cross = piece[left[pos]] != piece[right[pos]]
    keep[pos[cross]] = False
    removed = pos[cross]
    splits = []
    rows_of = np.argsort(labels, kind="stable")
    starts = np.searchsorted(labels[rows_of], weak, side="left")
    ends = np.searchsorted(labels[rows_of], weak, side="right")
    removed_label = edge_label[removed]
    cut = np.bincount(removed_label, minlength=k)
    strongest = np.full(k, -np.inf)
    np.maximum.at(strongest, removed_label, weight[removed])
    for c, a, b in zip(weak.tolist(), starts.tolist(), ends.tolist(), strict=True):
        rows = rows_of[a:b]
        splits.append({"rows": rows, "size": int(size[c]), "pairs": int(edges[c]),
                       "max_degree": int(max_degree[c]),
                       "pieces": len(np.unique(piece[rows])),
                       "removed": int(cut[c]),
                       "strongest_removed": float(strongest[c]) if cut[c] else None})
    return keep, splits


def _cut_merge_tree(n: int, lo: list[int], hi: list[int], strength: list[float]) -> np.ndarray:
    """Per row, the piece it ends in (a row label; rows no edge touches keep their own).
    Builds the single-linkage merge tree of the edges (given strongest first), counting for
    every node its records, matched pairs and the largest degree of a member, then cuts it
    from the top until each piece is `_supported`."""
    parent: dict[int, int] = {}
    node_of: dict[int, int] = {}  # a set's root -> its current tree node
    degree: dict[int, int] = {}
    size: list[int] = []
    edges: list[int] = []
    top_degree: list[int] = []
    children: list[tuple[int, int] | None] = []
    joined_at: list[float] = []
    leaf_row: list[int] = []

    def find(x: int) -> int:
        root = x
        while parent[root] != root:
            root = parent[root]
        while parent[x] != root:
            parent[x], x = root, parent[x]
        return root

    def leaf(x: int) -> None:
        parent[x] = x
        degree[x] = 0
        node_of[x] = len(size)
        size.append(1)
        edges.append(0)
        top_degree.append(0)
        children.append(None)
        joined_at.append(np.inf)
        leaf_row.append(x)

    for a, b, w in zip(lo, hi, strength, strict=True):
        if a not in parent:
            leaf(a)
        if b not in parent:
            leaf(b)
        degree[a] += 1
        degree[b] += 1
        ra, rb = find(a), find(b)
        if ra == rb:
            node = node_of[ra]
            edges[node] += 1
            top_degree[node] = max(top_degree[node], degree[a], degree[b])
            continue
        na, nb = node_of[ra], node_of[rb]
        node = len(size)
        size.append(size[na] + size[nb])
        edges.append(edges[na] + edges[nb] + 1)
        top_degree.append(max(top_degree[na], top_degree[nb], degree[a], degree[b]))
        children.append((na, nb))
        joined_at.append(w)
        leaf_row.append(-1)
        if ra > rb:
            ra, rb = rb, ra
        parent[rb] = ra
        node_of[ra] = node
    supported = _supported(np.array(size), np.array(edges), np.array(top_degree))
    piece = np.arange(n, dtype=np.int64)
    roots = sorted({node_of[find(x)] for x in parent})
    for root in roots:
        stack = [(root, -np.inf)]
        while stack:
            node, cut = stack.pop()
            kids = children[node]
            if kids is None:
                continue
            if joined_at[node] > cut and (supported[node] or joined_at[node] == np.inf):
                rows = _leaves(node, children, leaf_row)
                piece[rows] = min(rows)
                continue
            # Cut here, and every join inside as weak as this one (ties go together).
            level = max(cut, joined_at[node])
            stack.extend((kid, level) for kid in kids)
    return piece


def _leaves(node: int, children: list, leaf_row: list[int]) -> list[int]:
    out, stack = [], [node]
    while stack:
        x = stack.pop()
        kids = children[x]
        if kids is None:
            out.append(leaf_row[x])
        else:
            stack.extend(kids)
    return out


SPLIT_GUARD = "split_weak_links"  # the `guard` of its decisions in guards.parquet


def split_reason(split: dict) -> str:
    """Why a cluster was split, in words (the `detail` of its records in guards.parquet)."""
    size = split["size"]
    possible = size * (size - 1) // 2
    strongest = split["strongest_removed"]
    weakest = "" if strongest is None else f", none stronger than weight {strongest:+.2f}"
    return (f"cluster of {size:,} records held together by weak links: {split['pairs']:,} "
            f"matched pairs of {possible:,} possible, and no record matched with two thirds "
            f"of the others (most {split['max_degree']:,}); split into {split['pieces']:,} by "
            f"removing its {split['removed']:,} weakest matched pairs{weakest}")


def split_decisions(splits: list[dict], ids) -> list[dict]:
    """guards.parquet rows (guard, record_id, decision, detail): one per record of each
    cluster split."""
    ids = np.asarray(ids, dtype=object)
    out = []
    for split in splits:
        detail = split_reason(split)
        for row in split["rows"].tolist():
            value = ids[row]
            value = value.item() if isinstance(value, np.generic) else value
            out.append({"guard": SPLIT_GUARD, "record_id": value, "decision": "split",
                        "detail": detail})
    return out


def split_summary(splits: list[dict], component_sizes: np.ndarray) -> dict:
    """summary.json's `stages.cluster.split_weak_links`."""
    return {
        "clusters_split": len(splits),
        "records_in_them": int(sum(s["size"] for s in splits)),
        "pieces": int(sum(s["pieces"] for s in splits)),
        "pairs_removed": int(sum(s["removed"] for s in splits)),
        "largest_before_split": int(component_sizes.max()) if len(component_sizes) else 0,
    }
