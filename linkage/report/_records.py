"""The records a reviewer judges a run by: which ones the report shows, and the bounded sample
of their values that a run keeps for it (`report_records.parquet`).

Which records (`pick`), from the run's tables alone, so the run and `linkage report RUN_DIR`
choose the same ones:

- removed records (dedupe): `REMOVED_SHOWN` of the records marked `duplicate`, chosen by a
  hash of their id (spread over the table, the same on every run), each with the record kept
  in its place (its `representative_id`);
- the pairs nearest the threshold: the `BORDERLINE_SHOWN` lowest at or above it and the
  `BORDERLINE_SHOWN` highest below it;
- the largest clusters and the weakest: a cluster's joining edge is the weakest pair of its
  maximum spanning tree over the accepted pairs (the pair without which the cluster falls in
  two groups, at the highest weight that still holds it together); the weakest clusters are
  those whose joining edge is lowest.

Every choice is bounded (a few dozen records however large the run) and breaks ties by id.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from itertools import pairwise, repeat
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from linkage.io import few_rows
from linkage.report._sections import sizes_above_one

if TYPE_CHECKING:
    from linkage.result import Result

REMOVED_SHOWN = 12
BORDERLINE_SHOWN = 8
CLUSTERS_SHOWN = 4
MEMBERS_SHOWN = 8
VALUE_CHARS = 200  # longer values are cut before they are compared and shown
SIDE = "record_side"  # link runs: "left" or "right", as in clusters.parquet's `source`
FILE = "report_records.parquet"

Key = tuple[str, str]  # (side, id as text); side is "" in a dedupe run


@dataclass
class Cluster:
    cluster_id: Any
    size: int
    members: list[Key]  # the shown members: the joining pair first, then by rank
    groups: dict[Key, str]  # member -> "A" or "B", the two sides of the joining edge
    edge: tuple[Key, Key, float] | None  # the joining pair and its weight
    representative: Key | None


@dataclass
class Picked:
    removed: list[tuple[Key, Key, float | None]] = field(default_factory=list)
    above: list[tuple[Key, Key, float, bool]] = field(default_factory=list)
    below: list[tuple[Key, Key, float, bool]] = field(default_factory=list)
    largest: list[Cluster] = field(default_factory=list)
    weakest: list[Cluster] = field(default_factory=list)

    def keys(self) -> list[Key]:
        found: dict[Key, None] = {}
        for a, b, _ in self.removed:
            found.update({a: None, b: None})
        for a, b, *_ in self.above + self.below:
            found.update({a: None, b: None})
        for c in self.largest + self.weakest:
            found.update(dict.fromkeys(c.members))
        return list(found)


def _text(values: pd.Series) -> np.ndarray:
    return values.astype(str).to_numpy(dtype=object)


def _take_text(values: pd.Series, rows) -> np.ndarray:
    """`_text(values.iloc[rows])` for a few `rows`. A column of text held in Arrow chunks is
    read a value at a time: pandas would first join all its chunks."""
    rows = [int(i) for i in np.asarray(rows, dtype=np.int64).reshape(-1)]
    dtype = values.dtype
    arrow_backed = (isinstance(dtype, pd.StringDtype) and "pyarrow" in str(dtype.storage)) \
        or isinstance(dtype, pd.ArrowDtype)
    if arrow_backed and rows:
        import pyarrow as pa

        column = pa.array(values)
        if pa.types.is_string(column.type) or pa.types.is_large_string(column.type):
            found = [column[i].as_py() for i in rows]
            if all(isinstance(x, str) for x in found):
                return np.array(found, dtype=object)
    return _text(values.iloc[rows])


def _arrow_text(values):
    """`values` as an Arrow string array holding what `_text` gives, where that is sure: no
    missing value, and strings or integers (whose text Arrow writes as Python does). None
    otherwise: the caller then works on `_text`'s Python strings."""
    import pyarrow as pa

    if len(values) == 0 or pd.api.types.is_bool_dtype(values.dtype) or values.isna().any():
        return None
    try:
        if pd.api.types.is_integer_dtype(values.dtype):
            array = pa.array(values.to_numpy())
        elif pd.api.types.is_string_dtype(values.dtype):
            array = pa.array(values, from_pandas=True)
        else:
            return None
    except (pa.ArrowException, TypeError, ValueError):
        return None
    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks()
    if not (pa.types.is_integer(array.type) or pa.types.is_string(array.type)
            or pa.types.is_large_string(array.type)):
        return None
    return array.cast(pa.large_string())


