"""A supervised run end to end: a reviewer labels pairs sampled by score band, the CLI learns.

The labels stand for what a person marked in review (`linkage sample` in a later issue); here
they are taken from FEBRL's truth for 240 sampled pairs only, and written to a CSV the run
reads like any user's labels file.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import yaml

import linkage as lk
from tests.conftest import ROOT, f1_score, pairs_of_clusters, run_cli
from tests.test_febrl import _opaque, _read_febrl


def test_supervised_febrl3_from_band_sampled_labels(tmp_path, datasets):
    frame, entity = _opaque(_read_febrl(datasets / "febrl" / "dataset3.csv"), "sup")
    frame.to_csv(tmp_path / "in.csv", index=False)
    rules = yaml.safe_load((ROOT / "rules" / "febrl.yaml").read_text())
    first = lk.dedupe(tmp_path / "in.csv", lk.Rules.from_dict(rules), progress=False)
    pairs = first.pairs
    bands = pd.cut(pairs["match_weight"], [-np.inf, -5, 0, 5, np.inf])
    sample = (pairs.groupby(bands, observed=True)
              .apply(lambda g: g.sample(min(60, len(g)), random_state=0))[["id_l", "id_r"]])
    sample["label"] = [int(entity[a] == entity[b]) for a, b in zip(sample["id_l"],
                                                                   sample["id_r"], strict=True)]
    sample.to_csv(tmp_path / "labels.csv", index=False)
    rules["scoring"] = {"type": "supervised", "labels": "labels.csv",
                        "model": "logistic_regression"}
    (tmp_path / "rules.yaml").write_text(yaml.safe_dump(rules))

    done = run_cli("dedupe", tmp_path / "in.csv", "--rules", tmp_path / "rules.yaml",
                   "--out", tmp_path / "out")
    assert done.returncode == 0, done.stderr
    clusters = pd.read_parquet(tmp_path / "out" / "clusters.parquet")
    predicted = pairs_of_clusters(clusters, "rec_id", "cluster_id")
    truth = pairs_of_clusters(
        pd.DataFrame({"rec_id": list(entity), "e": list(entity.values())}), "rec_id", "e")
    precision, recall, f1 = f1_score(predicted, truth)
    assert f1 >= 0.99, (precision, recall, f1)
    assert (tmp_path / "out" / "model.json").exists()
    score = json.loads((tmp_path / "out" / "summary.json").read_text())["stages"]["score"]
    assert score["labelled_pairs"] == len(sample)
    assert 0 < score["cv_precision"] <= 1 and 0 < score["cv_recall"] <= 1
    explained = run_cli("explain", tmp_path / "out", clusters["rec_id"][
        clusters["cluster_size"] > 1].iloc[0])
    assert explained.returncode == 0, explained.stderr


def test_labels_naming_unknown_ids_exit_2(tmp_path, datasets):
    frame = _read_febrl(datasets / "febrl" / "dataset1.csv")
    frame.to_csv(tmp_path / "in.csv", index=False)
    pd.DataFrame({"id_l": ["x1", "x2"], "id_r": ["y1", "y2"], "label": [1, 0]}).to_csv(
        tmp_path / "labels.csv", index=False)
    rules = yaml.safe_load((ROOT / "rules" / "febrl.yaml").read_text())
    rules["scoring"] = {"type": "supervised", "labels": "labels.csv"}
    (tmp_path / "rules.yaml").write_text(yaml.safe_dump(rules))
    done = run_cli("dedupe", tmp_path / "in.csv", "--rules", tmp_path / "rules.yaml",
                   "--out", tmp_path / "out")
    assert done.returncode == 2
    assert "labels.csv" in done.stderr and "'x1'" in done.stderr
    assert not (tmp_path / "out").exists()
