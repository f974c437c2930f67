"""Clustering matched pairs: connected components, and one-to-one assignment for links."""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components as _scipy_components


def connected_components(n: int, left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """A cluster label per node 0..n-1. Labels are numbered by each cluster's smallest node,
    so the same graph always gets the same labels, whatever order its edges come in.
    """
    if n == 0:
        return np.zeros(0, dtype=np.int64)
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
