"""Evaluation against known truth: pairwise and B-cubed scores, exact clusters, blocking recall;
for a run, every figure of `linkage evaluate` (`evaluate_run`, `evaluate_result`).

The truth is a mapping from record id to entity; it is only ever read here, never by a run.
Pair counts come from group sizes (sum of n(n-1)/2), so a table of millions of records is
scored without listing its pairs.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

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


def read_truth(path: Path, id_column: str, cluster_column: str, *, sep: str | None = None,
               encoding: str = "utf-8"):
    """The truth table as a Series entity by record id (both as text), checked: the columns
    exist, ids are unique, every id has an entity."""
    import pandas as pd

    from linkage._schema import did_you_mean
    from linkage.errors import InputError
    from linkage.io import read

    frame = read(path, sep=sep, encoding=encoding)
    columns = [str(c) for c in frame.columns]
    for option, column in (("--truth-id", id_column), ("--truth-cluster", cluster_column)):
        if column not in columns:
            raise InputError(f"{path}: column `{column}` (given as {option}) is not in the truth "
                             f"table. Its columns are: {', '.join(columns)}."
                             f"{did_you_mean(column, columns)} Fix {option}.")
    ids = frame[id_column]
    if ids.isna().any():
        raise InputError(f"{path}: `{id_column}` is empty in {int(ids.isna().sum())} row(s); "
                         "every truth row needs a record id. Fill them or drop those rows.")
    entity = frame[cluster_column]
    if entity.isna().any():
        raise InputError(f"{path}: `{cluster_column}` is empty in {int(entity.isna().sum())} "
                         "row(s); every truth row needs an entity. Fill them (a record alone "
                         "is an entity of its own), or drop those rows.")
    key = ids.astype(str)
    repeated = key[key.duplicated()]
    if len(repeated):
        examples = ", ".join(repr(v) for v in repeated.unique()[:3])
        raise InputError(f"{path}: `{id_column}` repeats {repeated.nunique()} id(s) (e.g. "
                         f"{examples}); the truth must name each record once.")
    return pd.Series(entity.astype(str).to_numpy(), index=key.to_numpy(), name="entity")


def evaluate_run(run_dir: str | Path, truth, thresholds: list[float] | None = None
                 ) -> dict[str, Any]:
    """Every figure of `linkage evaluate` for a run folder and a truth Series (entity by id),
    computed with the functions above. `thresholds`: match weights for the table by threshold;
    by default the run's threshold and two steps of 1 either side of it."""
    from linkage.result import Result

    run_dir = Path(run_dir)
    return evaluate_result(Result.load(run_dir), truth, thresholds, where=str(run_dir))


def evaluate_result(run, truth, thresholds: list[float] | None = None, *, where: str = "the run"
                    ) -> dict[str, Any]:
    """`evaluate_run` for a `Result` in memory (`where` names it in messages and as `run`)."""
    from linkage.blocking import blocker_names
    from linkage.errors import InputError

    run_dir = where
    id_column = run.summary_data.get("id_column", run.clusters.columns[0])
    ids = run.clusters[id_column].astype(str)
    if ids.duplicated().any():
        examples = ", ".join(repr(v) for v in ids[ids.duplicated()].unique()[:3])
        raise InputError(f"{run_dir}: ids repeat across the two tables of this link run (e.g. "
                         f"{examples}), so a truth of id → entity cannot say which record it "
                         "means. Give the tables distinct ids and run the link again.")
    unknown = truth.index[~truth.index.isin(ids)]
    if len(unknown):
        examples = ", ".join(repr(v) for v in unknown[:3])
        raise InputError(f"{len(unknown)} id(s) of the truth are not records of {run_dir} (e.g. "
                         f"{examples}). Check --truth-id, and that the truth belongs to the "
                         "input of this run.")
    predicted = run.clusters["cluster_id"].set_axis(ids.to_numpy())
    pairs = run.pairs.assign(id_l=run.pairs["id_l"].astype(str),
                             id_r=run.pairs["id_r"].astype(str))
    scores = score_clusters(predicted, truth)
    n = len(ids)
    blocking = blocking_report(pairs, truth, blocker_names(run.rules.blocking), n_records=n)
    out: dict[str, Any] = {"run": where, "mode": run.mode, "records": n,
                           "records_in_truth": len(truth), "scores": scores.as_dict()}
    if run.mode == "link":
        # A link compares left with right only: its pair space is n_left x n_right.
        left = int((run.clusters["source"] == "left").sum())
        space = left * (n - left)
        blocking["reduction_ratio"] = 1 - blocking["pairs"] / space if space else 0.0
        side = run.clusters["source"].set_axis(ids.to_numpy())
        per_side = truth.groupby([side.reindex(truth.index).to_numpy(), truth.to_numpy()]).size()
        out["true_pairs_within_one_side"] = int((per_side * (per_side - 1) // 2).sum())
    out["blocking"] = _rows(blocking)
    out["threshold"] = float(run.scorer.threshold)
    if thresholds is None:
        thresholds = [out["threshold"] + step for step in (-2.0, -1.0, 0.0, 1.0, 2.0)]
    out["by_threshold"] = _rows(scores_by_threshold(pairs, truth, thresholds))
    return out


def _rows(frame) -> list[dict[str, Any]]:
    return [{k: (round(v, 6) if isinstance(v, float) else v) for k, v in row.items()}
            for row in frame.to_dict(orient="records")]
