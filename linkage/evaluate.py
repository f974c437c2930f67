"""Evaluation against known truth: pairwise and B-cubed scores, exact clusters, blocking recall.

The truth is a mapping from record id to entity; it is only ever read here, never by a run.
Pair counts come from group sizes (sum of n(n-1)/2), so a table of millions of records is
scored without listing its pairs.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
import pandas as pd

from linkage.errors import InputError


@dataclass
class Scores:
    """Pairwise precision/recall/F1, B-cubed precision/recall/F1 and exact-cluster share."""

    precision: float
    recall: float
    f1: float
    bcubed_precision: float
    bcubed_recall: float
    bcubed_f1: float
    exact_clusters: float  # share of true entities reproduced exactly as one predicted cluster

    def as_dict(self) -> dict[str, float]:
        return {k: round(v, 6) for k, v in asdict(self).items()}


def _f1(p: float, r: float) -> float:
    return 2 * p * r / (p + r) if p + r else 0.0


def _pairs(sizes: np.ndarray) -> int:
    return int((sizes * (sizes - 1) // 2).sum())


def score_clusters(predicted: pd.Series, truth: pd.Series) -> Scores:
    """Score predicted cluster labels against true entity labels (both indexed by record id).

    Records missing from `truth` are left out; every truth record must be predicted.
    """
    frame = pd.DataFrame({"c": predicted}).join(pd.DataFrame({"e": truth}), how="inner")
    if len(frame) != len(truth):
        missing = len(truth) - len(frame)
        msg = (f"{missing} truth record(s) have no predicted cluster: `truth` names ids that "
               "`predicted` does not hold. Score the records of this run only, e.g. "
               "`truth[truth.index.isin(predicted.index)]`.")
        raise InputError(msg)
    joint = frame.groupby(["c", "e"]).size()
    by_c = frame.groupby("c").size()
    by_e = frame.groupby("e").size()
    tp, pred, act = _pairs(joint.to_numpy()), _pairs(by_c.to_numpy()), _pairs(by_e.to_numpy())
    precision = tp / pred if pred else 1.0
    recall = tp / act if act else 1.0
    # B-cubed: per record, the share of its cluster that is its entity, and vice versa.
    n = len(frame)
    shared = joint.to_numpy().astype(float)
    c_size = by_c.reindex(joint.index.get_level_values("c")).to_numpy()
    e_size = by_e.reindex(joint.index.get_level_values("e")).to_numpy()
    b_precision = float((shared * shared / c_size).sum() / n)
    b_recall = float((shared * shared / e_size).sum() / n)
    # An entity is reproduced exactly when its records form one whole cluster.
    exact = (shared == c_size) & (shared == e_size)
    return Scores(precision, recall, _f1(precision, recall), b_precision, b_recall,
                  _f1(b_precision, b_recall), float(exact.sum() / len(by_e)))


def blocking_report(pairs: pd.DataFrame, truth: pd.Series, blocker_names: list[str],
                    n_records: int) -> pd.DataFrame:
    """Per blocker and for the union: pairs proposed, true pairs proposed (recall), and the
    reduction ratio, from a run's pairs.parquet (`id_l`, `id_r`, `blockers` bit mask)."""
    entity_l = pairs["id_l"].map(truth)
    entity_r = pairs["id_r"].map(truth)
    true_pair = (entity_l == entity_r) & entity_l.notna()
    actual = _pairs(truth.value_counts().to_numpy())
    all_pairs = n_records * (n_records - 1) // 2
    rows = []
    masks = pairs["blockers"].to_numpy()
    for bit, name in enumerate(blocker_names):
        proposed = (masks & (1 << bit)) > 0
        rows.append({"blocker": name, "pairs": int(proposed.sum()),
                     "recall": float(true_pair[proposed].sum() / actual) if actual else 1.0,
                     "reduction_ratio": 1 - proposed.sum() / all_pairs if all_pairs else 0.0})
    rows.append({"blocker": "(union)", "pairs": len(pairs),
                 "recall": float(true_pair.sum() / actual) if actual else 1.0,
                 "reduction_ratio": 1 - len(pairs) / all_pairs if all_pairs else 0.0})
    return pd.DataFrame(rows)


def scores_by_threshold(pairs: pd.DataFrame, truth: pd.Series, thresholds: list[float]
                        ) -> pd.DataFrame:
    """Pairwise precision, recall and F1 of the scored pairs at each threshold (no clustering:
    what the threshold alone decides)."""
    same = (pairs["id_l"].map(truth) == pairs["id_r"].map(truth)).to_numpy()
    actual = _pairs(truth.value_counts().to_numpy())
    weight = pairs["match_weight"].to_numpy()
    rows = []
    for t in thresholds:
        chosen = weight >= t
        tp = int((chosen & same).sum())
        p = tp / chosen.sum() if chosen.sum() else 1.0
        r = tp / actual if actual else 1.0
        rows.append({"threshold": t, "pairs": int(chosen.sum()), "precision": p, "recall": r,
                     "f1": _f1(p, r)})
    return pd.DataFrame(rows)
