"""Contract tests per family: every registered comparator, blocker, scorer, guard, keeper policy
and engine goes through the same checks, as scikit-learn's `parametrize_with_checks` does, so a
new member is tested by being registered.

The members this module itself defines (`FirstLetter`, `FirstWordKey`, `SameDayKey`,
`NoTwoSources`, `EchoEngine`) show docs/ARCHITECTURE.md's "how to add": each is one class in
one file (this one), registered by being defined, and a run uses it from its rules by `type:`
name. They are checked with everyone else.
"""

from __future__ import annotations

import inspect
from typing import ClassVar

import numpy as np
import pandas as pd
import pytest

import linkage as lk
from linkage.blocking import (
    BandJoin,
    Blocker,
    BlockingInput,
    KeyJoin,
    KeyPart,
    NeighbourJoin,
    Proposal,
    RangeJoin,
    WindowJoin,
)
from linkage.comparators import NULL_LEVEL, Comparison, is_missing
from linkage.engines import engine_names, get_engine, register_engine, unregister_engine
from linkage.errors import EngineError, InputError
from linkage.guards import Guard, GuardContext
from linkage.keep import POLICIES
from linkage.pipeline import LocalEngine
from linkage.scoring import ComparisonMatrix, Scorer

# --- members added by this file alone ---------------------------------------------------------


class FirstLetter(Comparison):
    """A comparison added in a test file: do the values start with the same letter?"""

    kind = "test_first_letter"
    equal_is_exact = True

    @property
    def level_labels(self) -> list[str]:
        return ["different", "same first letter"]

    def _score(self, left: np.ndarray, right: np.ndarray):
        same = np.array([str(a)[:1].lower() == str(b)[:1].lower()
                         for a, b in zip(left, right, strict=True)], dtype=bool)
        return same.astype(np.int8), same.astype(np.float32)


