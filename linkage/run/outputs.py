"""The output tables of a run (the output contract: clusters, deduplicated or links, review,
guards, pairs), built from its final clusters, keepers and accepted links.

Every engine's run ends here (`linkage.run.finish`): the files a run writes are built by this
one module, which is what keeps the engines' bytes the same."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pandas as pd

from linkage.errors import InputError
from linkage.io import ParquetFrame, ParquetSink
from linkage.parallel import beside
from linkage.run.chunks import DEFAULT_CHUNK_ROWS
from linkage.run.state import ROW_ID, Table
from linkage.scoring import ComparisonMatrix


def record_outputs(mode, ids, id_name, source, clusters, keeper, is_keeper, accepted, frames,
                    threshold, guard, *, chunk: int | None = None, folder: Path | None = None,
                    whole_rows: Callable[[int], Iterator[tuple[int, pd.DataFrame]]] | None = None,
                    stages: tuple[np.ndarray, list[str]] | None = None):
    """clusters, deduplicated / links, review and guards: the outputs with a row per record
    or per accepted link. With `chunk` (and a `folder` for the files), clusters and
    deduplicated are built that many records at a time into Parquet files (`ParquetFrame`).
    `whole_rows`: where the input's whole rows come from when `frames` hold only some columns
    (`whole_rows`); deduplicated and review records are then taken in one pass over them.
    `stages`: per accepted link, the index of the stage that matched it (-1: its weight),
    and the stages' reasons (`stage_reasons`)."""
    n = len(ids)
    ml, mr, mw = accepted
    guard.settle(is_keeper if mode == "dedupe" else None)  # now that the keeper has ranked
    link_stage, stage_texts = stages if stages is not None else (np.full(len(ml), -1), [])
    # Each record's strongest accepted link, for its reason.
    # Per record until the tables are written: the narrowest integers that hold the values
    # (a row, a count, a stage), cast back to int64 where they are written.
    rows_type = _narrow_int(n)
    best_w = np.full(n, -np.inf)
    best_other = np.full(n, -1, dtype=rows_type)
    best_stage = np.full(n, -1, dtype=_narrow_int(len(stage_texts) + 1))
    degree = np.zeros(n, dtype=rows_type)
    if len(ml):
        both = np.concatenate([ml, mr])
        other = np.concatenate([mr, ml])
        w = np.concatenate([mw, mw])
        by = np.concatenate([link_stage, link_stage])
        degree = np.bincount(both, minlength=n).astype(rows_type)
        best = _strongest_link(n, both, other, w, int(np.count_nonzero(degree)))
        best_w[both[best]] = w[best]
        best_other[both[best]] = other[best]
        best_stage[both[best]] = by[best]
        del both, other, w, by, best
    cluster_size = (np.bincount(clusters)[clusters].astype(rows_type) if n
                    else np.zeros(0, dtype=rows_type))
    single = cluster_size == 1
    # Every record's action and single-record reason point at a few shared str objects.
    if mode == "dedupe":
        actions = np.array(["keep", "duplicate"], dtype=object)[(~is_keeper).astype(np.int8)]
        lone = f"no candidate pair at or above the threshold {threshold:g}"
    else:
        actions = np.empty(n, dtype=object)
        actions[:] = "keep"  # (np.full would make a copy of the str for every record)
        lone = f"no link at or above the threshold {threshold:g}"
    # Guards speak last: a preserved or review record is never dropped, and says why.
    guarded = ~pd.isna(np.asarray(guard.action, dtype=object))
    actions[guarded] = guard.action[guarded]

    # No guard spoke: every action is "keep" or "duplicate" and no record has a review
    # group, so a part of clusters.parquet can be made as Arrow columns (`cluster_rows`'s
    # `arrow`), its reasons never Python strings.
    plain = not guarded.any() and bool(pd.isna(np.asarray(guard.review_group,
                                                          dtype=object)).all())

    def cluster_rows(start: int, stop: int, arrow: bool = False):
        rows = slice(start, stop)
        linked = np.flatnonzero(~single[rows]) + start
        told = (_link_reasons(mode, ids, linked, best_other, best_w, cluster_size, degree,
                              is_keeper, keeper, threshold, best_stage, stage_texts,
                              arrow=arrow)
                if len(linked) else None)
        frame = pd.DataFrame({id_name: ids.iloc[rows].reset_index(drop=True)})
        if mode == "link":
            frame.insert(0, "source", np.where(source[rows] == 0, "left", "right"))
        frame["cluster_id"] = clusters[rows].astype(np.int64)
        frame["cluster_size"] = cluster_size[rows].astype(np.int64)
        if arrow:
            return _plain_cluster_part(frame, mode, is_keeper[rows], lone, linked - start,
                                       told, take_ids(ids, keeper[rows]))
        reasons = np.empty(stop - start, dtype=object)
        reasons[:] = lone
        if told is not None:
            reasons[linked - start] = told
        if guarded[rows].any():
            reasons[guarded[rows]] = guard.reason[rows][guarded[rows]]
        frame["action"] = pd.Series(actions[rows], dtype=object)
        frame["reason"] = pd.Series(reasons, dtype=object)
        frame["representative_id"] = take_ids(ids, keeper[rows])
        frame["review_group"] = pd.Series(guard.review_group[rows], dtype=object)
        return frame

    kept = is_keeper | guarded
    review = actions == "review"
    reviewed = None  # the input rows of the review records, when taken in the pass
    taking = None
    if mode == "dedupe" and whole_rows is not None:
        # read and written on a thread of its own, beside the clusters table below
        taking = beside(_take_rows, whole_rows, chunk or DEFAULT_CHUNK_ROWS, kept, review,
                       None if chunk is None else folder)
    try:
        out = _cluster_table(n, chunk, folder, guard, cluster_rows, plain)
    except BaseException:
        if taking is not None:
            taking.wait()
        raise
    if taking is not None:
        deduplicated, reviewed = taking.result()
    if chunk is None:
        if mode == "dedupe":
            out["deduplicated"] = (frames[0].loc[kept].reset_index(drop=True)
                                   if whole_rows is None else deduplicated)
    else:
        if mode == "dedupe" and whole_rows is not None:
            out["deduplicated"] = deduplicated
        elif mode == "dedupe":
            records = frames[0]
            out["deduplicated"] = _streamed(
                folder / "deduplicated.parquet", records.iloc[:0], _like_rows(records, kept),
                (records.iloc[a:a + chunk].loc[kept[a:a + chunk]].reset_index(drop=True)
                 for a in range(0, n, chunk)))

    if mode == "dedupe":
        if review.any():
            if reviewed is None:
                reviewed = frames[0].loc[review].reset_index(drop=True)
            out["review"] = pd.concat(
                [pd.DataFrame({"review_group": pd.Series(guard.review_group[review],
                                                         dtype=object),
                               "cluster_id": clusters[review].astype(np.int64),
                               "reason": pd.Series(guard.reason[review], dtype=object)}),
                 reviewed], axis=1
            ).sort_values(["review_group", id_name], kind="stable").reset_index(drop=True)
    else:
        links = pd.DataFrame({
            "id_l": take_ids(ids, ml),
            "id_r": take_ids(ids, mr),
            "match_weight": mw.astype(np.float64),
            "cluster_id": clusters[ml].astype(np.int64),
        })
        out["links"] = links.sort_values(["cluster_id", "id_l", "id_r"], kind="stable")\
            .reset_index(drop=True)
    if guard.decisions:
        out["guards"] = pd.DataFrame(guard.decisions).astype({"record_id": str})
    return out