def _threshold(result: Result) -> float | None:
    from linkage.report._sections import threshold_of

    return threshold_of(result)


def _order_key(text: np.ndarray) -> np.ndarray:
    """A hash of each id: a spread that does not depend on the input's order. The 8 bytes of
    its blake2b digest as one big-endian number, which orders as the digest's hex text does."""
    blake2b = hashlib.blake2b
    digests = b"".join([blake2b(t.encode("utf-8"), digest_size=8).digest() for t in text])
    return np.frombuffer(digests, dtype=">u8").astype(np.uint64)


def _arrow_order_key(text) -> np.ndarray:
    """`_order_key` of an Arrow array of text (large_string, no missing value), hashed from
    its UTF-8 bytes as they lie in the array: no Python string is made."""
    import pyarrow as pa

    text = text.cast(pa.large_string())
    _, offsets, data = text.buffers()
    offsets = np.frombuffer(offsets, dtype=np.int64)[text.offset:text.offset + len(text) + 1]
    data = b"" if data is None else data.to_pybytes()
    blake2b = hashlib.blake2b
    at = offsets.tolist()
    digests = b"".join([blake2b(data[start:stop], digest_size=8).digest()
                        for start, stop in pairwise(at)])
    return np.frombuffer(digests, dtype=">u8").astype(np.uint64)


def _first_by_hash(text, count: int) -> np.ndarray:
    """The positions in `text` (ids as text: an array, or an `_Ids` of some records) of the
    `count` first ids by (`_order_key`, id, position)."""
    if isinstance(text, _Ids) and text.arrow is not None:
        key = _arrow_order_key(text.arrow)
    else:
        text = text[np.arange(len(text))] if isinstance(text, _Ids) else text
        key = _order_key(text)
    if len(key) > count:  # only the candidates: those at most the count-th smallest key
        cut = np.partition(key, count - 1)[count - 1]
        near = np.flatnonzero(key <= cut)
    else:
        near = np.arange(len(key))
    near_text = dict(zip(near.tolist(), text[near].tolist(), strict=True))
    return np.array(sorted(near.tolist(), key=lambda i: (key[i], near_text[i], i))[:count],
                    dtype=np.int64)


def pick(result: Result, *, pair_rows: PairRows | None = None) -> Picked:
    """The records and pairs the report shows (see the module's text). Kept on the result: a
    run picks once for report_records.parquet and once more for its page.

    `pair_rows`: a dedupe run's pairs as the run holds them (`PairRows`), which are otherwise
    read again from pairs.parquet and their records found by id. The same picks."""
    cached = getattr(result, "_report_picked", None)
    if cached is None:
        cached = result._report_picked = _pick(result, pair_rows)
    return cached


@dataclass
class PairRows:
    """Every candidate pair of a dedupe run in the order of pairs.parquet: its two records'
    rows (the rows of clusters.parquet: ids are unique), `match_weight` and `is_match`."""

    left: np.ndarray
    right: np.ndarray
    weight: np.ndarray
    matched: np.ndarray


