"""Great Expectations gates: linkage's expectations inside real GX suites and validation runs,
in an ephemeral (in-memory, offline) context, on real data."""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

import linkage
from linkage.errors import InputError, RulesError
from linkage.settings import Rules
from tests.conftest import ROOT

gxc = pytest.importorskip("linkage.checks.gx")
import great_expectations as gx  # noqa: E402  (after linkage.checks.gx made it quiet and offline)

SAMPLE = ROOT / "sample_data" / "customers.csv"
RULES = ROOT / "rules" / "customers.yaml"
_names = itertools.count()


@pytest.fixture(scope="module")
def gate():
    """One context, pandas data source and batch definition for the module (context creation
    is the slow part); each test brings its own suite and dataframe."""
    context = gxc.ephemeral_context()
    batch = (context.data_sources.add_pandas("linkage").add_dataframe_asset("table")
             .add_batch_definition_whole_dataframe("whole"))
    return context, batch


def validate(gate, frame: pd.DataFrame, *expectations, result_format="COMPLETE"):
    """Run a fresh suite of `expectations` on `frame`; results by expectation type
    (COMPLETE results unless told otherwise: the tests read every measured field)."""
    context, batch = gate
    name = f"suite-{next(_names)}"
    suite = context.suites.add(gx.ExpectationSuite(name=name))
    for expectation in expectations:
        suite.add_expectation(expectation)
    definition = context.validation_definitions.add(
        gx.ValidationDefinition(name=name, data=batch, suite=suite))
    result = definition.run(batch_parameters={"dataframe": frame}, result_format=result_format)
    by_type = {r.expectation_config.type: r for r in result.results}
    return result, by_type


@pytest.fixture(scope="module")
def customers():
    return linkage.read(SAMPLE)


@pytest.fixture(scope="module")
def deduplicated(customers):
    return linkage.dedupe(customers, RULES, progress=False).deduplicated


# --- import hygiene ------------------------------------------------------------------------


def test_import_linkage_does_not_import_gx_and_gx_is_offline(tmp_path):
    script = tmp_path / "probe.py"
    script.write_text(
        "import os, sys\n"
        "import linkage, linkage.checks, linkage.checks.measures\n"
        "print('great_expectations' in sys.modules)\n"
        "import linkage.checks.gx\n"
        "print('great_expectations' in sys.modules, os.environ.get('GX_ANALYTICS_ENABLED'))\n",
        encoding="utf-8",
    )
    env = {k: v for k, v in os.environ.items() if k != "GX_ANALYTICS_ENABLED"}
    done = subprocess.run([sys.executable, "-W", "error::FutureWarning", str(script)],
                          capture_output=True, text=True, cwd=ROOT, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:2] == ["False", "True False"]


# --- ExpectDuplicateRateToBeBelow ------------------------------------------------------------


def test_duplicate_rate_fails_on_the_sample_and_passes_after_dedupe(gate, customers,
                                                                   deduplicated):
    stock = gx.expectations.ExpectColumnValuesToBeUnique(column="customer_id")
    result, by_type = validate(
        gate, customers, gxc.ExpectDuplicateRateToBeBelow(rules=str(RULES), max_rate=0.01),
        stock)
    assert result.success is False
    rate = by_type["expect_duplicate_rate_to_be_below"]
    assert rate.success is False
    assert by_type["expect_column_values_to_be_unique"].success is True  # stock ones mix in
    measured = rate.result
    # The sample holds ~30% duplicates; the numbers are those of a plain dedupe run.
    run = linkage.dedupe(customers, RULES, progress=False).summary()
    assert measured["records"] == len(customers) == 2004
    assert measured["duplicates"] == run["actions"]["duplicate"]
    assert measured["observed_value"] == measured["duplicate_rate"] == run["removal_rate"]
    assert 0.25 < measured["duplicate_rate"] < 0.35
    assert measured["duplicates"] == round(measured["duplicate_rate"] * measured["records"])
    assert measured["max_rate"] == 0.01
    assert measured["id_column"] == "customer_id"
    assert measured["clusters_with_duplicates"] > 100
    example = measured["examples"][0]
    assert len(measured["examples"]) == 5
    assert example["representative_id"] in example["ids"] and len(example["ids"]) >= 2
    assert set(example["ids"]) <= set(customers["customer_id"])
    # each member's own values, in the columns the rules read
    by_id = customers.set_index("customer_id")
    assert [r["name"] for r in example["records"]] == list(by_id.loc[example["ids"], "name"])
    assert set(example["records"][0]) == set(Rules.from_yaml(RULES).columns()) - {"customer_id"}

    result, by_type = validate(
        gate, deduplicated, gxc.ExpectDuplicateRateToBeBelow(rules=str(RULES), max_rate=0.01))
    assert result.success is True
    clean = by_type["expect_duplicate_rate_to_be_below"].result
    assert clean["records"] == len(deduplicated) == 2004 - measured["duplicates"]
    assert clean["duplicates"] == 0 and clean["observed_value"] == 0.0
    assert clean["examples"] == []