def _narrow_int(bound: int) -> type:
    """The narrowest signed integer type that holds every value in [-1, bound]."""
    for kind in (np.int8, np.int16, np.int32):
        if bound <= np.iinfo(kind).max:
            return kind
    return np.int64


def _strongest_link(n: int, both: np.ndarray, other: np.ndarray, w: np.ndarray,
                    linked: int) -> np.ndarray:
    """Positions of each record's strongest link: for each value of `both` (`linked` distinct
    values), the link of the highest weight `w`, then of the smallest `other`, then the first:
    the first of each record in `np.lexsort((other, -w, both))`, found without sorting (two
    reductions by record)."""
    w = np.asarray(w, dtype=np.float64)
    if np.isnan(w).any():  # NaN sorts last in a sort, where a reduction would spread it
        order = np.lexsort((other, -w, both))
        first = np.ones(len(order), dtype=bool)
        first[1:] = both[order][1:] != both[order][:-1]
        return order[first]
    top = np.full(n, -np.inf)
    np.maximum.at(top, both, w)
    at = np.flatnonzero(w == top[both])
    least = np.full(n, np.iinfo(np.int64).max, dtype=np.int64)
    np.minimum.at(least, both[at], other[at])
    at = at[other[at] == least[both[at]]]
    if len(at) == linked:  # one per record: pairs are unique, so the same (record, other)
        return at          # cannot come twice
    _, first = np.unique(both[at], return_index=True)
    return at[np.sort(first)]