def _pick(result: Result, pair_rows: PairRows | None = None) -> Picked:
    picked = Picked()
    clusters = result.clusters
    if clusters is None or len(clusters) == 0:
        return picked
    link = result.summary_data.get("mode", result.mode) == "link"
    id_name = result.summary_data.get("id_column") or clusters.columns[0]
    if id_name not in clusters.columns:
        id_name = clusters.columns[0]
    frame = clusters[[c for c in (id_name, "source", "cluster_id", "action",
                                  "representative_id") if c in clusters.columns]]
    fast = _arrow_text(frame[id_name])
    # With the ids as Arrow text the column itself is not read again: an empty one of its
    # type stands in for it, so that it is freed with the frame below.
    ids = _Ids(frame[id_name] if fast is None
               else pd.Series(pd.array([], dtype=frame[id_name].dtype)), fast)
    sides = _text(frame["source"]) if link and "source" in frame.columns \
        else np.full(len(frame), "", dtype=object)
    keys = _Keys(sides, ids)
    if link:
        pair_rows = None  # a link run's accepted pairs are its links

    # -- removed records, each with the record kept in its place
    removed_pairs: list[tuple[str, str]] = []
    if not link and "action" in frame.columns:
        removed = np.flatnonzero((frame["action"] == "duplicate").to_numpy(dtype=bool,
                                                                         na_value=False))
        if len(removed):
            chosen = removed[_first_by_hash(ids.subset(removed), REMOVED_SHOWN)]
            chosen_ids = ids[chosen]
            order = np.argsort(chosen_ids, kind="stable")
            chosen, chosen_ids = chosen[order], chosen_ids[order]
            representative = _take_text(frame["representative_id"], chosen)
            removed_pairs = list(zip(chosen_ids.tolist(), representative.tolist(),
                                     strict=True))
    # What the rest reads of the records (`_clusters`); the other columns (ids, actions: ten
    # million strings each at 10M records) go before the pairs are scanned and clustered.
    frame = frame[[c for c in ("cluster_id", "representative_id") if c in frame.columns]]

    pairs = result.pairs
    side_l, side_r = ("left", "right") if link else ("", "")
    by_links = link and result.links is not None and len(result.links) > 0
    position = None if pair_rows is not None else _Lookup(sides, ids, fast)
    if pair_rows is not None and fast is not None:  # ids as Arrow text: the pairs' id text
        scanned = _scan_rows(pair_rows, ids, _threshold(result), removed_pairs)
    else:
        scanned = _scan(pairs, _threshold(result), removed_pairs, edges=None
                        if by_links or pair_rows is not None else (position, side_l, side_r))
    picked.removed = [(("", a), ("", b), scanned.weights.get((a, b))) for a, b in removed_pairs]
    for name, nearest in (("above", scanned.above), ("below", scanned.below)):
        setattr(picked, name, [((side_l, a), (side_r, b), w, m) for _, a, b, w, m in nearest])
    if pairs is None or len(pairs) == 0 or "match_weight" not in pairs.columns:
        return picked

    # -- the largest clusters and the weakest
    if pair_rows is not None:
        accepted = np.flatnonzero(pair_rows.matched)
        a = np.asarray(pair_rows.left[accepted], dtype=np.int64)
        b = np.asarray(pair_rows.right[accepted], dtype=np.int64)
        w = np.asarray(pair_rows.weight[accepted], dtype=float)
    elif by_links:
        links = result.links
        a = position.positions(side_l, _text(links["id_l"]))
        b = position.positions(side_r, _text(links["id_r"]))
        w = links["match_weight"].to_numpy(dtype=float)
    elif side_l == side_r:  # one lookup for both ends
        both = position.positions_of(side_l, scanned.edge_a + scanned.edge_b)
        a, b = np.split(both, [sum(len(part) for part in scanned.edge_a)])
    else:
        a = position.positions_of(side_l, scanned.edge_a)
        b = position.positions_of(side_r, scanned.edge_b)
    if not by_links and pair_rows is None:
        w = np.concatenate(scanned.edge_w) if scanned.edge_w else np.zeros(0, dtype=float)
    picked.largest, picked.weakest = _clusters(frame, keys, a, b, w)
    return picked


BATCH_ROWS = 65_536  # pairs at a time when they are in memory


