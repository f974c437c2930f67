"""The hostile catalogue, rules side: rules files that are broken, ambiguous or quietly wrong.

Each is checked by `linkage validate` (exit 2, the file, the key and the fix) and, where a run
would differ, by a run that must not write `--out` nor change anything else.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from tests.hostile.conftest import assert_unchanged_outside, run_cli, run_clis, snapshot
from tests.test_bad_input import GOOD as TABLE
from tests.test_bad_input import RULES as BASE

# The rules of tests/test_bad_input.py, with weights for one comparison.
RULES = BASE.replace("scoring: {threshold: 1.0}", textwrap.dedent("""\
    scoring:
      threshold: 1.0
      weights:
        name: {exact: 2.0, else: -1.0}"""))


def _rejected_everywhere(folder: Path, text: str | bytes, *fragments: str) -> str:
    """`validate` and `dedupe` both exit 2 naming every fragment; the run writes nothing."""
    rules = folder / "rules.yaml"
    if isinstance(text, bytes):
        rules.write_bytes(text)
    else:
        rules.write_text(text, encoding="utf-8")
    TABLE.to_csv(folder / "in.csv", index=False)
    before = snapshot(folder)
    checked, run = run_clis(("validate", rules),
                            ("dedupe", folder / "in.csv", "--rules", rules, "--out",
                             folder / "out"))
    assert_unchanged_outside(before, snapshot(folder), "out")
    assert not (folder / "out").exists()
    for done in (checked, run):
        assert done.returncode == 2, (done.returncode, done.stdout, done.stderr)
        assert "Traceback" not in done.stderr
        for fragment in ("rules.yaml", *fragments):
            assert fragment in done.stderr, (fragment, done.stderr)
    return checked.stderr


def test_the_rules_are_valid_as_written(workdir):
    (workdir / "rules.yaml").write_text(RULES, encoding="utf-8")
    done = run_cli("validate", workdir / "rules.yaml")
    assert done.returncode == 0, done.stderr


# --- item 5a: a key written twice --------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "line", "key"),
    [
        # A second `scoring:` block: the last one won, silently, and the weights were lost.
        (RULES + "scoring: {threshold: 9.0}\n", 14, "scoring"),
        (RULES.replace("name: {exact: 2.0, else: -1.0}",
                       "name: {exact: 2.0, else: -1.0}\n    name: {exact: 1.0}"), 14, "name"),
        (RULES.replace("{column: dob, type: date}", "{column: dob, type: date, column: name}"),
         4, "column"),
    ],
    ids=["second-scoring-block", "weights-twice", "flow-mapping"],
)
def test_a_key_written_twice_names_the_line(workdir, text, line, key):
    _rejected_everywhere(workdir, text, f"line {line}", f"`{key}`", "twice", "delete")


# --- item 5b: numbers that are not numbers -----------------------------------------------------


@pytest.mark.parametrize(
    ("old", "new", "key"),
    [
        ("threshold: 1.0", "threshold: .nan", "scoring.threshold"),
        ("threshold: 1.0", "threshold: .inf", "scoring.threshold"),
        ("threshold: 1.0", "threshold: -.inf", "scoring.threshold"),
        ("exact: 2.0", "exact: .nan", "scoring.weights.name.exact"),
        ("id_column: id", "id_column: id\nmax_removal_rate: .nan", "max_removal_rate"),
    ],
    ids=["nan-threshold", "inf-threshold", "minus-inf-threshold", "nan-weight",
         "nan-removal-rate"],
)
def test_nan_and_inf_are_not_numbers(workdir, old, new, key):
    _rejected_everywhere(workdir, RULES.replace(old, new), key)


def test_a_finite_threshold_still_reads(workdir):
    (workdir / "rules.yaml").write_text(RULES.replace("threshold: 1.0", "threshold: -2"),
                                        encoding="utf-8")
    assert run_cli("validate", workdir / "rules.yaml").returncode == 0


# --- item 5c: a comparison that counts for nothing ---------------------------------------------


def test_a_comparison_given_no_weights_is_an_error(workdir):
    # `name: {}` gives every level weight 0: the comparison runs, is written to pairs.parquet,
    # and never moves a score. A user who writes the key means to weigh it; one who wants the
    # default weights leaves it out. So this is an error naming the comparison and both fixes.
    _rejected_everywhere(workdir, RULES.replace("name: {exact: 2.0, else: -1.0}", "name: {}"),
                         "scoring.weights.name", "counts for nothing", "leave `name` out")


# --- the classes around them -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "fragments"),
    [
        ("", ["empty"]),
        ("# only a comment\n", ["empty"]),
        ("- a\n- b\n", ["must be a mapping"]),
        ("blocking: [\n", ["not valid YAML", "line"]),
        (RULES.replace("  - keys", "\t- keys"), ["not valid YAML", "line 6"]),
        (RULES.encode("utf-16"), ["not UTF-8", "Save it as UTF-8"]),
        (RULES.replace("threshold: 1.0", "threshold: '1.0'"), ["scoring.threshold", "'1.0'"]),
        (RULES.replace("threshold: 1.0", "threshold: true"), ["scoring.threshold", "True"]),
        (RULES.replace("id_column: id", "id_colum: id"), ["id_colum", "Did you mean"]),
        (RULES + "max_block_size: 1e3\n", ["max_block_size"]),
        (RULES.replace("keys: [[surname]]", "keys: []"), ["blocking[0].keys"]),
        (RULES.replace("keys: [[surname]]", "keys: [[surname]]\n  - keys: [[surname]]"),
         []),
    ],
    ids=["empty", "comment-only", "a-list", "unclosed-bracket", "tab-indent", "utf-16",
         "quoted-number", "bool-threshold", "misspelt-key", "float-size", "no-keys",
         "blocker-twice-is-fine"],
)
def test_rules_catalogue(workdir, text, fragments):
    if not fragments:  # a case that is allowed: it must still validate
        (workdir / "rules.yaml").write_text(text, encoding="utf-8")
        done = run_cli("validate", workdir / "rules.yaml")
        assert done.returncode == 0, done.stderr
        return
    _rejected_everywhere(workdir, text, *fragments)
