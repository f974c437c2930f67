"""Guards: rules that keep legitimate repeats between scoring and the keeper.

A guard reads a `GuardContext` (the input rows, every scored candidate pair, which pairs are
matched) and changes it in place: edge guards un-match pairs (`domain_thresholds`,
`must_not_link`, `max_cluster_size`), record guards set a record's action (`preserved`,
`review`), its reason, its review group, or how many copies its cluster may keep
(`distinct_events`, `conflicting_labels`, `keep_up_to`). Every decision is written to
`ctx.decisions` with the record id, so `linkage explain` can print what touched a record.

`apply_guards` runs them in a fixed stage order whatever the order of the list: thresholds
first (they redefine which pairs are matched), then the guards that remove edges, then the
record guards, then `max_cluster_size` with `action: review` (it must know which clusters
`keep_up_to` protects); inside a stage, in list order. A protected cluster it finds too big is
held until the keeper has ranked its records (`GuardContext.settle`): the copies `keep_up_to`
keeps are kept, the rest go to review. Everything is deterministic: edges are removed weakest
first with ties broken by (left, right), groups are numbered by their smallest row.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from linkage._schema import Configurable, SchemaViolation, check
from linkage.clustering import connected_components
from linkage.errors import InputError
from linkage.options import OversizedAction

__all__ = [
    "ConflictingLabels",
    "DistinctEvents",
    "DomainThresholds",
    "Guard",
    "GuardContext",
    "KeepUpTo",
    "MaxClusterSize",
    "MustNotLink",
    "apply_guards",
]

_ACTION_RANK = {None: 0, "preserved": 1, "review": 2}


@dataclass
class GuardContext:
    """What guards read and change. Arrays are per row (record) or per candidate pair."""

    records: pd.DataFrame  # the input rows (row i = record i), original values
    ids: np.ndarray  # record id per row (object)
    source: np.ndarray  # int8 table per row (0 for dedupe)
    left: np.ndarray  # ALL scored candidate pairs, row numbers, left < right
    right: np.ndarray
    weight: np.ndarray
    matched: np.ndarray  # bool per pair; guards may change it
    threshold: float
    action: np.ndarray | None = None  # None (pipeline decides) / "preserved" / "review"
    reason: np.ndarray | None = None  # None or the guard's reason text
    review_group: np.ndarray | None = None  # None or e.g. "conflicting_labels:3"
    keep_limit: np.ndarray | None = None  # copies the keeper keeps (max over the cluster)
    decisions: list[dict] = field(default_factory=list)
    protected: np.ndarray | None = None  # bool: its cluster holds a record keep_up_to protects
    held: list[tuple] = field(default_factory=list)  # review waiting for the keeper (`settle`)

    def __post_init__(self) -> None:
        n = len(self.records)
        self.records = self.records.reset_index(drop=True)
        self.ids = np.asarray(self.ids, dtype=object)
        self.source = (np.zeros(n, dtype=np.int8) if self.source is None
                       else np.asarray(self.source, dtype=np.int8))
        self.left = np.asarray(self.left, dtype=np.int64)
        self.right = np.asarray(self.right, dtype=np.int64)
        self.weight = np.asarray(self.weight, dtype=float)
        if self.matched is None:
            self.matched = self.weight >= self.threshold
        self.matched = np.array(self.matched, dtype=bool)  # a copy: guards change it
        if self.action is None:
            self.action = np.full(n, None, dtype=object)
        if self.reason is None:
            self.reason = np.full(n, None, dtype=object)
        if self.review_group is None:
            self.review_group = np.full(n, None, dtype=object)
        if self.keep_limit is None:
            self.keep_limit = np.ones(n, dtype=np.int64)
        if self.protected is None:
            self.protected = np.zeros(n, dtype=bool)
        if len(self.ids) != n:
            raise ValueError(f"GuardContext: {len(self.ids)} ids for {n} records")
        if not (len(self.left) == len(self.right) == len(self.weight) == len(self.matched)):
            raise ValueError("GuardContext: left, right, weight and matched differ in length")

    @property
    def n(self) -> int:
        return len(self.records)

    def clusters(self) -> np.ndarray:
        """Connected components of the matched pairs now (labels numbered by smallest row)."""
        return connected_components(self.n, self.left[self.matched], self.right[self.matched])

    def settle(self, is_keeper: np.ndarray | None) -> None:
        """Send the oversized protected clusters `max_cluster_size` held to review, all but
        the copies the keeper keeps (`is_keeper`, per row; None when linking: no copy is
        kept) unless another guard already sent them to review."""
        for guard, rows, size, group in self.held:
            kept = (np.zeros(len(rows), dtype=bool) if is_keeper is None
                    else is_keeper[rows] & (self.action[rows] != "review"))
            text = _too_big(len(rows), size)
            self.mark(rows[~kept], "review", text, group)
            self.log(guard, rows[~kept], "review", text)
            self.log(guard, rows[kept], "kept",
                     f"cluster of {len(rows)} records exceeds max_cluster_size {size}, but "
                     f"keep_up_to keeps {int(kept.sum())} copies of it: kept, the other "
                     f"{int((~kept).sum())} sent to review")
        self.held = []

    def decisions_for(self, record_id: Any) -> list[dict]:
        """The guard decisions that touched one record, in the order they were made."""
        return [d for d in self.decisions if d["record_id"] == record_id]

    # -- helpers for guards ------------------------------------------------------------------

    def record_id(self, row: int) -> Any:
        value = self.ids[row]
        return value.item() if isinstance(value, np.generic) else value

    def log(self, guard: str, rows: np.ndarray, decision: str, detail: str | np.ndarray) -> None:
        details = np.broadcast_to(np.asarray(detail, dtype=object), (len(rows),))
        for row, text in zip(np.asarray(rows).tolist(), details.tolist(), strict=True):
            self.decisions.append({"guard": guard, "record_id": self.record_id(row),
                                   "decision": decision, "detail": text})

    def mark(self, rows: np.ndarray, action: str | None, reason: str | np.ndarray,
             group: str | np.ndarray | None = None) -> None:
        """Set action (review beats preserved beats None), append the reason, set the group
        where none is set yet (a record belongs to the first review group it was put in)."""
        rows = np.asarray(rows, dtype=np.int64)
        reasons = np.broadcast_to(np.asarray(reason, dtype=object), (len(rows),))
        if action is not None:
            rank = np.array([_ACTION_RANK[a] for a in self.action[rows]], dtype=int)
            up = rank < _ACTION_RANK[action]
            self.action[rows[up]] = action
        old = self.reason[rows]
        self.reason[rows] = np.where(pd.isna(old), reasons,
                                     pd.Series(old, dtype=object) + "; " + reasons)
        if group is not None:
            groups = np.broadcast_to(np.asarray(group, dtype=object), (len(rows),))
            free = pd.isna(self.review_group[rows])
            self.review_group[rows[free]] = groups[free]


# --- column helpers ---------------------------------------------------------------------------

def column_values(records: pd.DataFrame, column: str) -> pd.Series:
    """A column as stripped strings, nulls (and empty strings) as NA."""
    s = records[column]
    text = s.astype("string").str.strip()
    return text.mask(s.isna() | (text == ""))


def column_codes(records: pd.DataFrame, column: str) -> np.ndarray:
    """Integer codes per row; equal values get equal codes, nulls get -1."""
    codes, _ = pd.factorize(column_values(records, column), use_na_sentinel=True)
    return codes.astype(np.int64)


def row_codes(records: pd.DataFrame, columns: list[str]) -> np.ndarray:
    """One code per row for the combination of several columns; -1 if any is null."""
    if len(columns) == 1:
        return column_codes(records, columns[0])
    mat = np.column_stack([column_codes(records, c) for c in columns])
    out = np.full(len(records), -1, dtype=np.int64)
    ok = (mat >= 0).all(axis=1)
    if ok.any():
        _, inverse = np.unique(mat[ok], axis=0, return_inverse=True)
        out[ok] = inverse.ravel()
    return out


def _missing_columns(records: pd.DataFrame, columns: list[str], where: str, key: str) -> None:
    missing = [c for c in columns if c not in records.columns]
    if missing:
        have = ", ".join(map(str, records.columns)) or "(none)"
        raise InputError(
            f"{where}: column {missing[0]!r} (from `{key}`) is not in the input table. "
            f"Its columns are: {have}. Fix: add {missing[0]!r} to the input, or change "
            f"`{key}` of this guard in the rules to a column that exists."
        )


def _strings(owner: object, name: str, value: Any, *, empty: bool = False) -> list[str]:
    ok = isinstance(value, list | tuple) and all(isinstance(v, str) and v for v in value)
    check(ok and (empty or len(value) > 0), owner, name,
          "must be a " + ("" if empty else "non-empty ") + "list of column names", value)
    return list(value)


def _fmt(x: float) -> str:
    return f"{x:g}"


# --- edge removal -----------------------------------------------------------------------------

def _members(labels: np.ndarray, wanted: np.ndarray) -> list[np.ndarray]:
    """The rows (ascending) of each label in `wanted`, in one sort instead of a scan per label."""
    order = np.argsort(labels, kind="stable")
    sorted_labels = labels[order]
    starts = np.searchsorted(sorted_labels, wanted, side="left")
    ends = np.searchsorted(sorted_labels, wanted, side="right")
    return [order[a:b] for a, b in zip(starts.tolist(), ends.tolist(), strict=True)]


def _split_bad(ctx: GuardContext, bad_clusters: np.ndarray,
               bad: Callable[[np.ndarray], bool]) -> tuple[np.ndarray, dict[int, int]]:
    """Remove matched edges, weakest first (ties by (left, right)), from each listed cluster
    until none of its components is `bad`. Returns the removed pair positions and, per
    original cluster label, how many components it ended in.

    Removing edges weakest first keeps a component whole until its bottleneck edge goes (the
    weakest edge of its maximum spanning tree); every edge at least as weak goes with it. The
    pieces that are still bad go on losing edges; the good ones stop.
    """
    removed: list[np.ndarray] = []
    pieces: dict[int, int] = {}
    for c, nodes0, edges0 in _cluster_edges(ctx, bad_clusters):
        stack = [(nodes0, edges0)]
        count = 0
        while stack:
            nodes, edges = stack.pop()
            if len(edges) == 0 or not bad(nodes):
                count += 1
                continue
            order = np.lexsort((ctx.right[edges], ctx.left[edges], ctx.weight[edges]))
            edges = edges[order]  # weakest first
            lo = np.searchsorted(nodes, ctx.left[edges])
            hi = np.searchsorted(nodes, ctx.right[edges])
            cut = _bottleneck(len(nodes), lo, hi)
            removed.append(edges[: cut + 1])
            rest = slice(cut + 1, None)
            sub = connected_components(len(nodes), lo[rest], hi[rest])
            kept, sub_of_edge = edges[rest], sub[lo[rest]]
            pieces_now = np.arange(int(sub.max()) + 1)
            edge_groups = _members(sub_of_edge, pieces_now)
            for s, part in enumerate(_members(sub, pieces_now)):
                stack.append((nodes[part], np.sort(kept[edge_groups[s]])))
        pieces[c] = count
    out = np.concatenate(removed) if removed else np.zeros(0, dtype=np.int64)
    ctx.matched[out] = False
    return out, pieces


def _cluster_edges(ctx: GuardContext,
                   clusters: np.ndarray) -> list[tuple[int, np.ndarray, np.ndarray]]:
    """Per listed cluster label (of `ctx.clusters()` now): the label, its rows (ascending) and
    the positions of its matched pairs."""
    labels = ctx.clusters()
    m_idx = np.flatnonzero(ctx.matched)
    edge_label = labels[ctx.left[m_idx]]
    wanted = np.isin(edge_label, clusters)
    m_idx, edge_label = m_idx[wanted], edge_label[wanted]
    by_label = np.argsort(edge_label, kind="stable")
    m_idx, edge_label = m_idx[by_label], edge_label[by_label]
    e_starts = np.searchsorted(edge_label, clusters, side="left")
    e_ends = np.searchsorted(edge_label, clusters, side="right")
    members = _members(labels, clusters)
    return [(c, nodes, m_idx[es:ee]) for c, es, ee, nodes
            in zip(clusters.tolist(), e_starts, e_ends, members, strict=True)]


def _split_to_size(ctx: GuardContext, clusters: np.ndarray, size: int) -> dict[int, int]:
    """Split each listed cluster into pieces of at most `size` records: its matched pairs are
    taken strongest first (ties by (left, right)) and join two pieces only while the joined
    piece fits; the pairs left between pieces are unmatched. The weakest links are the ones
    cut, and a piece is never cut smaller than the links force (a tied chain of 30 capped at
    8 becomes 8 + 8 + 8 + 6). Returns, per cluster label, how many pieces it ended in."""
    removed: list[np.ndarray] = []
    pieces: dict[int, int] = {}
    for c, nodes, edges in _cluster_edges(ctx, clusters):
        edges = edges[np.lexsort((ctx.right[edges], ctx.left[edges], -ctx.weight[edges]))]
        lo = np.searchsorted(nodes, ctx.left[edges])
        hi = np.searchsorted(nodes, ctx.right[edges])
        piece = _capped_union(len(nodes), lo, hi, size)
        removed.append(edges[piece[lo] != piece[hi]])
        pieces[c] = len(np.unique(piece))
    if removed:
        ctx.matched[np.concatenate(removed)] = False
    return pieces


def _capped_union(n: int, lo: np.ndarray, hi: np.ndarray, size: int) -> np.ndarray:
    """Union-find over the edges in order, joining two sets only while the union holds at
    most `size` nodes. Returns each node's set (its root)."""
    parent = list(range(n))
    count = [1] * n

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for a, b in zip(lo.tolist(), hi.tolist(), strict=True):
        a, b = find(a), find(b)
        if a != b and count[a] + count[b] <= size:
            parent[b] = a
            count[a] += count[b]
    return np.array([find(x) for x in range(n)], dtype=np.int64)


