"""Forgetting a person: find every copy of a record in a finished run and write a new run
without them. The original run is never touched.

The run folder keeps the cluster list, so "every copy" is the record's whole cluster. With
`only_record=True` just that record goes; the rest of its cluster is joined again by its
matched pairs (pairs.parquet, `is_match`), so a cluster held together by the forgotten record
splits: the larger part keeps the cluster id (ties: the part with the oldest record), every
other part gets a fresh id, and the keeper policy picks each part's representative (which needs
the input table: the run's records.parquet, or the input file named in summary.json, checked
against its checksum). Guards are not run again: a pair a guard un-matched stays un-matched.

Cluster ids stay stable (see `linkage.run.disk`): the new run's lineage.parquet gets a
`forget` row per touched cluster and a `split` row per part that left one.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from linkage.clustering import connected_components
from linkage.errors import InputError
from linkage.io import read, write_atomically, write_json, write_parquet
from linkage.keep import choose_representatives, id_rank
from linkage.report import write_report
from linkage.result import Result
from linkage.run.disk import (
    assign_ids,
    concat_lineage,
    id_state,
    id_summary,
    input_table,
    lineage_frame,
    parquet_bytes,
    read_lineage,
    sha256,
    write_lineage,
)
from linkage.run.stages import stage_bit
from linkage.settings import Rules


@dataclass
class ForgetPlan:
    """What `forget` found and will do."""

    matched_ids: list[Any]  # records selected by the request
    forgotten_ids: list[Any]  # every record that will be removed
    clusters: list[int]
    new_representatives: dict[int, Any]  # cluster -> new representative (only_record mode)
    splits: dict[int, list[int]] = field(default_factory=dict)  # old cluster -> fresh ids

    def describe(self) -> str:
        lines = [f"forget: {len(self.matched_ids)} record(s) asked for, "
                 f"{len(self.forgotten_ids)} record(s) removed in {len(self.clusters)} "
                 "cluster(s)"]
        lines += [f"  removed {rid}" for rid in self.forgotten_ids]
        for cluster, parts in self.splits.items():
            lines.append(f"  cluster {cluster} split: the larger part keeps its id, the rest "
                         f"became cluster(s) {', '.join(map(str, parts))}")
        for cluster, rep in self.new_representatives.items():
            lines.append(f"  cluster {cluster}: new representative {rep}")
        return "\n".join(lines)


def _id_column(clusters: pd.DataFrame) -> str:
    return clusters.columns[1] if clusters.columns[0] == "source" else clusters.columns[0]


def _parts_after(clusters: pd.DataFrame, pairs: pd.DataFrame, id_col: str,
                 touched: np.ndarray, gone: np.ndarray, star_bits: int,
                 copies_bit: int) -> np.ndarray:
    """For each record of a touched cluster that stays, its part: the connected components
    of the matched pairs left among them (-1 for every other record).

    A star stage (`star_bits`: copies, exact, url) paired copies with their first record only.
    When that record goes, its copies stay joined (they are copies of one another), and a
    copy of the `copies` stage (equal on all that is compared) takes over its other pairs."""
    stay = np.flatnonzero(touched & ~gone)
    position = pd.Series(np.arange(len(stay)), index=clusters[id_col].astype(str).to_numpy()[stay])
    matched = pairs[pairs["is_match"].astype(bool)]
    ids_l, ids_r = matched["id_l"].astype(str), matched["id_r"].astype(str)
    mask = matched["blockers"].to_numpy(np.int64)
    centre_gone = ids_l.map(position).isna().to_numpy() & ids_r.isin(position.index).to_numpy()
    heirs = centre_gone & ((mask & copies_bit) > 0)
    heir = pd.Series(ids_r[heirs].to_numpy(), index=ids_l[heirs].to_numpy())
    heir = heir[~heir.index.duplicated()]  # the first copy
    left = ids_l.where(~ids_l.isin(heir.index), ids_l.map(heir)).map(position)
    right = ids_r.where(~ids_r.isin(heir.index), ids_r.map(heir)).map(position)
    star = centre_gone & ((mask & star_bits) > 0)
    centre = ids_l.to_numpy()[star]
    order = np.argsort(centre, kind="stable")
    centre, copies = centre[order], ids_r.map(position).to_numpy()[star][order]
    chained = centre[1:] == centre[:-1]
    left = pd.concat([left, pd.Series(copies[:-1][chained])], ignore_index=True)
    right = pd.concat([right, pd.Series(copies[1:][chained])], ignore_index=True)
    both = left.notna() & right.notna()
    labels = connected_components(len(stay), left[both].to_numpy(np.int64),
                                  right[both].to_numpy(np.int64))
    parts = np.full(len(clusters), -1, dtype=np.int64)
    parts[stay] = labels
    return parts


def plan_forget(
    run_dir: str | Path,
    record_id: Any = None,
    *,
    column: str | None = None,
    value: Any = None,
    only_record: bool = False,
) -> tuple[ForgetPlan, dict[str, Any]]:
    """Work out what forgetting removes; returns the plan and the loaded run."""
    run_dir = Path(run_dir)
    if not (run_dir / "clusters.parquet").exists():
        raise InputError(f"{run_dir}: not a run folder (no clusters.parquet).")
    clusters = pd.read_parquet(run_dir / "clusters.parquet")
    summary = json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))
    if summary["mode"] != "dedupe":
        raise InputError(f"{run_dir}: forget works on dedupe runs, not {summary['mode']} runs.")
    id_col = _id_column(clusters)
    text_ids = clusters[id_col].astype(str)
    records = None
    if column is not None:
        records = input_table(run_dir, summary)
        if column not in records.columns:
            raise InputError(f"column `{column}` is not in the run's input; its columns are "
                             f"{', '.join(map(str, records.columns))}.")
        hit_ids = records.loc[records[column].astype(str) == str(value), id_col].astype(str)
        selected = text_ids.isin(set(hit_ids))
    else:
        selected = text_ids == str(record_id)
    if not selected.any():
        what = f"{column} = {value!r}" if column else f"id {record_id!r}"
        raise InputError(f"no record with {what} in {run_dir}. Nothing to forget.")
    touched = sorted(clusters.loc[selected, "cluster_id"].unique().tolist())
    in_touched = clusters["cluster_id"].isin(touched)
    forget_mask = selected if only_record else in_touched
    step, next_id = id_state(summary, clusters)
    new_ids = clusters["cluster_id"].to_numpy(np.int64).copy()
    new_reps: dict[int, Any] = {}
    splits: dict[int, list[int]] = {}
    if only_record:
        records = records if records is not None else input_table(run_dir, summary)
        rules = Rules.from_yaml(run_dir / "rules.yaml")
        pairs = pd.read_parquet(run_dir / "pairs.parquet",
                                columns=["id_l", "id_r", "blockers", "is_match"])
        star_bits = sum(stage_bit(rules, name) for name in ("copies", "exact", "url"))
        parts = _parts_after(clusters, pairs, id_col, in_touched.to_numpy(),
                             forget_mask.to_numpy(), star_bits, stage_bit(rules, "copies"))
        stay = np.flatnonzero(parts >= 0)
        if len(stay):
            # A part is keyed by (old cluster, component): a component never spans two clusters.
            prior = new_ids[stay]
            _, dense = np.unique(np.column_stack([parts[stay], prior]), axis=0,
                                 return_inverse=True)
            dense = _first_row_order(dense.reshape(-1))
            part_id, next_id = assign_ids(prior, dense, next_id)
            new_ids[stay] = part_id[dense]
            remaining = clusters.iloc[stay]
            rows = records.set_index(records[id_col].astype(str)).loc[
                remaining[id_col].astype(str)].reset_index(drop=True)
            keeper = choose_representatives(dense, id_rank(remaining[id_col]), rules.keep, rows)
            ids = remaining[id_col].to_numpy()
            for part in range(len(part_id)):
                members = np.flatnonzero(dense == part)
                new_reps[int(part_id[part])] = ids[keeper[members[0]]]
                if part_id[part] != prior[members[0]]:
                    splits.setdefault(int(prior[members[0]]), []).append(int(part_id[part]))
    plan = ForgetPlan(
        matched_ids=clusters.loc[selected, id_col].tolist(),
        forgotten_ids=clusters.loc[forget_mask, id_col].tolist(),
        clusters=[int(c) for c in touched],
        new_representatives=dict(sorted(new_reps.items())),
        splits=splits,
    )
    return plan, {"clusters": clusters, "summary": summary, "forget": forget_mask.to_numpy(),
                  "id_column": id_col, "records": records, "new_ids": new_ids,
                  "step": step + 1, "next_id": next_id}


def _first_row_order(labels: np.ndarray) -> np.ndarray:
    """Labels renumbered 0..k-1 in order of each label's first row."""
    _, first = np.unique(labels, return_index=True)
    rank = np.empty(len(first), dtype=np.int64)
    rank[np.argsort(first, kind="stable")] = np.arange(len(first))
    return rank[labels]


