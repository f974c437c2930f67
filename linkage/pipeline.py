"""The local engine: read → normalize → block → compare → score → cluster → keep → outputs.

Everything runs on whole columns (numpy, pandas, RapidFuzz); records are referred to by their
row number in the combined table (left rows first, then right rows, when linking).
"""

from __future__ import annotations

import platform
import sys
import time
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import numpy as np
import pandas as pd

from linkage import __version__
from linkage._schema import did_you_mean
from linkage.blocking import BlockingInput, CandidatePairs, block, blocker_names
from linkage.blocking._blockers import SkippedBlock
from linkage.clustering import connected_components, one_to_one
from linkage.errors import InputError, LinkageWarning
from linkage.golden import build_golden
from linkage.guards import GuardContext, apply_guards
from linkage.io import as_text
from linkage.keep import CENTROID_DISTANCE, id_rank, keeper_rank
from linkage.result import Result
from linkage.scoring import ComparisonMatrix, Supervised
from linkage.settings import Rules

Mode = Literal["dedupe", "link"]
ROW_ID = "row_id"


@dataclass
class Table:
    """One input table as the pipeline sees it."""

    frame: pd.DataFrame
    name: str
    checksum: str
    read_seconds: float = 0.0


@dataclass
class _Clock:
    timings: dict[str, float] = field(default_factory=dict)

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        start = time.perf_counter()
        yield
        self.timings[name] = round(time.perf_counter() - start, 4)


def _progress(total: int, desc: str, enabled: bool | None):
    from tqdm.auto import tqdm

    disable = not sys.stderr.isatty() if enabled is None else not enabled
    return tqdm(total=total, desc=desc, disable=disable, leave=False, unit="step")


def validate_tables(tables: list[Table], rules: Rules, id_column: str | None) -> None:
    """Raise `InputError` naming the file, the rules key and the fix for unusable input."""
    needed = rules.columns()
    for table in tables:
        frame = table.frame
        if len(frame) == 0:
            msg = f"{table.name}: the table has no records. Nothing to deduplicate or link."
            raise InputError(msg)
        columns = [str(c) for c in frame.columns]
        for column, where in needed.items():
            if column not in columns:
                hint = did_you_mean(column, columns)
                msg = (
                    f"{table.name}: column `{column}` (named in {rules.source}: {where}) is not "
                    f"in the table. Its columns are: {', '.join(columns)}.{hint} Fix the rules "
                    "or the input."
                )
                raise InputError(msg)
            if frame[column].isna().all() or (
                frame[column].astype(str).str.strip().eq("") | frame[column].isna()
            ).all():
                msg = (
                    f"{table.name}: column `{column}` (named in {rules.source}: {where}) is "
                    "empty in every record, so it cannot block or compare anything. Fill it, "
                    "or remove it from the rules."
                )
                raise InputError(msg)
        if id_column is not None:
            if id_column not in columns:
                msg = (
                    f"{table.name}: id column `{id_column}` is not in the table. Its columns "
                    f"are: {', '.join(columns)}. Fix `id_column` in {rules.source} or "
                    "`--id-column`, or leave it out to use row numbers."
                )
                raise InputError(msg)
            ids = frame[id_column]
            if ids.isna().any():
                rows = np.flatnonzero(ids.isna().to_numpy())[:3].tolist()
                msg = (
                    f"{table.name}: id column `{id_column}` is missing in "
                    f"{int(ids.isna().sum())} record(s) (rows {rows}). Every record needs an "
                    "id: fill them, or leave `id_column` out to use row numbers."
                )
                raise InputError(msg)
            dup = ids[ids.duplicated(keep=False)]
            if len(dup):
                examples = ", ".join(repr(v) for v in pd.unique(dup.to_numpy())[:3])
                msg = (
                    f"{table.name}: id column `{id_column}` has {dup.nunique()} repeated "
                    f"value(s) (e.g. {examples}). Ids must be unique: fix the input, or leave "
                    "`id_column` out to use row numbers."
                )
                raise InputError(msg)


STAGE_BITS = ("exact", "semantic", "url")  # after the blockers' bits, in this order


def stage_bit(rules: Rules, stage: str) -> int:
    """The `blockers` mask bit of pairs proposed by a stage rather than a blocker."""
    return 1 << (len(rules.blocking) + STAGE_BITS.index(stage))


