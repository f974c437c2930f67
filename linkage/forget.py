"""Forgetting a person: find every copy of a record in a finished run and write a new run
without them. The original run is never touched.

The run folder keeps the cluster list, so "every copy" is the record's whole cluster. With
`only_record=True` just that record goes; when it was the cluster's representative, the keeper
policy picks the new one from the records that remain (which needs the input table: it is
re-read from the path recorded in summary.json and checked against its checksum).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from linkage.errors import InputError
from linkage.io import checksum, read, write_atomically, write_json, write_parquet


@dataclass
class ForgetPlan:
    """What `forget` found and will do."""

    matched_ids: list[Any]  # records selected by the request
    forgotten_ids: list[Any]  # every record that will be removed
    clusters: list[int]
    new_representatives: dict[int, Any]  # cluster -> new representative (only_record mode)

    def describe(self) -> str:
        lines = [f"forget: {len(self.matched_ids)} record(s) asked for, "
                 f"{len(self.forgotten_ids)} record(s) removed in {len(self.clusters)} "
                 "cluster(s)"]
        lines += [f"  removed {rid}" for rid in self.forgotten_ids]
        for cluster, rep in self.new_representatives.items():
            lines.append(f"  cluster {cluster}: new representative {rep}")
        return "\n".join(lines)


def _id_column(clusters: pd.DataFrame) -> str:
    return clusters.columns[1] if clusters.columns[0] == "source" else clusters.columns[0]


def _input_table(run_dir: Path, summary: dict) -> pd.DataFrame:
    inputs = summary["inputs"]
    if len(inputs) != 1:
        raise InputError(f"{run_dir}: forget works on dedupe runs (one input table).")
    path = Path(inputs[0]["name"])
    if not path.exists():
        raise InputError(
            f"{run_dir}: the run's input {path} is not there any more, and it is needed to "
            "find records by value or to choose a new representative. Restore it, or forget "
            "by id without --only-record."
        )
    frame = read(path)
    if checksum(path, frame) != inputs[0]["checksum"]:
        raise InputError(f"{path}: changed since the run (its checksum differs). Forget from "
                         "a run of the current file.")
    return frame


def plan_forget(
    run_dir: str | Path,
    record_id: Any = None,
    *,
    column: str | None = None,
    value: Any = None,
    only_record: bool = False,
) -> tuple[ForgetPlan, dict[str, Any]]:
    """Work out what forgetting removes; returns the plan and the loaded run."""
    from linkage.keep import choose_representatives, id_rank
    from linkage.settings import Rules

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
        records = _input_table(run_dir, summary)
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
    new_reps: dict[int, Any] = {}
    if only_record:
        records = records if records is not None else _input_table(run_dir, summary)
        rules = Rules.from_yaml(run_dir / "rules.yaml")
        remaining = clusters[in_touched & ~forget_mask]
        rows = records.set_index(records[id_col].astype(str)).loc[
            remaining[id_col].astype(str)].reset_index(drop=True)
        labels = remaining["cluster_id"].to_numpy()
        if len(labels):
            codes, uniques = pd.factorize(labels)
            keeper = choose_representatives(codes, id_rank(remaining[id_col]), rules.keep,
                                            rows)
            ids = remaining[id_col].to_numpy()
            for code, cluster in enumerate(uniques):
                members = np.flatnonzero(codes == code)
                new_reps[int(cluster)] = ids[keeper[members[0]]]
    plan = ForgetPlan(
        matched_ids=clusters.loc[selected, id_col].tolist(),
        forgotten_ids=clusters.loc[forget_mask, id_col].tolist(),
        clusters=[int(c) for c in touched],
        new_representatives=new_reps,
    )
    return plan, {"clusters": clusters, "summary": summary, "forget": forget_mask.to_numpy(),
                  "id_column": id_col, "records": records}


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
    kept = clusters[~forgotten].reset_index(drop=True)
    gone = set(map(str, plan.forgotten_ids))
    for cluster, rep in plan.new_representatives.items():
        members = kept["cluster_id"] == cluster
        is_rep = members & (kept[id_col].astype(str) == str(rep))
        kept.loc[members, "representative_id"] = rep
        kept.loc[members, "cluster_size"] = int(members.sum())
        kept.loc[is_rep, "action"] = "keep"
        kept.loc[is_rep, "reason"] = (f"kept for cluster of {int(members.sum())}: representative "
                                      "chosen again after a record was forgotten")
        kept.loc[members & ~is_rep, "action"] = "duplicate"
        kept.loc[members & ~is_rep, "reason"] = f"duplicate of {rep}"
    pairs = pd.read_parquet(run_dir / "pairs.parquet")
    pairs = pairs[~pairs["id_l"].astype(str).isin(gone) & ~pairs["id_r"].astype(str).isin(gone)]
    dedup = pd.read_parquet(run_dir / "deduplicated.parquet")
    dedup = dedup[~dedup[id_col].astype(str).isin(gone)]
    if plan.new_representatives:
        records = run["records"]
        new_ids = {str(r) for r in plan.new_representatives.values()}
        added = records[records[id_col].astype(str).isin(new_ids)]
        dedup = pd.concat([dedup, added], ignore_index=True)
    summary = dict(run["summary"])
    summary["forget"] = {
        "from_run": str(run_dir),
        "records_forgotten": len(plan.forgotten_ids),
        "clusters": plan.clusters,
        "new_representatives": {str(k): str(v) for k, v in plan.new_representatives.items()},
    }
    summary["actions"] = {a: int((kept["action"] == a).sum())
                          for a in ("keep", "duplicate", "preserved", "review")}

    def fill(folder: Path) -> None:
        write_parquet(kept, folder / "clusters.parquet")
        write_parquet(pairs.reset_index(drop=True), folder / "pairs.parquet")
        write_parquet(dedup.reset_index(drop=True), folder / "deduplicated.parquet")
        for name in ("rules.yaml", "model.json", "model.npz"):
            if (run_dir / name).exists():
                (folder / name).write_bytes((run_dir / name).read_bytes())
        write_json(summary, folder / "summary.json")

    write_atomically(out, fill)
    return plan
