"""Incremental linking with stable cluster ids: `update` adds records to a finished run
without comparing its old pairs again, and `match` looks records up without changing a run.

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
import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from linkage.errors import BudgetError, InputError, LinkageWarning, RulesError

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
    from linkage.forget import input_table

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


# --- update ------------------------------------------------------------------------------------

@dataclass
class Update:
    """What `update` produced: the new run, its records (old then new) and the lineage."""

    result: Any  # linkage.result.Result
    records: pd.DataFrame
    lineage: pd.DataFrame
    step: int
    records_parquet: bytes = b""  # records.parquet as written (summary.json holds its checksum)

    def events(self) -> dict[str, int]:
        """How many lineage rows of each event this step wrote."""
        return event_counts(self.lineage, self.step)

    def write(self, out: str | Path) -> Path:
        """Write a complete run folder at `out`: the output contract, records.parquet (what the
        next update starts from) and lineage.parquet; all files or none."""
        from linkage.io import write_atomically

        out = Path(out)
        data = self.records_parquet or parquet_bytes(self.records)
        self.result.summary_data["inputs"] = [{"name": str(out / "records.parquet"),
                                               "records": len(self.records),
                                               "checksum": sha256(data)}]

        def fill(folder: Path) -> None:
            self.result.write(folder)
            (folder / "records.parquet").write_bytes(data)
            write_lineage(self.lineage, folder / "lineage.parquet")

        return write_atomically(out, fill, what="update")

    def format_summary(self) -> str:
        info = self.result.summary_data["update"]
        counts = ", ".join(f"{e} {c:,}" for e, c in self.events().items())
        return "\n".join([
            self.result.format_summary(),
            f"  update step {self.step}: {info['records_added']:,} new record(s), "
            f"{info['new_pairs']:,} new pair(s) scored, {info['carried_pairs']:,} carried over",
            f"  lineage: {counts}",
        ])


def update(
    run_dir: str | Path,
    new_input: Any,
    *,
    out: str | Path | None = None,
    sep: str | None = None,
    encoding: str = "utf-8",
    old_records: pd.DataFrame | None = None,
) -> Update:
    """Add the records of `new_input` (a path or DataFrame) to the dedupe run in `run_dir`.

    Only pairs with a new record are blocked, compared and scored (with the run's trained
    scorer, never refitted); the old pairs come from pairs.parquet. Guards, clustering and the
    keeper then run over all pairs as in a full run, and cluster ids stay stable (see the
    module's docstring). `run_dir` is never changed; with `out` the new run is written there.
    `old_records`: the run's records, when its input file is not where summary.json says.
    """
    from linkage.result import Result

    start = time.perf_counter()
    run_dir = Path(run_dir)
    if out is not None and Path(out).resolve() == run_dir.resolve():
        raise InputError("--out must be a new folder: update never changes the original run.")
    _check_model(run_dir)
    old = Result.load(run_dir)
    _check_run(run_dir, old)
    id_name = old.summary_data.get("id_column") or "row_id"
    records = run_records(run_dir, old.summary_data, old.clusters, id_name, old_records)
    new = _new_records(new_input, records, id_name, sep, encoding)
    combined = _combine(records, new)
    data = parquet_bytes(combined)
    result, parts, counts = _run_update(old, combined, len(records), id_name, sha256(data),
                                time.perf_counter() - start)
    # Stable ids: each old cluster's heir inherits it, the rest get fresh ones.
    step, next_id = id_state(old.summary_data, old.clusters)
    step += 1
    prior = np.concatenate([old.clusters["cluster_id"].to_numpy(np.int64),
                            np.full(len(new), -1, dtype=np.int64)])
    part_id, next_id = assign_ids(prior, parts, next_id)
    _relabel(result, parts, part_id)
    rows = lineage_rows(prior, parts, part_id, combined[id_name].to_numpy(), step)
    result.summary_data["cluster_ids"] = id_summary(step, next_id)
    result.summary_data["update"] = {
        "from_run": str(run_dir),
        "new_input": new.attrs.get("linkage_source", "DataFrame"),
        "records_before": len(records),
        "records_added": len(new),
        **counts,
        "events": event_counts(rows, step),
    }
    result.__dict__["_linkage_records"] = combined  # for `match` without reading files
    done = Update(result, combined, concat_lineage(read_lineage(run_dir), rows), step, data)
    if out is not None:
        done.write(out)
    return done


def _check_run(run_dir: Path, old) -> None:
    if old.mode != "dedupe":
        raise InputError(f"{run_dir}: update adds records to dedupe runs, not {old.mode} runs.")
    if old.pairs is None:
        raise InputError(f"{run_dir}: the run has no pairs.parquet; update needs its scored "
                         "pairs. Run `linkage dedupe` again to make a complete run folder.")
    if old.rules.semantic is not None:
        raise InputError(f"{run_dir}: the rules have a `semantic:` stage, whose k-means clusters "
                         "change with every record; run `linkage dedupe` on all records instead.")


def _check_model(run_dir: Path) -> None:
    """A scorer that learns (Fellegi-Sunter, supervised) must come back from model.json."""
    from linkage.settings import Rules

    if not (run_dir / "clusters.parquet").is_file() or not (run_dir / "rules.yaml").is_file():
        raise InputError(f"{run_dir}: not a run folder (no clusters.parquet or rules.yaml). "
                         "Pass the --out folder of `linkage dedupe` or `linkage update`.")
    scorer = Rules.from_yaml(run_dir / "rules.yaml").scoring
    if hasattr(type(scorer), "load") and not (run_dir / "model.json").is_file():
        raise InputError(f"{run_dir}: the run has no model.json, so its trained `{scorer.kind}` "
                         "scorer is lost. Run `linkage dedupe` again; update scores new pairs "
                         "with the saved model and never trains it again.")


def _new_records(source, records: pd.DataFrame, id_name: str, sep, encoding) -> pd.DataFrame:
    """The new table, checked against the run's records: same columns, fresh unique ids."""
    from linkage._schema import did_you_mean
    from linkage.io import read

    frame = read(source, sep=sep, encoding=encoding).reset_index(drop=True)
    name = frame.attrs.get("linkage_source", "new input")
    if len(frame) == 0:
        raise InputError(f"{name}: the table has no records. Nothing to add.")
    if id_name == "row_id" and "row_id" not in frame.columns:
        start = int(pd.to_numeric(records["row_id"]).max()) + 1 if len(records) else 0
        frame.insert(0, "row_id", np.arange(start, start + len(frame), dtype=np.int64))
    have = [str(c) for c in frame.columns]
    missing = [c for c in records.columns if c not in have]
    if missing:
        hint = did_you_mean(missing[0], have)
        raise InputError(
            f"{name}: column(s) {', '.join(f'`{c}`' for c in missing)} of the run's records are "
            f"not in the new input. Its columns are: {', '.join(have)}.{hint} Add them (empty "
            "values are fine) so old and new records have the same columns.")
    extra = [c for c in have if c not in records.columns]
    if extra:
        warnings.warn(f"{name}: column(s) {', '.join(extra)} are not in the run's records; "
                      "they are left out.", LinkageWarning, stacklevel=3)
    frame = frame[list(records.columns)]
    _check_new_ids(frame, records, id_name, name)
    return _aligned(frame, records, name)


def _check_new_ids(frame: pd.DataFrame, records: pd.DataFrame, id_name: str, name: str) -> None:
    ids = frame[id_name]
    if ids.isna().any():
        rows = np.flatnonzero(ids.isna().to_numpy())[:3].tolist()
        raise InputError(f"{name}: id column `{id_name}` is missing in {int(ids.isna().sum())} "
                         f"record(s) (rows {rows}). Every new record needs an id.")
    text = ids.astype(str)
    repeated = text[text.duplicated(keep=False)]
    if len(repeated):
        examples = ", ".join(repr(v) for v in pd.unique(repeated.to_numpy())[:3])
        raise InputError(f"{name}: id column `{id_name}` repeats {repeated.nunique()} value(s) "
                         f"(e.g. {examples}). Ids must be unique: fix the new input.")
    taken = text[text.isin(set(records[id_name].astype(str)))]
    if len(taken):
        examples = ", ".join(repr(v) for v in taken.to_numpy()[:3])
        raise InputError(
            f"{name}: {len(taken)} id(s) in `{id_name}` are already in the run (e.g. "
            f"{examples}). A record is added once: give new records new ids, and leave out "
            "the ones the run already holds.")


def _aligned(frame: pd.DataFrame, records: pd.DataFrame, name: str) -> pd.DataFrame:
    """The new columns in the old columns' types, so old + new make one table."""
    out = frame.copy()
    for column in records.columns:
        if out[column].dtype == records[column].dtype:
            continue
        try:
            out[column] = out[column].astype(records[column].dtype)
        except (TypeError, ValueError) as err:
            raise InputError(f"{name}: column `{column}` cannot be read as "
                             f"{records[column].dtype} like the run's records ({err}).") from None
    return out


def _combine(records: pd.DataFrame, new: pd.DataFrame) -> pd.DataFrame:
    combined = pd.concat([records, new], ignore_index=True)
    combined.attrs = {}
    return combined


def _normalized(rules, combined: pd.DataFrame, ids: pd.Series):
    """The normalized work columns and per-step stats, as the full pipeline makes them."""
    from linkage.io import as_text
    from linkage.normalize._encoded import lost_values

    work: dict[str, np.ndarray] = {c: as_text(combined[c]) for c in rules.columns()}
    stats = {}
    for step in rules.normalize:
        before = step.joined(work)
        series = pd.Series(before, index=ids.to_numpy(), name=step.column, dtype=object)
        after = step.apply(series).to_numpy(dtype=object)
        work[step.target] = after
        changed = int(np.sum(pd.Series(before).fillna("\0").to_numpy()
                             != pd.Series(after).fillna("\0").to_numpy()))
        stats[step.target] = {"normalizer": step.type, "from": step.column, "changed": changed,
                              "missing": int(pd.isna(after).sum()),
                              **lost_values(before[pd.isna(after)])}
    return work, stats


def _run_update(old, combined, n_old, id_name, records_checksum, read_seconds):
    """Block and score the new pairs, then guard, cluster and keep over all pairs; returns
    the run (clusters labelled by first record, as a full run labels them), the labels and
    the pair counts (new, carried over, dropped: no blocker proposes them any more)."""
    from linkage.pipeline import compare_pairs
    from linkage.progress import Clock
    from linkage.run.state import Table

    rules, clock = old.rules, Clock()
    if rules.group_by:  # its new-pair blocking does not hold the group in its keys yet
        raise RulesError(f"{rules.source}: `group_by` is not supported by `linkage update` "
                         "yet. Run `linkage dedupe` on all the records instead.")
    clock.timings["read"] = round(read_seconds, 4)
    with clock.stage("normalize"):
        work, normalize_stats = _normalized(rules, combined, combined[id_name])
    with clock.stage("block"):
        fresh, exact_stats, rows = _new_pairs(rules, combined, id_name, work, n_old)
        carried = _carried_pairs(old, rules, combined, id_name, work, rows)
    with clock.stage("compare"):
        scorer = _scorer(old)
        new_matrix = compare_pairs(rules.comparisons, work, fresh.left, fresh.right,
                                   tf_columns=scorer.tf_columns)
    with clock.stage("score"):
        if not _fitted(scorer):  # a rule sum: its weights are the rules', nothing is learned
            scorer = scorer.fit(new_matrix)
        new_weight = scorer.match_weight(new_matrix)
        new_probability = scorer.match_probability(new_matrix)
        pairs, matrix, weight, probability = _all_pairs(
            rules, work, rows, len(combined), carried, fresh, new_matrix, new_weight,
            new_probability)
    table = Table(combined, "records.parquet", records_checksum)
    result, clusters = finish_run(rules, scorer, combined, id_name, table, pairs, matrix, weight,
                                  probability, normalize_stats, exact_stats, clock)
    counts = {"new_pairs": len(fresh), "carried_pairs": int(carried["keep"].sum()),
              "dropped_pairs": int((~carried["keep"]).sum())}
    return result, clusters, counts


def _scorer(old):
    """The run's trained scorer (model.json), or a copy of the rules' rule sum to fit."""
    return old.scorer if _fitted(old.scorer) else copy.deepcopy(old.rules.scoring)


def _fitted(scorer) -> bool:
    """Whether a scorer holds learned state (attributes ending in `_`, as scikit-learn's)."""
    return any(k.endswith("_") and not k.startswith("_") for k in vars(scorer))


def _new_pairs(rules, combined, id_name, work, n_old):
    """Candidate pairs with a new record, from the blockers and the exact/url stages."""
    from linkage.pipeline import stage_groups, stage_stats, union_pairs
    from linkage.run.stages import STAGE_BITS, stage_bit

    n = len(combined)
    stars, rows = stage_groups(rules, combined, id_name, work)
    pairs = block_new(rules, work, n_old, rows)
    for name in STAGE_BITS:
        if name in stars:
            first, copy_ = stars[name]
            fresh = copy_ >= n_old  # the first member is never newer than its copy
            pairs = union_pairs(pairs, first[fresh], copy_[fresh], stage_bit(rules, name), n)
            pairs.proposed[name] = int(fresh.sum())
    return pairs, stage_stats(stars), rows


def block_new(rules, work: dict[str, np.ndarray], n_old: int, rows: np.ndarray | None = None):
    """Candidate pairs (i < j) in which j is a new record (row >= `n_old`), each with the bit
    mask of its blockers: the pairs a full run would add, without the old ones.

    Key blockers join the new records' keys with everyone's (a block above `max_block_size` is
    sub-blocked as a full run does it, and its neighbour pairs with a new record kept); other
    blockers propose over all records and keep the new pairs.
    `rows`: the records that may be blocked (the exact stage's representatives).
    """
    from linkage.blocking import BlockingInput, CandidatePairs, blocker_names
    from linkage.blocking._union import oversized_message

    n = len(next(iter(work.values()))) if work else 0
    rows = np.arange(n, dtype=np.int64) if rows is None else np.asarray(rows, dtype=np.int64)
    data = BlockingInput({c: v[rows] for c, v in work.items()}, None)
    is_new = rows >= n_old
    names = blocker_names(rules.blocking)
    estimated = {name: b.estimate_new(data, is_new, rules.max_block_size)
                 for name, b in zip(names, rules.blocking, strict=True)}
    _check_budget(estimated, rules.max_pairs)
    codes, masks, proposed, skipped = [], [], {}, []
    for bit, (name, blocker) in enumerate(zip(names, rules.blocking, strict=True)):
        proposal = blocker.propose_new(data, is_new, rules.max_block_size)
        a, b, gone = proposal.left, proposal.right, proposal.skipped
        for s in gone:
            s.blocker = name
            warnings.warn(oversized_message(s, rules.max_block_size), LinkageWarning,
                          stacklevel=2)
        skipped.extend(gone)
        a, b = rows[a], rows[b]
        code = np.unique(np.minimum(a, b) * n + np.maximum(a, b))
        proposed[name] = len(code)
        codes.append(code)
        masks.append(np.full(len(code), 1 << bit, dtype=np.int64))
    code = np.concatenate(codes) if codes else np.zeros(0, np.int64)
    mask = np.concatenate(masks) if masks else np.zeros(0, np.int64)
    order = np.argsort(code, kind="stable")
    code, mask = code[order], mask[order]
    if len(code):
        starts = np.concatenate([[0], np.flatnonzero(np.diff(code)) + 1])
        code, mask = code[starts], np.bitwise_or.reduceat(mask, starts)
    return CandidatePairs(code // max(n, 1), code % max(n, 1), mask, estimated, proposed,
                          skipped)


def _check_budget(estimated: dict[str, int], max_pairs: int) -> None:
    total = sum(estimated.values())
    if total > max_pairs:
        worst = max(estimated, key=lambda k: estimated[k])
        raise BudgetError(
            f"blocking the new records would propose about {total:,} candidate pairs, above "
            f"`max_pairs` = {max_pairs:,}; most come from blocker `{worst}` "
            f"({estimated[worst]:,}). Tighten its keys, or raise `max_pairs` in the rules.")


def _carried_pairs(old, rules, combined, id_name, work, rows) -> dict:
    """The old pairs as row numbers, each with the blocker bits a full run over all records
    would give it: an old pair keeps only the blockers that still propose it (a sorted
    neighbourhood's window where new records now sit between two old ones, a block grown past
    `max_block_size`). Checking costs key equality and sort positions, no comparison."""
    from linkage.explain import _matrix

    n = len(combined)
    position = pd.Index(combined[id_name].astype(str))
    left = position.get_indexer(old.pairs["id_l"].astype(str))
    right = position.get_indexer(old.pairs["id_r"].astype(str))
    if (left < 0).any() or (right < 0).any():
        raise InputError("the run's pairs.parquet names records that are not in its "
                         "clusters.parquet; the run folder is damaged. Run `linkage dedupe` "
                         "again.")
    lo, hi = np.minimum(left, right).astype(np.int64), np.maximum(left, right).astype(np.int64)
    mask = still_proposed(rules, work, rows, lo, hi, old.pairs["blockers"].to_numpy(np.int64), n)
    keep = mask != 0
    matrix = _matrix(old.pairs, rules)
    return {"lo": lo[keep], "hi": hi[keep], "mask": mask[keep], "keep": keep,
            "levels": matrix.levels[keep], "similarities": matrix.similarities[keep],
            "tf": {k: v[keep] for k, v in matrix.term_frequencies.items()},
            "weight": old.pairs["match_weight"].to_numpy(np.float64)[keep],
            "probability": old.pairs["match_probability"].to_numpy(np.float64)[keep]}


def still_proposed(rules, work: dict[str, np.ndarray], rows: np.ndarray | None,
                   lo: np.ndarray, hi: np.ndarray, mask: np.ndarray, n: int) -> np.ndarray:
    """The blocker bits of old pairs (lo, hi) over all `n` records now
    (`Blocker.still_proposes`); the bits of the exact/url stages and of blockers that cannot
    tell without proposing again are kept."""
    from linkage.blocking import BlockingInput

    rows = np.arange(n, dtype=np.int64) if rows is None else np.asarray(rows, dtype=np.int64)
    data = BlockingInput({c: v[rows] for c, v in work.items()}, None)
    position = np.full(n, -1, dtype=np.int64)  # each record's row in `data`
    position[rows] = np.arange(len(rows))
    left, right = position[lo], position[hi]
    both = (left >= 0) & (right >= 0)  # a record that is an exact copy now is not blocked
    out = mask.copy()
    for bit, blocker in enumerate(rules.blocking):
        hit = blocker.still_proposes(data, left, right, rules.max_block_size)
        if hit is None:
            continue
        out = np.where(hit & both, out | (1 << bit), out & ~(1 << bit))
    return out


def _all_pairs(rules, work, rows, n, carried, fresh, new_matrix, new_weight, new_probability):
    """The carried old pairs and the new ones in one (left, right)-sorted set, as a full run
    over all records holds them, with its blockers' estimates and proposed counts."""
    from linkage.blocking import CandidatePairs, blocker_names
    from linkage.blocking._blockers import BlockingInput
    from linkage.scoring import ComparisonMatrix

    code = np.concatenate([carried["lo"] * n + carried["hi"], fresh.left * n + fresh.right])
    order = np.argsort(code, kind="stable")
    tf_names = sorted(set(carried["tf"]) | set(new_matrix.term_frequencies))

    def both(a, b):
        return np.concatenate([a, b])[order]

    matrix = ComparisonMatrix(
        rules.comparisons, both(carried["levels"], new_matrix.levels),
        both(carried["similarities"], new_matrix.similarities),
        {name: both(carried["tf"].get(name, np.full(len(carried["lo"]), np.nan)),
                    new_matrix.term_frequencies.get(name, np.full(len(fresh), np.nan)))
         for name in tf_names})
    mask = both(carried["mask"], fresh.mask)
    rows = np.arange(n) if rows is None else rows
    data = BlockingInput({c: v[rows] for c, v in work.items()}, None)
    names = blocker_names(rules.blocking)
    estimated = {name: int(b.estimate(data, rules.max_block_size))
                 for name, b in zip(names, rules.blocking, strict=True)}
    proposed = {name: int(((mask >> bit) & 1).sum()) for bit, name in enumerate(names)}
    pairs = CandidatePairs(code[order] // n, code[order] % n, mask, estimated, proposed,
                           fresh.skipped)
    weight = both(carried["weight"], new_weight)
    probability = both(carried["probability"], new_probability)
    return pairs, matrix, weight, probability


def finish_run(rules, scorer, combined, id_name, table, pairs, matrix, weight, probability,
               normalize_stats, exact_stats, clock):
    """Guard, cluster, keep and the outputs over scored pairs: the tail every engine shares
    (`linkage.run.finish`), for a dedupe run. Returns the Result and the cluster labels."""
    from linkage.run.finish import Tail, finish
    from linkage.run.state import RunState

    n = len(combined)
    id_column = None if id_name == "row_id" else id_name
    state = RunState("dedupe", [table], rules, id_column, clock, [combined], id_name, [n],
                     np.zeros(n, dtype=np.int8), combined[id_name], combined,
                     normalize_stats=normalize_stats, exact_stats=exact_stats, pairs=pairs,
                     scorer=scorer, weight=weight, probability=probability, matrix=matrix,
                     tally=matrix)
    result = finish(state, Tail(), sample_records=False)
    return result, result.clusters["cluster_id"].to_numpy(dtype=np.int64)


def _relabel(result, clusters: np.ndarray, part_id: np.ndarray) -> None:
    """Put the stable ids in place of the run's labels (numbered by first record)."""
    result.clusters["cluster_id"] = part_id[clusters]
    if result.review is not None:
        result.review["cluster_id"] = part_id[result.review["cluster_id"].to_numpy(np.int64)]
    if result.golden is not None:
        golden = result.golden.assign(
            cluster_id=part_id[result.golden["cluster_id"].to_numpy(np.int64)])
        result.golden = golden.sort_values("cluster_id", kind="stable").reset_index(drop=True)


# --- match: lookup without committing ----------------------------------------------------------

MATCH_COLUMNS = ["input_row", "rank", "cluster_id", "representative_id", "best_record_id",
                 "match_weight", "match_probability", "above_threshold"]


def match(result, records, *, top: int = 3) -> pd.DataFrame:
    """The best `top` candidate clusters of each record in `records` (a DataFrame with the
    run's input columns, one dict, or a list of dicts), without changing the run.

    Each record is normalized, blocked against the run's records with the run's blockers,
    compared and scored with the run's scorer. One row per (input row, cluster), best first:
    `input_row` (position in `records`), `rank`, `cluster_id`, `representative_id`,
    `best_record_id` (the cluster's record that scored best), `match_weight`,
    `match_probability` and `above_threshold`. A record with no candidate has no rows.
    The block indexes are built on the first call and kept on `result`, so a lookup of one
    record costs a few milliseconds.
    """
    if not (isinstance(top, int) and not isinstance(top, bool) and top >= 1):
        raise InputError(f"`top` must be a whole number of at least 1. Got {top!r} instead.")
    index = _match_index(result)
    return index.lookup(_query_frame(records, index), top)


def _query_frame(records, index) -> pd.DataFrame:
    if isinstance(records, dict):
        records = [records]
    if isinstance(records, list):
        records = pd.DataFrame.from_records(records)
    if not isinstance(records, pd.DataFrame):
        from linkage.io import read

        records = read(records)
    missing = [c for c in index.input_columns if c not in records.columns]
    if missing:
        raise InputError(
            f"records to match: column(s) {', '.join(f'`{c}`' for c in missing)} are missing; "
            f"the run's rules read {', '.join(index.input_columns)}. Add them (None where "
            "unknown).")
    return records.reset_index(drop=True)


def _match_index(result) -> _MatchIndex:
    """The cached index of `result`, built again if its clusters were replaced."""
    cached = result.__dict__.get("_linkage_match_index")
    if cached is not None and cached.clusters is result.clusters:
        return cached
    index = _MatchIndex(result, *_records_for_match(result))
    result.__dict__["_linkage_match_index"] = index
    return index


def _records_for_match(result) -> tuple[pd.DataFrame, np.ndarray]:
    """The run's records and their rows in `result.clusters`: kept by `update`, else read
    from the input file (checksum checked); for a run of a DataFrame, whose records are not
    kept, its kept records (deduplicated) stand in, with a warning."""
    if result.mode != "dedupe":
        raise InputError(f"match looks records up in dedupe runs, not {result.mode} runs.")
    kept = result.__dict__.get("_linkage_records")
    if kept is not None:
        return kept, np.arange(len(kept))
    id_name = result.summary_data.get("id_column") or "row_id"
    inputs = result.summary_data.get("inputs", [])
    if len(inputs) == 1 and Path(inputs[0]["name"]).is_file():
        from linkage.forget import named_input

        path = Path(inputs[0]["name"])
        records = run_records(path, result.summary_data, result.clusters, id_name,
                              named_input(path, result.summary_data))
        return records, np.arange(len(records))
    if result.deduplicated is None:
        raise InputError("this run's records are not available to match against.")
    warnings.warn(
        "the run's input is not a file that can be read again, so records are matched "
        f"against its {len(result.deduplicated):,} kept records only. Load the run from its "
        "folder (Result.load) with its input in place to match against every record.",
        LinkageWarning, stacklevel=4)
    rows = pd.Index(result.clusters[id_name].astype(str)).get_indexer(
        result.deduplicated[id_name].astype(str))
    return result.deduplicated, rows


class _MatchIndex:
    """What a lookup needs from a run, computed once: normalized values, each key blocker's
    blocks, each sorted neighbourhood's order, the exact stage's row hashes, and the cluster
    and representative of every record."""

    def __init__(self, result, records: pd.DataFrame, rows: np.ndarray):
        from linkage.blocking import KeyBlocker, SortedNeighbourhood

        self.clusters = result.clusters
        self.rules = rules = result.rules
        self.scorer = _scorer(result)
        if not _fitted(self.scorer):
            self.scorer = self.scorer.fit(_empty_matrix(rules))
        produced = {s.output for s in rules.normalize if s.output}
        wanted = [c for s in rules.normalize for c in s.inputs]
        for blocker in rules.blocking:
            wanted += list(blocker.columns)
        wanted += [c for comparison in rules.comparisons for c in comparison.columns]
        self.input_columns = [c for c in dict.fromkeys(wanted) if c not in produced]
        id_name = result.summary_data.get("id_column") or "row_id"
        self.record_ids = records[id_name].to_numpy()
        self.cluster_ids = result.clusters["cluster_id"].to_numpy(np.int64)[rows]
        self.representatives = result.clusters["representative_id"].to_numpy()[rows]
        self.work = self.normalize(records)
        self.keys, self.sorted, self.others = [], [], []
        for blocker in rules.blocking:
            if isinstance(blocker, KeyBlocker):
                self.keys += [(blocker, parts,
                               _Blocks(_key_text(parts, self.work), rules.max_block_size))
                              for parts in blocker.key_parts]
            elif isinstance(blocker, SortedNeighbourhood):
                self.sorted.append((blocker, _SortedIndex(blocker, self.work)))
            else:
                self.others.append(blocker)
        self.exact_columns, self.exact = None, None
        if rules.exact is not None:
            self.exact_columns = rules.exact.columns or [c for c in records.columns
                                                         if c != id_name]
            self.exact = _Blocks(self.copy_keys(records), None)
        self.shares = {c.output_name: pd.Series(self.work[c.column], dtype=object)
                       .value_counts(normalize=True, dropna=True)
                       for c in rules.comparisons if c.output_name in self.scorer.tf_columns}

    def normalize(self, frame: pd.DataFrame) -> dict[str, np.ndarray]:
        from linkage.io import as_text

        work = {c: as_text(frame[c]) if len(frame) > SMALL else _as_text_small(frame[c])
                for c in self.input_columns}
        for step in self.rules.normalize:
            series = pd.Series(step.joined(work), name=step.column, dtype=object)
            work[step.target] = step.apply(series).to_numpy(dtype=object)
        return work

    def copy_keys(self, frame: pd.DataFrame) -> list:
        """The exact stage's row hash per record (None for a record with nothing in its
        columns: no one's copy, as in the run)."""
        from linkage.text.exact import hashes_to_bytes, row_hashes

        columns = self.exact_columns
        hashes = hashes_to_bytes(row_hashes(frame[columns], columns,
                                            normalize=self.rules.exact.normalize))
        filled = np.zeros(len(frame), dtype=bool)
        for column in columns:
            values = frame[column]
            filled |= (values.notna() & values.astype(str).str.strip().ne("")).to_numpy()
        return [h if ok else None for h, ok in zip(hashes.tolist(), filled, strict=True)]

    def candidates(self, frame: pd.DataFrame, query: dict[str, np.ndarray]):
        """(query row, run row, exact copy?) of every candidate pair, each pair once."""
        found = []
        for blocker, parts, index in self.keys:
            keys = _key_text(parts, query)
            found.append(index.find(keys))
            found += [self.sub_block(blocker, parts, q, members, query)
                      for q, members in index.oversized(keys)]
        found += [index.find(blocker, query) for blocker, index in self.sorted]
        found += [_propose_with(b, self.work, query, self.rules.max_block_size)
                  for b in self.others]
        width = max(len(self.record_ids), 1)
        copies = np.zeros(0, np.int64)
        if self.exact is not None and all(c in frame.columns for c in self.exact_columns):
            qs, rs = self.exact.find(self.copy_keys(frame))
            found.append((qs, rs))
            copies = qs * width + rs
        if not found:
            return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, bool)
        code = np.unique(np.concatenate([f[0] * width + f[1] for f in found]))
        return code // width, code % width, np.isin(code, copies)

    def sub_block(self, blocker, parts, q: int, members: np.ndarray,
                  query: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        """(query row, run row) of query `q`'s neighbours in its block, which a full run with
        it would find above `max_block_size` and sub-block: sorted by the same columns, the
        query last among equal values (it would be the newest row), as `update` does it."""
        from linkage.blocking._blockers import BlockingInput, _neighbours, sort_ranks, sub_window

        data = BlockingInput({c: np.concatenate([v[members], query[c][q:q + 1]])
                              for c, v in self.work.items()}, None)
        sub = blocker.sub_parts(parts, data)
        rows = np.arange(len(members) + 1, dtype=np.int64)
        block = np.zeros(len(rows), dtype=np.int64)
        runs = []
        for part in sub:
            a, b = _neighbours(rows, block, sort_ranks(part, data.columns),
                               sub_window(len(sub)), None)
            runs.append(a[b == len(members)])  # a < b: the query is always b
        run = np.unique(np.concatenate(runs)) if runs else np.zeros(0, np.int64)
        return np.full(len(run), q, dtype=np.int64), members[run]

    def lookup(self, frame: pd.DataFrame, top: int) -> pd.DataFrame:
        from linkage.pipeline import compare_pairs

        query = self.normalize(frame)
        qs, rs, copy_ = self.candidates(frame, query)
        if len(qs) == 0:
            return _empty_matches()
        small = {c: np.concatenate([v[rs], query[c]]) for c, v in self.work.items()}
        matrix = compare_pairs(self.rules.comparisons, small, np.arange(len(rs)), len(rs) + qs)
        for c, comparison in enumerate(self.rules.comparisons):
            if comparison.output_name in self.shares:  # shares among the run's records
                exact = matrix.levels[:, c] == len(comparison.level_labels) - 1
                shares = np.full(len(rs), np.nan)
                values = pd.Series(self.work[comparison.column][rs[exact]], dtype=object)
                shares[exact] = values.map(self.shares[comparison.output_name]).to_numpy(float)
                matrix.term_frequencies[comparison.output_name] = shares
        weight = self.scorer.match_weight(matrix)
        probability = self.scorer.match_probability(matrix)
        above = (weight >= self.scorer.threshold) | copy_  # copies match, as in the run
        return self._best(qs, rs, weight, probability, above, top)

    def _best(self, qs, rs, weight, probability, above, top) -> pd.DataFrame:
        """Per query, each cluster's best pair; the clusters ranked best first, `top` kept."""
        cluster = self.cluster_ids[rs]
        order = np.lexsort((self.record_ids[rs].astype(str), -weight, ~above, cluster, qs))
        first = np.ones(len(order), dtype=bool)
        first[1:] = (qs[order][1:] != qs[order][:-1]) | (cluster[order][1:]
                                                         != cluster[order][:-1])
        best = order[first]
        best = best[np.lexsort((cluster[best], -weight[best], ~above[best], qs[best]))]
        rank = np.arange(len(best)) - np.searchsorted(qs[best], qs[best], side="left") + 1
        best, rank = best[rank <= top], rank[rank <= top]
        return pd.DataFrame({
            "input_row": qs[best].astype(np.int64),
            "rank": rank.astype(np.int64),
            "cluster_id": cluster[best].astype(np.int64),
            "representative_id": self.representatives[rs[best]],
            "best_record_id": self.record_ids[rs[best]],
            "match_weight": weight[best].astype(np.float64),
            "match_probability": probability[best].astype(np.float64),
            "above_threshold": above[best],
        })


def _as_text_small(values: pd.Series) -> np.ndarray:
    """`io.as_text` for a few values: str, or None where missing."""
    from linkage.normalize._text import as_text

    out = np.full(len(values), None, dtype=object)
    for k, value in enumerate(values.tolist()):
        if not (value is None or value is pd.NA or (isinstance(value, float) and value != value)):
            out[k] = as_text(value)
    return out


def _empty_matrix(rules):
    from linkage.scoring import ComparisonMatrix

    k = len(rules.comparisons)
    return ComparisonMatrix(rules.comparisons, np.zeros((0, k), np.int8),
                            np.zeros((0, k), np.float32))


def _empty_matches() -> pd.DataFrame:
    return pd.DataFrame({
        "input_row": pd.Series([], dtype=np.int64), "rank": pd.Series([], dtype=np.int64),
        "cluster_id": pd.Series([], dtype=np.int64),
        "representative_id": pd.Series([], dtype=object),
        "best_record_id": pd.Series([], dtype=object),
        "match_weight": pd.Series([], dtype=np.float64),
        "match_probability": pd.Series([], dtype=np.float64),
        "above_threshold": pd.Series([], dtype=bool)})


SMALL = 64  # a lookup of at most this many records takes the plain-Python paths


def _part_values(part, values: np.ndarray) -> list:
    """`KeyPart.compute` for a few values, without pandas' per-call cost (same results)."""
    if len(values) > SMALL:
        return part.compute(values).tolist()
    from linkage.blocking._keys import KEY_FUNCTIONS

    fn = KEY_FUNCTIONS[part.function][0] if part.function else None
    out = []
    for value in values:
        if value is None or value is pd.NA or value == "" or (
                isinstance(value, float) and value != value):
            out.append(None)
        else:
            text = str(value)
            out.append(text if fn is None else (fn(text, part.argument or 0) or None))
    return out


def _key_text(parts, columns: dict[str, np.ndarray]) -> list:
    """A compound key per record as one text, None where any part is missing."""
    keys = None
    for part in parts:
        values = _part_values(part, columns[part.column])
        keys = values if keys is None else [
            None if a is None or b is None else a + "\x1f" + b
            for a, b in zip(keys, values, strict=True)]
    return keys


def _spans(starts: np.ndarray, ends: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(owner, position) of every position in the ranges [starts[i], ends[i])."""
    sizes = np.maximum(ends - starts, 0)
    owner = np.repeat(np.arange(len(starts)), sizes)
    offset = np.arange(int(sizes.sum())) - np.repeat(np.cumsum(sizes) - sizes, sizes)
    return owner, np.repeat(starts, sizes) + offset


class _Blocks:
    """Records grouped by a key (a blocking key's text, or a row hash): each distinct key's
    records in one sorted array, found again by a dict lookup per query record."""

    def __init__(self, keys: list, max_block_size: int | None):
        codes, uniques = pd.factorize(pd.Series(keys, dtype=object), use_na_sentinel=True)
        present = np.flatnonzero(codes >= 0)
        self.members = present[np.argsort(codes[present], kind="stable")]
        sizes = np.bincount(codes[present], minlength=len(uniques))
        self.starts = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
        # A block that a full run with the query would find above `max_block_size`: its
        # records are found by `oversized` and sub-blocked, not joined whole.
        self.big = (np.zeros(len(sizes), dtype=bool) if max_block_size is None
                    else sizes + 1 > max_block_size)
        self.full_sizes = sizes
        self.sizes = np.where(self.big, 0, sizes)
        self.block_of = dict(zip(uniques.tolist(), range(len(uniques)), strict=True))

    def oversized(self, keys: list) -> list[tuple[int, np.ndarray]]:
        """(query row, the run rows of its block) for each query whose block is oversized."""
        out = []
        for q, k in enumerate(keys):
            b = None if k is None else self.block_of.get(k)
            if b is not None and self.big[b]:
                out.append((q, self.members[self.starts[b]:self.starts[b] + self.full_sizes[b]]))
        return out

    def find(self, keys: list) -> tuple[np.ndarray, np.ndarray]:
        """(query row, run row) of the records that share each query's key."""
        block = np.array([-1 if k is None else self.block_of.get(k, -1) for k in keys],
                         dtype=np.int64)
        hit = np.flatnonzero(block >= 0)
        owner, position = _spans(self.starts[block[hit]],
                                 self.starts[block[hit]] + self.sizes[block[hit]])
        return hit[owner], self.members[position]


class _SortedIndex:
    """A sorted neighbourhood's order: a query sits where its sort key falls, after equal
    keys (it would be the newest row), and meets the `window - 1` records on either side."""

    def __init__(self, blocker, work: dict[str, np.ndarray]):
        text, present = _sort_text(blocker, work)
        rows = np.flatnonzero(present)
        order = np.lexsort((rows, text[rows]))
        self.rows = rows[order]
        self.text = text[self.rows]
        self.window = blocker.window

    def find(self, blocker, query: dict[str, np.ndarray]):
        text, present = _sort_text(blocker, query)
        qs = np.flatnonzero(present)
        pos = np.searchsorted(self.text, text[qs], side="right")
        starts = np.maximum(pos - (self.window - 1), 0)
        ends = np.minimum(pos + (self.window - 1), len(self.rows))
        owner, position = _spans(starts, ends)
        return qs[owner], self.rows[position]


def _sort_text(blocker, columns: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """The sort key text of SortedNeighbourhood._order, and whether any part is present."""
    values = [_part_values(p, columns[p.column]) for p in blocker.sort_parts]
    present = np.array([any(v is not None for v in row) for row in zip(*values, strict=True)],
                       dtype=bool)
    text = ["\x1f".join("" if v is None else v for v in row) for row in zip(*values,
                                                                              strict=True)]
    return np.array(text, dtype=str), present


def _propose_with(blocker, work, query, max_block_size):
    """Any other blocker: propose over the run's records and the query, keep query pairs."""
    from linkage.blocking._blockers import BlockingInput

    n = len(next(iter(work.values())))
    both = BlockingInput({c: np.concatenate([v, query[c]]) for c, v in work.items()}, None)
    prop = blocker.propose(both, max_block_size)
    lo, hi = np.minimum(prop.left, prop.right), np.maximum(prop.left, prop.right)
    keep = (hi >= n) & (lo < n)
    return hi[keep] - n, lo[keep]

