"""The supervised scorer on Splink's fake_1000 with its clerical labels.

`cluster` is the truth: it is dropped before anything reaches linkage code and only used to
score the predictions. The clerical labels name every true pair plus 1,145 non-matches that are
*random* pairs (no blocker proposes them), so only 2 labelled non-matches fall among the
candidate pairs. The model is therefore trained on the labelled pairs themselves, compared
with the real pipeline pieces, and judged on the candidate pairs of a real `dedupe` run.
"""

from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pytest

import linkage
from linkage.errors import InputError, LinkageWarning, NotFittedError, RulesError
from linkage.io import as_text
from linkage.pipeline import compare_pairs
from linkage.run.disk import comparison_matrix
from linkage.scoring import ComparisonMatrix, Scorer, Supervised, labels_for_pairs, read_labels
from linkage.settings import Rules
from tests.conftest import f1_score

ID_COLUMNS = ["unique_id_l", "unique_id_r"]
LABEL = "clerical_match_score"
RULES = {
    "id_column": "unique_id",
    "normalize": [
        {"column": "first_name", "type": "name"},
        {"column": "surname", "type": "name"},
        {"column": "dob", "type": "date", "order": "YMD", "on_error": "null"},
        {"column": "city", "type": "text"},
    ],
    # Recall-friendly: any one key equal. About a third of the candidate pairs are matches.
    "blocking": [{"name": "any", "keys": [["first_name"], ["surname"], ["dob"], ["email"],
                                          ["city", "first(surname, 1)"]]}],
    "comparisons": [
        {"type": "jaro_winkler", "column": "first_name", "thresholds": [0.92, 0.8]},
        {"type": "jaro_winkler", "column": "surname", "thresholds": [0.92, 0.8]},
        {"type": "date", "column": "dob", "within_days": [365]},
        {"type": "levenshtein", "column": "city", "thresholds": [0.8]},
        {"type": "levenshtein", "column": "email", "thresholds": [0.8]},
    ],
    "scoring": {"type": "rule_sum", "threshold": 3.0},
}


def supervised(**kw) -> Supervised:
    return Supervised(labels="fake_1000_labels.csv", id_columns=ID_COLUMNS, label_column=LABEL,
                      **kw)


@pytest.fixture(scope="module")
def data(datasets):
    """Candidate pairs (matrix + truth), and the labelled pairs (matrix + y)."""
    frame = pd.read_csv(datasets / "splink" / "fake_1000.csv", dtype=str, keep_default_na=False)
    cluster = dict(zip(frame["unique_id"], frame["cluster"], strict=True))
    records = frame.drop(columns="cluster")  # the truth goes no further
    rules = Rules.from_dict(RULES)
    pairs = linkage.dedupe(records, rules, progress=False).pairs
    X = comparison_matrix(pairs, rules)
    id_l, id_r = pairs["id_l"].astype(str).to_numpy(), pairs["id_r"].astype(str).to_numpy()
    truth = np.array([cluster[a] == cluster[b] for a, b in zip(id_l, id_r, strict=True)])

    labels = read_labels(datasets / "splink" / "fake_1000_labels.csv", id_columns=ID_COLUMNS,
                         label_column=LABEL)
    # Compare the labelled pairs as the pipeline compares candidate pairs.
    ids = records["unique_id"].astype(str)
    work = {c: as_text(records[c]) for c in rules.columns()}
    for step in rules.normalize:
        series = pd.Series(work[step.column], index=ids.to_numpy(), dtype=object)
        work[step.target] = step.apply(series).to_numpy(dtype=object)
    row = pd.Index(ids)
    lab_l, lab_r = labels[ID_COLUMNS[0]].to_numpy(), labels[ID_COLUMNS[1]].to_numpy()
    XL = compare_pairs(rules.comparisons, work, row.get_indexer(lab_l), row.get_indexer(lab_r))
    yL = labels_for_pairs(labels, lab_l, lab_r, id_columns=ID_COLUMNS, label_column=LABEL)
    return {"X": X, "id_l": id_l, "id_r": id_r, "truth": truth, "labels": labels,
            "XL": XL, "yL": yL}


