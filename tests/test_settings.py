"""Tests for linkage.settings: the rules schema, YAML round trips, errors with paths, façade."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
import yaml

import linkage
from linkage.blocking import KeyBlocker, SortedNeighbourhood
from linkage.comparators import Date, Exact, JaroWinkler, Levenshtein
from linkage.errors import LinkageError, NotFittedError, RulesError
from linkage.scoring import ComparisonMatrix, RuleSum
from linkage.settings import Normalize, Rules

ROOT = Path(__file__).resolve().parents[1]
FEBRL = ROOT / "rules" / "febrl.yaml"

# A small valid rules file; each error test changes one line of it.
BASE = """\
id_column: id
normalize:
  - {column: name, type: name}
  - {column: dob, type: date}
blocking:
  - name: by_name
    keys:
      - [chosung(name)]
  - name: by_phone
    keys:
      - last(phone, 4)
      - [year(dob), "first(name, 1)"]
comparisons:
  - {type: exact, column: phone}
  - {type: jaro_winkler, column: name, thresholds: [0.92, 0.8]}
  - {type: date, column: dob}
scoring:
  type: rule_sum
  threshold: 2.0
  weights:
    name: {exact: 3.0, ">=0.92": 2.0, else: -1.0}
"""


def write(tmp_path: Path, text: str, name: str = "customers.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def error_of(tmp_path: Path, text: str, name: str = "customers.yaml") -> str:
    path = write(tmp_path, text, name)
    with pytest.raises(RulesError) as info:
        Rules.from_yaml(path)
    assert isinstance(info.value, LinkageError)
    message = str(info.value)
    assert message.startswith(str(path)), message
    return message


def replaced(old: str, new: str) -> str:
    assert old in BASE
    return BASE.replace(old, new)


# --- valid rules ----------------------------------------------------------------------------


def test_base_rules_are_valid(tmp_path):
    rules = Rules.from_yaml(write(tmp_path, BASE))
    assert rules.source == str(tmp_path / "customers.yaml")
    assert [type(c) for c in rules.comparisons] == [Exact, JaroWinkler, Date]
    assert rules.blocking[1].keys == ["last(phone, 4)", ["year(dob)", "first(name, 1)"]]
    assert rules.columns() == {
        "name": "normalize[0].column", "dob": "normalize[1].column", "phone": "blocking[1]",
    }


def test_febrl_yaml_round_trip():
    rules = Rules.from_yaml(FEBRL)
    text = rules.to_yaml()
    again = Rules.from_dict(yaml.safe_load(text))
    assert again.to_dict() == rules.to_dict()
    assert again.to_yaml() == text
    assert again == rules
    assert again.config_hash() == rules.config_hash()


def test_to_yaml_writes_file(tmp_path):
    rules = Rules.from_yaml(FEBRL)
    out = tmp_path / "copy.yaml"
    rules.to_yaml(out)
    assert Rules.from_yaml(out).to_dict() == rules.to_dict()


def febrl_in_python() -> Rules:
    names = {"exact": 2.5, ">=0.92": 2.0, ">=0.8": 1.0, "else": -2.0}
    return Rules(
        id_column="rec_id",
        normalize=[
            Normalize("given_name", "name"),
            Normalize("surname", "name"),
            Normalize("address_1", "text"),
            Normalize("suburb", "text"),
            Normalize("postcode", "postcode"),
            Normalize("date_of_birth", "date", order="YMD", on_error="null"),
        ],
        blocking=[
            KeyBlocker(
                [
                    ["soundex(surname)", "first(given_name, 1)"],
                    ["soundex(given_name)", "year(date_of_birth)"],
                ],
                name="names",
            ),
            KeyBlocker(
                [["soc_sec_id"], ["date_of_birth"], ["postcode", "street_number"]],
                name="identifiers",
            ),
            SortedNeighbourhood(["surname", "given_name"], window=4, name="sorted_names"),
        ],
        comparisons=[
            JaroWinkler("given_name", thresholds=[0.92, 0.8]),
            JaroWinkler("surname", thresholds=[0.8, 0.92]),  # order does not matter
            Date("date_of_birth", within_days=[365]),
            Levenshtein("soc_sec_id", thresholds=[0.85]),
            Exact("street_number"),
            JaroWinkler("address_1", thresholds=[0.9, 0.75]),
            JaroWinkler("suburb", thresholds=[0.9]),
            Levenshtein("postcode", thresholds=[0.75]),
            Exact("state"),
        ],
        scoring=RuleSum(
            threshold=1.0,
            weights={
                "given_name": names,
                "surname": names,
                "date_of_birth": {
                    "exact": 2.5, "day_month_swapped": 2.0, "one_typo": 2.0,
                    "within_365_days": 0.5, "else": -2.0,
                },
                "soc_sec_id": {"exact": 3.0, ">=0.85": 2.0, "else": -2.0},
                "street_number": {"exact": 1.0, "else": -0.5},
                "address_1": {"exact": 1.5, ">=0.9": 1.2, ">=0.75": 0.5, "else": -1.0},
                "suburb": {"exact": 1.0, ">=0.9": 0.8, "else": -0.5},
                "postcode": {"exact": 1.0, ">=0.75": 0.5, "else": -0.5},
                "state": {"exact": 0.3, "else": -0.3},
            },
        ),
        keep="first",
    )


def test_python_rules_equal_yaml_rules():
    from_yaml = Rules.from_yaml(FEBRL)
    built = febrl_in_python()
    assert built.to_dict() == from_yaml.to_dict()
    assert built.config_hash() == from_yaml.config_hash()
    assert Rules.from_dict(built.to_dict()).to_dict() == built.to_dict()


def test_defaults_are_left_out_of_to_dict():
    rules = Rules(blocking=[KeyBlocker(["a"])], comparisons=[Exact("a")])
    assert rules.to_dict() == {
        "blocking": [{"type": "keys", "keys": ["a"]}],
        "comparisons": [{"type": "exact", "column": "a"}],
        "scoring": {"type": "rule_sum"},
    }
    assert Rules.from_dict(rules.to_dict()) == rules
    assert rules.scoring == RuleSum() and rules.keep == "first"
    assert (rules.max_pairs, rules.max_block_size, rules.one_to_one) == (20_000_000, 5_000, False)


@pytest.mark.parametrize("path", sorted((ROOT / "rules").glob("*.yaml")), ids=lambda p: p.name)
def test_explicit_yaml_spells_out_every_default_and_round_trips(path, tmp_path):
    rules = Rules.from_yaml(path)
    text = rules.to_yaml(tmp_path / "explicit.yaml", explicit=True)
    again = Rules.from_yaml(tmp_path / "explicit.yaml")
    assert again.to_yaml(explicit=True) == text
    assert again == rules and again.config_hash() == rules.config_hash()
    data = yaml.safe_load(text)
    for key in ("max_pairs", "max_block_size", "one_to_one", "keep", "golden", "exact"):
        assert key in data, key
    for blocker in data["blocking"]:  # e.g. a MinHash blocker's threshold, num_perm, seed
        kind = type(rules.blocking[data["blocking"].index(blocker)])
        assert set(kind._params()) <= set(blocker), blocker


def test_explicit_yaml_names_a_normalizers_default_options():
    rules = Rules(normalize=[Normalize("d", "date")], blocking=[KeyBlocker(["d"])],
                  comparisons=[Exact("d")])
    assert rules.to_dict()["normalize"] == [{"column": "d", "type": "date"}]
    explicit = yaml.safe_load(rules.to_yaml(explicit=True))["normalize"][0]
    assert explicit["order"] == "DMY" and "on_error" in explicit


def test_config_hash_changes_with_the_rules():
    a = Rules(blocking=[KeyBlocker(["a"])], comparisons=[Exact("a")])
    b = Rules(blocking=[KeyBlocker(["a"])], comparisons=[Exact("a")], max_pairs=10)
    assert a.config_hash() != b.config_hash()
    assert len(a.config_hash()) == 64


# --- errors name the file and the path -----------------------------------------------------


def test_bad_threshold(tmp_path):
    message = error_of(tmp_path, replaced("thresholds: [0.92, 0.8]", "thresholds: [1.3, 0.8]"))
    assert "customers.yaml" in message
    assert "comparisons[1].thresholds" in message
    assert "[0, 1]" in message
    assert "1.3" in message


def test_unknown_key_function(tmp_path):
    message = error_of(tmp_path, replaced("- last(phone, 4)", "- lst(phone, 4)"))
    assert "blocking[1].keys[0]" in message
    assert "'lst'" in message and "last" in message and "'lst(phone, 4)'" in message
    # Inside a compound key the path goes one level deeper.
    message = error_of(tmp_path, replaced("[year(dob), ", "[yr(dob), "))
    assert "blocking[1].keys[1][0]" in message


def test_unknown_key_function_message_reads_well(tmp_path):
    message = error_of(tmp_path, replaced("- last(phone, 4)", "- lst(phone, 4)"))
    assert "must be uses" not in message


def test_unknown_comparator_type(tmp_path):
    message = error_of(tmp_path, replaced("type: jaro_winkler", "type: jarowinkler"))
    assert "comparisons[1].type" in message
    assert "Did you mean 'jaro_winkler'" in message
    assert "'jarowinkler'" in message


def test_broken_yaml_names_the_line(tmp_path):
    broken = replaced("  threshold: 2.0\n", "  threshold: 2.0\n bad: indentation\n")
    message = error_of(tmp_path, broken)
    assert "line" in message
    line = broken.splitlines().index(" bad: indentation") + 1
    assert f"line {line}" in message
    assert "not valid YAML" in message


@pytest.mark.parametrize("text", ["", "\n\n", "# only a comment\n"])
def test_empty_file(tmp_path, text):
    message = error_of(tmp_path, text)
    assert "empty" in message


def test_missing_file(tmp_path):
    with pytest.raises(RulesError, match="no such rules file"):
        Rules.from_yaml(tmp_path / "nope.yaml")


def test_not_a_mapping(tmp_path):
    message = error_of(tmp_path, "- blocking\n- comparisons\n")
    assert "mapping" in message and "list" in message


def test_unknown_top_level_key(tmp_path):
    message = error_of(tmp_path, BASE + "treshold: 3\n")
    assert "treshold" in message
    assert "allowed keys are" in message
    for key in ["blocking", "comparisons", "id_column", "keep", "max_block_size", "max_pairs",
                "normalize", "one_to_one", "scoring"]:
        assert key in message


def test_unknown_nested_key_suggests(tmp_path):
    message = error_of(tmp_path, replaced("  threshold: 2.0", "  treshold: 2.0"))
    assert "scoring.treshold" in message and "Did you mean 'threshold'" in message


def test_duplicate_comparison_names(tmp_path):
    message = error_of(
        tmp_path, replaced("{type: date, column: dob}", "{type: exact, column: name}")
    )
    assert "comparisons[2].name" in message
    assert "unique" in message and "comparisons[1]" in message
    # A `name:` resolves it.
    text = replaced("{type: date, column: dob}", "{type: exact, column: name, name: name_exact}")
    assert Rules.from_yaml(write(tmp_path, text)).comparisons[2].output_name == "name_exact"


def test_duplicate_blocker_names(tmp_path):
    message = error_of(tmp_path, replaced("name: by_phone", "name: by_name"))
    assert "blocking" in message and "unique" in message


def test_weights_for_missing_comparison(tmp_path):
    text = replaced("    name: {exact", "    nmae: {exact")
    message = error_of(tmp_path, text)
    assert "weights.nmae" in message
    assert "dob, name, phone" in message


def test_weights_for_missing_level(tmp_path):
    message = error_of(tmp_path, replaced('">=0.92": 2.0', '">=0.9": 2.0'))
    assert "weights.name.>=0.9" in message
    assert "else, >=0.8, >=0.92, exact" in message


def test_weights_error_message_reads_well(tmp_path):
    message = error_of(tmp_path, replaced("    name: {exact", "    nmae: {exact"))
    assert "must be weights" not in message
    assert "Got None" not in message


def test_normalize_unknown_option(tmp_path):
    message = error_of(tmp_path, replaced("{column: name, type: name}",
                                          "{column: name, type: name, lowercse: true}"))
    assert "normalize[0].lowercse" in message
    assert "Did you mean 'lowercase'" in message


def test_normalize_unknown_type_and_bad_option_value(tmp_path):
    message = error_of(tmp_path, replaced("{column: dob, type: date}", "{column: dob, type: dat}"))
    assert "normalize[1].type" in message and "'date'" in message
    message = error_of(tmp_path, replaced("{column: dob, type: date}",
                                          "{column: dob, type: date, order: XYZ}"))
    assert "normalize[1]" in message and "XYZ" in message


def test_wrong_types_and_missing_keys(tmp_path):
    message = error_of(tmp_path, replaced("threshold: 2.0", "threshold: high"))
    assert "scoring.threshold" in message and "'high'" in message
    message = error_of(tmp_path, replaced("{type: exact, column: phone}", "{type: exact}"))
    assert "comparisons[0].column" in message and "required" in message
    message = error_of(tmp_path, BASE.replace("comparisons:", "max_pairs: 0\ncomparisons:"))
    assert "max_pairs" in message and "positive" in message
    message = error_of(tmp_path, BASE + "keep: last\n")
    assert "keep" in message and "most_complete" in message


def test_from_dict_source_defaults_to_rules():
    with pytest.raises(RulesError, match=r"^rules: comparisons must list at least one"):
        Rules.from_dict({"blocking": [{"keys": ["a"]}], "comparisons": []})


def test_python_construction_validates_too():
    with pytest.raises(RulesError, match="at least one blocker"):
        Rules(blocking=[], comparisons=[Exact("a")])
    with pytest.raises(RulesError, match="unique"):
        Rules(blocking=[KeyBlocker(["a"])], comparisons=[Exact("a"), JaroWinkler("a")])
    with pytest.raises(RulesError, match=r"\[0, 1\]"):
        JaroWinkler("a", thresholds=[1.3])
    with pytest.raises(RulesError, match="lowercse"):
        Normalize("name", "name", lowercse=True)
    with pytest.raises(RulesError, match="must name a comparison"):
        Rules(blocking=[KeyBlocker(["a"])], comparisons=[Exact("a")],
              scoring=RuleSum(weights={"b": {"exact": 1.0}}))


def test_normalize_to_dict_round_trip():
    norm = Normalize("dob", "date", output="dob_iso", order="MDY")
    assert norm.to_dict() == {"column": "dob", "type": "date", "output": "dob_iso",
                              "order": "MDY"}
    assert Normalize.from_dict(norm.to_dict()) == norm
    # An option at its default is left out, like every default, so the hash does not change.
    assert Normalize("dob", "date", order="DMY") == Normalize("dob", "date")
    assert norm.target == "dob_iso" and Normalize("dob", "date").target == "dob"


# --- scoring --------------------------------------------------------------------------------


def matrix(levels) -> ComparisonMatrix:
    comparisons = [Exact("phone"), JaroWinkler("name")]
    levels = np.array(levels, dtype=np.int8)
    return ComparisonMatrix(comparisons, levels, np.zeros(levels.shape, dtype=np.float32))


@pytest.mark.parametrize("method", ["contributions", "match_weight", "predict"])
def test_unfitted_rule_sum(method):
    with pytest.raises(NotFittedError, match=r"not fitted yet\. Call `fit` first\.") as info:
        getattr(RuleSum(), method)(matrix([[1, 3]]))
    assert "RuleSum" in str(info.value)
    assert isinstance(info.value, LinkageError)


def test_rule_sum_weights():
    X = matrix([[1, 3], [0, 0], [-1, 2], [1, -1]])
    scorer = RuleSum(threshold=2.5, weights={"name": {"exact": 3.0, ">=0.92": 2.0}})
    assert scorer.fit(X) is scorer
    contributions = scorer.contributions(X)
    assert list(contributions.columns) == ["phone", "name"]
    # phone uses the default weights (else -1, exact +2); name: listed levels, others 0; null 0.
    assert contributions["phone"].tolist() == [2.0, -1.0, 0.0, 2.0]
    assert contributions["name"].tolist() == [3.0, 0.0, 2.0, 0.0]
    np.testing.assert_allclose(scorer.match_weight(X), [5.0, -1.0, 2.0, 2.0])
    assert scorer.predict(X).tolist() == [True, False, False, False]


# --- the façade -----------------------------------------------------------------------------


def test_all_names_exist():
    assert linkage.__all__
    for name in linkage.__all__:
        assert hasattr(linkage, name), name
    assert linkage.Rules is Rules and linkage.Normalize is Normalize
    assert callable(linkage.dedupe) and callable(linkage.link) and callable(linkage.read)
    assert issubclass(linkage.LinkageError, Exception)
    assert isinstance(linkage.__version__, str)


def test_import_is_light():
    heavy = ["torch", "sentence_transformers", "pyspark", "great_expectations"]
    code = textwrap.dedent(
        f"""
        import json, sys
        import linkage
        print(json.dumps([m for m in {heavy!r} if m in sys.modules]))
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True,
        timeout=120,
    )
    assert json.loads(result.stdout.strip().splitlines()[-1]) == []