def _cluster_table(n: int, chunk: int | None, folder: Path | None, guard, cluster_rows,
                   plain: bool = False) -> dict:
    """`{"clusters": ...}`: clusters.parquet's table, in memory, or with `chunk` written part
    by part into `folder` (each part an Arrow table where the run is `plain`: no guard)."""
    if chunk is None:
        return {"clusters": cluster_rows(0, n)}
    # The first record that has a review group stands in for the column's type.
    grouped = np.flatnonzero(~pd.isna(np.asarray(guard.review_group, dtype=object)))
    like = cluster_rows(0, min(n, 1))
    if len(grouped):
        like = cluster_rows(int(grouped[0]), int(grouped[0]) + 1)
    return {"clusters": _streamed(folder / "clusters.parquet", cluster_rows(0, 0), like,
                                  (cluster_rows(a, min(a + chunk, n), plain)
                                   for a in range(0, n, chunk)))}


def _plain_cluster_part(frame: pd.DataFrame, mode: str, is_keeper: np.ndarray, lone: str,
                        linked: np.ndarray, told, representative: pd.Series):
    """A part of clusters.parquet (`frame`: its columns up to cluster_size) as an Arrow
    table, for a run no guard spoke in: the action of each record by `is_keeper` (a link
    keeps every record), its reason `lone` or, at the positions `linked`, its Arrow text in
    `told`. The values the DataFrame part would hold; `ParquetSink` gives them its types."""
    import pyarrow as pa

    m = len(frame)
    table = pa.Table.from_pandas(frame, preserve_index=False).replace_schema_metadata(None)
    text = pa.large_string()
    code = (~is_keeper).astype(np.int8) if mode == "dedupe" else np.zeros(m, dtype=np.int8)
    action = pa.array(["keep", "duplicate"], text).take(pa.array(code))
    if told is None:
        reason = pa.array([lone], text).take(pa.array(np.zeros(m, dtype=np.int64)))
    else:
        at = np.full(m, len(told), dtype=np.int64)
        at[linked] = np.arange(len(told))
        reason = pa.concat_arrays([told.cast(text), pa.array([lone], text)]).take(pa.array(at))
    representative = pa.array(representative, from_pandas=True)
    for name, values in (("action", action), ("reason", reason),
                         ("representative_id", representative),
                         ("review_group", pa.nulls(m))):
        table = table.append_column(name, values)
    return table


def _streamed(path: Path, empty: pd.DataFrame, like: pd.DataFrame, parts) -> ParquetFrame:
    """A table written part by part into `path` (see `ParquetSink`), as a temporary
    `ParquetFrame`."""
    sink = ParquetSink(path, empty, like=like)
    for part in parts:
        sink.write(part)
    sink.close()
    return ParquetFrame(path, temporary=True)