@pytest.fixture(scope="module")
def gb(data) -> Supervised:
    return supervised().fit(data["XL"], data["yL"])


@pytest.fixture(scope="module")
def lr(data) -> Supervised:
    return supervised(model="logistic_regression").fit(data["XL"], data["yL"])


def pair_f1(scorer: Scorer, data) -> tuple[float, float, float]:
    matched = scorer.predict(data["X"])
    ids = list(zip(data["id_l"], data["id_r"], strict=True))
    predicted = {p for p, m in zip(ids, matched, strict=True) if m}
    truth = {p for p, t in zip(ids, data["truth"], strict=True) if t}
    return f1_score(predicted, truth)


# ---------------------------------------------------------------------- quality


def test_gradient_boosting_f1_on_candidate_pairs(data, gb):
    precision, recall, f1 = pair_f1(gb, data)
    # Measured 0.881 (precision 0.79, recall 1.0). Predicting every candidate a match scores
    # 0.52 here, and the shipped rule_sum weights 0.87. The labelled non-matches are random
    # pairs, so the hard non-matches that blocking proposes are never seen in training.
    assert f1 >= 0.86, (precision, recall, f1)
    everything = 2 * data["truth"].mean() / (1 + data["truth"].mean())
    assert f1 >= everything + 0.3


def test_logistic_regression_f1_on_candidate_pairs(data, lr):
    precision, recall, f1 = pair_f1(lr, data)
    assert f1 >= 0.68, (precision, recall, f1)  # measured 0.700: see the note above
    assert recall >= 0.99


def test_cv_threshold_and_figures_are_stored(gb, data):
    assert gb.n_labelled_ == 3176
    assert 0.0 < gb.threshold_ < 1.0
    assert gb.threshold == pytest.approx(np.log2(gb.threshold_ / (1 - gb.threshold_)))
    assert gb.cv_precision_ >= 0.99 and gb.cv_recall_ >= 0.99 and gb.cv_f1_ >= 0.99
    assert gb.cv_folds_ == 5
    # predict is match_weight >= threshold is probability >= threshold_
    X = data["X"]
    assert np.array_equal(gb.predict(X), gb.match_probability(X) >= gb.threshold_)
    assert np.all(np.abs(gb.match_weight(X)) <= 30.0)
    assert gb.to_dict() == {"type": "supervised", "labels": "fake_1000_labels.csv",
                            "id_columns": ID_COLUMNS, "label_column": LABEL}


def test_precision_target_reaches_min_precision(data):
    scorer = supervised(model="logistic_regression", target="precision",
                        min_precision=0.98).fit(data["XL"], data["yL"])
    assert scorer.cv_precision_ >= 0.98 and scorer.cv_recall_ >= 0.9


def test_given_threshold_is_used_and_round_trips(data):
    scorer = supervised(model="logistic_regression", threshold=0.8).fit(data["XL"], data["yL"])
    assert scorer.threshold_ == 0.8
    assert scorer.threshold == pytest.approx(2.0)  # log2(0.8 / 0.2)
    assert scorer.to_dict()["threshold"] == 0.8
    assert Supervised.from_dict(scorer.to_dict()) == scorer


def test_deterministic(data, gb):
    again = supervised().fit(data["XL"], data["yL"])
    assert again.threshold_ == gb.threshold_
    assert np.array_equal(again.match_weight(data["X"]), gb.match_weight(data["X"]))


# ---------------------------------------------------------------------- labels


