"""A run on disk: the folder `Result.write`, `update` and `forget` write, read back.

- The records of a run (`run_records`, `input_table`, `named_input`): its records.parquet, or
  the input file named in summary.json, checked against its checksum.
- A run folder read back into the fields of a `Result` (`read_run`, which `Result.load` calls),
  the comparison matrix of its pairs.parquet (`comparison_matrix`) and its scorer.
- The checkpoints of `--resume` (`run_fingerprint`, `save_checkpoint`, `load_checkpoint`).
- The stable cluster ids and their lineage (`id_state`, `assign_ids`, `lineage_rows`, ...).

Cluster ids (the scheme):

- A cluster id is an int64 given once and never given again. A first run numbers its clusters
  0..k-1 (by their first record); later ids come from a counter kept in summary.json,
  `cluster_ids.next_cluster_id`, so an id freed by a merge or a forget is never reused. As ids
  only grow, the smaller id is the older one.
- After an update (or a forget) each old cluster has an heir: the new cluster holding most of
  its records (ties: the one holding its oldest record, the first in the run's record order).
  A new cluster takes the oldest id among the old clusters whose heir it is; a cluster that is
  nobody's heir (only new records, or the smaller part of a split) gets the next fresh id.

`lineage.parquet` records every change, one row per (step, event, old id, new id):

- `new`: a cluster of new records only (`old_cluster_id` empty);
- `absorb`: a cluster gained new records (`old_cluster_id` = `new_cluster_id`);
- `merge`: an old cluster joined an older one (its records now carry `new_cluster_id`);
- `split`: part of an old cluster left it (a must-not-link guard, say): the larger part kept the
  id, this part carries `new_cluster_id`;
- `forget`: records were forgotten (`new_cluster_id` empty when none of the cluster is left).

Columns: `step` (1 for the first update or forget of a run, then 2, ...), `event`,
`old_cluster_id`, `new_cluster_id`, `records` (how many) and `record_ids` (which). An old id
with no row in a step kept its id; each new id is an old id or has a `new` or `split` row.
"""

from __future__ import annotations

import copy
import hashlib
import io
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from linkage.errors import InputError
from linkage.io import checksum, read
from linkage.scoring import ComparisonMatrix
from linkage.settings import Rules
from linkage.version import __version__

if TYPE_CHECKING:
    from linkage.run.state import Table

EVENTS = ("new", "absorb", "merge", "split", "forget")
LINEAGE_COLUMNS = ["step", "event", "old_cluster_id", "new_cluster_id", "records", "record_ids"]


# --- the id scheme and the lineage -------------------------------------------------------------

def id_state(summary: dict, clusters: pd.DataFrame) -> tuple[int, int]:
    """(step, next fresh cluster id) of a run; a first run is step 0 and has used 0..max."""
    state = summary.get("cluster_ids") or {}
    used = int(clusters["cluster_id"].max()) + 1 if len(clusters) else 0
    return int(state.get("step", 0)), max(int(state.get("next_cluster_id", 0)), used)


def id_summary(step: int, next_id: int) -> dict:
    return {"scheme": "stable: never reused; the oldest id survives a merge", "step": step,
            "next_cluster_id": next_id}


def assign_ids(prior: np.ndarray, parts: np.ndarray, next_id: int) -> tuple[np.ndarray, int]:
    """The stable id of each part (a new cluster, labelled 0..k-1 in order of first row).

    `prior` is each row's old cluster id (-1 for a record new in this step). Each old id
    goes to its heir part (most of its records; ties: its oldest record); a part takes the
    smallest (oldest) id among those it inherits, else the next fresh id.
    """
    k = int(parts.max()) + 1 if len(parts) else 0
    stats = _part_stats(prior, parts)
    heirs = stats[stats["heir"]]
    inherited = heirs.groupby("part")["old"].min()
    part_id = np.full(k, -1, dtype=np.int64)
    part_id[inherited.index.to_numpy()] = inherited.to_numpy()
    fresh = np.flatnonzero(part_id < 0)  # ascending part label = order of first record
    part_id[fresh] = next_id + np.arange(len(fresh), dtype=np.int64)
    return part_id, next_id + len(fresh)