def _bottleneck(n: int, lo: np.ndarray, hi: np.ndarray) -> int:
    """Position (in the weakest-first order) of the edge whose removal first disconnects the
    component: add edges strongest first until all n nodes are joined."""
    parent = list(range(n))

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    parts = n
    for pos in range(len(lo) - 1, -1, -1):
        a, b = find(int(lo[pos])), find(int(hi[pos]))
        if a != b:
            parent[max(a, b)] = min(a, b)
            parts -= 1
            if parts == 1:
                return pos
    return 0  # not connected (cannot happen for a component); remove the weakest edge


def _clusters_with(labels: np.ndarray, codes: np.ndarray) -> np.ndarray:
    """Cluster labels in which some key (codes >= 0) takes two or more distinct values;
    `codes` is (n,) or (n, k) with one conflict test per column."""
    codes = codes.reshape(len(labels), -1)
    found = []
    for col in codes.T:
        ok = col >= 0
        frame = pd.DataFrame({"c": labels[ok], "v": col[ok]})
        nun = frame.groupby("c", sort=True)["v"].nunique()
        found.append(nun.index[nun.to_numpy() > 1].to_numpy())
    return np.unique(np.concatenate(found)) if found else np.zeros(0, dtype=np.int64)


# --- the family -------------------------------------------------------------------------------