def stage_star(frame: pd.DataFrame, *, normalize: bool) -> tuple[np.ndarray, np.ndarray]:
    """(first member, copy) edges of the groups of identical rows; rows with nothing in
    these columns are no one's copy."""
    from linkage.text.exact import exact_groups, row_hashes

    present = np.zeros(len(frame), dtype=bool)
    for column in frame.columns:
        values = frame[column]
        present |= (values.notna() & values.astype(str).str.strip().ne("")).to_numpy()
    groups = np.asarray(exact_groups(row_hashes(frame, list(frame.columns),
                                                normalize=normalize)), dtype=np.int64)
    rows = np.arange(len(groups))
    groups[~present] = -1 - rows[~present]  # each empty row alone
    first = pd.Series(rows).groupby(groups).transform("min").to_numpy()
    copies = rows != first
    return first[copies], rows[copies]


def stage_groups(rules: Rules, records: pd.DataFrame, id_name: str):
    """The url and exact stages: their star edges by stage name, and the rows left to block
    (one per group of records joined by any stage)."""
    from linkage.normalize import normalize_url

    stars = {}
    if rules.url is not None:
        urls = normalize_url(records[rules.url.column].astype(object)
                             .where(records[rules.url.column].notna(), None))
        stars["url"] = stage_star(pd.DataFrame({"url": urls}), normalize=False)
    if rules.exact is not None:
        columns = rules.exact.columns or [c for c in records.columns if c != id_name]
        stars["exact"] = stage_star(records[columns], normalize=rules.exact.normalize)
    left = np.concatenate([s[0] for s in stars.values()])
    right = np.concatenate([s[1] for s in stars.values()])
    groups = connected_components(len(records), left, right)
    rows = np.arange(len(records))
    first = pd.Series(rows).groupby(groups).transform("min").to_numpy()
    return stars, np.flatnonzero(first == rows)


def union_pairs(pairs, left, right, bit: int, n: int):
    """Add pairs (i < j) proposed by a stage with its own bit; a pair proposed twice is kept
    once with both bits, as blocking does."""
    lo, hi = np.minimum(left, right).astype(np.int64), np.maximum(left, right).astype(np.int64)
    codes = np.concatenate([pairs.left.astype(np.int64) * n + pairs.right, lo * n + hi])
    masks = np.concatenate([pairs.mask, np.full(len(lo), bit, dtype=np.int64)])
    order = np.argsort(codes, kind="stable")
    codes, masks = codes[order], masks[order]
    if len(codes):
        starts = np.concatenate([[0], np.flatnonzero(np.diff(codes)) + 1])
        unique, mask = codes[starts], np.bitwise_or.reduceat(masks, starts)
    else:
        unique, mask = codes, masks
    pairs.left, pairs.right, pairs.mask = unique // n, unique % n, mask
    return pairs


def semantic_stage(spec, records: pd.DataFrame, n: int):
    """SemDeDup over the selected records: duplicate pairs (row numbers) and each record's
    distance to its k-means centroid (NaN for records the stage did not embed)."""
    from linkage.text.embeddings import Encoder
    from linkage.text.semdedup import semdedup

    values = records[spec.column]
    selected = values.notna().to_numpy() & values.astype(str).str.strip().ne("").to_numpy()
    for column, allowed in (spec.where or {}).items():
        selected &= records[column].astype(str).isin([str(v) for v in allowed]).to_numpy()
    rows = np.flatnonzero(selected)
    distance = np.full(n, np.nan)
    if len(rows) < 2:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), distance, len(rows)
    vectors = Encoder(model=spec.model).encode(values.to_numpy()[rows].astype(str).tolist())
    clusters = spec.n_clusters or max(1, round(float(np.sqrt(len(rows)))))
    result = semdedup(vectors, n_clusters=min(clusters, len(rows)), epsilon=spec.epsilon,
                      seed=spec.seed)
    _, found = result
    found = np.asarray(found, dtype=np.int64).reshape(-1, 2)
    distance[rows] = result.centroid_distance
    return rows[found[:, 0]], rows[found[:, 1]], distance, len(rows)


def compare_pairs(
    comparisons: list,
    work: dict[str, np.ndarray],
    left: np.ndarray,
    right: np.ndarray,
    bar=None,
    *,
    tf_columns: list[str] = (),
) -> ComparisonMatrix:
    """The comparison matrix of the pairs (left[i], right[i]) of row numbers."""
    k = len(comparisons)
    levels = np.empty((len(left), k), dtype=np.int8)
    sims = np.empty((len(left), k), dtype=np.float32)
    tf: dict[str, np.ndarray] = {}
    for c, comparison in enumerate(comparisons):
        values = work[comparison.column]
        levels[:, c], sims[:, c] = comparison.compare(values[left], values[right])
        if comparison.output_name in tf_columns:
            tf[comparison.output_name] = _term_frequencies(
                values, left, levels[:, c] == len(comparison.level_labels) - 1
            )
        if bar is not None:
            bar.update(1)
    return ComparisonMatrix(list(comparisons), levels, sims, tf)