def test_labels_align_with_candidate_pairs_in_either_order(data):
    labels = data["labels"]
    y = labels_for_pairs(labels, data["id_l"], data["id_r"], id_columns=ID_COLUMNS,
                         label_column=LABEL)
    known = ~np.isnan(y)
    assert known.sum() == 1604  # copies are paired with their first record only
    assert np.array_equal(y[known] == 1.0, data["truth"][known])  # clerical labels are right
    # The same labels with every pair written the other way round.
    swapped = labels.rename(columns={ID_COLUMNS[0]: ID_COLUMNS[1], ID_COLUMNS[1]: ID_COLUMNS[0]})
    y2 = labels_for_pairs(swapped, data["id_l"], data["id_r"], id_columns=ID_COLUMNS,
                          label_column=LABEL)
    assert np.array_equal(y, y2, equal_nan=True)


def test_label_values_and_reversed_pair():
    labels = pd.DataFrame({"id_l": ["b", "1", "x", "p", "q", "r"],
                           "id_r": ["a", "2", "y", "p2", "q2", "r2"],
                           "label": ["match", "0.7", "non-match", "TRUE", "0", ""]})
    y = labels_for_pairs(labels, np.array(["a", 1, "y", "p", "q", "r", "zz"], dtype=object),
                         np.array(["b", 2, "x", "p2", "q2", "r2", "a"], dtype=object))
    assert np.array_equal(y, [1.0, 1.0, 0.0, 1.0, 0.0, np.nan, np.nan], equal_nan=True)


def test_bad_labels_teach():
    ids = np.array(["a"]), np.array(["b"])
    with pytest.raises(InputError, match=r"line 2.*1/0, true/false"):
        labels_for_pairs(pd.DataFrame({"id_l": ["a"], "id_r": ["b"], "label": ["maybe"]}), *ids)
    with pytest.raises(InputError, match=r"labelled both a match and a non-match"):
        labels_for_pairs(pd.DataFrame({"id_l": ["a", "b"], "id_r": ["b", "a"],
                                       "label": ["1", "0"]}), *ids)


def test_read_labels_names_file_and_column(tmp_path):
    with pytest.raises(InputError, match=r"missing\.csv: the labels file does not exist"):
        read_labels(tmp_path / "missing.csv")
    path = tmp_path / "labels.csv"
    path.write_text("left,right,is_match\n1,2,1\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"labels\.csv: the labels have no id column `id_l`.*"
                                         r"left, right, is_match.*id_columns"):
        read_labels(path)
    with pytest.raises(InputError, match=r"no label column `label`.*label_column"):
        read_labels(path, id_columns=["left", "right"])
    assert read_labels(path, id_columns=["left", "right"], label_column="is_match").shape == (1, 3)


def test_too_few_labels_or_one_class_raise(data):
    XL, yL = data["XL"], data["yL"]
    few = np.full(len(yL), np.nan)
    few[:9] = yL[:9]
    with pytest.raises(InputError, match=r"9 of the .* labelled.*at least 10"):
        supervised().fit(XL, few)
    one_class = np.where(yL == 1.0, 1.0, np.nan)
    with pytest.raises(InputError, match=r"0 non-match\(es\)"):
        supervised().fit(XL, one_class)
    with pytest.raises(InputError, match=r"needs labels y"):
        supervised().fit(XL)


def test_labels_inside_candidate_pairs_only_warn_about_folds(data):
    """Only 2 labelled non-matches land among the candidate pairs: CV shrinks to 2 folds."""
    y = labels_for_pairs(data["labels"], data["id_l"], data["id_r"], id_columns=ID_COLUMNS,
                         label_column=LABEL)
    with pytest.warns(LinkageWarning, match=r"uses 2 folds instead of cv=5"):
        scorer = supervised(model="logistic_regression").fit(data["X"], y)
    assert scorer.n_labelled_ == 1604 and scorer.cv_folds_ == 2


# ---------------------------------------------------------------------- explanations