@dataclass
class _Scanned:
    """What one pass over the pairs keeps: a few rows each, and the accepted pairs."""

    above: list[tuple] = field(default_factory=list)  # (sort key, id_l, id_r, weight, match)
    below: list[tuple] = field(default_factory=list)
    weights: dict[tuple[str, str], float] = field(default_factory=dict)
    edge_a: list = field(default_factory=list)  # accepted pairs: their ids, a batch at a
    edge_b: list = field(default_factory=list)  # time (Arrow arrays), looked up at the end
    edge_w: list[np.ndarray] = field(default_factory=list)


class _Ids:
    """Each record's id as text (`_text`), by position or positions, made only for the
    records asked for: the run's ids stay in their column (or Arrow array) until then."""

    def __init__(self, values: pd.Series, arrow=None):
        self.values, self.arrow = values, arrow

    def __len__(self) -> int:
        return len(self.values) if self.arrow is None else len(self.arrow)

    def subset(self, rows: np.ndarray) -> _Ids:
        """The ids of these records, as their own `_Ids`."""
        import pyarrow as pa

        values = self.values.iloc[rows].reset_index(drop=True) if self.arrow is None \
            else self.values.iloc[:0]
        arrow = None if self.arrow is None else self.arrow.take(pa.array(rows, pa.int64()))
        return _Ids(values, arrow)

    def __getitem__(self, rows):
        if np.ndim(rows) == 0:
            if self.arrow is not None:
                return self.arrow[int(rows)].as_py()
            return str(_text(self.values.iloc[[int(rows)]])[0])
        rows = np.asarray(rows, dtype=np.int64)
        if self.arrow is not None:
            import pyarrow as pa

            return np.array(self.arrow.take(pa.array(rows)).to_pylist(), dtype=object)
        return _text(self.values.iloc[rows])


class _Keys:
    """Each record's key (side, id as text), by position, made only for the records asked
    for: a run of a million records needs a few dozen of them."""

    def __init__(self, sides: np.ndarray, ids: _Ids):
        self.sides, self.ids = sides, ids

    def __len__(self) -> int:
        return len(self.ids)

    def __getitem__(self, i: int) -> Key:
        return (str(self.sides[i]), str(self.ids[i]))


class _Lookup:
    """Record positions by key: per side, where an id repeats on a side, its last position.
    With the ids as Arrow text (`_arrow_text`), one Arrow hash lookup per column of ids;
    otherwise a dict of ids per side, looked up a column of ids at a time."""

    def __init__(self, sides: np.ndarray, ids: _Ids, arrow=None):
        self.arrow = arrow
        self.rows: dict[str, np.ndarray] = {}
        self.by_side: dict[str, dict[str, int]] = {}
        for side in dict.fromkeys(sides.tolist()):
            rows = np.flatnonzero(sides == side)
            self.rows[side] = rows
            if arrow is None:
                self.by_side[side] = dict(zip(ids[rows].tolist(), rows.tolist(), strict=True))

    def positions(self, side: str, ids: np.ndarray) -> np.ndarray:
        if self.arrow is not None:
            import pyarrow as pa

            text = [x if isinstance(x, str) else None for x in ids.tolist()]
            return self._arrow_positions(side, pa.array(text, pa.large_string()))
        found = self.by_side.get(side, {})
        return np.fromiter(map(found.get, ids.tolist(), repeat(-1)), dtype=np.int64,
                           count=len(ids))

    def positions_of(self, side: str, parts: list) -> np.ndarray:
        """`positions` of the ids in `parts` (Arrow arrays, one after the other)."""
        if not parts:
            return np.zeros(0, dtype=np.int64)
        import pyarrow as pa
        import pyarrow.compute as pc

        if self.arrow is None:
            return np.concatenate([self.positions(side, _text(p.to_pandas())) for p in parts])
        whole = pa.chunked_array([pc.cast(p, pa.large_string()) for p in parts],
                                 type=pa.large_string())
        if whole.null_count:  # a missing id is not text: `_text` path, as before
            return np.concatenate([self.positions(side, _text(p.to_pandas())) for p in parts])
        return self._arrow_positions(side, whole)

    def _arrow_positions(self, side: str, ids) -> np.ndarray:
        import pyarrow.compute as pc

        rows = self.rows.get(side)
        if rows is None or not len(rows) or not len(ids):
            return np.full(len(ids), -1, dtype=np.int64)
        values = self.arrow if len(rows) == len(self.arrow) else self.arrow.take(rows)
        # Looked up in the values reversed: where an id repeats, its last position.
        at = pc.index_in(ids, value_set=values[::-1])
        at = at.to_numpy(zero_copy_only=False) if not at.null_count else \
            pc.fill_null(at, -1).to_numpy(zero_copy_only=False)
        at = np.asarray(at, dtype=np.int64)
        return np.where(at >= 0, rows[np.clip(len(rows) - 1 - at, 0, len(rows) - 1)], -1)