def _term_frequencies(values: np.ndarray, left: np.ndarray, exact: np.ndarray) -> np.ndarray:
    """Per pair: the share of records holding the agreed value; NaN unless exact."""
    series = pd.Series(values, dtype=object)
    shares = series.value_counts(normalize=True, dropna=True)
    out = np.full(len(left), np.nan)
    if exact.any():
        agreed = pd.Series(values[left[exact]], dtype=object)
        out[exact] = agreed.map(shares).to_numpy(dtype=float)
    return out


def load_model(path: str | Path, scorer):
    """A trained scorer from `path`, checked against the kind the rules ask for."""
    path = Path(path)
    if not hasattr(type(scorer), "load"):
        raise InputError(
            f"{path}: the rules' scorer `{scorer.kind}` has nothing to load; it needs no "
            "training. Leave out --model."
        )
    if not path.is_file():
        raise InputError(f"{path}: no such model file. Pass the model.json of an earlier run.")
    try:
        return type(scorer).load(path)
    except (ValueError, KeyError) as err:
        raise InputError(f"{path}: not a {scorer.kind} model ({err}). Pass the model.json "
                         "written by a run with the same scorer.") from None


def labelled_pairs(scorer, rules: Rules, ids: pd.Series, source: np.ndarray, mode: Mode):
    """Row numbers of the labelled pairs a supervised scorer learns from, and their labels.

    The labelled pairs are compared directly (not only where blocking proposed them), so the
    model also sees the non-matches a labeller chose. A relative `labels` path is read from
    the rules file's folder.
    """
    from linkage.scoring._supervised import labels_for_pairs, read_labels

    path = Path(scorer.labels)
    if not path.is_absolute() and Path(rules.source).is_file():
        candidate = Path(rules.source).parent / path
        path = candidate if candidate.exists() else path
    labels = read_labels(path, id_columns=scorer.id_columns, label_column=scorer.label_column)
    left_col, right_col = scorer.id_columns
    text_ids = ids.astype(str).to_numpy()
    sides = [0, 1] if mode == "link" else [0, 0]
    rows = []
    for side, column in zip(sides, (left_col, right_col), strict=True):
        position = pd.Series(np.flatnonzero(source == side), index=text_ids[source == side])
        rows.append(labels[column].astype(str).map(position))
    known = rows[0].notna() & rows[1].notna()
    if not known.any():
        examples = ", ".join(repr(v) for v in labels[left_col].head(3))
        raise InputError(
            f"{path}: none of the labelled pairs' ids ({examples}, ...) are in the input. The "
            f"ids in `{left_col}` and `{right_col}` must be the records' ids."
        )
    if not known.all():
        warnings.warn(
            f"{path}: {int((~known).sum())} labelled pair(s) name ids not in the input; "
            "they are left out.",
            LinkageWarning,
            stacklevel=2,
        )
    li = rows[0][known].to_numpy(np.int64)
    ri = rows[1][known].to_numpy(np.int64)
    y = labels_for_pairs(labels[known], ids.to_numpy()[li], ids.to_numpy()[ri],
                         id_columns=scorer.id_columns, label_column=scorer.label_column,
                         source=str(path))
    return li, ri, y