def test_duplicate_rate_limit_is_inclusive_and_rules_may_be_a_mapping(gate, customers):
    rules = Rules.from_yaml(RULES)
    run_rate = linkage.dedupe(customers, rules, progress=False).summary()["removal_rate"]
    result, _ = validate(
        gate, customers,
        gxc.ExpectDuplicateRateToBeBelow(rules=rules.to_dict(), max_rate=run_rate),
        gxc.ExpectDuplicateRateToBeBelow(rules=rules, max_rate=run_rate - 0.001,
                                         max_examples=1),
    )
    outcomes = sorted((r.success, r.result["max_rate"], len(r.result["examples"]))
                      for r in result.results)
    assert outcomes == [(False, run_rate - 0.001, 1), (True, run_rate, 5)]


def test_duplicate_rate_parameters_are_checked_with_clear_messages(tmp_path):
    with pytest.raises(RulesError, match=r"`max_rate` must be a share in \[0, 1\]. Got 5 .*0\.01"):
        gxc.ExpectDuplicateRateToBeBelow(rules=str(RULES), max_rate=5)
    with pytest.raises(RulesError, match=r"nope\.yaml: no such rules file"):
        gxc.ExpectDuplicateRateToBeBelow(rules=str(tmp_path / "nope.yaml"))
    broken = tmp_path / "broken.yaml"
    broken.write_text("blocking: 3\n", encoding="utf-8")
    with pytest.raises(RulesError, match=r"broken\.yaml.*blocking"):
        gxc.ExpectDuplicateRateToBeBelow(rules=broken)
    with pytest.raises(RulesError, match="`rules` is required"):
        gxc.ExpectDuplicateRateToBeBelow()


def test_a_column_missing_from_the_batch_fails_the_expectation_and_names_it(gate, customers):
    result, by_type = validate(
        gate, customers,
        gxc.ExpectDuplicateRateToBeBelow(rules=str(RULES), id_column="client_no"))
    failed = by_type["expect_duplicate_rate_to_be_below"]
    assert failed.success is False
    table = gxc.results_table(result)
    assert table.loc[0, "success"] == False  # noqa: E712  (numpy bool)
    assert "no column 'client_no'" in table.loc[0, "error"]
    assert "`id_column`" in table.loc[0, "error"]


# --- ExpectNoExactDuplicatesAfterNormalization ---------------------------------------------


def _people() -> pd.DataFrame:
    return pd.DataFrame({
        "id": ["a", "b", "c", "d", "e", "f", "g"],
        "name": ["Kim Min-su", "kim  minsu", "KIM, Min su", "Lee Ji-eun", "Park Seo-yeon",
                 None, None],
        "phone": ["010-1234-5678", "010-1111-2222", "010 1234 5678", "+82 10 1234 5678",
                  "010-9999-0000", None, None],
    })