@pytest.mark.parametrize("change", [
    {"one_to_one": False},
    {"scoring": {"type": "rule_sum", "threshold": 1.0,
                 "weights": {"name": {"exact": 1.0, "else": -1.0}}}},
    {"one_to_one_threshold": "record"},
])
def test_one_to_one_threshold_record_prior_needs_a_one_to_one_fellegi_sunter_link(change):
    """`record_prior` means something only for a one-to-one link with a fitted prior: anything
    else is an error that names the key and the fix, not a setting silently ignored."""
    rules = {"blocking": [{"type": "keys", "keys": [["name"]]}],
             "comparisons": [{"type": "exact", "column": "name"}],
             "scoring": {"type": "fellegi_sunter"}, "one_to_one": True,
             "one_to_one_threshold": "record_prior"}
    Rules.from_dict(rules)  # the combination it is for
    with pytest.raises(RulesError, match="one_to_one_threshold") as err:
        Rules.from_dict({**rules, **change})
    assert "one_to_one: true" in str(err.value) or "record_prior" in str(err.value)


def test_comments_are_written_above_the_rules_and_must_be_comments():
    rules = Rules.from_dict({"blocking": [{"type": "keys", "keys": [["a"]]}],
                             "comparisons": [{"type": "exact", "column": "a"}]})
    assert rules.comments == "" and not rules.to_yaml().startswith("#")
    rules.comments = "# why\n#\n# more"
    assert rules.to_yaml().startswith("# why\n#\n# more\n")
    assert Rules.from_dict(yaml.safe_load(rules.to_yaml())).to_dict() == rules.to_dict()
    with pytest.raises(ValueError, match="comment lines"):
        rules.comments = "# fine\nblocking: []"