class Guard(Configurable):
    """Base of guards; `type:` in the rules picks the kind."""

    family: ClassVar[str] = "guard"
    stage: ClassVar[int] = 1  # 0: thresholds, 1: edge removal, 2: record guards

    name: str | None

    @property
    def guard_name(self) -> str:
        """The name in decisions and review groups: `name`, else the kind."""
        return self.name or str(self.kind)

    def input_columns(self) -> dict[str, list[str]]:
        """The input columns this guard reads, by rules key."""
        raise NotImplementedError

    def validate(self, records: pd.DataFrame, where: str | None = None) -> None:
        """Raise `InputError` (naming `where`, e.g. `guards[2]`) if a column is missing."""
        where = f"{where or 'guard'} ({self.guard_name})"
        for key, cols in self.input_columns().items():
            _missing_columns(records, cols, where, key)

    def apply(self, ctx: GuardContext) -> None:
        raise NotImplementedError

    def __call__(self, ctx: GuardContext, where: str | None = None) -> GuardContext:
        self._where = where
        self.validate(ctx.records, where)
        self.apply(ctx)
        return ctx


def apply_guards(guards: list[Guard], ctx: GuardContext) -> GuardContext:
    """Run `guards` on `ctx` in stage order (thresholds, edge guards, record guards; list order
    inside a stage). Every guard's columns are checked before any guard runs."""
    for i, guard in enumerate(guards):
        guard.validate(ctx.records, f"guards[{i}]")
    order = sorted(range(len(guards)), key=lambda i: (guards[i].stage, i))
    for i in order:
        guards[i]._where = f"guards[{i}]"
        guards[i].apply(ctx)
    return ctx