def random_pairs(sizes: list[int], count: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Seeded random record pairs: within one table, or left × right when linking."""
    rng = np.random.default_rng(seed)
    if len(sizes) == 1:
        n = sizes[0]
        total = n * (n - 1) // 2
        draw = min(count, total)
        a = rng.integers(0, n, size=draw * 2)
        b = rng.integers(0, n, size=draw * 2)
        keep = a != b
        a, b = a[keep][:draw], b[keep][:draw]
        return np.minimum(a, b), np.maximum(a, b)
    n_left, n_right = sizes[0], sizes[1]
    draw = min(count, n_left * n_right)
    return rng.integers(0, n_left, size=draw), n_left + rng.integers(0, n_right, size=draw)


def run_fingerprint(mode: str, tables: list[Table], rules: Rules, id_name: str) -> str:
    """What a checkpoint must match: the rules, the inputs and this version of linkage."""
    import hashlib

    text = "|".join([__version__, mode, id_name, rules.config_hash(),
                     *(t.checksum for t in tables)])
    return hashlib.sha256(text.encode()).hexdigest()


def save_checkpoint(folder, stage: str, fingerprint: str, arrays: dict, meta: dict) -> None:
    """Write one stage's arrays (npz) and metadata (json), atomically, if checkpointing."""
    if folder is None:
        return
    import json
    import os

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
    import json

    folder = Path(folder)
    if not (folder / f"{stage}.npz").exists() or not (folder / f"{stage}.json").exists():
        return None
    saved = json.loads((folder / f"{stage}.json").read_text(encoding="utf-8"))
    if saved["fingerprint"] != fingerprint:
        return None  # another run's checkpoint: recompute and overwrite it
    with np.load(folder / f"{stage}.npz", allow_pickle=False) as data:
        arrays = {k: data[k] for k in data.files}
    return arrays, saved["meta"]


def _exact_and_block(rules, combined, id_name, mode, work, source, n, progress, clock):
    """The url, exact, blocking and semantic stages: candidate pairs and their stats."""
    with clock.stage("exact"):
        # Byte-identical (normalized) records: linked to their group's first member and left
        # out of blocking, so a text copied 1,000 times costs 999 pairs, not 499,500.
        representatives = None
        exact_stats = {}
        if rules.exact is not None or rules.url is not None:
            if mode == "link":
                raise InputError(f"{rules.source}: `exact` and `url` are for dedupe runs; "
                                 "leave them out when linking two tables.")
            stars, representatives = stage_groups(rules, combined, id_name)
            for name, star in stars.items():
                exact_stats[name] = {"groups_with_copies": len(np.unique(star[0])),
                                     "records_collapsed": len(star[0])}

    with clock.stage("block"):
        if representatives is None:
            data = BlockingInput(work, source if mode == "link" else None)
        else:
            data = BlockingInput({c: v[representatives] for c, v in work.items()}, None)
        with _progress(len(rules.blocking), "blocking", progress) as bar:
            pairs = block(
                rules.blocking,
                data,
                max_pairs=rules.max_pairs,
                max_block_size=rules.max_block_size,
                progress=bar,
            )
        if representatives is not None:
            # Blocked pairs of representatives back to rows; each stage's edges, own bit.
            pairs.left, pairs.right = representatives[pairs.left], representatives[pairs.right]
            for name, star in stars.items():
                pairs = union_pairs(pairs, star[0], star[1], stage_bit(rules, name), n)
                pairs.proposed[name] = len(star[0])
        centroid_distance = None
        if rules.semantic is not None:
            if mode == "link":
                raise InputError(f"{rules.source}: `semantic` is for dedupe runs.")
            sl, sr, centroid_distance, embedded = semantic_stage(rules.semantic, combined, n)
            pairs = union_pairs(pairs, sl, sr, stage_bit(rules, "semantic"), n)
            pairs.proposed["semantic"] = len(sl)
            exact_stats["semantic"] = {"records_embedded": embedded, "duplicate_pairs": len(sl)}

    return pairs, exact_stats, centroid_distance


def run_local(
    mode: Mode,
    tables: list[Table],
    rules: Rules,
    *,
    id_column: str | None = None,
    progress: bool | None = None,
    model: str | Path | None = None,
    checkpoint: str | Path | None = None,
) -> Result:
    """Run the whole pipeline in memory and return the result (nothing is written).

    `model`: a trained scorer's JSON (`model.json` of an earlier run) to score with, instead
    of fitting the rules' scorer again. `checkpoint`: a folder where the candidate pairs and
    the comparison matrix are kept as they finish; a run that finds them there for the same
    rules and inputs starts after them and produces the same output.
    """
    clock = _Clock()
    clock.timings["read"] = round(sum(t.read_seconds for t in tables), 4)
    id_column = id_column or rules.id_column
    validate_tables(tables, rules, id_column)

    with clock.stage("prepare"):
        frames = []
        for table in tables:
            frame = table.frame.reset_index(drop=True)
            if id_column is None:
                frame = frame.copy()
                frame.insert(0, ROW_ID, np.arange(len(frame), dtype=np.int64))
            frames.append(frame)
        id_name = id_column or ROW_ID
        sizes = [len(f) for f in frames]
        n = sum(sizes)
        source = np.repeat(np.arange(len(frames), dtype=np.int8), sizes)
        ids = pd.concat([f[id_name] for f in frames], ignore_index=True)
        combined = pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]

    with clock.stage("normalize"):
        work: dict[str, np.ndarray] = {}
        for column in rules.columns():
            work[column] = as_text(combined[column])
        normalize_stats = {}
        for step in rules.normalize:
            before = work[step.column]
            series = pd.Series(before, index=ids.to_numpy(), name=step.column, dtype=object)
            after = step.apply(series).to_numpy(dtype=object)
            work[step.target] = after
            changed = int(np.sum(pd.Series(before).fillna("\0").to_numpy()
                                 != pd.Series(after).fillna("\0").to_numpy()))
            normalize_stats[step.target] = {
                "normalizer": step.type,
                "from": step.column,
                "changed": changed,
                "missing": int(pd.isna(after).sum()),
            }

    fingerprint = run_fingerprint(mode, tables, rules, id_name)
    saved = load_checkpoint(checkpoint, "block", fingerprint)
    if saved is None:
        pairs, exact_stats, centroid_distance = _exact_and_block(
            rules, combined, id_name, mode, work, source, n, progress, clock)
        save_checkpoint(checkpoint, "block", fingerprint, {
            "left": pairs.left, "right": pairs.right, "mask": pairs.mask,
            "centroid_distance": (np.full(n, np.nan) if centroid_distance is None
                                  else centroid_distance),
        }, {"estimated": pairs.estimated, "proposed": pairs.proposed,
            "skipped": [vars(x) for x in pairs.skipped], "exact_stats": exact_stats,
            "semantic": centroid_distance is not None})
    else:
        arrays, meta = saved
        pairs = CandidatePairs(arrays["left"], arrays["right"], arrays["mask"],
                               meta["estimated"], meta["proposed"],
                               [SkippedBlock(**x) for x in meta["skipped"]])
        exact_stats = meta["exact_stats"]
        centroid_distance = arrays["centroid_distance"] if meta["semantic"] else None
        clock.timings["block"] = 0.0  # resumed from the checkpoint

    with clock.stage("compare"), _progress(len(rules.comparisons), "comparing", progress) as bar:
        scorer = rules.scoring
        saved = load_checkpoint(checkpoint, "compare", fingerprint)
        if saved is None:
            matrix = compare_pairs(rules.comparisons, work, pairs.left, pairs.right, bar,
                                   tf_columns=scorer.tf_columns)
            save_checkpoint(checkpoint, "compare", fingerprint, {
                "levels": matrix.levels, "similarities": matrix.similarities,
                **{f"tf:{k}": v for k, v in matrix.term_frequencies.items()}}, {})
        else:
            arrays, _ = saved
            matrix = ComparisonMatrix(
                rules.comparisons, arrays["levels"], arrays["similarities"],
                {k[3:]: v for k, v in arrays.items() if k.startswith("tf:")})

    with clock.stage("score"):
        if model is not None:
            scorer = load_model(model, scorer)
        elif isinstance(scorer, Supervised):
            li, ri, y = labelled_pairs(scorer, rules, ids, source, mode)
            scorer = scorer.fit(compare_pairs(rules.comparisons, work, li, ri), y)
        else:
            random_matrix = None
            if scorer.needs_random_pairs:
                ri, rj = random_pairs(sizes if mode == "link" else [n], scorer.u_sample_size,
                                      scorer.seed)
                random_matrix = compare_pairs(rules.comparisons, work, ri, rj)
            scorer = scorer.fit(matrix, random=random_matrix)
        weight = scorer.match_weight(matrix)
        probability = scorer.match_probability(matrix)
        matched = weight >= scorer.threshold
        # Exact copies and SemDeDup pairs are duplicates by their stage; guards may differ.
        stage_bits = sum(stage_bit(rules, name) for name in STAGE_BITS
                         if getattr(rules, name) is not None)
        if stage_bits:
            matched |= (pairs.mask & stage_bits) > 0

    with clock.stage("guard"):
        guard = GuardContext(combined, ids.to_numpy(), source, pairs.left, pairs.right, weight,
                             matched, scorer.threshold)
        if rules.guards:
            apply_guards(rules.guards, guard)
        matched = guard.matched

    with clock.stage("cluster"):
        ml, mr, mw = pairs.left[matched], pairs.right[matched], weight[matched]
        if mode == "link" and rules.one_to_one:
            keep_edge = one_to_one(ml, mr, mw)
            ml, mr, mw = ml[keep_edge], mr[keep_edge], mw[keep_edge]
        clusters = connected_components(n, ml, mr)

    with clock.stage("keep"):
        rank = id_rank(ids) + (source.astype(np.int64) * n)  # left before right when linking
        ranked = combined if centroid_distance is None else combined.assign(
            **{CENTROID_DISTANCE: centroid_distance})
        ranks = keeper_rank(rules.keep, ranked, clusters, rank)
        limit = np.full(int(clusters.max()) + 1 if n else 0, rules.keep.k, dtype=np.int64)
        np.maximum.at(limit, clusters, guard.keep_limit.astype(np.int64))  # keep_up_to
        is_keeper = ranks < limit[clusters]
        representative_row = np.empty(len(limit), dtype=np.int64)
        representative_row[clusters[ranks == 0]] = np.flatnonzero(ranks == 0)
        keeper = representative_row[clusters]
        outputs = _outputs(
            mode, ids, id_name, source, clusters, keeper, is_keeper, pairs, matrix, weight,
            probability, matched, (ml, mr, mw), combined, frames, tables, scorer.threshold,
            guard,
        )
        if rules.golden is not None and mode == "dedupe":
            outputs["golden"] = build_golden(rules.golden, combined, ids, clusters, id_name)

    summary = _summary(
        mode, tables, rules, n, sizes, normalize_stats, pairs, matrix, matched, clusters,
        outputs["clusters"], id_column, combined,
    )
    summary["stages"]["score"].update(scorer_report(scorer))
    for name, stats in exact_stats.items():
        summary["stages"][name] = stats
    summary["stages"]["guard"] = {
        g.guard_name: {
            decision: sum(1 for d in guard.decisions
                          if d["guard"] == g.guard_name and d["decision"] == decision)
            for decision in sorted({d["decision"] for d in guard.decisions
                                    if d["guard"] == g.guard_name})
        }
        for g in rules.guards
    }
    if mode == "link":
        summary["links"] = len(outputs["links"])
    return Result(
        mode=mode,
        rules=rules,
        clusters=outputs["clusters"],
        pairs=outputs["pairs"],
        deduplicated=outputs.get("deduplicated"),
        links=outputs.get("links"),
        golden=outputs.get("golden"),
        review=outputs.get("review"),
        guard_decisions=outputs.get("guards"),
        summary_data=summary,
        timings=clock.timings,
        scorer=scorer,
    )


