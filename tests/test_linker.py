"""The notebook linker (issue 16, item 1): fitted once, then clustered at other thresholds,
predicted, explained, evaluated and reported without blocking, comparing or fitting again;
scikit-learn's parameter manners; rich displays."""

from __future__ import annotations

import html
import json

import numpy as np
import pandas as pd
import pytest
import yaml

import linkage as lk
from linkage.errors import InputError
from tests.conftest import ROOT, run_cli

SAMPLE = ROOT / "sample_data" / "customers.csv"
TRUTH = ROOT / "sample_data" / "customers_truth.csv"


@pytest.fixture(scope="module")
def linker():
    return lk.Linker().fit(SAMPLE)  # no rules: suggested, as `linkage dedupe TABLE` does


def _files(folder):
    return {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()}


def test_another_threshold_reuses_the_fit_and_gives_the_run_the_cli_writes(linker, tmp_path):
    base = linker.result_
    fitted = float(linker.scorer_.threshold)
    higher = linker.cluster(fitted + 4)
    # Blocking and comparing were taken from the fit's checkpoint, not done again ...
    assert higher.timings["block"] == 0.0 and higher.timings["compare"] == 0.0
    assert base.timings["block"] > 0.0 and base.timings["compare"] > 0.0
    # ... the model is the fitted one (same m, u and prior), at the threshold asked ...
    assert higher.scorer.threshold == fitted + 4
    assert higher.scorer.prior_ == linker.scorer_.prior_
    assert higher.summary()["actions"]["duplicate"] < base.summary()["actions"]["duplicate"]
    assert linker.cluster(fitted) is base and linker.cluster(fitted + 4) is higher
    # ... and the files are those of a CLI run of the same rules at that threshold.
    higher.write(tmp_path / "linker")
    rules = yaml.safe_load((tmp_path / "linker" / "rules.yaml").read_text())
    assert rules["scoring"]["threshold"] == fitted + 4
    (tmp_path / "rules.yaml").write_text(yaml.safe_dump(rules, sort_keys=False))
    done = run_cli("dedupe", SAMPLE, "--rules", tmp_path / "rules.yaml", "--out",
                   tmp_path / "cli")
    assert done.returncode == 0, done.stderr
    mine, cli = _files(tmp_path / "linker"), _files(tmp_path / "cli")
    for name in set(mine) | set(cli):
        if name in ("summary.json", "report.html", "timings.json"):
            continue  # they name where the rules came from, and the seconds
        if name == "rules.yaml":  # suggested rules carry the suggestion's reasons above them
            assert mine[name].startswith(b"# Suggested by") and not cli[name].startswith(b"#")
            assert mine[name][mine[name].index(b"\nid_column:") + 1:] == cli[name], name
            continue
        assert mine[name] == cli[name], name
    a = json.loads(mine["summary.json"])
    b = json.loads(cli["summary.json"])
    a["rules"].pop("source"), b["rules"].pop("source")
    assert a == b


def test_predict_labels_the_levels_and_decides_at_the_threshold(linker):
    pairs = linker.predict()
    levels = [c for c in pairs.columns if c.endswith("_level")]
    assert levels
    for column in levels:
        dtype = pairs[column].dtype
        assert isinstance(dtype, pd.CategoricalDtype) and dtype.ordered
        assert dtype.categories[0] == "null" and "else" in list(dtype.categories)
    raw = linker.result_.pairs
    name = levels[0]
    comparison = next(c for c in linker.rules_.comparisons if f"{c.output_name}_level" == name)
    assert [comparison.label_of(int(v)) for v in raw[name]] == list(pairs[name].astype(str))
    at = float(linker.scorer_.threshold) + 3
    assert np.array_equal(linker.predict(at)["is_match"].to_numpy(),
                          pairs["match_weight"].to_numpy() >= at)


def test_explain_evaluate_report_and_displays(linker):
    truth = pd.read_csv(TRUTH, dtype=str)
    report = linker.evaluate(truth[["customer_id", "person_id"]])
    from linkage.measure.evaluate import score_clusters

    clusters = linker.cluster().clusters
    predicted = clusters["cluster_id"].set_axis(clusters["customer_id"].astype(str).to_numpy())
    entity = truth.set_index("customer_id")["person_id"]
    expected = score_clusters(predicted, entity).as_dict()
    assert report["scores"] == expected and report["records"] == len(truth)
    low = linker.evaluate(truth[["customer_id", "person_id"]],
                          threshold=float(linker.scorer_.threshold) - 6)
    assert low["scores"]["recall"] >= report["scores"]["recall"]
    duplicate = linker.result_.clusters.query("action == 'duplicate'").iloc[0]
    text = linker.explain(duplicate.iloc[0])
    assert "duplicate" in text and "<pre" in text._repr_html_()
    assert "<!DOCTYPE html>" in str(linker.report()) or "<html" in str(linker.report())
    emails = linker.result_.records["email"].dropna()  # the records the report shows
    assert any(e in html.unescape(str(linker.report())) for e in emails)
    assert not any(e in html.unescape(str(linker.report(redact="email"))) for e in emails)
    page = linker._repr_html_()
    assert "linkage.Linker" in page and "candidate pairs" in page and "removal rate" in page
    assert "C-0000" in linker.result_._repr_html_()  # the first records, with their action


def test_parameters_as_scikit_learn_has_them(linker):
    from sklearn.base import clone

    params = linker.get_params()
    assert params["rules"] is None and params["threshold"] is None
    twin = clone(linker)
    assert twin.get_params() == params and twin.result_ is None
    with pytest.raises(InputError, match="not fitted"):
        twin.predict()
    fitted = lk.Linker().fit(SAMPLE)
    fitted.set_params(threshold=12.0)  # the threshold does not unfit
    assert fitted.result_ is not None and fitted.cluster().scorer.threshold == 12.0
    fitted.set_params(rules=ROOT / "rules" / "customers.yaml")  # the rules do
    assert fitted.result_ is None
    with pytest.raises(InputError, match="no parameter 'treshold'"):
        fitted.set_params(treshold=3)


def test_a_link_of_two_dataframes(datasets):
    folder = datasets / "febrl"
    left = pd.read_csv(folder / "dataset4a.csv", skipinitialspace=True, dtype=str)
    right = pd.read_csv(folder / "dataset4b.csv", skipinitialspace=True, dtype=str)
    linker = lk.Linker(ROOT / "rules" / "febrl.yaml").fit(left, right)
    assert linker.mode_ == "link"
    links = linker.cluster().links
    stricter = linker.cluster(float(linker.scorer_.threshold) + 8).links
    assert len(stricter) < len(links)
    assert set(map(tuple, stricter[["id_l", "id_r"]].to_numpy())) <= set(
        map(tuple, links[["id_l", "id_r"]].to_numpy()))