class DomainThresholds(Guard):
    """Pairs whose two records share a listed value of `column` use that value's threshold."""

    kind = "domain_thresholds"
    stage = 0

    def __init__(self, column: str, thresholds: dict[str, float], *, name: str | None = None):
        check(isinstance(column, str) and column != "", self, "column",
              "must be the name of the column that defines the domain", column)
        check(isinstance(thresholds, Mapping) and len(thresholds) > 0
              and all(isinstance(k, str) for k in thresholds)
              and all(isinstance(v, int | float) and not isinstance(v, bool)
                      for v in thresholds.values()),
              self, "thresholds",
              "must map domain values to match-weight thresholds, e.g. {books: 6.5, music: 4}",
              thresholds)
        self.column = column
        self.thresholds = {k: float(v) for k, v in thresholds.items()}
        self.name = name

    def input_columns(self) -> dict[str, list[str]]:
        return {"column": [self.column]}

    def apply(self, ctx: GuardContext) -> None:
        values = column_values(ctx.records, self.column)
        t_row = values.map(self.thresholds).to_numpy(dtype=float, na_value=np.nan)
        domain = column_codes(ctx.records, self.column)
        lv, rv = domain[ctx.left], domain[ctx.right]
        t = t_row[ctx.left]
        inside = (lv >= 0) & (lv == rv) & ~np.isnan(t)
        new = np.where(inside, ctx.weight >= np.where(inside, t, 0.0), ctx.matched)
        changed = np.flatnonzero(new != ctx.matched)
        ctx.matched[:] = new
        if len(changed) == 0:
            return
        lo, hi, w, tt = ctx.left[changed], ctx.right[changed], ctx.weight[changed], t[changed]
        dom = values.to_numpy(dtype=object)[lo]
        now = new[changed]
        verb = np.where(now, "matched", "unmatched")
        # The records of the changed pairs by side, then by decision (the Spark engine's
        # distributed route writes its decisions in this order too).
        for a, b in ((lo, hi), (hi, lo)):
            detail = [self.detail(ctx.record_id(o), wi, m, ti, d, ctx.threshold)
                      for o, wi, m, ti, d in zip(b.tolist(), w, now, tt, dom, strict=True)]
            for v in ("matched", "unmatched"):
                sel = verb == v
                ctx.log(self.guard_name, a[sel], v, np.asarray(detail, dtype=object)[sel])

    def detail(self, other: Any, weight: float, matched: bool, threshold: float, value: str,
               overall: float) -> str:
        """A decision's detail: the pair with `other`, its weight against the domain
        `value`'s threshold (and the run's, `overall`)."""
        sign = ">=" if matched else "<"
        return (f"pair with {other}: weight {_fmt(weight)} {sign} threshold {_fmt(threshold)} "
                f"for {self.column}={value!r} (global {_fmt(overall)})")


