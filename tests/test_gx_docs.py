"""Great Expectations as GX users see it: linkage's expectations in real Data Docs (built in a
file context under tmp_path, opened in headless Chromium), `result_format` honoured, and the
same results on a Spark datasource as on pandas."""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest

import linkage
from tests._browser import chromium_page
from tests.conftest import ROOT

gxc = pytest.importorskip("linkage.checks.gx")
import great_expectations as gx  # noqa: E402  (after linkage.checks.gx made it quiet and offline)

SAMPLE = ROOT / "sample_data" / "customers.csv"
RULES = ROOT / "rules" / "customers.yaml"


@pytest.fixture(scope="module")
def customers() -> pd.DataFrame:
    return linkage.read(SAMPLE)


def _people() -> pd.DataFrame:
    return pd.DataFrame({
        "id": ["a", "b", "c", "d", "e", "f", "g", "h"],
        "name": ["Kim Min-su", "KIM, Min su", "Lee Ji-eun", "lee ji eun", "Park Seo-yeon",
                 "kim min-su", None, None],
    })


def _corpus() -> tuple[pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(7)
    words = np.array([f"w{k}" for k in range(200)])
    other = np.array([f"v{k}" for k in range(200)])
    train = pd.DataFrame({"doc": [f"T{k}" for k in range(12)],
                          "text": [" ".join(rng.choice(words, 25)) for _ in range(12)]})
    evaluation = pd.DataFrame({"qid": [f"E{k}" for k in range(6)],
                               "text": [" ".join(rng.choice(other, 25)) for _ in range(6)]})
    evaluation.loc[1, "text"] = train.loc[3, "text"].upper()
    evaluation.loc[4, "text"] += " " + " ".join(train.loc[9, "text"].split()[2:17])
    return train, evaluation


def _run(context, source, name, frame, expectations, result_format="COMPLETE"):
    batch = source.add_dataframe_asset(name).add_batch_definition_whole_dataframe("whole")
    suite = context.suites.add(gx.ExpectationSuite(name=name))
    for expectation in expectations:
        suite.add_expectation(expectation.copy(update={"id": None}))  # reusable across suites
    definition = context.validation_definitions.add(
        gx.ValidationDefinition(name=name, data=batch, suite=suite))
    result = definition.run(batch_parameters={"dataframe": frame}, result_format=result_format)
    return {r.expectation_config.type: r for r in result.results}


# --- Data Docs ------------------------------------------------------------------------------


def test_data_docs_show_sentences_and_sample_rows(tmp_path, customers):
    context = gx.get_context(mode="file", project_root_dir=tmp_path)
    checkpoint = gxc.gate_checkpoint(context, gxc.gate_suite(str(RULES), max_rate=0.01))
    outcome = checkpoint.run(batch_parameters={"dataframe": customers})
    assert outcome.success is False  # the sample holds about 30% duplicates
    site = tmp_path / "gx" / "uncommitted" / "data_docs" / "local_site"
    pages = sorted(site.glob("validations/**/*.html"))
    assert len(pages) == 1

    results = {r.expectation_config.type: r
               for run in outcome.run_results.values() for r in run.results}
    rate = results["expect_duplicate_rate_to_be_below"]
    first = rate.result["examples"][0]  # SUMMARY, the checkpoint's format: examples listed
    assert "rules_hash" not in rate.result

    # rendered_content, as GX renders it (atomic renderers)
    rate.render()
    observed = next(c for c in rate.rendered_content
                    if c.name == "atomic.diagnostic.observed_value").to_json_dict()
    words = observed["value"]["params"]["observed_value"]["value"]
    assert re.fullmatch(r"\d+ of 2,004 records \(\d+(\.\d+)?%\) marked as duplicates, in "
                        r"\d+ clusters\.", words)
    expectation = rate.expectation_config.to_domain_obj()
    expectation.render()
    prescriptive = expectation.rendered_content[0].to_json_dict()["value"]
    sentence = re.sub(r"\$(\w+)", lambda m: prescriptive["params"][m.group(1)]["value"],
                      prescriptive["template"])
    assert sentence == (f"Linkage's dedupe with rules {RULES} must mark at most 1% of the "
                        "records as duplicates.")

    with chromium_page() as (page, _console, _errors):
        # The docs link GX's CSS and scripts from CDNs: keep the page offline.
        page.route(re.compile(r"^https?://"), lambda route: route.abort())
        page.goto(pages[0].resolve().as_uri())
        body = page.locator("body")
        assert page.get_by_text(sentence).first.is_visible()
        assert page.get_by_text(words).first.is_visible()
        normalized = page.get_by_text(re.compile(r"No two rows may be identical in"))
        assert normalized.first.is_visible()
        assert page.get_by_text(re.compile(r"rows copy an earlier row, in \d+ groups\.")) \
            .first.is_visible()
        # a sample cluster: each member a table row with its values (name, phone, ...)
        for record_id, record in zip(first["ids"], first["records"], strict=True):
            cell = page.locator("td").filter(has_text=re.compile(rf"^\s*{record_id}\s*$"))
            row = cell.first.locator("xpath=..")  # the innermost row: the sample table's
            assert row.is_visible()
            cells = row.locator("td").all_inner_texts()
            assert cells[:3] == [str(first["cluster_id"]), record_id,
                                 first["actions"][first["ids"].index(record_id)]]
            assert record["name"] in cells and len(cells) == 3 + len(record)
        text = body.inner_text()
        assert re.search(r"No two rows may be identical in\s+name,\s+birth_date", text)
        assert "kwargs" not in text and "**" not in text
        assert "expect_duplicate_rate_to_be_below(" not in text
        assert not re.search(r"\$[a-z_]+", text)  # every template parameter filled in
        # the suite's own page (the legacy prescriptive renderer) reads the same
        page.goto((site / "expectations" / "linkage-gate.html").resolve().as_uri())
        assert page.get_by_text(sentence).first.is_visible()
        suite_text = page.locator("body").inner_text()
        assert "kwargs" not in suite_text and not re.search(r"\$[a-z_]+", suite_text)


def test_leakage_renders_a_sentence_and_the_leaked_items():
    train, evaluation = _corpus()
    context = gxc.ephemeral_context()
    found = _run(context, context.data_sources.add_pandas("p"), "leak", train,
                 [gxc.ExpectNoTrainEvalLeakage(eval_data=evaluation, eval_id="qid",
                                               train_id="doc", ngram=13)],
                 result_format="SUMMARY")["expect_no_train_eval_leakage"]
    cls = gxc.ExpectNoTrainEvalLeakage
    assert cls._diagnostic_observed_value_renderer(result=found) == (
        "2 of 6 eval items leaked (33.33%), 1 of them identical.")
    table = cls._diagnostic_unexpected_table_renderer(result=found)[0].to_json_dict()
    assert table["header_row"] == ["Eval item", "Training record", "Identical",
                                   "Shared passage"]
    assert [row[:3] for row in table["table"]] == [["E1", "T3", "yes"], ["E4", "T9", "no"]]
    prescriptive = cls._prescriptive_renderer(configuration=found.expectation_config)
    template = prescriptive[0].to_json_dict()["string_template"]
    assert template["template"].startswith("No item of $eval_data may share a $ngram-word")
    assert template["params"]["ngram"] == "13"


# --- result_format --------------------------------------------------------------------------


def test_result_format_levels_as_gx_defines_them():
    context = gxc.ephemeral_context()
    source = context.data_sources.add_pandas("p")
    expectation = gxc.ExpectNoExactDuplicatesAfterNormalization(columns=["name"],
                                                                id_column="id")
    kind = "expect_no_exact_duplicates_after_normalization"
    runs = {level: _run(context, source, level, _people(), [expectation], level)[kind]
            for level in ("BOOLEAN_ONLY", "BASIC", "SUMMARY", "COMPLETE")}
    assert all(r.success is False for r in runs.values())
    assert runs["BOOLEAN_ONLY"].result == {}
    counts = {"observed_value": 3, "records": 8, "duplicate_rows": 3, "groups": 2,
              "rows_in_groups": 5}
    assert runs["BASIC"].result == counts
    groups = [{"rows": [0, 1, 5], "ids": ["a", "b", "f"], "normalized": {"name": "kim min su"}},
              {"rows": [2, 3], "ids": ["c", "d"], "normalized": {"name": "lee ji eun"}}]
    assert runs["SUMMARY"].result == {**counts, "examples": groups}
    assert runs["COMPLETE"].result == {**counts, "examples": groups, "columns": ["name"]}
    # SUMMARY lists at most `partial_unexpected_count` examples
    few = _run(context, source, "few", _people(), [expectation],
               {"result_format": "SUMMARY", "partial_unexpected_count": 1})[kind]
    assert few.result == {**counts, "examples": groups[:1]}
    # with no details, Data Docs say so rather than show a blank or the kwargs
    cls = gxc.ExpectNoExactDuplicatesAfterNormalization
    assert cls._diagnostic_observed_value_renderer(result=runs["BOOLEAN_ONLY"]) == "--"
    assert cls._diagnostic_unexpected_table_renderer(result=runs["BASIC"]) is None
    assert json.loads(json.dumps(runs["COMPLETE"].result)) == runs["COMPLETE"].result


# --- Spark ----------------------------------------------------------------------------------


def test_spark_datasource_gives_the_pandas_results(spark, customers):
    from linkage.engines.spark.session import quiet_pyspark

    train, evaluation = _corpus()
    people = _people()
    frames = {"customers": customers, "people": people, "train": train}
    expectations = {
        "customers": [gxc.ExpectDuplicateRateToBeBelow(rules=str(RULES), max_rate=0.01)],
        "people": [gxc.ExpectNoExactDuplicatesAfterNormalization(columns=["name"],
                                                                 id_column="id")],
        "train": [gxc.ExpectNoTrainEvalLeakage(eval_data=evaluation, eval_id="qid",
                                               train_id="doc")],
    }
    context = gxc.ephemeral_context()
    on_pandas = context.data_sources.add_pandas("pandas")
    on_spark = context.data_sources.add_spark("spark")
    for name, frame in frames.items():
        local = _run(context, on_pandas, f"{name}-pandas", frame, expectations[name])
        with quiet_pyspark():
            spark_frame = spark.createDataFrame(frame.astype(object).where(frame.notna(), None))
            remote = _run(context, on_spark, f"{name}-spark", spark_frame, expectations[name])
        assert remote.keys() == local.keys()
        for kind, expected in local.items():
            got = remote[kind]
            assert not (got.exception_info or {}).get("raised_exception"), got.exception_info
            assert got.success == expected.success
            assert got.result == expected.result, kind
            assert got.result["observed_value"] == expected.result["observed_value"]


# --- the documented example -----------------------------------------------------------------


def test_the_etl_guide_example_runs_as_written(tmp_path):
    """docs/ETL.md's Great Expectations example, run as written from a copy of the repository
    root's shipped files (so `out/gx` lands in tmp_path)."""
    import os
    import shutil
    import subprocess
    import sys

    guide = (ROOT / "docs" / "ETL.md").read_text(encoding="utf-8")
    section = guide.split("## Great Expectations", 1)[1]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    for name in ("sample_data", "rules"):
        shutil.copytree(ROOT / name, tmp_path / name)
    env = {key: value for key, value in os.environ.items() if not key.startswith("PYTEST")}
    env["PYTHONPATH"] = str(ROOT)
    # as a script, as a user runs it: under `python -c`, importing great_expectations here
    # exits at once (pyspark prints "Skipping doctests" and the process ends with status 0)
    (tmp_path / "gate.py").write_text(code, encoding="utf-8")
    run = subprocess.run([sys.executable, "gate.py"], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    lines = run.stdout.strip().splitlines()
    assert lines, (run.stdout, run.stderr[-3000:])
    assert lines[0] == "failed"
    assert lines[-1].startswith("file://") and "out/gx/gx/uncommitted/data_docs" in lines[-1]
    assert list((tmp_path / "out" / "gx").rglob("validations/**/*.html"))


def test_gate_suite_holds_the_gate_and_saves_as_json():
    gxc.ephemeral_context()  # GX builds suites only with a context active
    rules = linkage.Rules.from_yaml(RULES)
    suite = gxc.gate_suite(rules, max_rate=0.05, exact_columns=["name", "phone"])
    stored = json.loads(json.dumps(suite.to_json_dict()))
    kinds = [e["type"] for e in stored["expectations"]]
    assert kinds.count("expect_column_to_exist") == len(rules.columns())
    assert kinds[-3:] == ["expect_column_values_to_not_be_null",
                          "expect_no_exact_duplicates_after_normalization",
                          "expect_duplicate_rate_to_be_below"]
    exact, rate = stored["expectations"][-2:]
    # the rules' own normalizers for the chosen columns, so copies are judged as the rules do
    assert exact["kwargs"]["normalize"] == [step.to_dict() for step in rules.normalize
                                            if step.column in ("name", "phone")]
    assert [step["type"] for step in exact["kwargs"]["normalize"]] == ["name", "phone"]
    assert exact["kwargs"]["id_column"] == "customer_id"
    assert rate["kwargs"]["max_rate"] == 0.05 and rate["kwargs"]["rules"] == rules.to_dict()
