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
    raw = raw.astype(np.int64, copy=False)
    # A cluster's id is the rank of its smallest member among all clusters' smallest. scipy
    # numbers the components as it meets them going up the rows, which is that order
    # already; checked (each row's label at most one above every label before it), not
    # assumed, and relabelled where it does not hold.
    seen = np.maximum.accumulate(raw)
    if raw[0] == 0 and bool((raw[1:] <= seen[:-1] + 1).all()):
        return raw
    del seen
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


def joining_weights(n: int, left: np.ndarray, right: np.ndarray, weight: np.ndarray,
                    query_left: np.ndarray, query_right: np.ndarray,
                    query_weight: np.ndarray) -> np.ndarray:
    """For each query pair of records, the highest threshold at which clustering puts the two
    in one component: its own weight, or higher where a chain of pairs joins them (the best
    chain's weakest pair). `left`, `right`, `weight`: the candidate pairs (weight +inf for a
    pair matched whatever its weight); records are rows 0..n-1.

    The chains that matter are those of the maximum spanning forest (computed by scipy); its
    edges are joined strongest first, each record remembering the weight at which its tree
    was attached (union by size, no path compression, so the trees stay shallow), and two
    records are joined at the weakest attachment on their paths to the common root."""
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import minimum_spanning_tree

    query_weight = np.asarray(query_weight, dtype=np.float64)
    out = query_weight.copy()
    w = np.asarray(weight, dtype=np.float64)
    if n < 2 or len(w) == 0 or len(out) == 0:
        return out
    finite = w[np.isfinite(w)]
    top = float(finite.max()) if len(finite) else 0.0
    # A spanning forest of least cost = of greatest weight; costs stay positive (zero is no
    # edge), +inf weights cost least of all, duplicate pairs keep their greatest weight.
    a = np.minimum(left, right).astype(np.int64)
    b = np.maximum(left, right).astype(np.int64)
    keep = a != b
    frame = pd.DataFrame({"a": a[keep], "b": b[keep], "w": w[keep]})
    frame = frame.groupby(["a", "b"], sort=False, as_index=False)["w"].max()
    cost = np.where(np.isposinf(frame["w"]), 0.5, (top - np.minimum(frame["w"], top)) + 1.0)
    graph = coo_matrix((cost, (frame["a"].to_numpy(), frame["b"].to_numpy())),
                       shape=(n, n)).tocsr()
    forest = minimum_spanning_tree(graph).tocoo()
    # The forest's edges with their exact weights (the cost only ranks them), strongest first.
    edges = pd.DataFrame({"a": forest.row.astype(np.int64), "b": forest.col.astype(np.int64)})
    edges = edges.merge(frame, on=["a", "b"], how="left")
    edges = edges.sort_values("w", ascending=False, kind="stable")
    fa, fb, fw = edges["a"].to_numpy(), edges["b"].to_numpy(), edges["w"].to_numpy()
    parent_list, size_list, attached_list = list(range(n)), [1] * n, [math.inf] * n

    def root(x: int) -> int:
        while parent_list[x] != x:
            x = parent_list[x]
        return x

    for x, y, joined in zip(fa.tolist(), fb.tolist(), fw.tolist(), strict=True):
        rx, ry = root(x), root(y)
        if rx == ry:
            continue
        if size_list[rx] < size_list[ry]:
            rx, ry = ry, rx
        parent_list[ry] = rx
        size_list[rx] += size_list[ry]
        attached_list[ry] = joined

    for k, (x, y) in enumerate(zip(np.asarray(query_left).tolist(),
                                   np.asarray(query_right).tolist(), strict=True)):
        if x == y or not (0 <= x < n and 0 <= y < n):
            continue
        weakest_x = {x: math.inf}  # each ancestor of x: the weakest attachment on the way
        node, weakest = x, math.inf
        while parent_list[node] != node:
            weakest = min(weakest, attached_list[node])
            node = parent_list[node]
            weakest_x[node] = weakest
        node, weakest = y, math.inf
        while node not in weakest_x:
            if parent_list[node] == node:
                break
            weakest = min(weakest, attached_list[node])
            node = parent_list[node]
        if node in weakest_x:
            joined = min(weakest, weakest_x[node])
            out[k] = max(out[k], joined)
    return out