class MustNotLink(Guard):
    """Two records with different non-null values in any of `columns` never share a cluster."""

    kind = "must_not_link"

    def __init__(self, columns: list[str], *, name: str | None = None):
        self.columns = _strings(self, "columns", columns)
        self.name = name

    def input_columns(self) -> dict[str, list[str]]:
        return {"columns": self.columns}

    def apply(self, ctx: GuardContext) -> None:
        codes = np.column_stack([column_codes(ctx.records, c) for c in self.columns])
        before = ctx.clusters()
        before_matched = ctx.matched.copy()
        bad0 = _clusters_with(before, codes)
        if len(bad0) == 0:
            return
        # Direct conflicts first: such a pair is never a match.
        lc, rc = codes[ctx.left], codes[ctx.right]
        direct = ((lc >= 0) & (rc >= 0) & (lc != rc)).any(axis=1) & ctx.matched
        ctx.matched[direct] = False
        bad1 = _clusters_with(ctx.clusters(), codes)

        def conflict(nodes: np.ndarray) -> bool:
            sub = codes[nodes]
            for col in sub.T:
                v = col[col >= 0]
                if len(v) and (v != v[0]).any():
                    return True
            return False

        _split_bad(ctx, bad1, conflict)
        after = ctx.clusters()
        cols = ", ".join(self.columns)
        lost = ~ctx.matched & before_matched
        lost_per = np.bincount(before[ctx.left[lost]], minlength=int(before.max()) + 1)
        for c, rows in zip(bad0.tolist(), _members(before, bad0), strict=True):
            parts = len(np.unique(after[rows]))
            detail = (f"cluster of {len(rows)} records held different values of {cols}; "
                      f"split into {parts} by removing {int(lost_per[c])} matched pair(s), "
                      "weakest first")
            ctx.log(self.guard_name, rows, "split", detail)


def _too_big(records: int, size: int) -> str:
    return f"cluster of {records} records exceeds max_cluster_size {size}; sent to review"


class MaxClusterSize(Guard):
    """Against chaining: a cluster larger than `size` is split into pieces that fit, cutting
    its weakest links and no more than the cap needs, or, with `action: review`, its members
    are sent to review. Review runs after the record guards: in a cluster `keep_up_to`
    protects, the copies it keeps are kept and only the others go to review."""

    kind = "max_cluster_size"

    def __init__(self, size: int, *, action: OversizedAction = "split",
                 name: str | None = None):
        check(isinstance(size, int) and not isinstance(size, bool) and size >= 1, self, "size",
              "must be a whole number of at least 1 (the most records one cluster may hold)",
              size)
        check(action in ("split", "review"), self, "action",
              "must be 'split' (remove the weakest links) or 'review' (flag the cluster)", action)
        self.size = size
        self.action = action
        self.name = name

    @property
    def stage(self) -> int:  # type: ignore[override]
        return 1 if self.action == "split" else 3

    def input_columns(self) -> dict[str, list[str]]:
        return {}

    def apply(self, ctx: GuardContext) -> None:
        labels = ctx.clusters()
        sizes = np.bincount(labels, minlength=1)
        big = np.flatnonzero(sizes > self.size)
        if len(big) == 0:
            return
        if self.action == "review":
            for g, rows in enumerate(_members(labels, big), start=1):
                group = f"{self.guard_name}:{g}"
                if ctx.protected[rows].any():  # the keeper picks keep_up_to's copies first
                    ctx.held.append((self.guard_name, rows, self.size, group))
                    continue
                text = _too_big(len(rows), self.size)
                ctx.mark(rows, "review", text, group)
                ctx.log(self.guard_name, rows, "review", text)
            return
        pieces = _split_to_size(ctx, big, self.size)
        for c, rows in zip(big.tolist(), _members(labels, big), strict=True):
            ctx.log(self.guard_name, rows, "split",
                    f"cluster of {len(rows)} records exceeds max_cluster_size {self.size}; "
                    f"split into {pieces[c]} by removing its weakest matched pairs")