def _outputs(mode, ids, id_name, source, clusters, keeper, is_keeper, pairs, matrix, weight,
             probability, matched, accepted, combined, frames, tables, threshold, guard):
    n = len(ids)
    id_values = ids.to_numpy()
    ml, mr, mw = accepted
    # Each record's strongest accepted link, for its reason.
    best_w = np.full(n, -np.inf)
    best_other = np.full(n, -1, dtype=np.int64)
    degree = np.zeros(n, dtype=np.int64)
    if len(ml):
        both = np.concatenate([ml, mr])
        other = np.concatenate([mr, ml])
        w = np.concatenate([mw, mw])
        order = np.lexsort((other, -w, both))
        both, other, w = both[order], other[order], w[order]
        first = np.ones(len(both), dtype=bool)
        first[1:] = both[1:] != both[:-1]
        best_w[both[first]] = w[first]
        best_other[both[first]] = other[first]
        degree = np.bincount(both, minlength=n)
    sizes = np.bincount(clusters)
    cluster_size = sizes[clusters]
    representative = id_values[keeper]

    reasons = np.empty(n, dtype=object)
    actions = np.empty(n, dtype=object)
    single = cluster_size == 1
    if mode == "dedupe":
        actions[:] = np.where(is_keeper, "keep", "duplicate")
        reasons[single] = f"no candidate pair at or above the threshold {threshold:g}"
    else:
        actions[:] = "keep"
        reasons[single] = f"no link at or above the threshold {threshold:g}"
    idx = np.flatnonzero(~single)
    if len(idx):
        # Built column-wise with pandas string operations: no Python loop per record.
        via = pd.Series(id_values[best_other[idx]]).astype(str)
        weight_text = pd.Series(np.round(best_w[idx], 2)).map("{:.2f}".format)
        size_text = pd.Series(cluster_size[idx]).astype(str)
        tail = (" (match weight " + weight_text + f" >= {threshold:g})").to_numpy()
        if mode == "dedupe":
            head = np.where(
                is_keeper[idx],
                ("kept for cluster of " + size_text).to_numpy(),
                ("duplicate of " + pd.Series(representative[idx]).astype(str)).to_numpy(),
            )
            text = (pd.Series(head) + ": linked by " + pd.Series(degree[idx]).astype(str)
                    + " pair(s), strongest with " + via + pd.Series(tail))
        else:
            text = ("linked with " + via + pd.Series(tail) + " in cluster of " + size_text)
        reasons[idx] = text.to_numpy(dtype=object)

    cluster_frame = pd.DataFrame({id_name: ids.reset_index(drop=True)})
    if mode == "link":
        cluster_frame.insert(0, "source", np.where(source == 0, "left", "right"))
    cluster_frame["cluster_id"] = clusters.astype(np.int64)
    cluster_frame["cluster_size"] = cluster_size.astype(np.int64)
    # Guards speak last: a preserved or review record is never dropped, and says why.
    guarded = np.array([a is not None for a in guard.action], dtype=bool)
    actions[guarded] = guard.action[guarded]
    if guarded.any():
        reasons[guarded] = guard.reason[guarded]
    cluster_frame["action"] = pd.Series(actions, dtype=object)
    cluster_frame["reason"] = pd.Series(reasons, dtype=object)
    cluster_frame["representative_id"] = pd.Series(representative, dtype=ids.dtype)
    cluster_frame["review_group"] = pd.Series(guard.review_group, dtype=object)

    pair_frame = pd.DataFrame({
        "id_l": pd.Series(id_values[pairs.left], dtype=ids.dtype),
        "id_r": pd.Series(id_values[pairs.right], dtype=ids.dtype),
        "blockers": pairs.mask.astype(np.int64),
    })
    for c, name in enumerate(matrix.names):
        pair_frame[f"{name}_level"] = matrix.levels[:, c]
        pair_frame[f"{name}_similarity"] = matrix.similarities[:, c]
    for name, shares in matrix.term_frequencies.items():
        pair_frame[f"{name}_tf"] = shares
    pair_frame["match_weight"] = weight.astype(np.float64)
    pair_frame["match_probability"] = probability.astype(np.float64)
    pair_frame["is_match"] = matched
    out = {"clusters": cluster_frame, "pairs": pair_frame}

    if mode == "dedupe":
        dedup = frames[0].loc[is_keeper | guarded].reset_index(drop=True)
        out["deduplicated"] = dedup
        review = actions == "review"
        if review.any():
            out["review"] = pd.concat(
                [cluster_frame.loc[review, ["review_group", "cluster_id", "reason"]]
                 .reset_index(drop=True), frames[0].loc[review].reset_index(drop=True)], axis=1
            ).sort_values(["review_group", id_name], kind="stable").reset_index(drop=True)
    else:
        links = pd.DataFrame({
            "id_l": pd.Series(id_values[ml], dtype=ids.dtype),
            "id_r": pd.Series(id_values[mr], dtype=ids.dtype),
            "match_weight": mw.astype(np.float64),
            "cluster_id": clusters[ml].astype(np.int64),
        })
        out["links"] = links.sort_values(["cluster_id", "id_l", "id_r"], kind="stable")\
            .reset_index(drop=True)
    if guard.decisions:
        out["guards"] = pd.DataFrame(guard.decisions).astype({"record_id": str})
    return out