def _lineage(plan: ForgetPlan, run: dict) -> pd.DataFrame:
    """This step's lineage: a `forget` row per touched cluster, a `split` row per new part."""
    clusters, id_col, step = run["clusters"], run["id_column"], run["step"]
    old_ids = clusters["cluster_id"].to_numpy(np.int64)
    text_ids = clusters[id_col].astype(str).to_numpy()
    gone, new_ids = run["forget"], run["new_ids"]
    rows = []
    for cluster in plan.clusters:
        members = old_ids == cluster
        left = members & ~gone
        rows.append((step, "forget", cluster, cluster if left.any() else None,
                     text_ids[members & gone].tolist()))
        for part in plan.splits.get(cluster, []):
            rows.append((step, "split", cluster, part,
                         text_ids[left & (new_ids == part)].tolist()))
    return lineage_frame(rows)


def forget(
    run_dir: str | Path,
    out: str | Path,
    record_id: Any = None,
    *,
    column: str | None = None,
    value: Any = None,
    only_record: bool = False,
) -> ForgetPlan:
    """Write a new run at `out` without the forgotten records; `run_dir` is left as it was."""
    run_dir, out = Path(run_dir), Path(out)
    if out.resolve() == run_dir.resolve():
        raise InputError("--out must be a new folder: forget never changes the original run.")
    plan, run = plan_forget(run_dir, record_id, column=column, value=value,
                            only_record=only_record)
    clusters, forgotten, id_col = run["clusters"], run["forget"], run["id_column"]
    clusters = clusters.assign(cluster_id=run["new_ids"])
    kept = clusters[~forgotten].reset_index(drop=True)
    gone = set(map(str, plan.forgotten_ids))
    if plan.new_representatives:
        kept = _represent(kept, plan.new_representatives, id_col, run_dir)
    pairs = pd.read_parquet(run_dir / "pairs.parquet")
    pairs = pairs[~pairs["id_l"].astype(str).isin(gone) & ~pairs["id_r"].astype(str).isin(gone)]
    dedup = pd.read_parquet(run_dir / "deduplicated.parquet")
    dedup = dedup[~dedup[id_col].astype(str).isin(gone)]
    if plan.new_representatives:
        dedup = _deduplicated_again(dedup, kept, run["records"], id_col, plan)
    summary = dict(run["summary"])
    summary["forget"] = {
        "from_run": str(run_dir),
        "records_forgotten": len(plan.forgotten_ids),
        "clusters": plan.clusters,
        "new_representatives": {str(k): str(v) for k, v in plan.new_representatives.items()},
        "splits": {str(k): v for k, v in plan.splits.items()},
    }
    summary["actions"] = {a: int((kept["action"] == a).sum())
                          for a in ("keep", "duplicate", "preserved", "review")}
    summary["cluster_ids"] = id_summary(run["step"], run["next_id"])
    lineage = concat_lineage(read_lineage(run_dir), _lineage(plan, run))
    records_bytes = None
    if (run_dir / "records.parquet").is_file():
        # A run that carries its records passes them on, without the forgotten ones.
        records = read(run_dir / "records.parquet")
        records = records[~records[id_col].astype(str).isin(gone)].reset_index(drop=True)
        records_bytes = parquet_bytes(records)
        summary["inputs"] = [{"name": str(out / "records.parquet"), "records": len(records),
                              "checksum": sha256(records_bytes)}]

    def fill(folder: Path) -> None:
        write_parquet(kept, folder / "clusters.parquet")
        write_parquet(pairs.reset_index(drop=True), folder / "pairs.parquet")
        write_parquet(dedup.reset_index(drop=True), folder / "deduplicated.parquet")
        for name in ("rules.yaml", "model.json", "model.npz"):
            if (run_dir / name).exists():
                (folder / name).write_bytes((run_dir / name).read_bytes())
        write_json(summary, folder / "summary.json")
        write_lineage(lineage, folder / "lineage.parquet")
        if records_bytes is not None:
            (folder / "records.parquet").write_bytes(records_bytes)
        # The old report names records in its tables; the new one is built without them.
        write_report(Result.load(folder), folder / "report.html")

    write_atomically(out, fill, what="forget", inputs=[run_dir])
    return plan