class DistinctEvents(Guard):
    """In a table of events, records equal on the business `key` are separate events unless
    they are a double load (equal `same` columns, timestamps within `within_seconds`)."""

    kind = "distinct_events"
    stage = 2

    def __init__(self, key: list[str], double_load: dict[str, Any], *,
                 name: str | None = None):
        self.key = _strings(self, "key", key)
        check(isinstance(double_load, Mapping)
              and set(double_load) <= {"same", "within_seconds"}, self, "double_load",
              "must be a mapping with `same` (columns equal in a double load, e.g. "
              "[ingest_batch]) and/or `within_seconds` (timestamp column: most seconds apart, "
              "e.g. {load_ts: 60})", double_load)
        same = _strings(self, "double_load.same", double_load.get("same", []), empty=True)
        within = double_load.get("within_seconds", {})
        check(isinstance(within, Mapping) and all(
            isinstance(k, str) and isinstance(v, int | float) and not isinstance(v, bool)
            and v >= 0 for k, v in within.items()), self, "double_load.within_seconds",
            "must map timestamp columns to a number of seconds >= 0, e.g. {load_ts: 60}", within)
        check(bool(same) or bool(within), self, "double_load",
              "must name at least one of `same` or `within_seconds`; without them every repeat "
              "would count as a double load and the guard would do nothing", double_load)
        self.double_load = {"same": same,
                            "within_seconds": {k: float(v) for k, v in within.items()}}
        self.name = name

    def input_columns(self) -> dict[str, list[str]]:
        return {"key": self.key, "double_load.same": self.double_load["same"],
                "double_load.within_seconds": list(self.double_load["within_seconds"])}

    def _seconds(self, ctx: GuardContext, column: str) -> np.ndarray:
        s = ctx.records[column]
        if pd.api.types.is_numeric_dtype(s) and not pd.api.types.is_bool_dtype(s):
            return s.to_numpy(dtype=float, na_value=np.nan)
        ts = None
        for fmt in (None, "mixed"):  # one inferred format first; then per value
            try:
                ts = pd.to_datetime(s, utc=True, format=fmt)
                break
            except (ValueError, TypeError, OverflowError):
                continue
        if ts is None:
            loose = pd.to_datetime(s, utc=True, format="mixed", errors="coerce")
            bad = np.flatnonzero(s.notna().to_numpy() & loose.isna().to_numpy())
            row = int(bad[0]) if len(bad) else 0
            where = f"{getattr(self, '_where', None) or 'guard'} ({self.guard_name})"
            raise InputError(
                f"{where}: column {column!r} (from `double_load.within_seconds`) could not be "
                f"read as timestamps: record {ctx.record_id(row)!r} has {s.iloc[row]!r}"
                f" ({len(bad)} such value(s)). Fix: write it as ISO 8601 date-times "
                "(2024-05-01T12:00:05) or as epoch seconds, and leave unknown ones empty."
            )
        return (ts - pd.Timestamp(0, tz="UTC")).dt.total_seconds().to_numpy(
            dtype=float, na_value=np.nan)

    def apply(self, ctx: GuardContext) -> None:
        key = row_codes(ctx.records, self.key)
        L, R = ctx.left, ctx.right
        cand = np.flatnonzero(ctx.matched & (key[L] >= 0) & (key[L] == key[R]))
        # No matched pair shares the key: still look for events chained through other
        # records below (a cluster's answer must not depend on pairs elsewhere in the table).
        lo, hi = L[cand], R[cand]
        double = np.ones(len(cand), dtype=bool)
        why = np.full(len(cand), "", dtype=object)
        for col in self.double_load["same"]:
            c = column_codes(ctx.records, col)
            eq = (c[lo] >= 0) & (c[lo] == c[hi])
            why[double & ~eq] = f"different {col}"
            double &= eq
        for col, limit in (self.double_load["within_seconds"].items() if len(cand) else ()):
            secs = self._seconds(ctx, col)
            gap = np.abs(secs[lo] - secs[hi])
            ok = gap <= limit  # NaN (unknown time) is never a double load
            newly = double & ~ok
            why[newly] = [
                f"{col} unknown" if np.isnan(g) else f"{col} {_fmt(g)} s apart (> {_fmt(limit)} s)"
                for g in gap[newly]
            ]
            double &= ok
        distinct = cand[~double]
        ctx.matched[distinct] = False
        # Load groups: records joined by double-load pairs are one event.
        dl = cand[double]
        event = connected_components(ctx.n, L[dl], R[dl])

        def two_events(nodes: np.ndarray) -> bool:
            k, e = key[nodes], event[nodes]
            ok = k >= 0
            pairs = np.unique(np.column_stack([k[ok], e[ok]]), axis=0)
            return len(pairs) > len(np.unique(pairs[:, 0]))

        # Separate events still chained into one cluster through other records are split.
        labels = ctx.clusters()
        has_key = key >= 0
        frame = pd.DataFrame({"c": labels[has_key], "k": key[has_key], "e": event[has_key]})
        nun = frame.groupby(["c", "k"], sort=True)["e"].nunique()
        chained = np.unique(nun.index.get_level_values("c")[nun.to_numpy() > 1].to_numpy())
        residual = np.zeros(0, dtype=np.int64)
        if len(chained):
            _split_bad(ctx, chained, two_events)
            grp = frame[frame["c"].isin(chained)]
            multi = grp.groupby(["c", "k"])["e"].transform("nunique") > 1
            residual = np.flatnonzero(has_key)[np.flatnonzero(
                frame["c"].isin(chained).to_numpy())[multi.to_numpy()]]

        keys = ", ".join(self.key)
        dl_, dr_, dwhy = L[distinct], R[distinct], why[~double]
        per = pd.DataFrame({
            "row": np.concatenate([dl_, dr_]), "other": np.concatenate([dr_, dl_]),
            "why": np.concatenate([dwhy, dwhy]),
        }).sort_values(["row", "other"], kind="stable").drop_duplicates("row")
        rows = per["row"].to_numpy(dtype=np.int64)
        text = np.array([
            f"distinct event: same {keys} as record {ctx.record_id(o)}, {w}"
            for o, w in zip(per["other"].tolist(), per["why"].tolist(), strict=True)
        ], dtype=object)
        extra = np.setdiff1d(residual, rows)
        rows = np.concatenate([rows, extra])
        text = np.concatenate([text, np.full(len(extra), (
            f"distinct event: same {keys} as another record of its cluster, not a double load"
        ), dtype=object)])
        if len(rows) == 0:
            return
        load_size = np.bincount(event)[event[rows]]
        alone = load_size == 1
        # A record loaded once is preserved outright; a double-loaded event stays matched to
        # its copies so the keeper keeps one of them and removes the rest.
        ctx.mark(rows[alone], "preserved", text[alone])
        ctx.mark(rows[~alone], None, text[~alone])
        ctx.log(self.guard_name, rows[alone], "preserved", text[alone])
        ctx.log(self.guard_name, rows[~alone], "separate_event",
                text[~alone] + "; its own double loads stay matched")