def test_logistic_contributions_plus_bias_is_match_weight(data, lr):
    X = data["X"]
    contrib = lr.contributions(X)
    assert list(contrib.columns) == X.names
    total = contrib.to_numpy().sum(axis=1) + lr.bias()
    np.testing.assert_allclose(total, lr.match_weight(X), atol=1e-9)
    np.testing.assert_allclose(lr.match_probability(X), 1 / (1 + 2.0 ** -lr.match_weight(X)),
                               atol=1e-9)
    table = lr.coefficient_table()
    assert len(table) == len(lr.feature_names_) and set(table["comparison"]) == set(X.names)


def test_tree_contributions_are_one_model_column(data, gb):
    contrib = gb.contributions(data["X"])
    assert list(contrib.columns) == ["model"]
    np.testing.assert_array_equal(contrib["model"].to_numpy() + gb.bias(),
                                  gb.match_weight(data["X"]))


def test_random_forest_fits_and_scores(data):
    rf = supervised(model="random_forest").fit(data["XL"], data["yL"])
    w = rf.match_weight(data["X"])
    assert np.all(np.isfinite(w)) and np.all(np.abs(w) <= 30.0)
    assert pair_f1(rf, data)[1] >= 0.99


# ---------------------------------------------------------------------- persistence


@pytest.mark.parametrize("model", ["gradient_boosting", "logistic_regression"])
def test_save_load_round_trip_scores_identically(tmp_path, data, gb, lr, model):
    scorer = gb if model == "gradient_boosting" else lr
    scorer.save(tmp_path / "model.json")
    doc = json.loads((tmp_path / "model.json").read_text(encoding="utf-8"))
    assert doc["format"] == "linkage.supervised" and doc["training_data"] == "model.npz"
    assert (tmp_path / "model.npz").exists()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # same scikit-learn: no version warning
        loaded = Supervised.load(tmp_path / "model.json")
    X = data["X"]
    assert loaded == scorer
    assert loaded.threshold == scorer.threshold and loaded.cv_f1_ == scorer.cv_f1_
    np.testing.assert_array_equal(loaded.match_weight(X), scorer.match_weight(X))
    np.testing.assert_array_equal(loaded.match_probability(X), scorer.match_probability(X))
    np.testing.assert_array_equal(loaded.predict(X), scorer.predict(X))


def test_load_without_training_data_says_so(tmp_path, lr):
    lr.save(tmp_path / "model.json")
    (tmp_path / "model.npz").unlink()
    with pytest.raises(InputError, match=r"training data .* is missing"):
        Supervised.load(tmp_path / "model.json")


# ---------------------------------------------------------------------- settings


def test_settings_from_yaml_shapes():
    rules = Rules.from_dict({**RULES, "scoring": {
        "type": "supervised", "labels": "l.csv", "model": "random_forest", "cv": 3}})
    assert isinstance(rules.scoring, Supervised)
    assert rules.scoring.to_dict() == {"type": "supervised", "labels": "l.csv",
                                       "model": "random_forest", "cv": 3}
    assert np.isnan(rules.scoring.threshold)  # chosen by cross-validation in fit
    with pytest.raises(RulesError, match=r"scoring.model"):
        Rules.from_dict({**RULES, "scoring": {"type": "supervised", "labels": "l.csv",
                                              "model": "svm"}})
    with pytest.raises(RulesError, match=r"scoring.threshold .*strictly between 0 and 1"):
        Rules.from_dict({**RULES, "scoring": {"type": "supervised", "labels": "l.csv",
                                              "threshold": 2.0}})
    with pytest.raises(RulesError, match=r"scoring.labels is required"):
        Rules.from_dict({**RULES, "scoring": {"type": "supervised"}})


def test_unfitted_and_mismatched_comparisons(data, lr):
    with pytest.raises(NotFittedError):
        supervised().match_weight(data["X"])
    X = data["X"]
    fewer = ComparisonMatrix(X.comparisons[:2], X.levels[:, :2], X.similarities[:, :2])
    with pytest.raises(InputError, match=r"Refit it on these comparisons"):
        lr.match_weight(fewer)