def split_joining_weights(n: int, left: np.ndarray, right: np.ndarray, weight: np.ndarray,
                          query_left: np.ndarray, query_right: np.ndarray) -> np.ndarray:
    """For each query pair of records, the highest threshold at which the clusters, split at
    non-matches as `split_non_matches` splits them, hold the two together; -inf where none
    does (the split keeps them apart at every threshold). `left`, `right`, `weight`: every
    candidate pair, scored (log odds; +inf for a pair matched whatever its weight, joined
    first and never refused); records are rows 0..n-1.

    `split_non_matches` at a threshold t rebuilds a cluster as single linkage does, its
    matched pairs (weight >= t) joined strongest first, joining two groups only where the
    summed weight of all the pairs scored between them is positive. Which groups that joins
    does not depend on t: the sums run over every scored pair, and the pairs of weight >= t
    are the first ones taken. So one pass over all the pairs, strongest first, holds the
    clusters of every threshold at or above 0 (a cluster with no scored non-match inside is
    joined alike with or without the split), and a query pair is together from the weight at
    which its two groups join. Below 0 (a one-to-one link's threshold moved by the record
    prior) the split lets a sum reach the threshold; this pass asks for a positive sum
    there too."""
    query_left = np.asarray(query_left, dtype=np.int64)
    query_right = np.asarray(query_right, dtype=np.int64)
    out = np.full(len(query_left), -math.inf)
    w = np.asarray(weight, dtype=np.float64)
    if n < 2 or len(w) == 0 or len(out) == 0:
        return out
    a = np.asarray(left, dtype=np.int64)
    b = np.asarray(right, dtype=np.int64)
    # Two groups join only on a positive sum, which needs a positive pair between them: no
    # join crosses the components of the positive pairs, so the pairs across them (most
    # pairs, in a large table) are never summed, and neither are the components that hold
    # no queried record: both are left out.
    component = connected_components(n, a[w > 0], b[w > 0])
    queried = np.zeros(int(component.max()) + 1, dtype=bool)
    ok = (query_left >= 0) & (query_left < n) & (query_right >= 0) & (query_right < n)
    queried[component[query_left[ok]]] = True
    inside = (component[a] == component[b]) & queried[component[a]]
    a, b, w = a[inside], b[inside], w[inside]
    evidence = np.nan_to_num(w, nan=0.0, posinf=1e6, neginf=-1e6)
    groups = _EvidenceGroups(a.tolist(), b.tolist(), evidence.tolist())
    pending: dict[int, list[int]] = {}  # group -> the query pairs with one record in it
    for k, (x, y) in enumerate(zip(query_left.tolist(), query_right.tolist(), strict=True)):
        if x == y or not (0 <= x < n and 0 <= y < n):
            continue
        pending.setdefault(x, []).append(k)
        pending.setdefault(y, []).append(k)
    order = np.lexsort((b, a, -w))  # strongest first, ties in a fixed order
    for x, y, joined in zip(a[order].tolist(), b[order].tolist(), w[order].tolist(),
                            strict=True):
        merged = groups.join(x, y, math.isinf(joined) and joined > 0, 0.0)
        if merged is None:
            continue
        kept, absorbed = merged
        moved = pending.pop(absorbed, [])
        if moved:  # the smaller group's queries: together now, or waiting in the larger
            waiting = pending.setdefault(kept, [])
            for k in moved:
                if out[k] != -math.inf:
                    continue
                if groups.find(int(query_left[k])) == groups.find(int(query_right[k])):
                    out[k] = joined
                else:
                    waiting.append(k)
    return out


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

    def probability_sum(shift: float) -> float:
        z = np.clip(best + shift, -60.0, 60.0)
        return float(np.sum(1.0 / (1.0 + np.exp2(-z))))

    return prior_fixed_point(probability_sum, len(weight), int(has.sum()), n_small, prior)