class ConflictingLabels(Guard):
    """Records of one group (a cluster, or identical normalized `text`) with two or more labels
    all go to review, in one review group; none is dropped."""

    kind = "conflicting_labels"
    stage = 2

    def __init__(self, label: str, *, text: Sequence[str] = (), name: str | None = None):
        check(isinstance(label, str) and label != "", self, "label",
              "must be the name of the label column", label)
        self.label = label
        self.text = _strings(self, "text", text, empty=True)
        self.name = name

    def input_columns(self) -> dict[str, list[str]]:
        return {"label": [self.label], "text": self.text}

    def text_keys(self, records: pd.DataFrame) -> pd.Series:
        """Each record's `text` columns normalized and joined: records with the same key are
        one group; NA where every `text` column is empty."""
        from linkage.normalize import normalize_text

        parts = []
        for col in self.text:
            s = records[col]
            # The same normalization as the `text` normalizer: NFKC, case, punctuation, spaces.
            t = pd.Series(normalize_text(s.astype(object).where(s.notna(), None)),
                          dtype="string", index=records.index)
            parts.append(t.mask(s.isna() | t.isna() | (t == "")))
        joined = parts[0].fillna("\x00")
        for p in parts[1:]:
            joined = joined + "\x1f" + p.fillna("\x00")
        return joined.mask(pd.concat(parts, axis=1).isna().all(axis=1))

    def groups(self, ctx: GuardContext) -> np.ndarray:
        clusters = ctx.clusters()
        if not self.text:
            return clusters
        codes, _ = pd.factorize(self.text_keys(ctx.records))  # -1 where there is no text
        codes = codes.astype(np.int64)
        # A group is the same normalized text OR the same cluster (near-duplicates above the
        # threshold): join both relations and take connected components.
        rows = np.arange(len(codes))
        first_text = pd.Series(rows).groupby(codes).transform("min").to_numpy()
        first_cluster = pd.Series(rows).groupby(clusters).transform("min").to_numpy()
        has_text = codes >= 0
        groups = connected_components(
            len(codes), np.concatenate([rows[has_text], rows]),
            np.concatenate([first_text[has_text], first_cluster]))
        # Records with no text and alone in their cluster have no group.
        alone = ~has_text & (np.bincount(clusters)[clusters] == 1)
        groups = groups.astype(np.int64)
        groups[alone] = -1
        return groups

    def apply(self, ctx: GuardContext) -> None:
        groups = self.groups(ctx)
        labels = column_values(ctx.records, self.label)
        ok = (groups >= 0) & labels.notna().to_numpy()
        frame = pd.DataFrame({"g": groups[ok], "v": labels.to_numpy(dtype=object)[ok]})
        nun = frame.groupby("g", sort=True)["v"].nunique()
        bad = nun.index[nun.to_numpy() > 1].to_numpy()
        if len(bad) == 0:
            return
        # Group codes are numbered by their smallest row (cluster labels, and factorize codes
        # in order of appearance), so ascending codes number the review groups by first row.
        found = frame[frame["g"].isin(bad)].groupby("g", sort=True)["v"].unique()
        sizes = np.bincount(groups[groups >= 0])
        what = ("the same " + ", ".join(self.text)) if self.text else "one cluster"
        texts = np.array([
            f"conflicting {self.label} values " + ", ".join(repr(v) for v in sorted(vals))
            + f" in {what} ({sizes[g]} records); sent to review, none dropped"
            for g, vals in zip(found.index.tolist(), found.tolist(), strict=True)
        ], dtype=object)
        rows = np.flatnonzero(np.isin(groups, bad))
        position = np.searchsorted(bad, groups[rows])
        numbers = pd.Series(position + 1).astype(str).to_numpy(dtype=object)
        ctx.mark(rows, "review", texts[position], f"{self.guard_name}:" + numbers)
        ctx.log(self.guard_name, rows, "review", texts[position])


