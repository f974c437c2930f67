"""Keeper policies: which record of each cluster stays. Ties are always broken by id."""

from __future__ import annotations

import numpy as np
import pandas as pd


def id_rank(ids: pd.Series) -> np.ndarray:
    """The position of each id in sorted order (numbers numerically, otherwise as text)."""
    values = ids.reset_index(drop=True)
    try:
        order = np.argsort(values.to_numpy(), kind="stable")
    except TypeError:  # mixed types: compare as text
        order = np.argsort(values.astype(str).to_numpy(), kind="stable")
    rank = np.empty(len(values), dtype=np.int64)
    rank[order] = np.arange(len(values))
    return rank


def completeness(frame: pd.DataFrame) -> np.ndarray:
    """Non-missing, non-blank values per record."""
    present = frame.notna()
    for column in frame.columns:
        if frame[column].dtype == object or pd.api.types.is_string_dtype(frame[column]):
            present[column] &= frame[column].astype(str).str.strip().ne("")
    return present.sum(axis=1).to_numpy()


def choose_representatives(
    clusters: np.ndarray, rank: np.ndarray, policy: str, records: pd.DataFrame
) -> np.ndarray:
    """For each record, the row number of its cluster's kept record."""
    n = len(clusters)
    if policy == "first":
        keys = (rank, clusters)
    elif policy == "most_complete":
        keys = (rank, -completeness(records), clusters)
    else:  # the rules schema allows no other value
        raise ValueError(f"unknown keeper policy {policy!r}")
    order = np.lexsort(keys)
    sorted_clusters = clusters[order]
    first = np.ones(n, dtype=bool)
    first[1:] = sorted_clusters[1:] != sorted_clusters[:-1]
    keeper_of_cluster = np.empty(clusters.max() + 1 if n else 0, dtype=np.int64)
    keeper_of_cluster[sorted_clusters[first]] = order[first]
    return keeper_of_cluster[clusters]