def prior_fixed_point(probability_sum, pairs: int, with_candidates: int, n_small: int,
                      prior: float) -> dict:
    """`record_prior_shift`'s fixed point, given `probability_sum(shift)`: the sum, over the
    smaller table's records with a candidate (`with_candidates` of them), of their best
    candidate's match probability with the threshold moved by `shift`; `pairs`: the
    candidate pairs. (An engine that holds the best weights apart sums them itself.)"""
    k = pairs / with_candidates
    cap = max(math.log2(k), 0.0)
    ceiling = 1.0 - 1.0 / n_small
    shift, rho, iterations = 0.0, 0.0, 0
    while iterations < 200:  # rho and the move grow together, up to the cap: it converges
        iterations += 1
        rho = min(probability_sum(shift) / n_small, ceiling)
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
    splits = _split_records(labels, left, weight, pos[cross], piece, weak)
    for split, c in zip(splits, weak.tolist(), strict=True):
        split["max_degree"] = int(max_degree[c])
    return keep, splits


def _split_records(labels: np.ndarray, left: np.ndarray, weight: np.ndarray,
                   removed: np.ndarray, piece: np.ndarray, clusters: np.ndarray
                   ) -> list[dict]:
    """One record per cluster in `clusters` (labels of the components before a split): its
    rows, size, matched pairs, the pieces it became, the pairs `removed` from it and the
    strongest of those (None where none was)."""
    k = int(labels.max()) + 1
    edge_label = labels[left]
    size = np.bincount(labels, minlength=k)
    edges = np.bincount(edge_label, minlength=k)
    removed_label = edge_label[removed]
    cut = np.bincount(removed_label, minlength=k)
    strongest = np.full(k, -np.inf)
    np.maximum.at(strongest, removed_label, weight[removed])
    rows_of = np.argsort(labels, kind="stable")
    starts = np.searchsorted(labels[rows_of], clusters, side="left")
    ends = np.searchsorted(labels[rows_of], clusters, side="right")
    out = []
    for c, a, b in zip(clusters.tolist(), starts.tolist(), ends.tolist(), strict=True):
        rows = rows_of[a:b]
        out.append({"rows": rows, "size": int(size[c]), "pairs": int(edges[c]),
                    "pieces": len(np.unique(piece[rows])), "removed": int(cut[c]),
                    "strongest_removed": float(strongest[c]) if cut[c] else None})
    return out


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


# --- splitting clusters whose members score as non-matches ---------------------------------------

NON_MATCH_GUARD = "split_non_matches"  # the `guard` of its decisions in guards.parquet


def splits_non_matches(rules, scorer) -> bool:
    """Whether a run splits clusters whose members score as non-matches: the rules ask for
    it (`split_non_matches`) and the scorer's weights are log odds (not a rule sum's)."""
    return bool(rules.split_non_matches) and getattr(scorer, "kind", None) != "rule_sum"