def _part_stats(prior: np.ndarray, parts: np.ndarray) -> pd.DataFrame:
    """One row per (old id, part) holding some of its records: size, first row, heir."""
    rows = np.flatnonzero(prior >= 0)
    frame = pd.DataFrame({"old": prior[rows], "part": parts[rows], "row": rows})
    stats = frame.groupby(["old", "part"], sort=True)["row"].agg(["size", "min"]).reset_index()
    stats = stats.rename(columns={"min": "first"})
    order = stats.sort_values(["old", "size", "first"], ascending=[True, False, True],
                              kind="stable")
    stats["heir"] = False
    stats.loc[order.drop_duplicates("old").index, "heir"] = True
    return stats


def lineage_rows(prior: np.ndarray, parts: np.ndarray, part_id: np.ndarray, ids: np.ndarray,
                 step: int) -> pd.DataFrame:
    """The lineage of one step from each row's old id, new part and the parts' stable ids."""
    rows = []
    stats = _part_stats(prior, parts)
    stats = stats[part_id[stats["part"].to_numpy()] != stats["old"].to_numpy()]
    text_ids = pd.Series(ids).astype(str).to_numpy()
    old_rows = np.flatnonzero(prior >= 0)
    width = len(part_id) + 1
    key = prior[old_rows] * width + parts[old_rows]
    moved = old_rows[np.isin(key, stats["old"].to_numpy() * width + stats["part"].to_numpy())]
    members = pd.Series(moved).groupby([prior[moved], parts[moved]]).agg(list)
    for old, part, heir in zip(stats["old"].tolist(), stats["part"].tolist(),
                               stats["heir"].tolist(), strict=True):
        rows.append((step, "merge" if heir else "split", old, int(part_id[part]),
                     text_ids[members[(old, part)]].tolist()))
    new_rows = np.flatnonzero(prior < 0)
    has_old = np.zeros(len(part_id), dtype=bool)
    has_old[parts[old_rows]] = True
    for part, group in pd.Series(new_rows).groupby(parts[new_rows], sort=True):
        target = int(part_id[part])
        event = "absorb" if has_old[part] else "new"
        rows.append((step, event, target if has_old[part] else None, target,
                     text_ids[group.to_numpy()].tolist()))
    return lineage_frame(rows)


def lineage_frame(rows: list[tuple]) -> pd.DataFrame:
    """Lineage rows (step, event, old id, new id, record ids) as the table, in a fixed order."""
    frame = pd.DataFrame({
        "step": pd.Series([r[0] for r in rows], dtype=np.int64),
        "event": pd.Series([r[1] for r in rows], dtype=object),
        "old_cluster_id": pd.Series([r[2] for r in rows], dtype="Int64"),
        "new_cluster_id": pd.Series([r[3] for r in rows], dtype="Int64"),
        "records": pd.Series([len(r[4]) for r in rows], dtype=np.int64),
        "record_ids": pd.Series([list(map(str, r[4])) for r in rows], dtype=object),
    })
    # Within a new id: where it came from (new, split, merge), then what it gained or lost.
    rank = frame["event"].map({e: k for k, e in enumerate(("new", "split", "merge", "absorb",
                                                           "forget"))})
    frame = frame.assign(_rank=rank).sort_values(
        ["step", "new_cluster_id", "_rank", "old_cluster_id"], na_position="last",
        kind="stable")
    return frame.drop(columns="_rank").reset_index(drop=True)


def concat_lineage(*frames: pd.DataFrame) -> pd.DataFrame:
    """Steps one after another (empty tables are left out: pandas warns about them)."""
    filled = [f for f in frames if len(f)]
    if not filled:
        return lineage_frame([])
    return pd.concat(filled, ignore_index=True)[LINEAGE_COLUMNS]


def read_lineage(run_dir: Path) -> pd.DataFrame:
    """A run's lineage so far (empty for a first run)."""
    path = Path(run_dir) / "lineage.parquet"
    if not path.is_file():
        return lineage_frame([])
    frame = pd.read_parquet(path)
    frame["record_ids"] = frame["record_ids"].map(lambda v: [str(x) for x in v])
    return frame.astype({"old_cluster_id": "Int64", "new_cluster_id": "Int64"})[LINEAGE_COLUMNS]


