"""The local engine: read → normalize → block → compare → score → cluster → keep → outputs.

Everything runs on whole columns (numpy, pandas, RapidFuzz); records are referred to by their
row number in the combined table (left rows first, then right rows, when linking). The columns
the rules read are kept dictionary-encoded (`linkage.normalize._encoded`), and a big run works
a chunk of records or pairs at a time, streaming its outputs to Parquet (`run_local`'s
`chunk_rows`; docs/SCALING.md).
"""

from __future__ import annotations

import functools
import os
import warnings
import weakref
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from linkage._schema import did_you_mean
from linkage.blocking import BlockingInput, CandidatePairs, SkippedBlock, block
from linkage.clustering import (
    connected_components,
    joining_weights,
    one_to_one,
    record_prior_shift,
    split_joining_weights,
    splits_non_matches,
)
from linkage.errors import InputError, LinkageWarning, user_stacklevel
from linkage.io import (
    ParquetFrame,
    ParquetSink,
    arrow_data,
    as_text,
    owned_prefix,
    remove_abandoned,
    remove_temporary,
)
from linkage.normalize import (
    EncodedColumn,
    encode_chunks,
    encode_distinct,
    encode_series,
    normalize_encoded,
)
from linkage.ordering import is_unique
from linkage.progress import Clock, progress_bar
from linkage.result import Result
from linkage.run.chunks import auto_chunk_rows, resolve_chunk_rows
from linkage.run.compare import (  # compare_pairs, weights_of: also imported from here
    compare_pairs,
    encoded_frequencies,
    term_frequencies,
    weights_in_blocks,
    weights_of,  # noqa: F401
)
from linkage.run.disk import (  # the checkpoints of --resume
    load_checkpoint,
    run_fingerprint,
    save_checkpoint,
)
from linkage.run.finish import Tail, finish
from linkage.run.outputs import pair_frame
from linkage.run.stages import MATCHING_STAGES, pair_stage, stage_bit
from linkage.run.state import ROW_ID, Mode, RunState, Table
from linkage.run.summary import LevelTally
from linkage.scoring import ComparisonMatrix, FellegiSunter, Supervised
from linkage.settings import Rules


def input_projection(rules: Rules, id_column: str | None) -> list[str] | None:
    """The input columns a run of `rules` reads (id column included), or None when it reads
    them all: `keep: most_complete` counts filled-in values over every column, and an `exact`
    stage without `columns` hashes whole rows."""
    if rules.keep.policy == "most_complete":
        return None
    if rules.exact is not None and not rules.exact.columns:
        return None
    columns = list(rules.columns())
    id_column = id_column or rules.id_column
    return [*columns, id_column] if id_column and id_column not in columns else columns


