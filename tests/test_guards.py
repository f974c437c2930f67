"""Tests for linkage.guards: each guard on purpose-built data, properties, config and errors."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from linkage.clustering import connected_components
from linkage.errors import InputError, RulesError
from linkage.guards import (
    ConflictingLabels,
    DistinctEvents,
    DomainThresholds,
    Guard,
    GuardContext,
    KeepUpTo,
    MaxClusterSize,
    MustNotLink,
    apply_guards,
)


def make_ctx(records: dict | pd.DataFrame, pairs, *, threshold: float = 0.0, ids=None,
             matched=None) -> GuardContext:
    frame = pd.DataFrame(records)
    n = len(frame)
    pairs = list(pairs)
    left = np.array([p[0] for p in pairs], dtype=np.int64)
    right = np.array([p[1] for p in pairs], dtype=np.int64)
    weight = np.array([p[2] for p in pairs], dtype=float)
    ids = np.array([f"r{i}" for i in range(n)] if ids is None else ids, dtype=object)
    return GuardContext(frame, ids, np.zeros(n, dtype=np.int8), left, right, weight,
                        matched, threshold)


def matched_set(ctx: GuardContext) -> set[tuple[int, int]]:
    return set(zip(ctx.left[ctx.matched].tolist(), ctx.right[ctx.matched].tolist(),
                   strict=True))


def components(ctx: GuardContext) -> list[list[int]]:
    labels = ctx.clusters()
    return [np.flatnonzero(labels == c).tolist() for c in range(labels.max() + 1)]


# --- must_not_link --------------------------------------------------------------------------

@st.composite
def graphs(draw):
    n = draw(st.integers(2, 12))
    all_pairs = list(itertools.combinations(range(n), 2))
    chosen = draw(st.lists(st.sampled_from(all_pairs), unique=True, max_size=len(all_pairs)))
    weights = draw(st.lists(st.sampled_from([1.0, 2.0, 2.5, 3.0, 5.0]),  # ties on purpose
                            min_size=len(chosen), max_size=len(chosen)))
    ssn = draw(st.lists(st.sampled_from(["111", "222", "333", None]), min_size=n, max_size=n))
    tax = draw(st.lists(st.sampled_from(["T1", "T2", None, None]), min_size=n, max_size=n))
    order = draw(st.permutations(range(len(chosen))))
    return n, [(a, b, w) for (a, b), w in zip(chosen, weights, strict=True)], ssn, tax, order


def _conflicted(values: list, rows: list[int]) -> bool:
    return len({values[i] for i in rows if values[i] is not None}) > 1


@settings(max_examples=150, deadline=None)
@given(graphs())
def test_must_not_link_is_never_violated(case):
    _n, pairs, ssn, tax, order = case
    records = {"ssn": ssn, "tax_id": tax}
    ctx = make_ctx(records, pairs, threshold=1.5)
    before_labels = ctx.clusters()
    before = matched_set(ctx)
    MustNotLink(["ssn", "tax_id"])(ctx)
    after = matched_set(ctx)

    # 1. no component holds two different non-null values of either column
    for rows in components(ctx):
        assert not _conflicted(ssn, rows), (rows, ssn)
        assert not _conflicted(tax, rows), (rows, tax)
    # 2. the guard only removes edges, and none from a cluster without a conflict
    assert after <= before
    for a, b in before - after:
        rows = np.flatnonzero(before_labels == before_labels[a]).tolist()
        assert _conflicted(ssn, rows) or _conflicted(tax, rows)
        assert before_labels[b] == before_labels[a]
    # 3. decisions name exactly the records of the conflicted clusters
    touched = {d["record_id"] for d in ctx.decisions}
    expected = {f"r{i}" for rows in (np.flatnonzero(before_labels == c).tolist()
                                     for c in range(before_labels.max() + 1))
                if _conflicted(ssn, rows) or _conflicted(tax, rows) for i in rows}
    assert touched == expected
    assert all(d["decision"] == "split" and d["guard"] == "must_not_link"
               for d in ctx.decisions)
    # 4. deterministic whatever the order of the pairs
    shuffled = make_ctx(records, [pairs[i] for i in order], threshold=1.5)
    MustNotLink(["ssn", "tax_id"])(shuffled)
    assert matched_set(shuffled) == after
    assert (shuffled.clusters() == ctx.clusters()).all()


def test_must_not_link_removes_weakest_edges_first():
    # 0 -5- 1 -4- 2 -1- 3 ; records 0 and 3 have different national ids.
    ctx = make_ctx({"nid": ["A", None, None, "B"]}, [(0, 1, 5), (1, 2, 4), (2, 3, 1)])
    MustNotLink(["nid"])(ctx)
    assert matched_set(ctx) == {(0, 1), (1, 2)}  # only the weakest link went
    assert components(ctx) == [[0, 1, 2], [3]]


def test_must_not_link_unmatches_a_direct_conflict_and_ignores_nulls():
    ctx = make_ctx({"nid": ["A", "B", None, "  "]}, [(0, 1, 9), (2, 3, 9), (0, 2, 1)])
    MustNotLink(["nid"])(ctx)
    assert matched_set(ctx) == {(2, 3), (0, 2)}  # the strong A–B pair is never a match
    assert {d["record_id"] for d in ctx.decisions} == {"r0", "r1", "r2", "r3"}
    assert "split into 2" in ctx.decisions[0]["detail"]


def test_must_not_link_leaves_clean_graph_alone():
    ctx = make_ctx({"nid": ["A", "A", None, "B"]}, [(0, 1, 1), (1, 2, 1)])
    MustNotLink(["nid"])(ctx)
    assert matched_set(ctx) == {(0, 1), (1, 2)}
    assert ctx.decisions == []


# --- max_cluster_size -----------------------------------------------------------------------

@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10_000), st.integers(1, 5))
def test_max_cluster_size_split_bounds_every_component(seed, size):
    rng = np.random.default_rng(seed)
    n = 30
    pairs = [(i, i + 1, float(rng.integers(1, 6))) for i in range(n - 1)]  # a long chain
    pairs += [(int(a), int(b), float(rng.integers(1, 6)))
              for a, b in {tuple(sorted(rng.choice(n, 2, replace=False))) for _ in range(15)}
              if b - a > 1]
    ctx = make_ctx({"x": range(n)}, pairs)
    MaxClusterSize(size)(ctx)
    labels = ctx.clusters()
    sizes = np.bincount(labels)
    assert sizes.max() <= size
    # No more cuts than the cap needs: every unmatched pair joins two pieces too big together.
    cut = ~ctx.matched
    assert (sizes[labels[ctx.left[cut]]] + sizes[labels[ctx.right[cut]]] > size).all()
    assert (ctx.action == None).all()  # noqa: E711 - elementwise
    assert {d["decision"] for d in ctx.decisions} == {"split"}


def test_max_cluster_size_split_keeps_strong_links():
    # two tight triangles joined by one weak bridge
    pairs = [(0, 1, 9), (1, 2, 9), (0, 2, 9), (3, 4, 9), (4, 5, 9), (3, 5, 9), (2, 3, 1)]
    ctx = make_ctx({"x": range(7)}, pairs)
    MaxClusterSize(3)(ctx)
    assert components(ctx) == [[0, 1, 2], [3, 4, 5], [6]]
    assert matched_set(ctx) == {p[:2] for p in pairs} - {(2, 3)}


def test_max_cluster_size_review_flags_members_and_keeps_edges():
    pairs = [(0, 1, 5), (1, 2, 5), (2, 3, 5), (5, 6, 5)]
    ctx = make_ctx({"x": range(7)}, pairs)
    MaxClusterSize(3, action="review")(ctx)
    assert matched_set(ctx) == {p[:2] for p in pairs}
    assert ctx.action.tolist() == ["review"] * 4 + [None] * 3
    assert ctx.review_group.tolist() == ["max_cluster_size:1"] * 4 + [None] * 3
    assert all("exceeds max_cluster_size 3" in r for r in ctx.reason[:4])


# --- domain_thresholds ----------------------------------------------------------------------

def test_domain_thresholds_change_matches_only_inside_the_domain():
    records = {"category": ["books", "books", "music", "music", "toys", "books"]}
    pairs = [
        (0, 1, 5.0),  # books–books: 5 < 6 → unmatched
        (2, 3, 3.0),  # music–music: 3 >= 2 → matched (global would say no)
        (4, 5, 3.0),  # toys–books: different domains → global (no)
        (0, 5, 7.0),  # books–books: 7 >= 6 → stays matched
        (1, 4, 4.5),  # books–toys: global → stays matched
    ]
    ctx = make_ctx(records, pairs, threshold=4.0)
    assert matched_set(ctx) == {(0, 1), (0, 5), (1, 4)}
    DomainThresholds("category", {"books": 6.0, "music": 2.0})(ctx)
    assert matched_set(ctx) == {(2, 3), (0, 5), (1, 4)}
    by_record = {(d["record_id"], d["decision"]) for d in ctx.decisions}
    assert by_record == {("r0", "unmatched"), ("r1", "unmatched"),
                         ("r2", "matched"), ("r3", "matched")}
    assert "category='books'" in ctx.decisions_for("r0")[0]["detail"]


def test_guards_run_in_stage_order_whatever_the_list_order():
    # The domain threshold lowers the bar and chains 0-1-2-3; max_cluster_size listed first
    # must still see the chain, because thresholds run before edge guards.
    records = {"d": ["a", "a", "a", "a"]}
    pairs = [(0, 1, 3.0), (1, 2, 2.0), (2, 3, 3.0)]
    ctx = make_ctx(records, pairs, threshold=5.0)
    apply_guards([MaxClusterSize(2), DomainThresholds("d", {"a": 1.0})], ctx)
    assert matched_set(ctx) == {(0, 1), (2, 3)}


def test_record_guards_run_after_edge_guards():
    # keep_up_to listed first must see the clusters after must_not_link has split them.
    records = {"nid": ["A", "B", None], "source": ["Code", "x", "x"]}
    ctx = make_ctx(records, [(0, 1, 9), (1, 2, 9)])
    apply_guards([KeepUpTo(3, "source", values=["Code"]), MustNotLink(["nid"])], ctx)
    assert matched_set(ctx) == {(1, 2)}
    assert ctx.keep_limit.tolist() == [3, 1, 1]
    assert [d["guard"] for d in ctx.decisions_for("r0")] == ["must_not_link", "keep_up_to"]


# --- distinct_events ------------------------------------------------------------------------

def purchases(seed: int = 7, keys: int = 120):
    """A purchases table with truth: repeats of one (customer, product, amount, date) are
    separate purchases (another batch, or hours apart) or double loads (same batch, <= 5 s)."""
    rng = np.random.default_rng(seed)
    rows, event_of = [], []
    base = pd.Timestamp("2024-03-01 08:00:00")
    event = 0
    for k in range(keys):
        customer, product = f"C{k % 37:03d}", f"P{k:03d}"
        amount, date = float(rng.integers(1, 500)) + 0.99, f"2024-03-{1 + k % 28:02d}"
        for e in range(int(rng.integers(1, 4))):
            batch = f"B{int(rng.integers(0, 3))}"
            ts = base + pd.Timedelta(hours=int(k * 10 + e * 3), minutes=int(rng.integers(0, 50)))
            for copy in range(int(rng.integers(1, 3))):
                rows.append({"customer": customer, "product": product, "amount": amount,
                             "date": date, "ingest_batch": batch,
                             "load_ts": (ts + pd.Timedelta(seconds=copy * int(rng.integers(1, 6))))
                             .isoformat()})
                event_of.append(event)
            event += 1
    frame = pd.DataFrame(rows)
    key = frame.groupby(["customer", "product", "amount", "date"], sort=False).ngroup()
    pairs = [(a, b, 8.0) for idx in key.groupby(key).groups.values()
             for a, b in itertools.combinations(sorted(idx.tolist()), 2)]
    return frame, np.array(event_of), pairs


DISTINCT = DistinctEvents(["customer", "product", "amount", "date"],
                          {"same": ["ingest_batch"], "within_seconds": {"load_ts": 60}})


def test_distinct_events_preserve_every_legitimate_repeat():
    frame, event, pairs = purchases()
    ctx = make_ctx(frame, pairs, threshold=5.0)
    DISTINCT(ctx)
    same_event = event[ctx.left] == event[ctx.right]
    assert same_event.any() and (~same_event).any()  # the data has both kinds
    # all double loads stay matched, every pair of separate purchases is un-matched
    assert ctx.matched[same_event].all()
    assert not ctx.matched[~same_event].any()
    # each purchase ends in its own cluster holding exactly its loads
    labels = ctx.clusters()
    for e in np.unique(event):
        rows = np.flatnonzero(event == e)
        assert len(np.unique(labels[rows])) == 1
        assert (labels == labels[rows[0]]).sum() == len(rows)
    # 100% of purchases loaded once that share their key with another purchase: preserved
    loads = np.bincount(event)[event]
    repeated = np.array([
        len(np.unique(event[(frame[["customer", "product"]] == frame.loc[i, ["customer",
             "product"]]).all(axis=1).to_numpy()])) > 1 for i in range(len(frame))])
    want = repeated & (loads == 1)
    assert want.sum() > 20
    assert (ctx.action[want] == "preserved").all()
    assert (ctx.action[~want] == None).all()  # noqa: E711 - elementwise
    assert all(r.startswith("distinct event: same customer, product, amount, date")
               for r in ctx.reason[want])
    # a double-loaded purchase that repeats is explained but left to the keeper
    doubles = repeated & (loads > 1)
    assert doubles.any()
    assert all(r.startswith("distinct event") for r in ctx.reason[doubles])
    assert pd.isna(ctx.reason[~repeated]).all()
    assert {d["decision"] for d in ctx.decisions} == {"preserved", "separate_event"}


def test_distinct_events_reasons_say_why():
    frame = pd.DataFrame({
        "k": ["x", "x", "y", "y", "z", "z"],
        "batch": ["B1", "B2", "B1", "B1", "B1", "B1"],
        "ts": ["2024-01-01T10:00:00", "2024-01-01T10:00:01", "2024-01-01T10:00:00",
               "2024-01-01T13:00:00", "2024-01-01T10:00:00", "2024-01-01T10:00:04"],
    })
    guard = DistinctEvents(["k"], {"same": ["batch"], "within_seconds": {"ts": 60}})
    ctx = make_ctx(frame, [(0, 1, 9), (2, 3, 9), (4, 5, 9)])
    guard(ctx)
    assert matched_set(ctx) == {(4, 5)}
    assert ctx.reason[0] == "distinct event: same k as record r1, different batch"
    assert ctx.reason[3] == "distinct event: same k as record r2, ts 10800 s apart (> 60 s)"
    assert ctx.action.tolist() == ["preserved"] * 4 + [None] * 2


def test_distinct_events_split_events_chained_through_another_record():
    # r0, r1: same key, separate purchases; r2 (a typo'd key) matched to both chains them.
    frame = pd.DataFrame({"k": ["x", "x", "x?"], "batch": ["B1", "B2", "B1"]})
    ctx = make_ctx(frame, [(0, 1, 9), (0, 2, 3), (1, 2, 6)])
    DistinctEvents(["k"], {"same": ["batch"]})(ctx)
    labels = ctx.clusters()
    assert labels[0] != labels[1]
    assert matched_set(ctx) == {(1, 2)}  # the weaker link to r0 went


def test_distinct_events_split_a_chain_even_when_no_pair_shares_the_key():
    # r0 and r1 (same key, two purchases) were never a pair: they are chained only through
    # r2. Whether other records elsewhere share a key directly must not change this cluster.
    frame = pd.DataFrame({"k": ["x", "x", "x?"], "batch": ["B1", "B2", "B1"],
                          "ts": ["2024-01-01T10:00:00", "2024-01-01T18:00:00",
                                 "2024-01-01T10:00:05"]})
    ctx = make_ctx(frame, [(0, 2, 3), (1, 2, 6)])
    DistinctEvents(["k"], {"same": ["batch"], "within_seconds": {"ts": 60}})(ctx)
    labels = ctx.clusters()
    assert labels[0] != labels[1]
    assert matched_set(ctx) == {(1, 2)}  # the weaker link went
    assert {d["record_id"] for d in ctx.decisions} == {"r0", "r1"}


def test_distinct_events_bad_timestamps_raise_input_error():
    frame = pd.DataFrame({"k": ["x", "x"], "ts": ["2024-01-01", "not a time"]})
    ctx = make_ctx(frame, [(0, 1, 9)])
    with pytest.raises(InputError, match=r"guards\[0\].*'ts'.*ISO 8601"):
        apply_guards([DistinctEvents(["k"], {"within_seconds": {"ts": 5}})], ctx)


# --- conflicting_labels ---------------------------------------------------------------------

def test_conflicting_labels_on_same_text_go_to_review_together():
    frame = pd.DataFrame({
        "text": ["Great movie!", "great  movie!", "GREAT MOVIE!", "Dull plot.", "dull plot.",
                 "Fine.", None],
        "label": ["positive", "negative", "positive", "negative", "negative", "positive",
                  "negative"],
    })
    ctx = make_ctx(frame, [])
    ConflictingLabels("label", text=["text"])(ctx)
    assert ctx.action.tolist() == ["review"] * 3 + [None] * 4
    assert ctx.review_group.tolist() == ["conflicting_labels:1"] * 3 + [None] * 4
    assert "'negative', 'positive'" in ctx.reason[0]
    assert ctx.matched.sum() == 0 and (ctx.keep_limit == 1).all()  # none dropped or merged
    assert [d["record_id"] for d in ctx.decisions] == ["r0", "r1", "r2"]


def test_conflicting_labels_by_cluster_numbers_groups_by_first_row():
    frame = pd.DataFrame({"label": ["a", "a", "b", "b", None, "c", "c", "d"]})
    pairs = [(0, 1, 5), (3, 4, 5), (4, 6, 5), (2, 5, 5), (6, 7, 5)]
    ctx = make_ctx(frame, pairs, threshold=1.0)
    ConflictingLabels("label")(ctx)
    # clusters: {0,1} clean; {2,5} b/c; {3,4,6,7} b/c/d (null label r4 still reviewed)
    assert ctx.action.tolist() == [None, None] + ["review"] * 6
    groups = ctx.review_group.tolist()
    assert groups[2] == groups[5] == "conflicting_labels:1"
    assert groups[3] == groups[4] == groups[6] == groups[7] == "conflicting_labels:2"
    assert "'b', 'c', 'd'" in ctx.reason[4]


def test_review_beats_preserved_and_reasons_accumulate():
    frame = pd.DataFrame({"k": ["x", "x"], "batch": ["B1", "B2"], "label": ["yes", "no"],
                          "text": ["same", "same"]})
    ctx = make_ctx(frame, [(0, 1, 9)])
    apply_guards([ConflictingLabels("label", text=["text"]),
                  DistinctEvents(["k"], {"same": ["batch"]})], ctx)
    assert ctx.action.tolist() == ["review", "review"]
    # both record guards, so list order: the labels first, then the events
    assert ctx.reason[0].startswith("conflicting label") and "; distinct event" in ctx.reason[0]
    assert [d["guard"] for d in ctx.decisions_for("r0")] == ["conflicting_labels",
                                                               "distinct_events"]
    assert ctx.review_group.tolist() == ["conflicting_labels:1"] * 2


# --- keep_up_to -----------------------------------------------------------------------------

def test_keep_up_to_sets_limit_only_for_protected_clusters():
    frame = pd.DataFrame({"source": ["Civil Code art. 5", "blog", "blog", "news", "news",
                                     "Penal Code §2", "blog"]})
    pairs = [(0, 1, 9), (1, 2, 9), (3, 4, 9), (5, 6, 9)]
    ctx = make_ctx(frame, pairs, threshold=1.0)
    KeepUpTo(3, "source", pattern=r"\bCode\b")(ctx)
    assert ctx.keep_limit.tolist() == [3, 3, 3, 1, 1, 3, 3]
    KeepUpTo(5, "source", values=["Penal Code §2"], name="statutes")(ctx)
    assert ctx.keep_limit.tolist() == [3, 3, 3, 1, 1, 5, 5]
    assert {d["record_id"] for d in ctx.decisions if d["guard"] == "statutes"} == {"r5", "r6"}


# --- configuration and errors ---------------------------------------------------------------

def test_guards_build_from_yaml_mappings_and_round_trip():
    specs = [
        {"type": "must_not_link", "columns": ["ssn"]},
        {"type": "max_cluster_size", "size": 50, "action": "review"},
        {"type": "domain_thresholds", "column": "category", "thresholds": {"books": 6}},
        {"type": "distinct_events", "key": ["customer", "product"],
         "double_load": {"same": ["ingest_batch"], "within_seconds": {"load_ts": 60}}},
        {"type": "conflicting_labels", "label": "label", "text": ["text"]},
        {"type": "keep_up_to", "k": 3, "column": "source", "pattern": "Code", "name": "law"},
    ]
    kinds = [MustNotLink, MaxClusterSize, DomainThresholds, DistinctEvents, ConflictingLabels,
             KeepUpTo]
    for spec, kind in zip(specs, kinds, strict=True):
        guard = Guard.from_dict(spec)
        assert type(guard) is kind
        assert Guard.from_dict(guard.to_dict()) == guard
    assert Guard.from_dict(specs[0]).columns == ["ssn"]


@pytest.mark.parametrize(("spec", "message"), [
    ({"type": "must_not_lnk", "columns": ["ssn"]}, "Did you mean 'must_not_link'"),
    ({"type": "must_not_link", "colums": ["ssn"]}, "Did you mean 'columns'"),
    ({"type": "must_not_link", "columns": []}, "columns must be a non-empty list"),
    ({"type": "max_cluster_size", "size": 0}, "size must be a whole number of at least 1"),
    ({"type": "max_cluster_size", "size": 5, "action": "drop"}, "'split', 'review'"),
    ({"type": "distinct_events", "key": ["k"], "double_load": {}},
     "must name at least one of `same` or `within_seconds`"),
    ({"type": "distinct_events", "key": ["k"], "double_load": {"within_seconds": {"t": -1}}},
     "seconds >= 0"),
    ({"type": "keep_up_to", "k": 2, "column": "c"}, "or `pattern` must be given"),
    ({"type": "keep_up_to", "k": 2, "column": "c", "pattern": "("}, "valid regular expression"),
    ({"type": "domain_thresholds", "column": "c", "thresholds": {}}, "must map domain values"),
])
def test_bad_guard_config_teaches(spec, message):
    with pytest.raises(RulesError, match=message.replace("(", r"\(").replace("[", r"\[")):
        Guard.from_dict(spec, source="rules.yaml")


def test_missing_column_names_the_guard_and_the_fix():
    ctx = make_ctx({"name": ["a", "b"]}, [(0, 1, 9)])
    guards = [MaxClusterSize(5), ConflictingLabels("label")]
    with pytest.raises(InputError) as err:
        apply_guards(guards, ctx)
    text = str(err.value)
    assert "guards[1] (conflicting_labels)" in text and "'label'" in text and "Fix:" in text
    assert ctx.matched.all() and ctx.decisions == []  # nothing ran


def test_decisions_carry_record_ids_of_any_type():
    ids = np.array([1001, 1002, 1003], dtype=object)
    ctx = make_ctx({"nid": ["A", "B", "A"]}, [(0, 1, 9), (1, 2, 9)], ids=ids)
    MustNotLink(["nid"])(ctx)
    assert {d["record_id"] for d in ctx.decisions} == {1001, 1002, 1003}
    assert ctx.decisions_for(1002)[0]["decision"] == "split"


def test_clusters_follow_matched():
    ctx = make_ctx({"x": range(4)}, [(0, 1, 1), (2, 3, 1)])
    assert ctx.clusters().tolist() == connected_components(4, ctx.left, ctx.right).tolist()
    ctx.matched[1] = False
    assert ctx.clusters().tolist() == [0, 0, 1, 2]
