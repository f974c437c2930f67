"""Bad input gets a clear error, exit code 2, and leaves `--out` exactly as it was."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pandas as pd
import pytest

from tests.conftest import run_cli, run_clis

RULES = textwrap.dedent(
    """
    id_column: id
    normalize:
      - {column: dob, type: date}
    blocking:
      - keys: [[surname]]
    comparisons:
      - {type: jaro_winkler, column: name}
      - {type: date, column: dob}
    scoring: {threshold: 1.0}
    """
)

GOOD = pd.DataFrame(
    {
        "id": ["a", "b", "c"],
        "name": ["kim", "kim", "lee"],
        "surname": ["x", "x", "y"],
        "dob": ["1990-01-02", "1990-01-02", "1991-02-03"],
    }
)


def _setup(tmp_path: Path, table: pd.DataFrame | str, rules: str = RULES):
    data = tmp_path / "in.csv"
    if isinstance(table, str):
        data.write_text(table, encoding="utf-8")
    else:
        table.to_csv(data, index=False)
    rules_file = tmp_path / "rules.yaml"
    rules_file.write_text(rules, encoding="utf-8")
    out = tmp_path / "out"
    out.mkdir()
    (out / "keep-me.txt").write_text("previous run")
    (out / ".linkage").write_text('{"written_by": "dedupe"}\n')  # a run's folder may be replaced
    return data, rules_file, out


def _assert_rejected(done, out: Path, *fragments: str) -> None:
    assert done.returncode == 2, (done.returncode, done.stdout, done.stderr)
    for fragment in fragments:
        assert fragment in done.stderr, (fragment, done.stderr)
    assert "Traceback" not in done.stderr
    assert sorted(p.name for p in out.iterdir()) == [".linkage", "keep-me.txt"]
    assert (out / "keep-me.txt").read_text() == "previous run"
    assert not [p for p in out.parent.iterdir() if p.name.startswith(".out.")]


@pytest.mark.parametrize(
    ("table", "fragments"),
    [
        (GOOD.drop(columns=["surname"]), ["column `surname`", "blocking[0]", "in.csv"]),
        (GOOD.iloc[:0], ["no records", "in.csv"]),
        ("", ["empty", "in.csv"]),
        (GOOD.assign(name=None), ["column `name`", "empty in every record"]),
        (GOOD.assign(id=["a", "a", "c"]), ["id column `id`", "'a'", "unique"]),
        (GOOD.assign(dob=["1990-01-02", "1990-13-45", "x"]),
         ["dob", "record id 'b'", "on_error"]),
    ],
    ids=["missing-column", "no-rows", "empty-file", "all-null-column", "duplicate-ids",
         "unparseable-date"],
)
def test_bad_table(tmp_path, table, fragments):
    data, rules, out = _setup(tmp_path, table)
    done = run_cli("dedupe", data, "--rules", rules, "--out", out)
    _assert_rejected(done, out, *fragments)


@pytest.mark.parametrize(
    ("rules", "fragments"),
    [
        ("blocking:\n  - keys: [[surname]\ncomparisons: []\n", ["rules.yaml", "not valid YAML",
                                                              "line"]),
        (RULES.replace("jaro_winkler", "jarowinkler"),
         ["rules.yaml", "comparisons[0].type", "Did you mean 'jaro_winkler'"]),
        (RULES.replace("keys: [[surname]]", "keys: [[sondex(surname)]]"),
         ["rules.yaml", "blocking[0].keys[0][0]", "unknown key function"]),
        (RULES.replace("threshold: 1.0", "threshold: high"), ["scoring.threshold", "'high'"]),
        ("", ["rules.yaml", "empty"]),
    ],
    ids=["broken-yaml", "unknown-comparator", "unknown-key-function", "bad-threshold",
         "empty-rules"],
)
def test_bad_rules(tmp_path, rules, fragments):
    data, rules_file, out = _setup(tmp_path, GOOD, rules)
    done = run_cli("dedupe", data, "--rules", rules_file, "--out", out)
    _assert_rejected(done, out, *fragments)


def test_missing_input_file(tmp_path):
    _, rules, out = _setup(tmp_path, GOOD)
    done = run_cli("dedupe", tmp_path / "nope.csv", "--rules", rules, "--out", out)
    _assert_rejected(done, out, "nope.csv", "no such file")


def test_not_utf8_names_the_line(tmp_path):
    data, rules, out = _setup(tmp_path, GOOD)
    data.write_bytes(b"id,name,surname,dob\na,kim,x,1990-01-02\n"
                     + "b,김,x,1990-01-02\n".encode("cp949"))
    # Both runs at once: without `--encoding` into `out`, with it into a folder of its own.
    done, given = run_clis(("dedupe", data, "--rules", rules, "--out", out),
                           ("dedupe", data, "--rules", rules, "--out", tmp_path / "cp949",
                            "--encoding", "cp949"))
    _assert_rejected(done, out, "line 3", "--encoding cp949")
    assert given.returncode == 0, given.stderr


def test_validate_command(tmp_path):
    rules, misspelt = tmp_path / "rules.yaml", tmp_path / "misspelt.yaml"
    rules.write_text(RULES)
    misspelt.write_text(RULES.replace("jaro_winkler", "jarowinkler"))
    done, wrong = run_clis(("validate", rules), ("validate", misspelt))
    assert done.returncode == 0
    assert "valid" in done.stdout and "jaro_winkler" in done.stdout
    done = wrong
    assert done.returncode == 2
    assert "comparisons[0].type" in done.stderr


def test_good_run_replaces_out(tmp_path):
    data, rules, out = _setup(tmp_path, GOOD)
    done = run_cli("dedupe", data, "--rules", rules, "--out", out)
    assert done.returncode == 0, done.stderr
    names = sorted(p.name for p in out.iterdir())
    assert names == [".linkage", "clusters.parquet", "deduplicated.parquet", "pairs.parquet",
                     "report.html", "report_records.parquet", "rules.yaml", "summary.json",
                     "timings.json"]


def test_budget_exceeded_names_the_blocker(tmp_path):
    rules = RULES.replace("scoring: {threshold: 1.0}", "scoring: {threshold: 1.0}\nmax_pairs: 1")
    # Not copies (those are paired without blocking): names differ, keys do not.
    table = pd.concat([GOOD] * 3, ignore_index=True).assign(
        id=[f"r{i}" for i in range(9)], name=[f"kim{i}" for i in range(9)])
    data, rules_file, out = _setup(tmp_path, table, rules)
    done = run_cli("dedupe", data, "--rules", rules_file, "--out", out)
    _assert_rejected(done, out, "max_pairs", "blocker_0", "blocking[0].keys[0]")


def test_oversized_block_warns_and_run_succeeds(tmp_path):
    rules = RULES.replace("scoring: {threshold: 1.0}",
                          "scoring: {threshold: 1.0}\nmax_block_size: 2")
    table = pd.concat([GOOD] * 2, ignore_index=True).assign(
        id=[f"r{i}" for i in range(6)], name=[f"kim{i}" for i in range(6)])
    data, rules_file, out = _setup(tmp_path, table, rules)
    done = run_cli("dedupe", data, "--rules", rules_file, "--out", out)
    assert done.returncode == 0, done.stderr
    assert "warning" in done.stderr and "'x'" in done.stderr and "max_block_size" in done.stderr
    assert len(pd.read_parquet(out / "clusters.parquet")) == 6
