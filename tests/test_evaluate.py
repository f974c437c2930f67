"""Evaluation metrics against hand computations and a brute-force reference."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from linkage.measure.evaluate import blocking_report, score_clusters, scores_by_threshold


def test_hand_computed_example():
    # truth: {a,b,c} {d,e}; predicted: {a,b} {c,d,e}
    truth = pd.Series({"a": 1, "b": 1, "c": 1, "d": 2, "e": 2})
    predicted = pd.Series({"a": 0, "b": 0, "c": 5, "d": 5, "e": 5})
    s = score_clusters(predicted, truth)
    # predicted pairs ab, cd, ce, de; true pairs ab, ac, bc, de; shared ab, de
    assert s.precision == pytest.approx(2 / 4) and s.recall == pytest.approx(2 / 4)
    # B-cubed precision: a,b 1; c 1/3; d,e 2/3 -> (2 + 1/3 + 4/3) / 5
    assert s.bcubed_precision == pytest.approx((2 + 1 / 3 + 4 / 3) / 5)
    # B-cubed recall: a,b 2/3; c 1/3; d,e 1 -> (4/3 + 1/3 + 2) / 5
    assert s.bcubed_recall == pytest.approx((4 / 3 + 1 / 3 + 2) / 5)
    assert s.exact_clusters == 0.0
    perfect = score_clusters(truth, truth)
    assert perfect.f1 == perfect.bcubed_f1 == perfect.exact_clusters == 1.0


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 4), st.integers(0, 4)), min_size=2, max_size=25))
def test_pairwise_equals_brute_force(labels):
    ids = [f"r{i}" for i in range(len(labels))]
    predicted = pd.Series({i: c for i, (c, _) in zip(ids, labels, strict=True)})
    truth = pd.Series({i: e for i, (_, e) in zip(ids, labels, strict=True)})
    pairs = list(itertools.combinations(ids, 2))
    pred = {p for p in pairs if predicted[p[0]] == predicted[p[1]]}
    true = {p for p in pairs if truth[p[0]] == truth[p[1]]}
    s = score_clusters(predicted, truth)
    assert s.precision == pytest.approx(len(pred & true) / len(pred) if pred else 1.0)
    assert s.recall == pytest.approx(len(pred & true) / len(true) if true else 1.0)


def test_blocking_report_and_thresholds():
    truth = pd.Series({"a": 1, "b": 1, "c": 2, "d": 2})
    pairs = pd.DataFrame({"id_l": ["a", "a", "c"], "id_r": ["b", "c", "d"],
                          "blockers": np.array([1, 2, 3]), "match_weight": [5.0, 1.0, 3.0]})
    report = blocking_report(pairs, truth, ["names", "dates"], n_records=4).set_index("blocker")
    assert report.loc["names", "recall"] == 1.0 and report.loc["names", "pairs"] == 2
    assert report.loc["dates", "recall"] == 0.5
    assert report.loc["(union)", "reduction_ratio"] == pytest.approx(1 - 3 / 6)
    table = scores_by_threshold(pairs, truth, [0.0, 2.0, 4.0]).set_index("threshold")
    assert table.loc[0.0, "precision"] == pytest.approx(2 / 3)
    assert table.loc[2.0, "f1"] == 1.0
    assert table.loc[4.0, "recall"] == 0.5