def whole_rows(table: Table, n: int, id_column: str | None):
    """`whole_rows` for a table read in part: (first row number, batch) over its whole rows,
    with the `row_id` column `prepare_tables` adds when there is no id column."""

    def batches(size: int) -> Iterator[tuple[int, pd.DataFrame]]:
        start = 0
        for batch in table.rows(size):
            if id_column is None:
                batch.insert(0, ROW_ID, np.arange(start, start + len(batch), dtype=np.int64))
            yield start, batch
            start += len(batch)
        if start != n:
            raise InputError(f"{table.name}: read {n:,} records at first and {start:,} when "
                             "writing the outputs: the file changed during the run. Run again "
                             "on a file nothing writes to.")

    return batches


def _take_rows(whole_rows, size: int, kept: np.ndarray, review: np.ndarray,
               folder: Path | None):
    """The kept rows (a DataFrame, or with `folder` a Parquet file written batch by batch)
    and the review rows, from one pass over `whole_rows`."""
    empty, sink, held, reviewed = None, None, [], []
    for start, batch in whole_rows(size):
        stop = start + len(batch)
        if empty is None:
            empty = batch.iloc[:0]
        part = batch.loc[kept[start:stop]].reset_index(drop=True)
        if review[start:stop].any():
            reviewed.append(batch.loc[review[start:stop]])
        if folder is None:
            held.append(part)
        elif len(part):
            if sink is None:
                sink = ParquetSink(folder / "deduplicated.parquet", empty, like=_typed(part))
            sink.write(part)
    if folder is None:
        deduplicated = pd.concat([empty, *held], ignore_index=True) if held else empty
        deduplicated.attrs = dict(empty.attrs)
    else:
        sink = sink or ParquetSink(folder / "deduplicated.parquet", empty)
        deduplicated = sink.close()
        deduplicated = ParquetFrame(deduplicated.path, temporary=True)
    rows = pd.concat(reviewed).reset_index(drop=True) if reviewed else None
    return deduplicated, rows


def _typed(part: pd.DataFrame) -> pd.DataFrame:
    """A row that gives the written file its column types before every batch is seen: the
    first of `part`, with the first value `part` has in each text column where that row has
    none, and "" where `part` has none (a text column, as every CSV column is)."""
    like = _like_rows(part, np.ones(len(part), dtype=bool))
    for column in like.columns:
        if like[column].dtype == object and pd.isna(like.at[0, column]):
            like[column] = pd.Series([""], dtype=object)
    return like


def _like_rows(records: pd.DataFrame, rows: np.ndarray) -> pd.DataFrame:
    """The first of `rows` of `records`, with, in each text (object) column where it is
    missing, the first value another of `rows` has: the table it gives has the types that the
    whole selection would have (without selecting it)."""
    chosen = np.flatnonzero(rows)
    first = int(chosen[0]) if len(chosen) else 0
    # a slice, not a take: a take of one row from ten million Arrow strings in 77 chunks of
    # each column took 1.1 s
    like = records.iloc[first:first + min(len(chosen), 1)].reset_index(drop=True)
    for column in records.columns:
        values = records[column]
        if values.dtype == object and len(like) and pd.isna(like.at[0, column]):
            present = np.flatnonzero(values.notna().to_numpy() & rows)
            if len(present):
                like[column] = pd.Series([values.iloc[present[0]]], dtype=object)
    return like