def scorer_report(scorer) -> dict:
    """What the fitted scorer learned that a reviewer should see in summary.json."""
    report: dict = {"threshold": float(scorer.threshold)}
    if hasattr(scorer, "prior_"):  # Fellegi-Sunter
        report.update(prior=round(float(scorer.prior_), 8), em_iterations=scorer.n_iterations_,
                      em_converged=bool(scorer.converged_))
    if hasattr(scorer, "cv_precision_"):  # supervised: the cross-validated threshold
        report.update(probability_threshold=round(scorer.threshold_, 6),
                      cv_precision=round(scorer.cv_precision_, 4),
                      cv_recall=round(scorer.cv_recall_, 4), cv_f1=round(scorer.cv_f1_, 4),
                      labelled_pairs=int(scorer.n_labelled_))
    return report


def removals_by(values: pd.Series, removed: np.ndarray) -> dict[str, dict]:
    """Per value of a column: records, removed, removal rate, and its share before and after."""
    frame = pd.DataFrame({"value": values.astype(object).where(values.notna(), "(missing)")
                          .astype(str).to_numpy(), "removed": removed})
    grouped = frame.groupby("value", sort=True)["removed"].agg(["size", "sum"])
    before, kept = grouped["size"].sum(), (grouped["size"] - grouped["sum"]).sum()
    return {
        str(value): {
            "records": int(row["size"]),
            "removed": int(row["sum"]),
            "removal_rate": round(row["sum"] / row["size"], 6),
            "share_before": round(row["size"] / before, 6),
            "share_after": round((row["size"] - row["sum"]) / kept, 6) if kept else 0.0,
        }
        for value, row in grouped.iterrows()
    }