def write_lineage(frame: pd.DataFrame, path: Path) -> None:
    """lineage.parquet with a fixed schema (an empty table keeps its column types)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = pa.schema([("step", pa.int64()), ("event", pa.string()),
                        ("old_cluster_id", pa.int64()), ("new_cluster_id", pa.int64()),
                        ("records", pa.int64()), ("record_ids", pa.list_(pa.string()))])
    table = pa.Table.from_pandas(frame[LINEAGE_COLUMNS], schema=schema, preserve_index=False)
    pq.write_table(table, path, compression="zstd")


def event_counts(lineage: pd.DataFrame, step: int) -> dict[str, int]:
    mine = lineage[lineage["step"] == step]
    return {e: int((mine["event"] == e).sum()) for e in EVENTS}


# --- a run's records ---------------------------------------------------------------------------

def named_input(path: Path, summary: dict, run_dir: Path | None = None) -> pd.DataFrame:
    """The input file named in summary.json, read again and checked against its checksum."""
    inputs = summary["inputs"]
    where = run_dir or path
    if len(inputs) != 1:
        raise InputError(f"{where}: forget and update work on dedupe runs (one input table).")
    if not path.exists():
        raise InputError(
            f"{where}: the run's input {path} is not there any more, and it is needed to "
            "find records by value, to choose a new representative or to add records. "
            "Restore it, or forget by id without --only-record."
        )
    frame = read(path)
    if checksum(path, frame) != inputs[0]["checksum"]:
        raise InputError(f"{path}: changed since the run (its checksum differs). Forget from "
                         "a run of the current file.")
    if summary.get("id_column") == "row_id" and "row_id" not in frame.columns:
        frame.insert(0, "row_id", np.arange(len(frame), dtype=np.int64))  # as the run numbered
    return frame


def input_table(run_dir: Path, summary: dict) -> pd.DataFrame:
    """The records a run was made from: its own records.parquet when it has one (runs written
    by `update`), else the input file named in summary.json."""
    inputs = summary["inputs"]
    local = run_dir / "records.parquet"
    if local.is_file():
        frame = read(local)
        if len(inputs) == 1 and checksum(local, frame) != inputs[0]["checksum"]:
            raise InputError(f"{local}: changed since the run (its checksum differs from "
                             "summary.json). Restore it from the run that wrote it.")
        return frame
    return named_input(Path(inputs[0]["name"]) if inputs else run_dir, summary, run_dir)


def parquet_bytes(frame: pd.DataFrame) -> bytes:
    """The bytes `write_parquet` would write, so a checksum can be taken before writing."""
    buffer = io.BytesIO()
    frame.to_parquet(buffer, index=False, compression="zstd")
    return buffer.getvalue()


def sha256(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def run_records(run_dir: Path, summary: dict, clusters: pd.DataFrame, id_name: str,
                records: pd.DataFrame | None = None) -> pd.DataFrame:
    """The records of a run, one per row of clusters.parquet and in its order.

    They come from the run's records.parquet (written by `update`), else from the input file
    named in summary.json (checked against its checksum). Records the run no longer holds
    (forgotten ones) are left out, so an update never brings them back.
    """
    frame = input_table(Path(run_dir), summary) if records is None else records.copy()
    if id_name not in frame.columns:
        if id_name != "row_id":
            raise InputError(f"{run_dir}: the run's records have no id column `{id_name}`.")
        frame = frame.copy()
        frame.insert(0, id_name, np.arange(len(frame), dtype=np.int64))
    position = pd.Index(frame[id_name].astype(str)).get_indexer(clusters[id_name].astype(str))
    if (position < 0).any():
        missing = clusters[id_name].to_numpy()[position < 0][:3].tolist()
        raise InputError(f"{run_dir}: {int((position < 0).sum())} record(s) of the run are not "
                         f"in its input (e.g. {missing}). Pass the table the run was made from.")
    return frame.iloc[position].reset_index(drop=True)


# --- a run folder read back --------------------------------------------------------------------

def read_run(run_dir: str | Path) -> dict[str, Any]:
    """A run written by `Result.write` (the --out folder of `linkage dedupe` or `link`), read
    back as the fields of a `Result` (`Result.load` makes one of them): the tables, the rules,
    the summary and, when the run saved one, the trained scorer."""
    run_dir = Path(run_dir)
    if not (run_dir / "clusters.parquet").is_file():
        raise InputError(f"{run_dir}: not a run folder (no clusters.parquet). Pass the --out "
                         "folder of `linkage dedupe` or `linkage link`.")

    def table(name: str) -> pd.DataFrame | None:
        path = run_dir / name
        return pd.read_parquet(path) if path.is_file() else None

    rules = Rules.from_yaml(run_dir / "rules.yaml")
    scorer = rules.scoring
    pairs = table("pairs.parquet")
    if (run_dir / "model.json").is_file() and hasattr(type(scorer), "load"):
        scorer = type(scorer).load(run_dir / "model.json")
    elif pairs is not None and not hasattr(type(scorer), "load"):
        # A rule sum learns nothing; fitting on no pairs makes it ready to score and explain.
        # (A trained scorer without its model.json stays unfitted: there is nothing to load.)
        scorer = scorer.fit(comparison_matrix(pairs.iloc[:0], rules))
    summary = json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))
    timings: dict[str, float] = {}
    if (run_dir / "timings.json").is_file():
        timings = json.loads((run_dir / "timings.json").read_text(encoding="utf-8"))["seconds"]
    return dict(mode=summary["mode"], rules=rules, clusters=table("clusters.parquet"),
                pairs=pairs, deduplicated=table("deduplicated.parquet"),
                links=table("links.parquet"), golden=table("golden.parquet"),
                review=table("review.parquet"), guard_decisions=table("guards.parquet"),
                summary_data=summary, timings=timings, scorer=scorer,
                labels=(pd.read_csv(run_dir / "labels.csv", dtype=str, keep_default_na=False)
                        if (run_dir / "labels.csv").is_file() else None),
                records=table("report_records.parquet"))


def comparison_matrix(pairs: pd.DataFrame, rules) -> ComparisonMatrix:
    """The comparison matrix of pairs.parquet rows: each comparison's level, similarity and
    (where written) term frequency, in the rules' order."""
    names = [c.output_name for c in rules.comparisons]
    levels = np.column_stack([pairs[f"{n}_level"].to_numpy(np.int8) for n in names])
    sims = np.column_stack([pairs[f"{n}_similarity"].to_numpy(np.float32) for n in names])
    tf = {n: pairs[f"{n}_tf"].to_numpy(float) for n in names if f"{n}_tf" in pairs}
    return ComparisonMatrix(rules.comparisons, levels.reshape(len(pairs), len(names)),
                            sims.reshape(len(pairs), len(names)), tf)