def split_non_matches(n: int, left: np.ndarray, right: np.ndarray, weight: np.ndarray,
                      compared: tuple[np.ndarray, np.ndarray, np.ndarray],
                      unbreakable: np.ndarray | None = None, *, threshold: float = 0.0,
                      labels: np.ndarray | None = None) -> tuple[np.ndarray, list[dict]]:
    """Split the clusters that hold together only through links their other members' scores
    contradict. `left`, `right`, `weight`: the matched pairs; `compared`: every pair that was
    scored (left rows, right rows, match weights), with weights that are log odds of a match
    (0: as likely a match as not). Returns a mask over the matched pairs (True: kept) and one
    record per cluster split, as `split_weak_links` does.

    The rule. Connected components over the matched pairs join A and C when A matches B and B
    matches C, even where A and C were compared and scored as a clear non-match: one noisy
    record chains two people together. The pairs scored between the members of a cluster are
    evidence about the cluster as a whole: taken as independent evidence, as the model takes
    its fields, the log odds that two groups of records are one thing add up over all the
    pairs scored between them (a pair never compared adds nothing). So a cluster holding a
    pair that scores as a non-match (weight <= 0) is rebuilt as single linkage would build it,
    its matched pairs joined strongest first, except that two groups are joined only when the
    summed weight of all the pairs scored between them is positive: more evidence that they
    are one thing than that they are not (where the run's `threshold` is below 0, as a
    one-to-one link's threshold moved by the record prior can be, at least that threshold: a
    pair the run matches by itself is joined). A matched pair whose groups are not joined
    that way is removed. `unbreakable` pairs (matched by a stage: identical records) are
    joined first and never refused. A cluster none of whose scored pairs is a non-match is
    never touched, so only the clusters with such a pair reach the (per-pair,
    small-into-large) merge step.
    """
    left = np.asarray(left, dtype=np.int64)
    right = np.asarray(right, dtype=np.int64)
    weight = np.asarray(weight, dtype=float)
    keep = np.ones(len(left), dtype=bool)
    if n == 0 or len(left) == 0:
        return keep, []
    if labels is None:
        labels = connected_components(n, left, right)
    cl = np.asarray(compared[0], dtype=np.int64)
    cr = np.asarray(compared[1], dtype=np.int64)
    cw = np.nan_to_num(np.asarray(compared[2], dtype=float), nan=0.0, posinf=1e6, neginf=-1e6)
    inside = labels[cl] == labels[cr]
    cl, cr, cw = cl[inside], cr[inside], cw[inside]
    k = int(labels.max()) + 1
    doubt = np.zeros(k, dtype=bool)
    doubt[labels[cl[cw <= 0]]] = True
    if not doubt.any():
        return keep, []
    at = np.flatnonzero(doubt[labels[left]])  # the matched pairs of those clusters
    inner = doubt[labels[cl]]
    cl, cr, cw = cl[inner], cr[inner], cw[inner]
    strength = weight[at].copy()
    sure = (np.zeros(len(at), dtype=bool) if unbreakable is None
            else np.asarray(unbreakable, dtype=bool)[at])
    strength[sure] = np.inf
    first = np.lexsort((right[at], left[at], -strength))  # strongest first
    order = at[first]
    group = _join_by_evidence(cl.tolist(), cr.tolist(), cw.tolist(), left[order].tolist(),
                              right[order].tolist(), sure[first].tolist(),
                              min(0.0, float(threshold)))
    rows = np.fromiter(group.keys(), dtype=np.int64, count=len(group))
    piece = np.arange(n, dtype=np.int64)
    piece[rows] = np.fromiter(group.values(), dtype=np.int64, count=len(group))
    cross = piece[left[at]] != piece[right[at]]
    removed = at[cross]
    keep[removed] = False
    if len(removed) == 0:
        return keep, []
    negative = np.bincount(labels[cl[cw <= 0]], minlength=k)
    split = np.unique(labels[left[removed]])
    splits = _split_records(labels, left, weight, removed, piece, split)
    for record, c in zip(splits, split.tolist(), strict=True):
        record.update(guard=NON_MATCH_GUARD, non_matches=int(negative[c]))
    return keep, splits