class FirstWordKey(Blocker):
    """A blocker added in a test file: records whose `column` starts with the same word."""

    kind = "test_first_word"

    def __init__(self, column: str, *, name: str | None = None):
        self.column, self.name = column, name

    @property
    def columns(self) -> list[str]:
        return [self.column]

    def describe(self) -> str:
        return f"first word of {self.column}"

    def _codes(self, data: BlockingInput) -> np.ndarray:
        words = pd.Series(data.columns[self.column], dtype=object).str.split().str[0]
        codes, _ = pd.factorize(words)
        return codes

    def estimate(self, data: BlockingInput, max_block_size: int) -> int:
        sizes = np.bincount(self._codes(data)[self._codes(data) >= 0])
        return int((sizes * (sizes - 1) // 2).sum())

    def propose(self, data: BlockingInput, max_block_size: int) -> Proposal:
        codes = self._codes(data)
        frame = pd.DataFrame({"row": np.arange(len(codes)), "code": codes})
        frame = frame[frame["code"] >= 0]
        joined = frame.merge(frame, on="code")
        keep = joined["row_x"] < joined["row_y"]
        return Proposal(joined["row_x"][keep].to_numpy(np.int64),
                        joined["row_y"][keep].to_numpy(np.int64))


class SameDayKey(FirstWordKey):
    """A blocker added in a test file that says how its pairs are made by joins, so an engine
    that blocks by joining (Spark) runs it: records with the same `column` value."""

    kind = "test_same_day"

    def describe(self) -> str:
        return f"same {self.column}"

    def _codes(self, data: BlockingInput) -> np.ndarray:
        codes, _ = pd.factorize(pd.Series(data.columns[self.column], dtype=object))
        return codes

    def join_plan(self) -> KeyJoin:
        return KeyJoin([[KeyPart(self.column)]], lambda parts, data: [])


class NoTwoSources(Guard):
    """A guard added in a test file: records of two different `column` values never match."""

    kind = "test_no_two_sources"
    stage: ClassVar[int] = 1

    def __init__(self, column: str, *, name: str | None = None):
        self.column, self.name = column, name

    def input_columns(self) -> dict[str, list[str]]:
        return {"column": [self.column]}

    def apply(self, ctx: GuardContext) -> None:
        values = ctx.records[self.column].astype(str).to_numpy()
        differ = ctx.matched & (values[ctx.left] != values[ctx.right])
        ctx.matched[differ] = False


class EchoEngine(LocalEngine):
    """An engine added in a test file: the local engine under another name, refusing the
    `exact:` stage so the refusal path is checked too."""

    name = "test_echo"

    def check(self, rules, *, labels=None, checkpoint=None) -> None:
        if rules.exact is not None:
            raise EngineError("`exact` (the exact stage) is not supported by --engine "
                              "test_echo. Run these rules with --engine local.")


# --- data --------------------------------------------------------------------------------------

_LONG = " who wrote a long letter to the council about the state of the roads in town"
TEXTS = [t if t is None else t + _LONG for t in [
    "robert smith london", "robert smith london", "bob smith london", "alice jones paris",
    "alice jones paris", "alicia jones paris", "carol white rome", None, "dave brown oslo",
    "dave brown oslo"]]


def people() -> pd.DataFrame:
    return pd.DataFrame({
        "id": [f"r{i}" for i in range(10)],
        "name": ["Robert Smith", "Robert Smith", "Bob Smith", "Alice Jones", "Alice Jones",
                 "Alicia Jones", "Carol White", None, "Dave Brown", "Dave Brown"],
        "text": TEXTS,
        "dob": ["1980-01-02", "1980-01-02", "1980-01-02", "1990-05-06", "1990-05-06",
                "1990-06-05", "1975-03-04", "1975-03-04", "1960-07-08", "1960-07-08"],
        "amount": ["10", "10", "11", "20", "20", "20", "30", "30", "40", None],
        "source": ["a", "b", "a", "a", "b", "a", "a", "b", "a", "a"],
        "updated": ["2020-01-01", "2021-01-01", "2019-01-01", "2020-02-02", "2018-02-02",
                    "2017-02-02", "2020-03-03", "2020-03-03", "2020-04-04", "2021-04-04"],
        "label": ["x", "x", "x", "y", "y", "y", "z", "z", "w", "w"],
        "code": ["KDL-40V4100", "KDL-40V4100", "KDL-40V4100B", "SX-2200", "SX-2200", "SX-2201",
                 "AB-9900", None, "QQ-1234", "QQ-1234"],
    })


def _members(base) -> list[tuple[str, type]]:
    return sorted(base._registry.items())


# Where a member needs more than a column to be built, its settings; the others are built by
# giving every required argument the column its family reads.
SETTINGS = {
    ("comparison", "date"): {"column": "dob"},
    ("comparison", "numeric"): {"column": "amount"},
    ("comparison", "codes"): {"column": "code"},
    ("blocker", "keys"): {"keys": [["first(name, 1)"], ["dob"]]},
    ("blocker", "sorted_neighbourhood"): {"sort_key": "name", "window": 3},
    ("blocker", "range"): {"key": ["first(name, 1)"], "column": "dob", "within_days": 40},
    ("blocker", "token_neighbours"): {"columns": ["text"]},
    ("blocker", "test_same_day"): {"column": "dob"},
    ("scorer", "supervised"): None,  # needs a labels file: built in its test
    ("guard", "conflicting_labels"): {"label": "label"},
    ("guard", "distinct_events"): {"key": ["name"], "double_load": {"same": ["source"]}},
    ("guard", "domain_thresholds"): {"column": "source", "thresholds": {"a": 50.0}},
    ("guard", "keep_up_to"): {"k": 2, "column": "label", "values": ["x"]},
    ("guard", "max_cluster_size"): {"size": 2},
    ("guard", "must_not_link"): {"columns": ["label"]},
}
TEXT_KINDS = {"cosine", "jaccard", "simhash", "minhash", "embedding", "token_cosine", "codes",
              "test_first_word"}


def build(base, kind: str, cls: type):
    """A member of `base`'s family from its YAML settings (the way rules build it)."""
    settings = SETTINGS.get((base.family, kind))
    if settings is None:
        column = "text" if kind in TEXT_KINDS else "name"
        required = [n for n, p in cls._params().items()
                    if p.default is inspect.Parameter.empty]
        settings = {n: ([column] if n == "columns" else column) for n in required}
    return base.from_dict({"type": kind, **settings})


def _ids(members):
    return [kind for kind, _ in members]


# --- comparators -------------------------------------------------------------------------------

COMPARISONS = _members(Comparison)


@pytest.mark.parametrize(("kind", "cls"), COMPARISONS, ids=_ids(COMPARISONS))
def test_every_comparison_keeps_the_contract(kind, cls):
    comparison = build(Comparison, kind, cls)
    # The rules file round trip: what it writes, it reads back as the same settings.
    again = Comparison.from_dict(comparison.to_dict())
    assert type(again) is cls and again.to_dict() == comparison.to_dict()
    frame = people()
    values = frame[comparison.column].to_numpy(dtype=object)
    left, right = values[[0, 1, 2, 3, 7, 0]], values[[1, 0, 3, 5, 0, 7]]
    levels, similarities = comparison.compare(left, right)
    assert levels.shape == (6,) and similarities.shape == (6,)
    top = len(comparison.level_labels) - 1
    assert ((levels >= NULL_LEVEL) & (levels <= top)).all()
    assert levels[0] == top, "equal values reach the top level"
    missing = pd.isna(left) | pd.isna(right)
    assert (levels[missing] == NULL_LEVEL).all() and np.isnan(similarities[missing]).all()
    swapped, _ = comparison.compare(right, left)
    assert (swapped == levels).all(), "a comparison does not depend on the pair's order"
    again_levels, again_similarities = comparison.compare(left, right)
    assert (again_levels == levels).all()
    np.testing.assert_array_equal(again_similarities, similarities)
    if comparison.per_pair:
        # What an engine that compares partitions of the pairs apart relies on: the pairs
        # compared in two parts give what they give together.
        parts = [comparison.compare(left[:3], right[:3]), comparison.compare(left[3:],
                                                                             right[3:])]
        assert (np.concatenate([p[0] for p in parts]) == levels).all()
        np.testing.assert_array_equal(np.concatenate([p[1] for p in parts]), similarities)


# --- blockers ----------------------------------------------------------------------------------

BLOCKERS = _members(Blocker)


@pytest.mark.parametrize(("kind", "cls"), BLOCKERS, ids=_ids(BLOCKERS))
def test_every_blocker_keeps_the_contract(kind, cls):
    blocker = build(Blocker, kind, cls)
    again = Blocker.from_dict(blocker.to_dict())
    assert type(again) is cls and again.to_dict() == blocker.to_dict()
    frame = people()
    data = BlockingInput({c: frame[c].to_numpy(dtype=object) for c in blocker.columns}, None)
    proposal = blocker.propose(data, 1000)
    left, right = proposal.left, proposal.right
    assert len(left) == len(right)
    assert ((left >= 0) & (right < len(frame)) & (left < right)).all()
    assert blocker.estimate(data, 1000) >= 0
    assert (0, 1) in set(zip(left.tolist(), right.tolist(), strict=True)), \
        "two identical records are proposed"
    # update's questions: with every record new, the new pairs are all the pairs; with none,
    # there are none; a pair proposed now is still proposed.
    every = blocker.propose_new(data, np.ones(len(frame), dtype=bool), 1000)

    def pairs(a, b) -> set:
        return set(zip(np.minimum(a, b).tolist(), np.maximum(a, b).tolist(), strict=True))

    assert pairs(every.left, every.right) == pairs(left, right)
    none = blocker.propose_new(data, np.zeros(len(frame), dtype=bool), 1000)
    assert len(none.left) == 0
    assert blocker.estimate_new(data, np.zeros(len(frame), dtype=bool), 1000) >= 0
    still = blocker.still_proposes(data, left, right, 1000)
    assert still is None or still.all()
    # Result.match's question: the run records a new record would be paired with, found in
    # the blocker's lookup index, are those a full run with it proposes.
    columns = {c: frame[c].to_numpy(dtype=object) for c in blocker.columns}
    for query_row in (1, 4, 9):
        run = [r for r in range(len(frame)) if r != query_row]
        index = blocker.lookup_index({c: v[run] for c, v in columns.items()}, 1000)
        found = index.find({c: v[[query_row]] for c, v in columns.items()})
        got = {run[r] for qs, rs in found for r in rs.tolist()}
        order = [*run, query_row]  # the new record last, as it would be in a run
        full = blocker.propose(BlockingInput({c: v[order] for c, v in columns.items()}, None),
                               1000)
        want = {order[min(a, b)] for a, b in zip(full.left.tolist(), full.right.tolist(),
                                                 strict=True) if max(a, b) == len(run)}
        assert got == want, f"lookup of record {query_row}"
    # An engine that blocks by joins (Spark) makes the pairs the blocker's plan describes:
    # they are the pairs `propose` gives.
    plan = blocker.join_plan()
    if plan is not None:
        assert pairs(*_joined(plan, frame)) == pairs(left, right)


def _joined(plan, frame: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """The pairs of a join plan over the records, by plain Python (no oversized blocks)."""
    def values(part: KeyPart) -> list:
        return list(pd.Series(part.compute(frame[part.column].to_numpy(dtype=object)),
                              dtype=object))

    found = set()
    if isinstance(plan, KeyJoin):
        for parts in plan.keys:
            columns = [values(p) for p in parts]
            blocks: dict[tuple, list[int]] = {}
            for row, key in enumerate(zip(*columns, strict=True)):
                if not any(pd.isna(v) for v in key):
                    blocks.setdefault(key, []).append(row)
            found |= {(a, b) for rows in blocks.values() for i, a in enumerate(rows)
                      for b in rows[i + 1:]}
    elif isinstance(plan, BandJoin):  # equal band keys, then verified
        texts = frame[plan.column].to_numpy(dtype=object)
        keys, eligible = plan.band_keys(texts)
        buckets: dict[tuple, list[int]] = {}
        for row in np.flatnonzero(eligible).tolist():
            for band in range(plan.bands):
                buckets.setdefault((band, int(keys[row, band])), []).append(row)
        candidates = sorted({(a, b) for rows in buckets.values() for i, a in enumerate(rows)
                             for b in rows[i + 1:]})
        if candidates:
            a, b = (np.array(side) for side in zip(*candidates, strict=True))
            ok = plan.verify(texts[a], texts[b])
            found |= {pair for pair, keep in zip(candidates, ok, strict=True) if keep}
    elif isinstance(plan, RangeJoin):  # equal parts and codes, values within the width
        columns = [values(p) for p in plan.parts]
        held = np.array([not any(pd.isna(v) for v in key)
                         for key in zip(*columns, strict=True)] if columns else
                        [True] * len(frame))
        codes, axis, width = plan.prepared(np.where(held, 0, -1).astype(np.int64),
                                           frame[plan.column].to_numpy(dtype=object))
        keys = list(zip(*columns, strict=True)) if columns else [()] * len(frame)
        found |= {(a, b) for a in range(len(frame)) for b in range(a + 1, len(frame))
                  if codes[a] >= 0 and codes[a] == codes[b] and keys[a] == keys[b]
                  and abs(axis[a] - axis[b]) <= width * (1 + plan.slack)}
    elif isinstance(plan, NeighbourJoin):  # the neighbour search over every vector
        texts = frame[plan.column].to_numpy(dtype=object)
        rows = np.flatnonzero(~is_missing(texts))
        a, b = plan.neighbours(rows, plan.vectors([str(t) for t in texts[rows]]), None)
        found |= set(zip(a.tolist(), b.tolist(), strict=True))
    else:
        assert isinstance(plan, WindowJoin)
        columns = [values(p) for p in plan.parts]
        keyed = sorted(("\x1f".join("" if pd.isna(v) else str(v) for v in key), row)
                       for row, key in enumerate(zip(*columns, strict=True))
                       if not all(pd.isna(v) for v in key))
        rows = [row for _, row in keyed]
        found |= {(min(rows[i], rows[j]), max(rows[i], rows[j])) for i in range(len(rows))
                  for j in range(i + 1, min(i + plan.window, len(rows)))}
    pairs = sorted(found)
    return np.array([a for a, _ in pairs]), np.array([b for _, b in pairs])


# --- scorers -----------------------------------------------------------------------------------

SCORERS = _members(Scorer)


def _matrix() -> tuple[ComparisonMatrix, np.ndarray]:
    from linkage.comparators import Date, JaroWinkler

    frame = people()
    comparisons = [JaroWinkler("name"), Date("dob")]
    rows = np.array([(a, b) for a in range(10) for b in range(a + 1, 10)])
    levels, similarities = zip(*(c.compare(frame[c.column].to_numpy(object)[rows[:, 0]],
                                           frame[c.column].to_numpy(object)[rows[:, 1]])
                                 for c in comparisons), strict=True)
    matrix = ComparisonMatrix(comparisons, np.column_stack(levels),
                              np.column_stack(similarities))
    same = frame["label"].to_numpy()
    return matrix, (same[rows[:, 0]] == same[rows[:, 1]]).astype(float)


@pytest.mark.parametrize(("kind", "cls"), SCORERS, ids=_ids(SCORERS))
def test_every_scorer_keeps_the_contract(kind, cls, tmp_path):
    matrix, y = _matrix()
    if SETTINGS.get(("scorer", kind), {}) is None:
        rows = np.array([(a, b) for a in range(10) for b in range(a + 1, 10)])
        pd.DataFrame({"id_l": rows[:, 0], "id_r": rows[:, 1], "label": y.astype(int)}) \
            .to_csv(tmp_path / "labels.csv", index=False)
        scorer = Scorer.from_dict({"type": kind, "labels": str(tmp_path / "labels.csv"),
                                   "cv": 2})
    else:
        scorer = build(Scorer, kind, cls)
    again = Scorer.from_dict(scorer.to_dict())
    assert type(again) is cls and again.to_dict() == scorer.to_dict()
    fitted = scorer.fit(matrix, y) if kind == "supervised" else scorer.fit(matrix)
    weight = fitted.match_weight(matrix)
    assert weight.shape == (len(matrix),) and np.isfinite(weight).all()
    assert isinstance(float(fitted.threshold), float)
    same = scorer.fit(matrix, y) if kind == "supervised" else scorer.fit(matrix)
    np.testing.assert_array_equal(same.match_weight(matrix), weight)
    levels = matrix.levels
    top = (levels == levels.max(axis=0)).all(axis=1)  # agree on every comparison
    bottom = (levels == 0).all(axis=1)  # disagree on every one (both values present)
    assert top.any() and bottom.any(), "the data must hold both kinds of pair"
    assert weight[top].min() > weight[bottom].max(), \
        "a pair that agrees on everything scores above one that disagrees on everything"


# --- guards, keepers and engines: in real runs -------------------------------------------------

GUARDS = _members(Guard)
RULES = {
    "id_column": "id",
    "blocking": [{"type": "keys", "keys": [["first(name, 1)"], ["dob"]]}],
    "comparisons": [{"type": "jaro_winkler", "column": "name"}, {"type": "date", "column": "dob"}],
    "scoring": {"type": "rule_sum", "threshold": 1.5},
}


def _every_record_once(frame: pd.DataFrame, result) -> None:
    clusters = result.clusters
    assert sorted(clusters["id"]) == sorted(frame["id"])
    assert clusters["id"].is_unique


@pytest.mark.parametrize(("kind", "cls"), GUARDS, ids=_ids(GUARDS))
def test_every_guard_keeps_the_output_contract(kind, cls):
    guard = build(Guard, kind, cls)
    again = Guard.from_dict(guard.to_dict())
    assert type(again) is cls and again.to_dict() == guard.to_dict()
    frame = people()
    result = lk.dedupe(frame, {**RULES, "guards": [guard.to_dict()]}, progress=False)
    _every_record_once(frame, result)
    decisions = result.guard_decisions
    touched = set(decisions["guard"]) if decisions is not None else set()
    assert touched <= {guard.guard_name, "split_non_matches", "split_weak_links"}


@pytest.mark.parametrize("policy", POLICIES)
def test_every_keeper_policy_keeps_one_record_per_cluster(policy):
    from linkage.keep import _COLUMN_NEEDS as COLUMN_MEANING

    frame = people()
    keep = {"policy": policy}
    if policy in COLUMN_MEANING:
        keep["column"] = {"source_priority": "source", "diverse": "source"}.get(policy,
                                                                                  "updated")
    if policy == "source_priority":
        keep["order"] = ["b", "a"]
    if policy == "farthest_from_centroid":
        pytest.skip("needs the semantic stage: tested in test_semdedup.py")
    result = lk.dedupe(frame, {**RULES, "keep": keep}, progress=False)
    _every_record_once(frame, result)
    kept = result.clusters[result.clusters["action"] == "keep"]
    assert kept["cluster_id"].is_unique
    assert set(kept["cluster_id"]) == set(result.clusters["cluster_id"])


@pytest.mark.parametrize("name", engine_names())
def test_every_engine_writes_the_local_engines_clusters(name, spark):
    engine = get_engine(name)
    assert engine.name == name
    frame = people()
    local = lk.dedupe(frame, RULES, progress=False)
    result = lk.dedupe(frame, RULES, progress=False, engine=name)
    pd.testing.assert_frame_equal(result.clusters, local.clusters)
    exact = {**RULES, "exact": {"columns": ["name", "dob"]}}
    try:
        engine.check(lk.Rules.from_dict(exact))
    except EngineError as refused:
        assert "--engine local" in str(refused)


def test_members_added_in_a_file_run_from_rules():
    """The how-to-add claims of docs/ARCHITECTURE.md: a comparator, a blocker, a guard and an
    engine defined in this file alone run from rules that name them."""
    frame = people()
    rules = {
        "id_column": "id",
        "blocking": [{"type": "test_first_word", "column": "text"}],
        "comparisons": [{"type": "test_first_letter", "column": "name"},
                        {"type": "date", "column": "dob"}],
        "guards": [{"type": "test_no_two_sources", "column": "source"}],
        "scoring": {"type": "rule_sum", "threshold": 1.5},
    }
    # Registered for this test only: the CLI lists the registered engines in its help.
    register_engine("test_echo", f"{__name__}:EchoEngine")
    try:
        _members_run_from_rules(frame, rules)
    finally:
        unregister_engine("test_echo")
    assert "test_echo" not in engine_names()


def test_a_blocker_added_in_a_file_runs_on_spark_by_its_join_plan(spark):
    """A blocker says how its pairs are made by joins (`join_plan`), and Spark runs it with
    nothing added to the Spark engine; one that does not is refused by its rules key."""
    frame = people()
    rules = {**RULES, "blocking": [{"type": "test_same_day", "column": "dob"},
                                   {"type": "sorted_neighbourhood", "sort_key": "name",
                                    "window": 3}]}
    local = lk.dedupe(frame, rules, progress=False)
    on_spark = lk.dedupe(frame, rules, progress=False, engine="spark")
    pd.testing.assert_frame_equal(on_spark.clusters, local.clusters)
    pd.testing.assert_frame_equal(on_spark.pairs, local.pairs)
    assert len(local.pairs) > 0
    words = {**RULES, "blocking": [{"type": "test_first_word", "column": "text"}]}
    with pytest.raises(EngineError, match=r"blocking\[0\]\.type.*test_first_word"):
        get_engine("spark").check(lk.Rules.from_dict(words))


def _members_run_from_rules(frame: pd.DataFrame, rules: dict) -> None:
    assert get_engine("test_echo").name == "test_echo"
    result = lk.dedupe(frame, rules, progress=False, engine="test_echo")
    _every_record_once(frame, result)
    assert "test_first_letter" in result.rules.to_dict()["comparisons"][0]["type"]
    pairs = result.pairs
    assert set(pairs["name_level"]) <= {-1, 0, 1}
    sources = frame.set_index("id")["source"].loc[result.clusters["id"]].to_numpy()
    per_cluster = pd.Series(sources).groupby(result.clusters["cluster_id"].to_numpy()).nunique()
    assert (per_cluster == 1).all(), "the guard kept records of two sources apart"
    assert (result.clusters["cluster_size"] > 1).any(), "the run linked some records"
    with pytest.raises(EngineError, match="test_echo"):
        lk.dedupe(frame, {**rules, "exact": {"columns": ["name"]}}, progress=False,
                  engine="test_echo")


def test_an_engine_registered_wrongly_is_named_with_the_fix():
    register_engine("test_missing", "tests.no_such_module:Engine")
    try:
        with pytest.raises(InputError, match=r"test_missing.*no_such_module.*register_engine"):
            get_engine("test_missing")
    finally:
        unregister_engine("test_missing")
    with pytest.raises(InputError, match="built in"):
        unregister_engine("local")
    with pytest.raises(InputError, match="not one of local, spark"):
        get_engine("no_such_engine")