def _represent(kept: pd.DataFrame, reps: dict[int, Any], id_col: str,
               run_dir: Path) -> pd.DataFrame:
    """Size, action and reason of the records of the clusters that lost a record."""
    k = Rules.from_yaml(run_dir / "rules.yaml").keep.k
    kept = kept.copy()
    guarded = kept["action"].isin(["preserved", "review"])
    for cluster, rep in reps.items():
        members = kept["cluster_id"] == cluster
        size = int(members.sum())
        is_rep = members & (kept[id_col].astype(str) == str(rep))
        kept.loc[members, "representative_id"] = rep
        kept.loc[members, "cluster_size"] = size
        kept.loc[is_rep & ~guarded, "action"] = "keep"
        kept.loc[is_rep, "reason"] = (f"kept for cluster of {size}: representative chosen "
                                      "again after a record was forgotten")
        others = members & ~is_rep & ~guarded
        if k == 1:
            kept.loc[others, "action"] = "duplicate"
            kept.loc[others, "reason"] = f"duplicate of {rep}"
    return kept


def _deduplicated_again(dedup, kept, records, id_col, plan) -> pd.DataFrame:
    """deduplicated.parquet with the touched clusters' kept records, in clusters order."""
    touched = kept["cluster_id"].isin(list(plan.new_representatives))
    now_kept = kept.loc[touched & (kept["action"] != "duplicate"), id_col].astype(str)
    dedup = dedup[~dedup[id_col].astype(str).isin(
        set(kept.loc[touched, id_col].astype(str)))]
    added = records[records[id_col].astype(str).isin(set(now_kept))]
    dedup = pd.concat([dedup, added[list(dedup.columns)]], ignore_index=True)
    order = pd.Index(kept[id_col].astype(str)).get_indexer(dedup[id_col].astype(str))
    return dedup.iloc[np.argsort(order, kind="stable")]