def _link_reasons(mode, ids, idx, best_other, best_w, cluster_size, degree, is_keeper,
                  keeper, threshold, best_stage, stage_texts, arrow: bool = False):
    """The reasons of the records `idx` (in clusters of several): built as Arrow string
    columns, one piece of text per column, with one Python str per record only at the end
    (with `arrow`, none: the Arrow array is returned)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    def text(values) -> pa.Array:
        if not isinstance(values, pd.Series):
            values = pd.Series(values)
        array = pa.array(values.astype(str).reset_index(drop=True))
        return array if array.type == pa.large_string() else array.cast(pa.large_string())

    def join(*parts) -> pa.Array:
        parts = [pa.scalar(p, type=pa.large_string()) if isinstance(p, str) else p
                 for p in parts]
        return pc.binary_join_element_wise(*parts, pa.scalar("", type=pa.large_string()))

    via = text(take_ids(ids, best_other[idx]))
    weights = two_decimals(best_w[idx])
    sizes = text(cluster_size[idx])
    tail = join(" (match weight ", weights, f" >= {threshold:g})")
    stage = best_stage[idx]
    if (stage >= 0).any():
        # A stage's link says so, with its weight on whichever side of the threshold it is.
        said = text(pd.Series(stage).map(dict(enumerate(stage_texts))).fillna(""))
        side = text(np.where(best_w[idx] >= threshold, " >= ", " < "))
        tail = pc.if_else(pa.array(stage >= 0),
                          join(" (", said, "; match weight ", weights, side, f"{threshold:g})"),
                          tail)
    if mode == "dedupe":
        head = pc.if_else(pa.array(is_keeper[idx]), join("kept for cluster of ", sizes),
                          join("duplicate of ", text(take_ids(ids, keeper[idx]))))
        out = join(head, ": linked by ", text(degree[idx]), " pair(s), strongest with ", via,
                   tail)
    else:
        out = join("linked with ", via, tail, " in cluster of ", sizes)
    return out if arrow else out.to_numpy(zero_copy_only=False)


def two_decimals(values: np.ndarray):
    """`"{:.2f}".format(np.round(v, 2))` of each value, as Arrow text, made without a Python
    float or str per value: `np.round` takes the integer nearest to 100 v (k) and divides by
    100, and the float nearest to k / 100 prints with two decimals as k's digits. Values that
    are not finite or too large for that are formatted by Python."""
    import pyarrow as pa
    import pyarrow.compute as pc

    values = np.asarray(values, dtype=np.float64)
    rounded = np.round(values, 2)
    hundredths = np.rint(values * 100)  # what np.round divides by 100
    exact = np.isfinite(rounded) & (np.abs(hundredths) < 2.0 ** 52)
    k = np.abs(np.where(exact, hundredths, 0)).astype(np.int64)
    whole = pa.array(k // 100).cast(pa.large_string())
    cents = pc.utf8_lpad(pa.array(k % 100).cast(pa.large_string()), width=2, padding="0")
    sign = pa.array(np.where(np.signbit(rounded), "-", ""), type=pa.large_string())
    dot, empty = pa.scalar(".", pa.large_string()), pa.scalar("", pa.large_string())
    out = pc.binary_join_element_wise(sign, whole, dot, cents, empty)
    if not exact.all():
        other = np.flatnonzero(~exact)
        text = np.empty(len(values), dtype=object)
        text[other] = [f"{v:.2f}" for v in rounded[other]]
        out = pc.if_else(pa.array(exact), out, pa.array(text, type=pa.large_string(),
                                                        from_pandas=True))
    return out


def pair_frame(ids: pd.Series, left: np.ndarray, right: np.ndarray, mask: np.ndarray,
                matrix: ComparisonMatrix, weight: np.ndarray, probability: np.ndarray,
                matched: np.ndarray) -> pd.DataFrame:
    """The rows of pairs.parquet for these pairs (all of them, or one batch)."""
    pair_frame = pd.DataFrame({
        "id_l": take_ids(ids, left),
        "id_r": take_ids(ids, right),
        "blockers": np.asarray(mask).astype(np.int64),
    })
    for c, name in enumerate(matrix.names):
        pair_frame[f"{name}_level"] = matrix.levels[:, c]
        pair_frame[f"{name}_similarity"] = matrix.similarities[:, c]
    for name, shares in matrix.term_frequencies.items():
        pair_frame[f"{name}_tf"] = shares
    pair_frame["match_weight"] = weight.astype(np.float64)
    pair_frame["match_probability"] = probability.astype(np.float64)
    pair_frame["is_match"] = matched
    return pair_frame


def take_ids(ids: pd.Series, rows: np.ndarray) -> pd.Series:
    """The ids of `rows`, as a column of the ids' dtype with a fresh index and no name."""
    return ids.take(np.asarray(rows, dtype=np.int64)).reset_index(drop=True).rename(None)