def _versions() -> dict[str, str]:
    import jellyfish
    import pyarrow
    import rapidfuzz
    import scipy

    return {
        "linkage": __version__,
        "python": platform.python_version(),
        "numpy": np.__version__,
        "pandas": pd.__version__,
        "pyarrow": pyarrow.__version__,
        "rapidfuzz": rapidfuzz.__version__,
        "jellyfish": getattr(jellyfish, "__version__", "unknown"),
        "scipy": scipy.__version__,
    }


def _summary(mode, tables, rules, n, sizes, normalize_stats, pairs, matrix, matched, clusters,
             cluster_frame, id_column, records):
    from linkage.normalize import NORMALIZATION_VERSION

    all_pairs = n * (n - 1) // 2 if mode == "dedupe" else sizes[0] * sizes[1]
    level_counts = {}
    for c, comparison in enumerate(matrix.comparisons):
        counts = np.bincount(matrix.levels[:, c].astype(np.int64) + 1,
                             minlength=len(comparison.level_labels) + 1)
        labels = ["null", *comparison.level_labels]
        level_counts[comparison.output_name] = {
            label: int(count) for label, count in zip(labels, counts, strict=True)
        }
    cluster_sizes = np.bincount(clusters)
    histogram = {str(int(s)): int(c) for s, c in
                 zip(*np.unique(cluster_sizes, return_counts=True), strict=True)}
    actions = cluster_frame["action"].value_counts().to_dict()
    action_counts = {a: int(actions.get(a, 0)) for a in ("keep", "duplicate", "preserved",
                                                         "review")}
    names = blocker_names(rules.blocking)
    summary = {
        "linkage_version": __version__,
        "mode": mode,
        "engine": "local",
        "inputs": [
            {"name": t.name, "records": len(t.frame), "checksum": t.checksum} for t in tables
        ],
        "id_column": id_column or ROW_ID,
        "rules": {"source": rules.source, "config_hash": rules.config_hash(),
                  "seed": getattr(rules.scoring, "seed", None)},
        "normalization_version": NORMALIZATION_VERSION,
        "versions": _versions(),
        "stages": {
            "read": {"records": n},
            "normalize": normalize_stats,
            "block": {
                "blockers": {
                    name: {
                        "rule": b.describe(),
                        "estimated_pairs": pairs.estimated[name],
                        "proposed_pairs": pairs.proposed[name],
                    }
                    for name, b in zip(names, rules.blocking, strict=True)
                },
                "candidate_pairs": len(pairs),
                "reduction_ratio": round(1 - len(pairs) / all_pairs, 6) if all_pairs else 0.0,
                "skipped_blocks": [vars(s) for s in pairs.skipped],
            },
            "compare": {"pairs": len(matrix), "levels": level_counts},
            "score": {
                "scorer": rules.scoring.kind,
                "threshold": rules.scoring.threshold,
                "pairs_at_or_above_threshold": int(matched.sum()),
            },
            "cluster": {
                "clusters": len(cluster_sizes),
                "clusters_with_several_records": int((cluster_sizes > 1).sum()),
                "largest_cluster": int(cluster_sizes.max()) if len(cluster_sizes) else 0,
                "size_histogram": histogram,
            },
            "keep": rules.keep.to_dict() if mode == "dedupe" else {},
        },
        "actions": action_counts,
    }
    if mode == "dedupe":
        removal_rate = action_counts["duplicate"] / n if n else 0.0
        summary["removal_rate"] = round(removal_rate, 6)
        removed = (cluster_frame["action"] == "duplicate").to_numpy()
        columns = [c for c in [rules.source_column, *rules.report_columns] if c]
        summary["removals_by"] = {c: removals_by(records[c], removed) for c in columns}
        summary["warnings"] = []
        if removal_rate > rules.max_removal_rate:
            summary["warnings"].append(
                f"{removal_rate:.1%} of the records were removed as duplicates, above "
                f"`max_removal_rate` ({rules.max_removal_rate:.0%}): if this table should hold "
                "few duplicates, the ingestion may be loading rows twice. Check the loads, or "
                "raise `max_removal_rate` in the rules if this is expected."
            )
    else:
        linked = cluster_frame[cluster_frame["cluster_size"] > 1]
        summary["linked_records"] = {
            side: int((linked["source"] == side).sum()) for side in ("left", "right")
        }
    return summary