def run_scorer(result):
    """The run's trained scorer (model.json), or a copy of the rules' rule sum to fit."""
    return result.scorer if is_fitted(result.scorer) else copy.deepcopy(result.rules.scoring)


def is_fitted(scorer) -> bool:
    """Whether a scorer holds learned state (attributes ending in `_`, as scikit-learn's)."""
    return any(k.endswith("_") and not k.startswith("_") for k in vars(scorer))


# --- checkpoints -------------------------------------------------------------------------------

def run_fingerprint(mode: str, tables: list[Table], rules: Rules, id_name: str) -> str:
    """What a checkpoint (the candidate pairs, the comparison matrix) must match: the rules,
    the inputs and this version of linkage. The threshold is left out: it decides nothing
    before scoring, so a run at another threshold (`linkage.Linker.cluster`, a `--resume`
    after editing it) starts after comparing."""
    settings = rules.to_dict()
    scoring = dict(settings.get("scoring") or {})
    scoring.pop("threshold", None)
    settings = {**settings, "scoring": scoring}
    settings.pop("one_to_one_threshold", None)  # how the threshold moves: scoring too
    text = "|".join([__version__, mode, id_name,
                     json.dumps(settings, sort_keys=True, ensure_ascii=False, default=str),
                     *(t.checksum for t in tables)])
    return hashlib.sha256(text.encode()).hexdigest()


def save_checkpoint(folder, stage: str, fingerprint: str, arrays: dict, meta: dict) -> None:
    """Write one stage's arrays (npz) and metadata (json), atomically, if checkpointing."""
    if folder is None:
        return
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    partial = folder / f".{stage}.partial.npz"
    with open(partial, "wb") as handle:
        np.savez(handle, **arrays)
    meta_text = json.dumps({"fingerprint": fingerprint, "meta": meta}, default=str)
    (folder / f".{stage}.partial.json").write_text(meta_text, encoding="utf-8")
    os.replace(folder / f".{stage}.partial.json", folder / f"{stage}.json")
    os.replace(partial, folder / f"{stage}.npz")  # last: its presence means complete


def load_checkpoint(folder, stage: str, fingerprint: str):
    """A finished stage's (arrays, meta) when it was written for the same run, else None."""
    if folder is None:
        return None
    folder = Path(folder)
    if not (folder / f"{stage}.npz").exists() or not (folder / f"{stage}.json").exists():
        return None
    saved = json.loads((folder / f"{stage}.json").read_text(encoding="utf-8"))
    if saved["fingerprint"] != fingerprint:
        return None  # another run's checkpoint: recompute and overwrite it
    with np.load(folder / f"{stage}.npz", allow_pickle=False) as data:
        arrays = {k: data[k] for k in data.files}
    return arrays, saved["meta"]