def test_exact_duplicates_after_text_normalization(gate):
    people = _people()
    result, by_type = validate(gate, people, gxc.ExpectNoExactDuplicatesAfterNormalization(
        columns=["name"], id_column="id"))
    found = by_type["expect_no_exact_duplicates_after_normalization"]
    assert result.success is False and found.success is False
    # "Kim Min-su" and "KIM, Min su" differ only by case, spaces and punctuation; "kim  minsu"
    # has no space inside the given name, so it stays apart. The two empty names are no one's
    # copies.
    assert found.result["groups"] == 1 and found.result["duplicate_rows"] == 1
    assert found.result["observed_value"] == 1 and found.result["records"] == 7
    assert found.result["examples"] == [
        {"rows": [0, 2], "ids": ["a", "c"], "normalized": {"name": "kim min su"}}
    ]


def test_korean_phone_formats_are_equal_only_with_the_phone_normalizer(gate):
    people = _people()[["id", "phone"]].iloc[[0, 1, 3, 4]]
    plain = gxc.ExpectNoExactDuplicatesAfterNormalization(columns=["phone"])
    phones = gxc.ExpectNoExactDuplicatesAfterNormalization(
        columns="phone", normalize=[{"column": "phone", "type": "phone", "country": "KR"}],
        id_column="id")
    _, text_only = validate(gate, people, plain)
    assert text_only["expect_no_exact_duplicates_after_normalization"].success is True
    assert text_only["expect_no_exact_duplicates_after_normalization"].result["groups"] == 0
    _, with_phone = validate(gate, people, phones)
    found = with_phone["expect_no_exact_duplicates_after_normalization"]
    assert found.success is False
    assert found.result["examples"] == [
        {"rows": [0, 2], "ids": ["a", "d"], "normalized": {"phone": "01012345678"}}
    ]


def test_exact_duplicates_on_the_sample_fail_and_pass_after_dedupe(gate, customers,
                                                                  deduplicated):
    def expectation():  # an expectation belongs to one suite
        return gxc.ExpectNoExactDuplicatesAfterNormalization(
            columns=["name", "birth_date", "phone"], id_column="customer_id",
            normalize=[{"column": "name", "type": "name"},
                       {"column": "birth_date", "type": "date", "order": "DMY"},
                       {"column": "phone", "type": "phone", "country": "KR"}])

    _, raw = validate(gate, customers, expectation())
    found = raw["expect_no_exact_duplicates_after_normalization"].result
    assert raw["expect_no_exact_duplicates_after_normalization"].success is False
    assert 100 < found["duplicate_rows"] < 599  # exact copies: a part of all duplicates
    assert found["rows_in_groups"] == found["duplicate_rows"] + found["groups"]
    for example in found["examples"]:
        rows = customers.iloc[example["rows"]]
        assert list(rows["customer_id"]) == example["ids"]
        assert rows["phone"].nunique() >= 1 and len(rows) >= 2
    _, clean = validate(gate, deduplicated, expectation())
    assert clean["expect_no_exact_duplicates_after_normalization"].success is True
    assert clean["expect_no_exact_duplicates_after_normalization"].result["groups"] == 0


def test_exact_duplicates_parameters_are_checked():
    with pytest.raises(RulesError, match="`columns` must list at least one column"):
        gxc.ExpectNoExactDuplicatesAfterNormalization(columns=[])
    with pytest.raises(RulesError, match=r"normalize\[0\].*type must be one of.*'phone'"):
        gxc.ExpectNoExactDuplicatesAfterNormalization(
            columns=["phone"], normalize=[{"column": "phone", "type": "phon"}])
    with pytest.raises(RulesError, match=r"normalize\[0\].column 'email' is not one of"):
        gxc.ExpectNoExactDuplicatesAfterNormalization(
            columns=["phone"], normalize=[{"column": "email", "type": "email"}])
    with pytest.raises(RulesError, match="wrap it in a list"):
        gxc.ExpectNoExactDuplicatesAfterNormalization(
            columns=["phone"], normalize={"column": "phone", "type": "phone"})