class _EvidenceGroups:
    """Groups of records joined by evidence: the summed weight of the scored pairs (`cl`,
    `cr`, `cw`) between every two groups, kept up to date as groups join (union by size)."""

    def __init__(self, cl: list[int], cr: list[int], cw: list[float]):
        between: dict[int, dict[int, float]] = {}
        for a, b, x in zip(cl, cr, cw, strict=True):
            if a == b:
                continue
            row = between.setdefault(a, {})
            row[b] = row.get(b, 0.0) + x
            row = between.setdefault(b, {})
            row[a] = row.get(a, 0.0) + x
        self.between = between
        self.parent: dict[int, int] = {}
        self.size: dict[int, int] = {}

    def find(self, x: int) -> int:
        parent = self.parent
        parent.setdefault(x, x)
        root = x
        while parent[root] != root:
            root = parent[root]
        while parent[x] != root:
            parent[x], x = root, parent[x]
        return root

    def join(self, a: int, b: int, forced: bool, bar: float) -> tuple[int, int] | None:
        """Join the groups of `a` and `b` where the summed weight between them is above
        `bar` (a bar of 0 needs a positive sum, below 0 the sum may reach it) or the pair is
        `forced`: (the group kept, the group absorbed into it), or None."""
        ra, rb = self.find(a), self.find(b)
        if ra == rb:
            return None
        between, size = self.between, self.size
        na, nb = between.setdefault(ra, {}), between.setdefault(rb, {})
        total = na.get(rb, 0.0)
        if not forced and not (total > 0 or (bar < 0 and total >= bar)):
            return None
        if size.get(ra, 1) < size.get(rb, 1):
            ra, rb, na, nb = rb, ra, nb, na
        self.parent[rb] = ra
        size[ra] = size.get(ra, 1) + size.get(rb, 1)
        na.pop(rb, None)
        for x, v in nb.items():
            if x == ra:
                continue
            total = na.get(x, 0.0) + v
            na[x] = total
            other = between[x]
            del other[rb]
            other[ra] = total
        del between[rb]
        return ra, rb


def _join_by_evidence(cl: list[int], cr: list[int], cw: list[float], lo: list[int],
                      hi: list[int], sure: list[bool], bar: float) -> dict[int, int]:
    """Per row touched, its group's representative (the smallest row), after joining the
    matched pairs (`lo`, `hi`, strongest first) where the summed weight of the scored pairs
    (`cl`, `cr`, `cw`) between the two groups is above `bar` (or the pair is `sure`); a
    pair of groups with a bar of 0 needs a positive sum, below 0 the sum may reach it."""
    groups = _EvidenceGroups(cl, cr, cw)
    for a, b, forced in zip(lo, hi, sure, strict=True):
        groups.join(a, b, forced, bar)
    out: dict[int, int] = {}
    for x in groups.parent:
        out[x] = groups.find(x)
    smallest: dict[int, int] = {}
    for x, root in out.items():
        smallest[root] = min(smallest.get(root, x), x)
    return {x: smallest[root] for x, root in out.items()}


SPLIT_GUARD = "split_weak_links"  # the `guard` of its decisions in guards.parquet


def split_reason(split: dict) -> str:
    """Why a cluster was split, in words (the `detail` of its records in guards.parquet)."""
    size = split["size"]
    possible = size * (size - 1) // 2
    strongest = split["strongest_removed"]
    if split.get("guard") == NON_MATCH_GUARD:
        return (f"cluster of {size:,} records whose members were scored as non-matches: "
                f"{split['non_matches']:,} of the pairs compared between its members have "
                f"match weight <= 0; rebuilt from its {split['pairs']:,} matched pairs, "
                f"strongest first, joining two groups only where the summed weight of all the "
                f"pairs compared between them is positive; split into {split['pieces']:,} by "
                f"removing {split['removed']:,} matched pairs, none stronger than weight "
                f"{strongest:+.2f}")
    weakest = "" if strongest is None else f", none stronger than weight {strongest:+.2f}"
    return (f"cluster of {size:,} records held together by weak links: {split['pairs']:,} "
            f"matched pairs of {possible:,} possible, and no record matched with two thirds "
            f"of the others (most {split['max_degree']:,}); split into {split['pieces']:,} by "
            f"removing its {split['removed']:,} weakest matched pairs{weakest}")


def split_decisions(splits: list[dict], ids) -> list[dict]:
    """guards.parquet rows (guard, record_id, decision, detail): one per record of each
    cluster split."""
    if not splits:
        return []
    # Only the split records' ids become Python objects (all ten million of them took 0.8 s)
    at = np.concatenate([np.asarray(split["rows"], dtype=np.int64) for split in splits])
    taken = iter(np.asarray(ids.iloc[at] if isinstance(ids, pd.Series)
                            else np.asarray(ids, dtype=object)[at], dtype=object))
    out = []
    for split in splits:
        detail = split_reason(split)
        for _ in range(len(split["rows"])):
            value = next(taken)
            value = value.item() if isinstance(value, np.generic) else value
            out.append({"guard": split.get("guard", SPLIT_GUARD), "record_id": value,
                        "decision": "split",
                        "detail": detail})
    return out


