"""`linkage update`: add records to a finished dedupe run without comparing its old pairs
again. Only pairs with a new record are blocked (`block_new`), compared and scored with the
run's saved scorer; the old pairs come from pairs.parquet with the blocker bits a full run would
give them now (`still_proposed`). Guards, clustering and the keeper then run over all pairs (the
run core's `finish`), and cluster ids stay stable: the scheme and the lineage are
`linkage.run.disk`'s."""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from linkage._schema import did_you_mean
from linkage.blocking import BlockingInput, CandidatePairs, blocker_names, oversized_message
from linkage.errors import BudgetError, InputError, LinkageWarning, RulesError, user_stacklevel
from linkage.io import as_text, read, write_atomically
from linkage.normalize import lost_values
from linkage.pipeline import stage_groups, stage_stats, union_pairs
from linkage.progress import Clock
from linkage.result import Result
from linkage.run.compare import compare_pairs
from linkage.run.disk import (
    assign_ids,
    comparison_matrix,
    concat_lineage,
    event_counts,
    id_state,
    id_summary,
    is_fitted,
    lineage_rows,
    parquet_bytes,
    read_lineage,
    run_records,
    run_scorer,
    sha256,
    write_lineage,
)
from linkage.run.finish import Tail, finish, report_sample
from linkage.run.stages import STAGE_BITS, stage_bit
from linkage.run.state import RunState, Table
from linkage.scoring import ComparisonMatrix
from linkage.settings import Rules


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
    # The records report.html shows, picked as a full run picks them (`finish` does it there),
    # but only now that the clusters carry their stable ids, which the page shows.
    started = time.perf_counter()
    result.records = report_sample(result, combined, id_name=id_name,
                                   source=np.zeros(len(combined), dtype=np.int8))
    result.timings["report"] = round(time.perf_counter() - started, 4)
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
                      "they are left out.", LinkageWarning, stacklevel=user_stacklevel())
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
        scorer = run_scorer(old)
        new_matrix = compare_pairs(rules.comparisons, work, fresh.left, fresh.right,
                                   tf_columns=scorer.tf_columns)
    with clock.stage("score"):
        if not is_fitted(scorer):  # a rule sum: its weights are the rules', nothing is learned
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


def _new_pairs(rules, combined, id_name, work, n_old):
    """Candidate pairs with a new record, from the blockers and the exact/url stages."""
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
                          stacklevel=user_stacklevel())
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
    matrix = comparison_matrix(old.pairs, rules)
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
    n = len(combined)
    id_column = None if id_name == "row_id" else id_name
    state = RunState("dedupe", [table], rules, id_column, clock, [combined], id_name, [n],
                     np.zeros(n, dtype=np.int8), combined[id_name], combined,
                     normalize_stats=normalize_stats, exact_stats=exact_stats, pairs=pairs,
                     scorer=scorer, weight=weight, probability=probability, matrix=matrix)
    # The report's records are picked by `update` once the clusters have their stable ids.
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