def test_exact_duplicates_missing_column_names_it(gate):
    result, _ = validate(gate, _people(), gxc.ExpectNoExactDuplicatesAfterNormalization(
        columns=["name", "e_mail"]))
    error = gxc.results_table(result).loc[0, "error"]
    assert "'e_mail'" in error and "`columns`" in error and "'phone'" in error


# --- ExpectNoTrainEvalLeakage ----------------------------------------------------------------

KOREAN = ("오늘은 날씨가 맑고 바람이 시원해서 공원에 산책을 나가기 좋은 날이었습니다 친구들과 함께 "
          "도시락을 싸서 호숫가 벤치에 앉아 오랫동안 이야기를 나누었습니다")


def _texts(rng, vocabulary: np.ndarray, count: int) -> list[str]:
    return [" ".join(rng.choice(vocabulary, size=int(rng.integers(20, 30)))) for _ in range(count)]


@pytest.fixture(scope="module")
def corpus():
    """A train set and two eval sets: one written with other words, one with leaks."""
    rng = np.random.default_rng(5)
    train_words = np.array([f"w{k}" for k in range(300)])
    eval_words = np.array([f"v{k}" for k in range(300)])
    train = pd.DataFrame({"doc": [f"T{k:02d}" for k in range(40)],
                          "text": [*_texts(rng, train_words, 39), KOREAN]})
    clean = pd.DataFrame({"qid": [f"E{k}" for k in range(10)],
                          "text": _texts(rng, eval_words, 10)})
    leaky = clean.copy()
    leaky.loc[2, "text"] = train.loc[7, "text"].upper() + "!"  # the same text, exactly
    passage = " ".join(train.loc[12, "text"].split()[3:18])  # 15 words of a train record
    leaky.loc[5, "text"] = f"{clean.loc[5, 'text']} {passage} v1 v2"
    leaky.loc[8, "text"] = "질문: " + KOREAN.replace(" ", "")[:50] + " 맞나요?"
    return train, clean, leaky


def test_leakage_passes_on_disjoint_eval_and_fails_on_copies(gate, corpus, tmp_path):
    train, clean, leaky = corpus
    stock = gx.expectations.ExpectTableRowCountToBeBetween(min_value=1, max_value=1000)
    result, by_type = validate(
        gate, train,
        gxc.ExpectNoTrainEvalLeakage(eval_data=clean, train_id="doc", eval_id="qid"), stock)
    assert result.success is True
    passed = by_type["expect_no_train_eval_leakage"].result
    assert passed["leaked_eval_items"] == 0 and passed["eval_records"] == 10
    assert passed["contaminated_train_records"] == 0 and passed["train_records"] == 40

    leaky_path = tmp_path / "eval.csv"
    leaky.to_csv(leaky_path, index=False)
    for eval_data in (leaky, str(leaky_path)):
        result, by_type = validate(gate, train, gxc.ExpectNoTrainEvalLeakage(
            eval_data=eval_data, train_id="doc", eval_id="qid"))
        assert result.success is False
        leaked = by_type["expect_no_train_eval_leakage"].result
        assert leaked["observed_value"] == leaked["leaked_eval_items"] == 3
        assert leaked["leak_rate"] == 0.3 and leaked["exact_matches"] == 1
        assert leaked["contaminated_train_records"] == 3
        pairs = {(e["eval_id"], e["train_id"], e["exact_match"]) for e in leaked["examples"]}
        assert pairs == {("E2", "T07", True), ("E5", "T12", False), ("E8", "T39", False)}
        korean = next(e for e in leaked["examples"] if e["eval_id"] == "E8")
        assert len(korean["example_ngram"]) == leaked["char_ngram"] == 39


def test_leakage_ngram_length_decides_what_counts(gate, corpus):
    train, _, leaky = corpus
    # A 15-word shared passage is no leak when a leak must be 16 words long.
    _, by_type = validate(gate, train, gxc.ExpectNoTrainEvalLeakage(
        eval_data=leaky.iloc[[5]], ngram=16, char_ngram=60))
    result = by_type["expect_no_train_eval_leakage"].result
    assert by_type["expect_no_train_eval_leakage"].success is True
    assert result["ngram"] == 16 and result["leaked_eval_items"] == 0