class KeepUpTo(Guard):
    """A cluster holding a protected record (its `column` value in `values` or matching
    `pattern`) keeps up to `k` copies."""

    kind = "keep_up_to"
    stage = 2

    def __init__(self, k: int, column: str, *, values: Sequence[str] = (),
                 pattern: str | None = None, name: str | None = None):
        check(isinstance(k, int) and not isinstance(k, bool) and k >= 1, self, "k",
              "must be a whole number of at least 1 (copies kept per protected cluster)", k)
        check(isinstance(column, str) and column != "", self, "column",
              "must be the name of the column that marks protected records", column)
        values = list(values) if isinstance(values, list | tuple) else values
        check(isinstance(values, list), self, "values", "must be a list of strings", values)
        check(all(isinstance(v, str) for v in values), self, "values",
              "must be a list of strings (protected values of the column)", values)
        check(bool(values) or pattern is not None, self, "values",
              "must list protected values, or `pattern` must be given (a regular expression); "
              "with neither nothing is protected", values)
        if pattern is not None:
            try:
                self._regex = re.compile(pattern)
            except (re.error, TypeError) as err:
                raise SchemaViolation("pattern", f"must be a valid regular expression ({err})",
                                      pattern, type(self).__name__) from None
        self.k = k
        self.column = column
        self.values = values
        self.pattern = pattern
        self.name = name

    def input_columns(self) -> dict[str, list[str]]:
        return {"column": [self.column]}

    def apply(self, ctx: GuardContext) -> None:
        s = column_values(ctx.records, self.column)
        protected = s.isin(self.values).to_numpy(dtype=bool, na_value=False)
        if self.pattern is not None:
            found = s.str.contains(self.pattern, regex=True)
            protected = protected | found.to_numpy(dtype=bool, na_value=False)
        if not protected.any():
            return
        labels = ctx.clusters()
        rows = np.flatnonzero(np.isin(labels, np.unique(labels[protected])))
        ctx.keep_limit[rows] = np.maximum(ctx.keep_limit[rows], self.k)
        ctx.protected[rows] = True
        ctx.log(self.guard_name, rows, "keep_up_to",
                f"cluster holds a protected {self.column} value; keeps up to {self.k} copies")