def validate_tables(tables: list[Table], rules: Rules, id_column: str | None) -> None:
    """Raise `InputError` naming the file, the rules key and the fix for unusable input."""
    needed = rules.columns()
    for table in tables:
        frame = table.frame
        if len(frame) == 0:
            msg = f"{table.name}: the table has no records. Nothing to deduplicate or link."
            raise InputError(msg)
        columns = table.columns
        for column, where in needed.items():
            if column not in columns:
                hint = did_you_mean(column, columns)
                msg = (
                    f"{table.name}: column `{column}` (named in {rules.source}: {where}) is not "
                    f"in the table. Its columns are: {', '.join(columns)}.{hint} Fix the rules "
                    "or the input."
                )
                raise InputError(msg)
            _check_flat(table, column, f"named in {rules.source}: {where}")
            if _all_blank(frame[column]):
                msg = (
                    f"{table.name}: column `{column}` (named in {rules.source}: {where}) is "
                    "empty in every record, so it cannot block or compare anything. Fill it, "
                    "or remove it from the rules."
                )
                raise InputError(msg)
        if id_column is None and ROW_ID in columns:
            msg = (
                f"{table.name}: has a column `{ROW_ID}`, where a run without an id column "
                f"numbers the records. Pass `--id-column {ROW_ID}` (or set `id_column: "
                f"{ROW_ID}` in {rules.source}) if it holds the ids, or rename the column."
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
            _check_flat(table, id_column, "the id column")
            if ids.hasnans:
                rows = np.flatnonzero(ids.isna().to_numpy())[:3].tolist()
                msg = (
                    f"{table.name}: id column `{id_column}` is missing in "
                    f"{int(ids.isna().sum())} record(s) (rows {rows}). Every record needs an "
                    "id: fill them, or leave `id_column` out to use row numbers."
                )
                raise InputError(msg)
            # In an object column 1 and "1" are two values that print as one id.
            printed = pd.Series(as_text(ids)) if ids.dtype == object else ids
            dup = printed.iloc[:0] if is_unique(printed) else printed[printed.duplicated(
                keep=False)]
            if len(dup):
                examples = ", ".join(repr(v) for v in pd.unique(dup.to_numpy())[:3])
                msg = (
                    f"{table.name}: id column `{id_column}` has {dup.nunique()} repeated "
                    f"value(s) (e.g. {examples}). Ids must be unique as they print (1 and '1' "
                    "are one id): fix the input, or leave `id_column` out to use row numbers."
                )
                raise InputError(msg)
    if id_column is not None:
        _check_id_types(tables, id_column)


def _check_id_types(tables: list[Table], id_column: str) -> None:
    """Every table's ids of one type: they are written to one column of clusters.parquet,
    where 1.0 beside "1" cannot be stored and 1 beside 1.0 would print as 1.0."""
    kinds = [pd.api.types.infer_dtype(t.frame[id_column], skipna=True) for t in tables]
    for table, kind in zip(tables, kinds, strict=True):
        if kind.startswith("mixed") or kind != kinds[0]:
            found = " and ".join(f"{t.name}: {k}" for t, k in zip(tables, kinds, strict=True))
            msg = (
                f"{table.name}: id column `{id_column}` must hold values of one type in every "
                f"input; found {found}. Write the ids with one type (as text, say), or leave "
                "`id_column` out to use row numbers."
            )
            raise InputError(msg)


def _check_flat(table: Table, column: str, role: str) -> None:
    """Raise InputError when `column` holds nested values (a Parquet list or struct)."""
    nested = _nested_kind(table.frame[column])
    if nested is not None:
        msg = (
            f"{table.name}: column `{column}` ({role}) holds {nested} values, not one value "
            "per record; linkage compares text, numbers and dates. Flatten it first (a column "
            "per field, or the list joined into text), or remove it from the rules."
        )
        raise InputError(msg)


def _nested_kind(values: pd.Series) -> str | None:
    """"list" or "struct" when a column holds nested values (a Parquet list, struct or map
    column), else None. Read from its type, or from its first value when it holds objects."""
    dtype = values.dtype
    if isinstance(dtype, pd.ArrowDtype):
        import pyarrow as pa

        kind = dtype.pyarrow_dtype
        if not pa.types.is_nested(kind):
            return None
        return "struct" if pa.types.is_struct(kind) else "list"
    if not pd.api.types.is_object_dtype(dtype):
        return None
    present = values.notna().to_numpy()
    first = values.iloc[int(present.argmax())] if present.any() else None
    if isinstance(first, dict):
        return "struct"
    return "list" if isinstance(first, list | tuple | set | np.ndarray) else None


def _all_blank(values: pd.Series) -> bool:
    """Whether every value is missing or only white space (one look when the first present
    value has text, as nearly every column does)."""
    present = values.notna().to_numpy()
    if not present.any():
        return True
    if str(values.iloc[int(present.argmax())]).strip() != "":
        return False
    return bool((values.astype(str).str.strip().eq("") | values.isna()).all())


def row_labels(columns: list) -> tuple[np.ndarray, np.ndarray]:
    """One label per record, equal where every one of `columns` (`EncodedColumn`s or value
    arrays) holds the same value, a missing or empty value being one more value; and whether
    the record has any value in them."""
    from linkage.blocking import KeyPart
    from linkage.normalize import tuple_codes

    def parts():  # 0: missing
        return (KeyPart("").codes(column) + 1 for column in columns)

    present, largest = None, []
    for codes in parts():
        present = codes > 0 if present is None else present | (codes > 0)
        largest.append(int(codes.max(initial=0)))
    if present is None:
        raise ValueError("row_labels needs at least one column")
    return tuple_codes(parts, len(present), largest=largest), present


def first_rows(labels: np.ndarray) -> np.ndarray:
    """Each row's first row of the same label, as `pd.Series(rows).groupby(labels)
    .transform("min")` gives it. Labels numbered in order of first appearance (as
    `renumbered` and `connected_components` number them; gaps allowed) take one pass in
    order: a row is its label's first where the label is larger than every one before."""
    labels = np.asarray(labels)
    if len(labels) and labels.dtype.kind in "iu" and int(labels.min()) >= 0:
        new = np.empty(len(labels), dtype=bool)
        new[0] = True
        np.greater(labels[1:], np.maximum.accumulate(labels)[:-1], out=new[1:])
        firsts = labels[new]  # increasing
        top = int(firsts[-1])
        if top < 2 * len(firsts) + 1024:
            seen = np.zeros(top + 1, dtype=bool)
            seen[labels] = True
            if int(seen.sum()) == len(firsts):  # every label was new once
                at = np.zeros(top + 1, dtype=np.int64)
                at[firsts] = np.flatnonzero(new)
                return at[labels]
    return pd.Series(np.arange(len(labels))).groupby(labels).transform("min").to_numpy()


def group_labels(rules: Rules, work: dict) -> np.ndarray | None:
    """Each record's `group_by` group (None without groups); a missing value is a group."""
    if not rules.group_by:
        return None
    return row_labels([work[c] for c in rules.group_columns])[0]


def _star(groups: np.ndarray, present: np.ndarray,
          within: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(first member, copy) edges of the groups labelled `groups` (and inside each `within`
    group, with `group_by`); rows not `present` are each alone."""
    groups = np.asarray(groups, dtype=np.int64).copy()
    if within is not None:
        groups = groups * (int(within.max(initial=0)) + 1) + within
    rows = np.arange(len(groups))
    first = rows.copy()  # rows not present are each alone
    at = np.flatnonzero(present)
    first[at] = at[first_rows(groups[at])]
    copies = rows != first
    return first[copies], rows[copies]


def stage_star(frame: pd.DataFrame, *, normalize: bool,
               within: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(first member, copy) edges of the groups of identical rows (inside each `within`
    group); rows with nothing in these columns are no one's copy."""
    from linkage.text.exact import exact_groups, row_hashes

    present = np.zeros(len(frame), dtype=bool)
    for column in frame.columns:
        values = frame[column]
        present |= (values.notna() & values.astype(str).str.strip().ne("")).to_numpy()
    return _star(exact_groups(row_hashes(frame, list(frame.columns), normalize=normalize)),
                 present, within)


def identity_columns(rules: Rules) -> list[str]:
    """What records must agree on to be copies of each other: every (normalized) column the
    blockers and comparisons read, and what the guards read, so a guard sees copies alike."""
    columns = [c for b in rules.blocking for c in b.columns]
    columns += [c for comparison in rules.comparisons for c in comparison.columns]
    columns += [c for g in rules.guards for cs in g.input_columns().values() for c in cs]
    return list(dict.fromkeys([*columns, *rules.group_columns]))


def copies_star(rules: Rules, work: dict) -> tuple[np.ndarray, np.ndarray]:
    """(first member, copy) edges of records equal on every `identity_columns` value: such a
    group needs no blocking, as its pairs are known (and one key value shared by thousands of
    copies would make a block too big to pair)."""
    columns = identity_columns(rules)
    if not columns:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    return _star(*row_labels([work[c] for c in columns]))


def stage_groups(rules: Rules, records: pd.DataFrame, id_name: str, work: dict):
    """The url, exact and copies stages: their star edges by stage name, and the rows left to
    block (one per group of records joined by any stage)."""
    from linkage.normalize import normalize_url

    stars, group = {}, group_labels(rules, work)
    if rules.url is not None:
        urls = normalize_url(records[rules.url.column].astype(object)
                             .where(records[rules.url.column].notna(), None))
        stars["url"] = stage_star(pd.DataFrame({"url": urls}), normalize=False, within=group)
    if rules.exact is not None:
        columns = rules.exact.columns or [c for c in records.columns if c != id_name]
        stars["exact"] = stage_star(records[columns], normalize=rules.exact.normalize,
                                    within=group)
    stars["copies"] = copies_star(rules, work)
    left = np.concatenate([s[0] for s in stars.values()])
    right = np.concatenate([s[1] for s in stars.values()])
    groups = connected_components(len(records), left, right)
    rows = np.arange(len(records))
    return stars, np.flatnonzero(first_rows(groups) == rows)


def stage_stats(stars: dict) -> dict:
    """summary.json's counts of each star stage."""
    return {name: {"groups_with_copies": len(np.unique(first)),
                   "records_collapsed": len(first)} for name, (first, _) in stars.items()}


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


def semantic_stage(spec, records: pd.DataFrame, n: int, groups: np.ndarray | None = None):
    """SemDeDup over the selected records: duplicate pairs (row numbers), each record's
    distance to its k-means centroid (NaN for records the stage did not select) and the
    stage's counts. `groups`: the groups the url and exact stages joined; one selected record
    of each is embedded and stands for the others, which take its centroid distance."""
    from linkage.text.embeddings import Encoder
    from linkage.text.semdedup import semdedup

    values = records[spec.column]
    selected = values.notna().to_numpy() & values.astype(str).str.strip().ne("").to_numpy()
    for column, allowed in (spec.where or {}).items():
        selected &= records[column].astype(str).isin([str(v) for v in allowed]).to_numpy()
    rows = np.flatnonzero(selected)
    if groups is not None:  # the first selected record of each group, in row order
        rows = rows[~pd.Series(groups[rows]).duplicated().to_numpy()]
    encoder = Encoder(model=spec.model)
    stats = {"records_embedded": len(rows),
             "copies_not_embedded": int(selected.sum()) - len(rows)}
    distance = np.full(n, np.nan)
    found = np.zeros((0, 2), dtype=np.int64)
    if len(rows) >= 2:
        vectors = encoder.encode(values.to_numpy()[rows].astype(str).tolist())
        clusters = spec.n_clusters or max(1, round(float(np.sqrt(len(rows)))))
        result = semdedup(vectors, n_clusters=min(clusters, len(rows)), epsilon=spec.epsilon,
                          seed=spec.seed)
        found = np.asarray(result.pairs, dtype=np.int64).reshape(-1, 2)
        distance[rows] = result.centroid_distance
        if groups is not None:
            stand_in = pd.Series(rows, index=groups[rows])
            copies = np.flatnonzero(selected & np.isnan(distance))
            distance[copies] = distance[stand_in.loc[groups[copies]].to_numpy()]
    stats.update(long_texts=encoder.long_texts, window_word_pieces=encoder.window)
    return rows[found[:, 0]], rows[found[:, 1]], distance, stats


def moves_one_to_one_threshold(rules, mode: str) -> bool:
    """Whether a fit of these rules moves its threshold by the record prior."""
    return mode == "link" and rules.one_to_one and rules.one_to_one_threshold == "record_prior"


def move_one_to_one_threshold(rules, scorer, mode: str, left: np.ndarray | None,
                              right: np.ndarray | None, weight: np.ndarray | None,
                              sizes: list[int], *, shift=None) -> None:
    """With `one_to_one_threshold: record_prior` (a one-to-one link scored by a fitted
    Fellegi-Sunter): the scorer's threshold lowered by `record_prior_shift`, the move recorded
    in its diagnostics (model.json) as `one_to_one_threshold`. The moved threshold is the
    model's: a run given this model.json (`--model`) keeps it and moves nothing.
    `shift(prior)`: `record_prior_shift`'s answer where the pairs are not held in arrays
    (Spark's distributed route, `left`, `right`, `weight` then None)."""
    if not moves_one_to_one_threshold(rules, mode):
        return
    prior = getattr(scorer, "prior_", None)
    if prior is None or not hasattr(scorer, "threshold"):
        return
    found = (shift(float(prior)) if shift is not None else
             record_prior_shift(left, right, weight, sizes[0], sizes[1], float(prior)))
    found["threshold_rules"] = float(scorer.threshold)
    found["threshold"] = float(scorer.threshold) - found["shift"]
    if hasattr(scorer, "move_threshold"):
        scorer.move_threshold(found["threshold"])
    else:
        scorer.threshold = found["threshold"]
    if isinstance(getattr(scorer, "diagnostics", None), dict):
        scorer.diagnostics["one_to_one_threshold"] = found


def load_model(path: str | Path | Any, scorer):
    """A trained scorer from `path`, checked against the kind the rules ask for; a fitted
    scorer object is taken as it is (a copy: the run never changes it)."""
    if not isinstance(path, str | os.PathLike):
        import copy

        if type(path) is not type(scorer):
            raise InputError(f"model: a fitted {type(path).__name__} given where the rules' "
                             f"scorer is `{scorer.kind}`. Give a model of the same kind.")
        return copy.deepcopy(path)
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


def read_labelled(scorer, rules: Rules) -> tuple[Path, pd.DataFrame]:
    """The path of a supervised scorer's `labels` (a relative one read from the rules file's
    folder) and the labels it holds."""
    from linkage.scoring import read_labels

    path = Path(scorer.labels)
    if not path.is_absolute() and Path(rules.source).is_file():
        candidate = Path(rules.source).parent / path
        path = candidate if candidate.exists() else path
    return path, read_labels(path, id_columns=scorer.id_columns,
                             label_column=scorer.label_column)


def labelled_pairs(scorer, rules: Rules, ids: pd.Series, source: np.ndarray, mode: Mode):
    """Row numbers of the labelled pairs a supervised scorer learns from, and their labels.

    The labelled pairs are compared directly (not only where blocking proposed them), so the
    model also sees the non-matches a labeller chose. A relative `labels` path is read from
    the rules file's folder.
    """
    from linkage.scoring import labels_for_pairs

    path, labels = read_labelled(scorer, rules)
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
            stacklevel=user_stacklevel(),
        )
    li = rows[0][known].to_numpy(np.int64)
    ri = rows[1][known].to_numpy(np.int64)
    y = labels_for_pairs(labels[known], ids.to_numpy()[li], ids.to_numpy()[ri],
                         id_columns=scorer.id_columns, label_column=scorer.label_column,
                         source=str(path), ordered=mode == "link")
    return li, ri, y


def chance_agreement(comparisons: list, work: dict, sizes: list[int]
                     ) -> dict[str, tuple[float, float]]:
    """For a link of two tables (`sizes`: rows of the left, then the right, in `work`): per
    comparison whose top level is "exact", (C, E): C the cross pairs (left x right, both
    values present) whose normalized values are equal, E how many of them chance explains.

    Chance is what records of one table show among themselves, where each entity appears
    once: a share W of its pairs agree. Two tables drawn from one population of values agree
    by chance at sum_v p_l(v) p_r(v), at most sqrt(W_l W_r) (Cauchy-Schwarz; each W counted
    with one pair added, so that a table whose values are all distinct still allows some
    chance), so E = n_l n_r sqrt(W_l W_r) is an upper bound: a table that repeats an entity
    counts its repeats as chance. Exact, from value counts; no pair is built.
    """
    n_left = sizes[0]
    out: dict[str, tuple[float, float]] = {}
    for comparison in comparisons:
        labels = list(comparison.level_labels)
        if len(labels) < 2 or labels[-1] != "exact" or comparison.column not in work:
            continue
        values = work[comparison.column]
        if isinstance(values, EncodedColumn):
            codes = np.asarray(values.codes, dtype=np.int64).copy()
            if values.blank >= 0:
                codes[codes == values.blank] = -1
            distinct = values.distinct
        else:
            array = pd.Series(np.asarray(values, dtype=object))
            array = array.where(array.astype(str).str.strip() != "", None)
            codes, uniques = pd.factorize(array, use_na_sentinel=True)
            codes = np.asarray(codes, dtype=np.int64)
            distinct = len(uniques)
        left, right = codes[:n_left], codes[n_left:]
        counts_l = np.bincount(left[left >= 0], minlength=distinct).astype(np.int64)
        counts_r = np.bincount(right[right >= 0], minlength=distinct).astype(np.int64)
        found = chance_from_sums(int(counts_l @ counts_r), int(counts_l.sum()),
                                 int(counts_r.sum()), int((counts_l * (counts_l - 1)).sum()),
                                 int((counts_r * (counts_r - 1)).sum()))
        if found is not None:
            out[comparison.output_name] = found
    return out


def chance_from_sums(cross: int, n_l: int, n_r: int, same_l: int, same_r: int
                     ) -> tuple[float, float] | None:
    """(C, E) of `chance_agreement` from whole-number sums over a field's values: the cross
    pairs that agree, the values present on each side, and twice the pairs within each side
    that agree (sum of c(c - 1)); None when a side has fewer than two values. Every engine
    computes it here, from the same integers, so all give the same floats."""
    if n_l < 2 or n_r < 2:
        return None
    within_l = (same_l / 2 + 1) / (n_l * (n_l - 1) / 2 + 1)
    within_r = (same_r / 2 + 1) / (n_r * (n_r - 1) / 2 + 1)
    return float(cross), float(n_l * n_r * np.sqrt(within_l * within_r))


def record_pairs(sizes: list[int]) -> int:
    """How many record pairs there are: within one table, or left × right when linking."""
    if len(sizes) == 1:
        return sizes[0] * (sizes[0] - 1) // 2
    return sizes[0] * sizes[1]


def random_pairs(sizes: list[int], count: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Seeded random record pairs: within one table, or left × right when linking."""
    rng = np.random.default_rng(seed)
    draw = min(count, record_pairs(sizes))
    if len(sizes) == 1:
        n = sizes[0]
        a = rng.integers(0, n, size=draw * 2)
        b = rng.integers(0, n, size=draw * 2)
        keep = a != b
        a, b = a[keep][:draw], b[keep][:draw]
        return np.minimum(a, b), np.maximum(a, b)
    n_left, n_right = sizes[0], sizes[1]
    return rng.integers(0, n_left, size=draw), n_left + rng.integers(0, n_right, size=draw)


def check_link_stages(rules: Rules, mode: Mode, *, semantic: bool = False) -> None:
    """InputError for a link run with the stages only a dedupe run has: `exact` and `url`
    (checked before them), `semantic` (checked where it would run)."""
    if mode != "link":
        return
    if not semantic and (rules.exact is not None or rules.url is not None):
        raise InputError(f"{rules.source}: `exact` and `url` are for dedupe runs; "
                         "leave them out when linking two tables.")
    if semantic and rules.semantic is not None:
        raise InputError(f"{rules.source}: `semantic` is for dedupe runs.")


def _exact_and_block(rules, combined, id_name, mode, work, source, n, progress, clock):
    """The url, exact, blocking and semantic stages: candidate pairs and their stats."""
    with clock.stage("exact"):
        # Copies (equal normalized values; url and exact groups too): linked to their group's
        # first member and left out of blocking, so 1,000 copies cost 999 pairs, not 499,500,
        # and never fill a block past `max_block_size`.
        representatives, stars, exact_stats = None, {}, {}
        check_link_stages(rules, mode)
        if mode == "dedupe":
            stars, representatives = stage_groups(rules, combined, id_name, work)
            exact_stats = stage_stats(stars)

    with clock.stage("block"):
        group = group_labels(rules, work)
        if group is not None:
            exact_stats["group_by"] = {"columns": rules.group_columns,
                                       "groups": int(group.max(initial=-1)) + 1}
        collapsed = representatives is not None and len(representatives) < n
        if not collapsed:
            data = BlockingInput.encoded(work, source if mode == "link" else None, group)
        else:
            data = BlockingInput.encoded({c: v.take(representatives) for c, v in work.items()},
                                         None, None if group is None else group[representatives])
        with progress_bar(len(rules.blocking), "blocking", progress) as bar:
            pairs = block(
                rules.blocking,
                data,
                max_pairs=rules.max_pairs,
                max_block_size=rules.max_block_size,
                progress=bar,
            )
        if collapsed:  # blocked pairs of representatives back to rows (order kept)
            pairs.left, pairs.right = representatives[pairs.left], representatives[pairs.right]
        for name, star in stars.items():  # each stage's edges, with its own bit
            if len(star[0]):
                pairs = union_pairs(pairs, star[0], star[1], stage_bit(rules, name), n)
            pairs.proposed[name] = len(star[0])
        centroid_distance = None
        if rules.semantic is not None:
            check_link_stages(rules, mode, semantic=True)
            joined = [star for name, star in stars.items() if name in MATCHING_STAGES]
            groups = None if not joined else connected_components(
                n, *(np.concatenate([s[k] for s in joined]) for k in (0, 1)))
            sl, sr, centroid_distance, stats = semantic_stage(rules.semantic, combined, n,
                                                              groups)
            if group is not None:  # its k-means clusters span groups; its pairs may not
                same = group[sl] == group[sr]
                sl, sr = sl[same], sr[same]
            pairs = union_pairs(pairs, sl, sr, stage_bit(rules, "semantic"), n)
            pairs.proposed["semantic"] = len(sl)
            exact_stats["semantic"] = {**stats, "duplicate_pairs": len(sl)}

    return pairs, exact_stats, centroid_distance


def normalize_columns(rules: Rules, records: pd.DataFrame, ids: pd.Series, *,
                      chunk_rows: int | None = None):
    """Every column the rules read, encoded (`EncodedColumn`) and normalized, with per-step
    stats: records changed and records missing after the step. With `chunk_rows`, records
    are encoded and distinct values normalized that many at a time."""
    from linkage.parallel import dependent_map

    columns = rules.columns()
    # each column's task: its encoding, then (`latest`) the last normalize step that wrote it
    encoding = {c: k for k, c in enumerate(columns)}
    latest = dict(encoding)
    tasks: list = []

    def encoded(column: str) -> EncodedColumn:
        if latest[column] != encoding[column]:  # read only by normalize steps
            identity = encode_distinct(records[column])
            if identity is not None:
                return identity
        if chunk_rows is None or len(records) <= chunk_rows:
            return encode_series(records[column])
        return encode_chunks(records[column].iloc[start:start + chunk_rows]
                             for start in range(0, len(records), chunk_rows))

    counts: dict[int, dict] = {}  # per step (its position in the rules), its stats

    def normalized(k: int, step, *sources: EncodedColumn) -> EncodedColumn:
        source = sources[0] if len(step.inputs) == 1 else encode_series(pd.Series(
            step.joined({c: s.values() for c, s in zip(step.inputs, sources, strict=True)}),
            dtype=object))
        column, counts[k] = normalize_encoded(step, source, ids, chunk_rows=chunk_rows)
        return column

    # Each column is encoded, then normalized step by step, on the pool: a step waits for
    # the columns it reads as the steps before it left them, so one column's steps run
    # beside another's (Arrow's hash tables release the GIL). A column as it was before a
    # step is let go once every step that reads it is done: only each column's last form
    # is kept.
    tasks += [(functools.partial(encoded, c), []) for c in columns]
    for k, step in enumerate(rules.normalize):
        tasks.append((functools.partial(normalized, k, step),
                      [latest[c] for c in step.inputs]))
        latest[step.target] = len(tasks) - 1
    done = dependent_map(tasks, keep=set(latest.values()))
    work: dict[str, EncodedColumn] = {c: done[latest[c]] for c in columns}
    stats = {}
    for k, step in enumerate(rules.normalize):
        work[step.target] = done[latest[step.target]]
        stats[step.target] = {"normalizer": step.type, "from": step.column, **counts[k]}
    return work, stats


class _InMemory:
    """Compare and score with the whole comparison matrix in memory (and checkpointed)."""

    def __init__(self, rules: Rules, work: dict, pairs: CandidatePairs, checkpoint,
                 fingerprint: str):
        self.rules, self.work, self.pairs = rules, work, pairs
        self.checkpoint, self.fingerprint = checkpoint, fingerprint
        self.steps = len(rules.comparisons)
        self.chunk = self.folder = None  # the outputs stay in memory

    def compare(self, tf_columns: list[str], bar) -> None:
        saved = load_checkpoint(self.checkpoint, "compare", self.fingerprint)
        self.resumed = saved is not None
        if saved is None:
            self.matrix = compare_pairs(self.rules.comparisons, self.work, self.pairs.left,
                                        self.pairs.right, bar, tf_columns=tf_columns)
            save_checkpoint(self.checkpoint, "compare", self.fingerprint, {
                "levels": self.matrix.levels, "similarities": self.matrix.similarities,
                **{f"tf:{k}": v for k, v in self.matrix.term_frequencies.items()}}, {})
        else:
            arrays, _ = saved
            self.matrix = ComparisonMatrix(
                self.rules.comparisons, arrays["levels"], arrays["similarities"],
                {k[3:]: v for k, v in arrays.items() if k.startswith("tf:")})
        self.tally = LevelTally.of(self.matrix)

    def fit(self, scorer, random_matrix, labelled=None, chance=None):
        extra = {} if chance is None else {"chance": chance}
        if labelled is not None:  # (levels, 0/1) of labelled pairs: EM knows their class
            return scorer.fit(self.matrix, random=random_matrix, labelled=labelled, **extra)
        return scorer.fit(self.matrix, random=random_matrix, **extra)

    def weights(self, scorer) -> tuple[np.ndarray, np.ndarray]:
        m = self.matrix

        def rows(start: int, stop: int) -> ComparisonMatrix:
            return ComparisonMatrix(m.comparisons, m.levels[start:stop],
                                    m.similarities[start:stop],
                                    {k: v[start:stop] for k, v in m.term_frequencies.items()})

        return weights_in_blocks(scorer, len(self.pairs), rows)

    def pair_table(self, ids, weight, probability, matched) -> pd.DataFrame:
        return pair_frame(ids, self.pairs.left, self.pairs.right, self.pairs.mask,
                           self.matrix, weight, probability, matched)

    def release_work(self) -> None:
        """Let go of the normalized columns: the matrix holds all the outputs need."""
        self.work = {}


class _Streamed:
    """Compare and score the candidate pairs `chunk` at a time.

    Pass 1 compares each batch, adds up what fitting needs (level patterns and their counts,
    the term frequencies of exact agreements) and spills levels and similarities to a
    temporary file; pass 2 reads them back to weigh each pair; pass 3 writes pairs.parquet
    batch by batch. Only per-pair weights (16 bytes a pair) stay in memory.

    With a `checkpoint` folder, pass 1's spill files and totals are kept there as the
    `compare_chunks` stage, so a run killed later starts again at pass 2.
    """

    def __init__(self, rules: Rules, work: dict, pairs: CandidatePairs, chunk: int,
                 checkpoint=None, fingerprint: str = ""):
        import tempfile

        self.rules, self.work, self.pairs, self.chunk = rules, work, pairs, chunk
        self.checkpoint, self.fingerprint = checkpoint, fingerprint
        self.resumed = False
        self.comparisons = list(rules.comparisons)
        self.sizes = [len(c.level_labels) for c in self.comparisons]
        self.starts = list(range(0, len(pairs), chunk))
        self.steps = max(len(self.starts), 1) * len(self.comparisons)
        parent = Path(checkpoint) if checkpoint is not None else None
        if parent is not None:
            parent.mkdir(parents=True, exist_ok=True)
        # Named by this process, so the next run removes it if this one is killed.
        parent = Path(tempfile.gettempdir()) if parent is None else parent
        remove_abandoned(parent, "linkage-pairs-")
        self.folder = Path(tempfile.mkdtemp(prefix=owned_prefix("linkage-pairs-"), dir=parent))
        self.spills = (self.folder / "levels.bin", self.folder / "similarities.bin")
        # Gone with this object, also when the run fails; the output tables live on.
        weakref.finalize(self, remove_temporary, *self.spills)

    def _batch(self, start: int) -> slice:
        return slice(start, min(start + self.chunk, len(self.pairs)))

    def compare(self, tf_columns: list[str], bar) -> None:
        self.tf_columns = list(tf_columns)
        if self._resume():
            bar.update(self.steps)
            return
        self._compare(tf_columns, bar)
        self._save()

    def _kept_spills(self) -> tuple[Path, Path]:
        folder = Path(self.checkpoint)
        return folder / "compare_chunks.levels.bin", folder / "compare_chunks.similarities.bin"

    def _save(self) -> None:
        """Move the spill files into the checkpoint folder and record the totals (the npz
        last: its presence means the stage is complete)."""
        if self.checkpoint is None:
            return
        kept = self._kept_spills()
        for spill, target in zip(self.spills, kept, strict=True):
            os.replace(spill, target)
        self.spills = kept
        arrays = {"pattern_codes": self.pattern_codes, "pattern_counts": self.pattern_counts,
                  **{f"tally:{c}": counts for c, counts in enumerate(self.tally.counts)},
                  **{f"freq:{name}": (np.concatenate(v) if v else np.zeros(0))
                     for name, v in self.exact_frequencies.items()}}
        save_checkpoint(self.checkpoint, "compare_chunks", self.fingerprint, arrays,
                        {"pairs": self.tally.pairs, "tf_columns": self.tf_columns})

    def _resume(self) -> bool:
        """Take pass 1 from the checkpoint when it finished there for this very run."""
        saved = load_checkpoint(self.checkpoint, "compare_chunks", self.fingerprint)
        if saved is None:
            return False
        arrays, meta = saved
        kept = self._kept_spills()
        k = len(self.comparisons)
        whole = (kept[0].exists() and kept[0].stat().st_size == len(self.pairs) * k
                 and kept[1].exists() and kept[1].stat().st_size == len(self.pairs) * k * 4)
        if not whole or meta["tf_columns"] != self.tf_columns:
            return False
        self.spills = kept
        self.pattern_codes, self.pattern_counts = arrays["pattern_codes"], arrays["pattern_counts"]
        self.tally = LevelTally(self.comparisons, [arrays[f"tally:{c}"] for c in range(k)],
                                int(meta["pairs"]))
        self.exact_frequencies = {name: [arrays[f"freq:{name}"]] for name in self.tf_columns}
        self.resumed = True
        return True

    def _compare(self, tf_columns: list[str], bar) -> None:
        from linkage.scoring import pattern_codes

        self.tally = LevelTally.empty(self.comparisons)
        codes, counts = [], []
        self.exact_frequencies: dict[str, list[np.ndarray]] = {n: [] for n in tf_columns}
        with open(self.spills[0], "wb") as levels, open(self.spills[1], "wb") as sims:
            for start in self.starts:
                part = self._batch(start)
                matrix = compare_pairs(self.comparisons, self.work, self.pairs.left[part],
                                       self.pairs.right[part], bar, tf_columns=tf_columns)
                self.tally.add(matrix.levels)
                batch_codes, batch_counts = np.unique(pattern_codes(matrix.levels, self.sizes),
                                                      return_counts=True)
                codes.append(batch_codes)
                counts.append(batch_counts)
                for name, freqs in matrix.term_frequencies.items():
                    k = matrix.names.index(name)
                    exact = (matrix.levels[:, k] == self.sizes[k] - 1) & np.isfinite(freqs)
                    self.exact_frequencies[name].append(freqs[exact])
                levels.write(np.ascontiguousarray(matrix.levels).tobytes())
                sims.write(np.ascontiguousarray(matrix.similarities).tobytes())
        codes = np.concatenate(codes) if codes else np.zeros(0, dtype=np.int64)
        counts = np.concatenate(counts) if counts else np.zeros(0, dtype=np.int64)
        self.pattern_codes, inverse = np.unique(codes, return_inverse=True)
        self.pattern_counts = np.bincount(inverse.reshape(-1), weights=counts,
                                          minlength=len(self.pattern_codes)).astype(np.int64)

    def _rows(self, start: int, stop: int) -> ComparisonMatrix:
        """Pairs start..stop-1 read back from the spill files, term frequencies recomputed."""
        k = len(self.comparisons)
        levels = np.fromfile(self.spills[0], dtype=np.int8, count=(stop - start) * k,
                             offset=start * k).reshape(-1, k)
        sims = np.fromfile(self.spills[1], dtype=np.float32, count=(stop - start) * k,
                           offset=start * k * 4).reshape(-1, k)
        tf = {}
        left = self.pairs.left[start:stop]
        for c, comparison in enumerate(self.comparisons):
            if comparison.output_name in self.tf_columns:
                exact = levels[:, c] == self.sizes[c] - 1
                column = self.work[comparison.column]
                tf[comparison.output_name] = (encoded_frequencies(column, left, exact)
                                              if isinstance(column, EncodedColumn) else
                                              term_frequencies(column, left, exact))
        return ComparisonMatrix(self.comparisons, levels, sims, tf)

    def fit(self, scorer, random_matrix, labelled=None, chance=None):
        from linkage.scoring import decode_patterns

        if hasattr(scorer, "fit_patterns"):
            frequencies = {n: np.concatenate(v) if v else np.zeros(0)
                           for n, v in self.exact_frequencies.items()}
            extra = {} if labelled is None else {"labelled": labelled}
            if chance is not None:
                extra["chance"] = chance
            return scorer.fit_patterns(
                self.comparisons, decode_patterns(self.pattern_codes, self.sizes),
                self.pattern_counts, random=random_matrix, exact_frequencies=frequencies,
                **extra)
        # Scorers that learn nothing from the candidates (rule sum) see no pairs.
        empty = ComparisonMatrix(self.comparisons,
                                 np.zeros((0, len(self.comparisons)), dtype=np.int8),
                                 np.zeros((0, len(self.comparisons)), dtype=np.float32))
        return scorer.fit(empty, random=random_matrix)

    def weights(self, scorer) -> tuple[np.ndarray, np.ndarray]:
        return weights_in_blocks(scorer, len(self.pairs), self._rows)

    def release_work(self) -> None:
        """Let go of the normalized columns but those whose term frequencies pairs.parquet
        recomputes batch by batch (`_rows`)."""
        self.work = {c.column: self.work[c.column] for c in self.comparisons
                     if c.output_name in self.tf_columns}

    def pair_table(self, ids, weight, probability, matched) -> ParquetFrame:
        pairs = self.pairs
        empty = self._rows(0, 0)  # the batches' own columns and types, no pair
        sink = ParquetSink(self.folder / "pairs.parquet",
                           pair_frame(ids, pairs.left[:0], pairs.right[:0], pairs.mask[:0],
                                       empty, weight[:0], probability[:0], matched[:0]))
        for start in self.starts:
            part = self._batch(start)
            sink.write(pair_frame(ids, pairs.left[part], pairs.right[part], pairs.mask[part],
                                   self._rows(part.start, part.stop), weight[part],
                                   probability[part], matched[part]))
        sink.close()
        if self.checkpoint is None:  # a checkpoint keeps them until the run is written
            for spill in self.spills:
                spill.unlink(missing_ok=True)
        return ParquetFrame(sink.path, temporary=True)


class LocalTail(Tail):
    """The local engine's tail: the numpy defaults, with pairs.parquet written by the
    compare-and-score strategy (in memory, or streamed batch by batch)."""

    def __init__(self, scored: _InMemory | _Streamed):
        self.scored = scored
        self.chunk, self.folder = scored.chunk, scored.folder

    def pair_table(self, state: RunState, matched: np.ndarray):
        return self.scored.pair_table(state.ids, state.weight, state.probability, matched)


class LocalEngine:
    """This machine, in the engine registry (`linkage.engines`): `run_local`."""

    name = "local"
    projects_columns = True  # a big input file is read a few columns at a time

    def check(self, rules: Rules, *, labels=None, checkpoint=None) -> None:
        """The local engine runs every rule and option."""

    def run(self, mode: Mode, tables: list[Table], rules: Rules, *, id_column, progress, model,
            checkpoint, chunk_rows, labels, options) -> Result:
        return run_local(mode, tables, rules, id_column=id_column, progress=progress,
                         model=model, checkpoint=checkpoint, chunk_rows=chunk_rows,
                         labels=labels)


def run_local(
    mode: Mode,
    tables: list[Table],
    rules: Rules,
    *,
    id_column: str | None = None,
    progress: bool | None = None,
    model: str | Path | None = None,
    checkpoint: str | Path | None = None,
    chunk_rows: int | None = None,
    labels=None,
) -> Result:
    """Run the whole pipeline and return the result (nothing is written).

    `labels`: labelled pairs (a CSV path, a DataFrame with id_l, id_r, label, or a list of
    them) that the scorer learns from; see `linkage.active`.

    `model`: a trained scorer's JSON (`model.json` of an earlier run) to score with, instead
    of fitting the rules' scorer again. `checkpoint`: a folder where the candidate pairs and
    the comparison matrix are kept as they finish; a run that finds them there for the same
    rules and inputs starts after them and produces the same output.

    `chunk_rows` (else the `LINKAGE_CHUNK_ROWS` environment variable): work on at most this
    many records at a time when encoding and normalizing, and this many candidate pairs at a
    time when comparing and scoring; pairs, clusters and deduplicated records then go to
    Parquet files batch by batch (`Result.pairs` etc. are `linkage.io.ParquetFrame`s, which
    read like DataFrames) instead of being held in memory. Runs with more than
    `AUTO_CHUNK_RECORDS` records or `AUTO_CHUNK_PAIRS` candidate pairs do so by themselves.
    The output files are the same bytes either way.
    """
    chunk = resolve_chunk_rows(chunk_rows)
    clock, id_column, (frames, id_name, sizes, source, ids, combined) = start_run(
        tables, rules, id_column, progress=progress)
    n = sum(sizes)

    with clock.stage("normalize"):
        work, normalize_stats = normalize_columns(rules, combined, ids,
                                                  chunk_rows=chunk or auto_chunk_rows(n))

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

    if n < np.iinfo(np.int32).max:  # row numbers fit in 4 bytes: half the memory per pair
        pairs.left, pairs.right = pairs.left.astype(np.int32), pairs.right.astype(np.int32)
    chunk = chunk or auto_chunk_rows(n, len(pairs))
    scorer = rules.scoring
    if chunk is None:
        scored = _InMemory(rules, work, pairs, checkpoint, fingerprint)
    else:
        scored = _Streamed(rules, work, pairs, chunk, checkpoint, fingerprint)
    with clock.stage("compare"), progress_bar(scored.steps, "comparing", progress) as bar:
        scored.compare(scorer.tf_columns, bar)
    if scored.resumed:
        clock.timings["compare"] = 0.0  # resumed from the checkpoint

    labels_report = kept_labels = None
    with clock.stage("score"):

        def fit(scorer, labelled=None):
            random_matrix = None
            if scorer.needs_random_pairs:
                ri, rj = random_pairs(sizes if mode == "link" else [n], scorer.u_sample_size,
                                      scorer.seed)
                random_matrix = compare_pairs(rules.comparisons, work, ri, rj)
                random_matrix.population = record_pairs(sizes if mode == "link" else [n])
            chance = None
            if mode == "link" and isinstance(scorer, FellegiSunter):
                chance = chance_agreement(rules.comparisons, work, sizes)
            fitted = scored.fit(scorer, random_matrix, labelled, chance)
            if moves_one_to_one_threshold(rules, mode):
                # every fit, with labels too: the labels judge the model as it would decide
                moved, _ = scored.weights(fitted)
                move_one_to_one_threshold(rules, fitted, mode, pairs.left, pairs.right, moved,
                                          sizes)
            return fitted

        if model is not None:
            scorer = load_model(model, scorer)
        elif labels is not None:
            from linkage.active import fit_labelled

            def random(count: int, seed: int) -> ComparisonMatrix:
                ri, rj = random_pairs(sizes if mode == "link" else [n], count, seed)
                return compare_pairs(rules.comparisons, work, ri, rj)

            judge = None
            split_judged: dict[int, np.ndarray] = {}
            if mode == "dedupe":

                def judge(fitted, li: np.ndarray, ri: np.ndarray,
                          labelled_weight: np.ndarray) -> np.ndarray:
                    """The labelled pairs' weights as the clusters decide them: the highest
                    threshold at which the two records end in one cluster (a chain of
                    matched pairs joins them at its weakest pair's weight); where the run
                    splits clusters at non-matches, the chains that split lets stand (-inf:
                    kept apart at every threshold; up to `JOINED_PAIRS` candidate pairs,
                    a Python pass over them, above which the chains alone)."""
                    from linkage.active import JOINED_PAIRS

                    every, _ = scored.weights(fitted)
                    every = np.where(pair_stage(rules, pairs.mask) >= 0, np.inf, every)
                    if splits_non_matches(rules, fitted) and len(every) <= JOINED_PAIRS:
                        # the same model is judged more than once (its own threshold, the
                        # labels'): one pass per set of weights
                        key = hash((every.tobytes(), li.tobytes(), ri.tobytes()))
                        if key not in split_judged:
                            split_judged.clear()
                            split_judged[key] = split_joining_weights(
                                n, pairs.left, pairs.right, every, li, ri)
                        return split_judged[key].copy()
                    return joining_weights(n, pairs.left, pairs.right, every, li, ri,
                                           labelled_weight)

            elif mode == "link" and rules.one_to_one:

                def judge(fitted, li: np.ndarray, ri: np.ndarray,
                          labelled_weight: np.ndarray) -> np.ndarray:
                    """The labelled pairs' weights as the output decides them: a pair the
                    one-to-one assignment drops (a better candidate of either record wins)
                    is linked at no threshold."""
                    every, _ = scored.weights(fitted)
                    kept = one_to_one(pairs.left, pairs.right, every)
                    key = pairs.left.astype(np.int64) * n + pairs.right.astype(np.int64)
                    dropped = pd.Series(~kept, index=key)
                    dropped = dropped[~dropped.index.duplicated()]
                    lost = pd.Series(li.astype(np.int64) * n + ri.astype(np.int64)).map(
                        dropped).eq(True).to_numpy(dtype=bool)
                    return np.where(lost, -np.inf, labelled_weight)

            rules, scorer, labels_report, kept_labels = fit_labelled(
                rules, labels, ids=ids, source=source, mode=mode, work=work, fit=fit,
                random=random, judge=judge)
        elif isinstance(scorer, Supervised):
            li, ri, y = labelled_pairs(scorer, rules, ids, source, mode)
            scorer = scorer.fit(compare_pairs(rules.comparisons, work, li, ri), y)
        else:
            scorer = fit(scorer)
        weight, probability = scored.weights(scorer)
    # What is left reads no normalized column but the few pairs.parquet's term frequencies
    # need: at 10M persons the others were ~570 MiB of the peak (bench/RESULTS_10M.md).
    scored.release_work()
    work = None  # the closures above share this name: they let go of it too

    state = RunState(mode, tables, rules, id_column, clock, frames, id_name, sizes, source,
                     ids, combined, normalize_stats=normalize_stats, exact_stats=exact_stats,
                     pairs=pairs, centroid_distance=centroid_distance, scorer=scorer,
                     weight=weight, probability=probability, tally=scored.tally,
                     labels_report=labels_report, kept_labels=kept_labels)
    result = finish(state, LocalTail(scored))
    clock.close()
    return result


def start_run(tables: list[Table], rules: Rules, id_column: str | None, *,
              progress: bool | None = False):
    """How every engine's run begins: a clock holding the read time (and showing the stages
    where `progress` is on: `linkage.progress.Clock`), the id column (argument, else the
    rules'), the tables checked (`validate_tables`) and prepared (`prepare_tables`), both timed
    as "prepare"."""
    clock = Clock(progress=progress)
    clock.timings["read"] = round(sum(t.read_seconds for t in tables), 4)
    id_column = id_column or rules.id_column
    try:
        with clock.stage("prepare"):  # the checks too: at 10M records they take seconds
            validate_tables(tables, rules, id_column)
            prepared = prepare_tables(tables, id_column)
    except BaseException:
        clock.close()  # the progress line goes before the error is shown
        raise
    return clock, id_column, prepared


def prepare_tables(tables: list[Table], id_column: str | None):
    """The tables as one engine sees them: frames (with `row_id` when there is no id column),
    the id column's name, table sizes, each record's table number, the ids, all records."""
    frames = []
    for table in tables:
        frame = table.frame.reset_index(drop=True)
        if id_column is None:
            frame = frame.copy()
            frame.insert(0, ROW_ID, np.arange(len(frame), dtype=np.int64))
        frames.append(frame)
    id_name = id_column or ROW_ID
    sizes = [len(f) for f in frames]
    source = np.repeat(np.arange(len(frames), dtype=np.int8), sizes)
    ids = one_chunk(pd.concat([f[id_name] for f in frames], ignore_index=True))
    combined = pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]
    return frames, id_name, sizes, source, ids, combined


def one_chunk(values: pd.Series) -> pd.Series:
    """`values` with the Arrow strings behind it (pyarrow storage) in one piece. A file read
    a batch at a time gives a column of many pieces, and Arrow's `take` over many pieces
    (each output's ids, representatives and reasons: a few dozen takes a run) costs several
    times a take over one; the same values and dtype."""
    import pyarrow as pa

    data = arrow_data(values)
    if (not isinstance(values.dtype, pd.StringDtype) or values.dtype.storage != "pyarrow"
            or not isinstance(data, pa.ChunkedArray) or data.num_chunks < 2):
        return values
    whole = pa.chunked_array([data.combine_chunks()], type=data.type)
    return pd.Series(pd.arrays.ArrowStringArray(whole), dtype=values.dtype, index=values.index,
                     name=values.name)