def test_leakage_parameters_and_missing_columns(gate, corpus, tmp_path):
    train, clean, _ = corpus
    with pytest.raises(InputError, match=r"eval_data .*nope\.csv.*no such file"):
        gxc.ExpectNoTrainEvalLeakage(eval_data=str(tmp_path / "nope.csv"))
    with pytest.raises(InputError, match=r"eval_data has no column 'body'.*`text_column`"):
        gxc.ExpectNoTrainEvalLeakage(eval_data=clean, text_column="body")
    with pytest.raises(RulesError, match=r"`ngram` must be a whole number ≥ 1\. Got 0"):
        gxc.ExpectNoTrainEvalLeakage(eval_data=clean, ngram=0)
    renamed = clean.rename(columns={"text": "body"})
    result, _ = validate(gate, train, gxc.ExpectNoTrainEvalLeakage(eval_data=renamed,
                                                                   text_column="body"))
    error = gxc.results_table(result).loc[0, "error"]
    assert "training set" in error and "'body'" in error and "`text_column`" in error


# --- suites that can be stored, and checkpoints ----------------------------------------------


def test_suite_is_json_ready_and_runs_in_a_checkpoint(gate, corpus):
    train, _, leaky = corpus
    context, batch = gate
    suite = context.suites.add(gx.ExpectationSuite(name="stored"))
    suite.add_expectation(gxc.ExpectNoTrainEvalLeakage(eval_data=leaky, eval_id="qid"))
    suite.add_expectation(gxc.ExpectNoExactDuplicatesAfterNormalization(columns=["text"]))
    stored = json.loads(json.dumps(suite.to_json_dict()))
    kept = next(e for e in stored["expectations"] if e["type"] == "expect_no_train_eval_leakage")
    assert kept["kwargs"]["eval_data"] == {"text": list(leaky["text"]), "qid": list(leaky["qid"])}
    definition = context.validation_definitions.add(
        gx.ValidationDefinition(name="stored", data=batch, suite=suite))
    checkpoint = context.checkpoints.add(
        gx.Checkpoint(name="gate", validation_definitions=[definition]))
    outcome = checkpoint.run(batch_parameters={"dataframe": train})
    assert outcome.success is False
    table = gxc.results_table(outcome).set_index("expectation")
    assert table.loc["expect_no_train_eval_leakage", "observed_value"] == 3
    assert table.loc["expect_no_exact_duplicates_after_normalization", "success"]


def test_a_gate_script_run_with_python_c_checks_instead_of_exiting_0():
    """`python -c "..."`: with pyspark installed but not Spark Connect's packages, GX's import
    of pyspark ended such a process with exit 0 before the gate ran ("Skipping doctests" on
    standard error), a failed gate passing. Here the gate fails as it must (exit 1), and the
    process is not left marked interactive."""
    script = (
        "import sys, pandas as pd\n"
        "import linkage.checks.gx as gxc\n"
        "assert not hasattr(sys, 'ps1')\n"
        f"frame = pd.read_csv({str(SAMPLE)!r}, dtype=str)\n"
        "frame = pd.concat([frame, frame.head(50)], ignore_index=True)\n"
        "frame['customer_id'] = [f'c{i}' for i in range(len(frame))]\n"
        "exp = gxc.ExpectNoExactDuplicatesAfterNormalization(columns=['email', 'phone'])\n"
        "context = gxc.ephemeral_context()\n"
        "batch = (context.data_sources.add_pandas('p').add_dataframe_asset('t')\n"
        "         .add_batch_definition_whole_dataframe('w'))\n"
        "ok = batch.get_batch(batch_parameters={'dataframe': frame}).validate(exp).success\n"
        "print('gate ran', ok)\n"
        "sys.exit(0 if ok else 1)\n"
    )
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         cwd=ROOT, timeout=300, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert run.returncode == 1, (run.stdout, run.stderr[-2000:])
    assert "gate ran False" in run.stdout