def _batches(pairs, columns: list[str]):
    """The pairs' `columns` as Arrow record batches: from a Parquet file a row group at a
    time, from a DataFrame `BATCH_ROWS` at a time. Never a whole column in memory at once."""
    import pyarrow as pa

    path = getattr(pairs, "path", None)
    if path is not None and getattr(pairs, "_frame", None) is None:
        import pyarrow.parquet as pq

        file = pq.ParquetFile(path)
        for group in range(file.num_row_groups):
            yield from file.read_row_group(group, columns=columns).to_batches()
        return
    frame = pairs.to_pandas() if hasattr(pairs, "to_pandas") else pairs
    for start in range(0, len(frame), BATCH_ROWS):
        part = frame.iloc[start:start + BATCH_ROWS]
        yield pa.RecordBatch.from_arrays([pa.array(part[c], from_pandas=True)
                                          for c in columns], names=columns)


def _nearest(weight: np.ndarray, threshold: float):
    """("above", rows, distances) and ("below", ...): the rows of the finite `weight`s on that
    side of `threshold` nearest it (the `BORDERLINE_SHOWN` nearest, with all tied with the
    last), and their distance to it, signed so that nearest is lowest."""
    finite = np.isfinite(weight)
    for name, mask, sign in (("above", finite & (weight >= threshold), 1.0),
                             ("below", finite & (weight < threshold), -1.0)):
        rows = np.flatnonzero(mask)
        if not len(rows):
            continue
        signed = sign * weight[rows]
        if len(rows) > BORDERLINE_SHOWN:
            cut = np.partition(signed, BORDERLINE_SHOWN - 1)[BORDERLINE_SHOWN - 1]
            rows, signed = rows[signed <= cut], signed[signed <= cut]
        yield name, rows, signed