def split_summary(splits: list[dict], component_sizes: np.ndarray) -> dict:
    """summary.json's `stages.cluster.split_weak_links` (of `splits`, the weak-link ones)."""
    splits = [s for s in splits if s.get("guard", SPLIT_GUARD) == SPLIT_GUARD]
    return {
        "clusters_split": len(splits),
        "records_in_them": int(sum(s["size"] for s in splits)),
        "pieces": int(sum(s["pieces"] for s in splits)),
        "pairs_removed": int(sum(s["removed"] for s in splits)),
        "largest_before_split": int(component_sizes.max()) if len(component_sizes) else 0,
    }


def non_match_summary(splits: list[dict]) -> dict:
    """summary.json's `stages.cluster.split_non_matches` (of `splits`, the ones
    `split_non_matches` made)."""
    splits = [s for s in splits if s.get("guard") == NON_MATCH_GUARD]
    return {
        "clusters_split": len(splits),
        "records_in_them": int(sum(s["size"] for s in splits)),
        "pieces": int(sum(s["pieces"] for s in splits)),
        "pairs_removed": int(sum(s["removed"] for s in splits)),
    }


# --- labelled pairs: the clusters agree with what a person said -----------------------------


def labelled_joins(clusters: np.ndarray, left: np.ndarray, right: np.ndarray,
                   label: np.ndarray, weight: np.ndarray | None = None) -> np.ndarray:
    """Which labelled matches to add as links so that the clusters agree with the labels: a
    pair a person labelled a match (`label` 1) whose records the clusters keep apart joins
    their two clusters (a label is a fact about its pair, whichever model the run kept: the
    model's score of the pair, and the split that cut a chain through it, are estimates),
    unless the join would put the two records of a labelled non-match (`label` 0) in one
    cluster. `clusters`: each record's cluster; `left`, `right`: the labelled pairs' rows;
    `weight`: their match weights, the strongest joined first (in the given order without).
    Returns a mask over the labelled pairs: True for each labelled match whose join is made
    (joins that the joins before already made are False)."""
    clusters = np.asarray(clusters, dtype=np.int64)
    left = np.asarray(left, dtype=np.int64)
    right = np.asarray(right, dtype=np.int64)
    label = np.asarray(label)
    joined = np.zeros(len(left), dtype=bool)
    matches = np.flatnonzero(label == 1)
    if len(matches) == 0:
        return joined
    if weight is not None:
        strength = np.nan_to_num(np.asarray(weight, dtype=float)[matches], nan=-np.inf)
        matches = matches[np.argsort(-strength, kind="stable")]
    apart = np.flatnonzero(label == 0)
    # Each cluster's clusters it may not join (a labelled non-match between them), kept for
    # the clusters as they join: a check is a set lookup, not a pass over the non-matches.
    forbidden: dict[int, set[int]] = {}
    for x, y in zip(clusters[left[apart]].tolist(), clusters[right[apart]].tolist(),
                    strict=True):
        if x != y:  # one already in one cluster forbids nothing more
            forbidden.setdefault(x, set()).add(y)
            forbidden.setdefault(y, set()).add(x)
    parent: dict[int, int] = {}

    def find(x: int) -> int:
        root = x
        while parent.get(root, root) != root:
            root = parent[root]
        while parent.get(x, x) != root:
            parent[x], x = root, parent[x]
        return root

    for k in matches.tolist():
        ra, rb = find(int(clusters[left[k]])), find(int(clusters[right[k]]))
        if ra == rb:
            continue
        if rb in forbidden.get(ra, ()):
            continue  # would put a labelled non-match in one cluster
        parent[rb] = ra
        moved = forbidden.pop(rb, set())
        for other in moved:  # rb's non-matches are ra's now
            forbidden[other].discard(rb)
            forbidden[other].add(ra)
        forbidden.setdefault(ra, set()).update(moved)
        joined[k] = True
    return joined