def _scan(pairs, threshold: float | None, removed: list[tuple[str, str]], *,
          edges: tuple[_Lookup, str, str] | None) -> _Scanned:
    """One pass over the pairs, a batch at a time, keeping only: the `BORDERLINE_SHOWN` pairs
    nearest `threshold` on each side (by distance, then ids: the same whatever the batches),
    the weight of each `removed` pair of ids (either order), and with `edges` (the records'
    positions by key, and the sides of id_l and id_r) the accepted pairs as positions. Ids
    become text only for the rows kept."""
    scanned = _Scanned()
    if pairs is None or len(pairs) == 0 or "match_weight" not in pairs.columns:
        return scanned
    import pyarrow as pa
    import pyarrow.compute as pc

    has_match = "is_match" in pairs.columns
    columns = ["id_l", "id_r", "match_weight"] + (["is_match"] if has_match else [])
    wanted = {(a, b) for a, b in removed} | {(b, a) for a, b in removed}
    names = pa.array(sorted({a for a, _ in removed} | {b for _, b in removed}), pa.string())

    def text(batch, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        at = pa.array(rows, type=pa.int64())
        return (_text(batch.column(0).take(at).to_pandas()),
                _text(batch.column(1).take(at).to_pandas()))

    for batch in _batches(pairs, columns):
        weight = batch.column(2).to_numpy(zero_copy_only=False).astype(float, copy=False)
        is_match = (batch.column(3).to_numpy(zero_copy_only=False).astype(bool, copy=False)
                    if has_match else np.zeros(len(weight), dtype=bool))
        if edges is not None:
            rows = np.flatnonzero(is_match)
            at = pa.array(rows, type=pa.int64())
            scanned.edge_a.append(batch.column(0).take(at))
            scanned.edge_b.append(batch.column(1).take(at))
            scanned.edge_w.append(weight[rows])
        if threshold is not None:
            for name, rows, signed in _nearest(weight, threshold):
                left, right = text(batch, rows)
                kept = getattr(scanned, name) + [
                    (float(d), a, b, float(weight[i]), bool(is_match[i]))
                    for d, a, b, i in zip(signed, left, right, rows, strict=True)]
                setattr(scanned, name, sorted(kept)[:BORDERLINE_SHOWN])
        if len(names):
            near = pc.and_(pc.is_in(pc.cast(batch.column(0), pa.string()), value_set=names),
                           pc.is_in(pc.cast(batch.column(1), pa.string()), value_set=names))
            rows = np.flatnonzero(near.to_numpy(zero_copy_only=False))
            left, right = text(batch, rows)
            for a, b, i in zip(left, right, rows, strict=True):
                if (a, b) in wanted:
                    scanned.weights[(a, b)] = scanned.weights[(b, a)] = float(weight[i])
    return scanned


def _scan_rows(rows: PairRows, ids: _Ids, threshold: float | None,
               removed: list[tuple[str, str]]) -> _Scanned:
    """What `_scan` keeps (but the accepted pairs), from the pairs as the run holds them,
    with `ids` (as Arrow text) the text of each record's id: the same rows, in pair order."""
    import pyarrow as pa
    import pyarrow.compute as pc

    scanned = _Scanned()
    weight = np.asarray(rows.weight, dtype=float)
    if threshold is not None:
        for name, at, signed in _nearest(weight, threshold):
            left, right = ids[rows.left[at]], ids[rows.right[at]]
            setattr(scanned, name, sorted(
                (float(d), a, b, float(weight[i]), bool(rows.matched[i]))
                for d, a, b, i in zip(signed, left, right, at, strict=True))[:BORDERLINE_SHOWN])
    if removed:
        wanted = {(a, b) for a, b in removed} | {(b, a) for a, b in removed}
        names = pa.array(sorted({a for a, _ in removed} | {b for _, b in removed}),
                         pa.large_string())
        named = np.asarray(pc.is_in(ids.arrow, value_set=names).to_numpy(zero_copy_only=False),
                           dtype=bool)  # the records of those ids
        at = np.flatnonzero(named[rows.left] & named[rows.right])
        for a, b, i in zip(ids[rows.left[at]], ids[rows.right[at]], at, strict=True):
            if (a, b) in wanted:
                scanned.weights[(a, b)] = scanned.weights[(b, a)] = float(weight[i])
    return scanned


def _clusters(frame: pd.DataFrame, keys: _Keys, a: np.ndarray, b: np.ndarray,
              w: np.ndarray) -> tuple[list[Cluster], list[Cluster]]:
    """The largest and the weakest clusters, from the accepted pairs `a`-`b` (positions in
    `keys`, -1 for a record not there) of weights `w`."""
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components, minimum_spanning_tree

    n = len(keys)
    cluster = frame["cluster_id"].to_numpy()
    ok = (a >= 0) & (b >= 0) & (a != b)
    a, b, w = a[ok], b[ok], np.asarray(w, dtype=float)[ok]
    w = np.where(np.isnan(w), np.inf, w)  # a pair a stage matched holds like the strongest
    several = sizes_above_one(cluster)
    if several.empty or not len(a):
        return [], []
    # The maximum spanning forest: strongest pairs first, ties by the records' positions.
    lo, hi = np.minimum(a, b), np.maximum(a, b)
    pair_key = lo.astype(np.int64) * n + hi  # orders as (lo, hi)
    by_key = np.argsort(pair_key, kind="stable")
    order = by_key[np.argsort(-w[by_key], kind="stable")]  # as np.lexsort((hi, lo, -w))
    cost = np.empty(len(order), dtype=np.float64)
    cost[order] = np.arange(1, len(order) + 1, dtype=np.float64)
    graph = coo_matrix((cost, (lo, hi)), shape=(n, n)).tocsr()  # duplicates: summed, rare
    tree = minimum_spanning_tree(graph).tocoo()
    # Each tree edge's pair: where a pair repeats, its last one (as a dict of pairs would).
    tree_key = tree.row.astype(np.int64) * n + tree.col
    at = np.searchsorted(pair_key[by_key], tree_key, side="right") - 1
    found = (at >= 0) & (pair_key[by_key][np.clip(at, 0, None)] == tree_key)
    tree_edges = by_key[at[found]].astype(np.int64)
    if not len(tree_edges):
        return [], []
    in_tree = np.zeros(len(w), dtype=bool)
    in_tree[tree_edges] = True
    tree_by_cost = order[in_tree[order]]  # the tree edges, weakest last
    joins = _joining_edges(cluster[lo[tree_by_cost]], tree_by_cost)
    joins = joins[joins.index.isin(several.index)]
    if joins.empty:
        return [], []
    # The two groups of each joining edge: the forest without the joining edges.
    rest = np.zeros(len(w), dtype=bool)  # as np.setdiff1d(tree_edges, joins): sorted, unique
    rest[tree_edges] = True
    rest[joins.to_numpy()] = False
    rest = np.flatnonzero(rest)
    _, component = connected_components(
        coo_matrix((np.ones(len(rest)), (lo[rest], hi[rest])), shape=(n, n)), directed=False)

    # Only the few shown are sorted: the clusters at least as large as the CLUSTERS_SHOWN-th
    # largest, and those whose joining pair is at most as strong as the (2 x CLUSTERS_SHOWN)-th
    # weakest (enough for the weakest once the largest are taken out), each by its full key.
    size = several.reindex(joins.index).to_numpy()
    strength = w[joins.to_numpy()]
    count = min(CLUSTERS_SHOWN, len(joins))
    is_big = size >= np.partition(size, len(size) - count)[len(size) - count]
    count = min(2 * CLUSTERS_SHOWN, len(joins))
    is_weak = strength <= np.partition(strength, count - 1)[count - 1]
    big, weak = joins.index[is_big], joins.index[is_weak]
    size_of = dict(zip(big.tolist(), size[is_big].tolist(), strict=True))  # the candidates'
    size_of.update(zip(weak.tolist(), size[is_weak].tolist(), strict=True))
    largest = sorted(big, key=lambda c: (-size_of[c], str(c)))[:CLUSTERS_SHOWN]
    weakest_order = sorted(weak, key=lambda c: (w[joins[c]], -size_of[c], str(c)))
    weakest = [c for c in weakest_order if c not in largest][:CLUSTERS_SHOWN]
    chosen = set(largest) | set(weakest)
    if cluster.dtype.kind in "iu":  # a few ids: a comparison each over the column
        rows = np.flatnonzero(np.isin(cluster, np.array(sorted(chosen), dtype=cluster.dtype)))
    else:
        rows = np.flatnonzero(pd.Series(cluster).isin(chosen).to_numpy())
    representative = frame.get("representative_id")
    by_cluster: dict[Any, list[int]] = {}
    for i in rows:
        by_cluster.setdefault(cluster[i], []).append(int(i))

    def build(c) -> Cluster:
        edge = int(joins[c])
        x, y = int(lo[edge]), int(hi[edge])
        members = by_cluster[c]
        rep = None
        if representative is not None:
            rep_id = _take_text(representative, [members[0]])[0]
            rep = next((keys[i] for i in members if keys[i][1] == rep_id), None)
        rank = sorted(members, key=lambda i: (i not in (x, y), keys[i] != rep,
                                              keys[i][0], keys[i][1]))
        shown = rank[:MEMBERS_SHOWN]
        groups = {keys[i]: ("A" if component[i] == component[x] else
                            "B" if component[i] == component[y] else "")
                  for i in shown}
        return Cluster(cluster_id=c, size=int(size_of[c]), members=[keys[i] for i in shown],
                       groups=groups, edge=(keys[x], keys[y], float(w[edge])),
                       representative=rep)

    return [build(c) for c in largest], [build(c) for c in weakest]


def _joining_edges(edge_cluster: np.ndarray, edges: np.ndarray) -> pd.Series:
    """Each cluster's joining edge: of the tree `edges` (weakest last) and their clusters, the
    last of each cluster; indexed by cluster, in the clusters' order."""
    if (edge_cluster.dtype.kind in "iu" and len(edge_cluster) and edge_cluster.min() >= 0
            and edge_cluster.max() < 4 * len(edge_cluster) + 1024):
        last = np.full(int(edge_cluster.max()) + 1, -1, dtype=np.int64)
        np.maximum.at(last, edge_cluster, np.arange(len(edges), dtype=np.int64))
        has = np.flatnonzero(last >= 0)
        return pd.Series(edges[last[has]],
                         index=pd.Index(has.astype(edge_cluster.dtype, copy=False)))
    rank = np.arange(len(edges))
    joins = pd.DataFrame({"cluster": edge_cluster, "edge": edges, "rank": rank})
    return joins.sort_values(["cluster", "rank"], kind="stable").groupby(
        "cluster", sort=True).tail(1).set_index("cluster")["edge"]


def sample(result: Result, records: pd.DataFrame, *, id_name: str,
           source: np.ndarray | None = None, pair_rows: PairRows | None = None
           ) -> pd.DataFrame:
    """The rows of `records` (the run's input records, in the order of clusters.parquet, as
    the pipeline holds them) that the report shows: the columns the rules read, as text
    (missing stays missing), the id first, `record_side` first in a link run. `pair_rows`: as
    `pick`'s."""
    link = result.mode == "link"
    wanted = pick(result, pair_rows=pair_rows).keys()
    columns = [c for c in dict.fromkeys([id_name, *result.rules.columns(),
                                         *result.rules.report_columns]) if c in records.columns]
    sides = np.where(np.asarray(source) == 0, "left", "right") if link and source is not None \
        else np.full(len(records), "", dtype=object)
    first: dict[Key, int] = {}
    names = sorted({k[1] for k in wanted})
    arrow = _arrow_text(records[id_name])
    if arrow is not None:  # only the records asked for become Python strings
        import pyarrow as pa
        import pyarrow.compute as pc

        near = np.flatnonzero(pc.is_in(arrow, value_set=pa.array(names, pa.large_string()))
                              .to_numpy(zero_copy_only=False))
        near_ids = arrow.take(pa.array(near, pa.int64())).to_pylist()
    else:
        ids = records[id_name].astype(str).to_numpy(dtype=object)
        near = np.flatnonzero(pd.Series(ids).isin(set(names)).to_numpy())
        near_ids = ids[near].tolist()
    for i, name in zip(near.tolist(), near_ids, strict=True):
        first.setdefault((str(sides[i]), name), i)
    rows = np.array(sorted(first[k] for k in wanted if k in first), dtype=np.int64)
    taken = few_rows(records[columns], rows).reset_index(drop=True)
    out = pd.DataFrame({c: pd.Series([None if _missing(v) else str(v)[:VALUE_CHARS * 2]
                                      for v in taken[c]], dtype=object) for c in columns})
    if link:
        out.insert(0, SIDE, pd.Series(sides[rows], dtype=object))
    keys = list(zip(out[SIDE] if link else [""] * len(out), out[id_name].astype(str),
                    strict=True))
    order = sorted(range(len(out)), key=lambda i: keys[i])
    return out.iloc[order].reset_index(drop=True)


def _missing(value: object) -> bool:
    try:
        return bool(pd.isna(value))
    except (TypeError, ValueError):
        return False
