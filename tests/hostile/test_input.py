"""The hostile catalogue, input side: tables that are odd, damaged or typed in surprising ways.

Every case runs the real CLI on real files. A table that cannot be used exits 2 with a message
naming the file, the column or line, and the fix; a table that can be used but loses values
exits 0 with a warning in summary.json. Either way nothing outside `--out` changes.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pandas as pd
import pytest

from tests.conftest import ROOT, f1_score, pairs_of_clusters
from tests.hostile.conftest import assert_unchanged_outside, run_cli, run_clis, snapshot
from tests.test_febrl import _opaque, _read_febrl

RULES = textwrap.dedent(
    """
    id_column: id
    normalize:
      - {column: name, type: name}
      - {column: dob, type: date, on_error: "null"}
      - {column: phone, type: phone}
    blocking:
      - keys: [[surname]]
    comparisons:
      - {type: jaro_winkler, column: name}
      - {type: date, column: dob}
      - {type: exact, column: phone}
    scoring: {threshold: 1.0}
    max_removal_rate: 1.0
    """
)

GOOD = pd.DataFrame({
    "id": ["a", "b", "c", "d"],
    "name": ["kim minsu", "kim minsu", "lee jiwon", "park"],
    "surname": ["kim", "kim", "lee", "park"],
    "dob": ["1990-01-02", "1990-01-02", "1991-02-03", "1985-05-06"],
    "phone": ["010-1234-5678", "010-1234-5678", "010-9999-0000", "02-123-4567"],
})


def _rules(folder: Path, text: str = RULES) -> Path:
    path = folder / "rules.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def _run(folder: Path, data: Path, *extra: str, rules: Path | None = None, verb="dedupe"):
    """Run the CLI into `folder/out`; returns the finished process, after checking that
    nothing outside `out` changed."""
    rules = rules or _rules(folder)
    before = snapshot(folder)
    done = run_cli(verb, data, *extra, "--rules", rules, "--out", folder / "out")
    assert_unchanged_outside(before, snapshot(folder), "out")
    assert "Traceback" not in done.stderr, done.stderr
    return done


def _run_together(*cases: tuple[Path, Path, Path]) -> list:
    """`_run` for several (folder, data, rules) at once, each folder its own: the finished
    processes in order, after checking that nothing outside each `out` changed."""
    before = [snapshot(folder) for folder, _, _ in cases]
    runs = run_clis(*[("dedupe", data, "--rules", rules, "--out", folder / "out")
                      for folder, data, rules in cases])
    for (folder, _, _), was, done in zip(cases, before, runs, strict=True):
        assert_unchanged_outside(was, snapshot(folder), "out")
        assert "Traceback" not in done.stderr, done.stderr
    return runs


def _rejected(done, *fragments: str) -> None:
    """Exit 2, every fragment (file, key, fix) in the message, and no `--out` written."""
    assert done.returncode == 2, (done.returncode, done.stdout, done.stderr)
    for fragment in fragments:
        assert fragment in done.stderr, (fragment, done.stderr)


def _summary(folder: Path) -> dict:
    return json.loads((folder / "out" / "summary.json").read_text(encoding="utf-8"))


# --- item 3: float-typed columns --------------------------------------------------------------


def _febrl_f1(folder: Path, entity: dict) -> float:
    clusters = pd.read_parquet(folder / "out" / "clusters.parquet")
    predicted = pairs_of_clusters(clusters.astype({"rec_id": str}), "rec_id", "cluster_id")
    truth = pairs_of_clusters(pd.DataFrame({"rec_id": list(entity), "e": list(entity.values())}),
                              "rec_id", "e")
    return f1_score(predicted, truth)[2]


def test_float_dates_from_a_default_read_csv_score_as_the_csv_does(tmp_path, datasets):
    # A default `pd.read_csv` makes `date_of_birth` and `street_number` float64 (they have
    # blanks): 19651013.0. Written to Parquet, those are the integers they hold, not nulls.
    path = datasets / "febrl" / "dataset3.csv"
    text, entity = _opaque(_read_febrl(path), "floats")
    typed, _ = _opaque(pd.read_csv(path, skipinitialspace=True), "floats")
    assert typed["date_of_birth"].dtype == "float64"
    (tmp_path / "csv").mkdir()
    (tmp_path / "parquet").mkdir()
    text.to_csv(tmp_path / "csv" / "in.csv", index=False)
    typed.to_parquet(tmp_path / "parquet" / "in.parquet")
    rules = ROOT / "rules" / "febrl.yaml"
    for done in _run_together((tmp_path / "csv", tmp_path / "csv" / "in.csv", rules),
                              (tmp_path / "parquet", tmp_path / "parquet" / "in.parquet", rules)):
        assert done.returncode == 0, done.stderr
    from_csv = _febrl_f1(tmp_path / "csv", entity)
    from_parquet = _febrl_f1(tmp_path / "parquet", entity)
    assert from_csv >= 0.99
    assert from_parquet == from_csv
    dates = _summary(tmp_path / "parquet")["stages"]["normalize"]["date_of_birth"]
    assert dates == _summary(tmp_path / "csv")["stages"]["normalize"]["date_of_birth"]


def test_integral_floats_are_read_as_the_integers_they_hold():
    from linkage.normalize import normalize_date, normalize_phone, normalize_postcode

    assert normalize_date(pd.Series([19651013.0, None]), order="YMD").tolist() == [
        "1965-10-13", None]
    assert normalize_phone(pd.Series([1012345678.0]), country=None).tolist() == ["1012345678"]
    assert normalize_postcode(pd.Series([2119.0, 2119.5])).tolist() == ["2119", "2119.5"]


def test_values_a_normalizer_empties_are_a_warning(tmp_path):
    table = GOOD.assign(dob=["1990-01-02", "garbage", "31/31/1990", "not a date"])
    table.to_csv(tmp_path / "in.csv", index=False)
    done = _run(tmp_path, tmp_path / "in.csv")
    assert done.returncode == 0, done.stderr
    warnings = [w for w in _summary(tmp_path)["warnings"] if "`dob`" in w]
    assert len(warnings) == 1, _summary(tmp_path)["warnings"]
    (warning,) = warnings
    # The column, the count and share, examples, and what to do.
    for fragment in ("`dob`", "date", "3 of 4 records (75.0%)", "'31/31/1990'", "'garbage'",
                     "on_error"):
        assert fragment in warning, (fragment, warning)
    assert warning in done.stdout


def test_a_normalizer_that_empties_nothing_says_nothing(tmp_path):
    GOOD.to_csv(tmp_path / "in.csv", index=False)
    done = _run(tmp_path, tmp_path / "in.csv")
    assert done.returncode == 0, done.stderr
    assert _summary(tmp_path)["warnings"] == []


# --- item 5d, 5e: values that look readable and are not ---------------------------------------


def test_a_phone_with_letters_is_unreadable_not_truncated(tmp_path):
    # "010-CALL-NOW" was read as 010 and matched every other such number.
    table = GOOD.assign(phone=["010-CALL-NOW", "010-CALL-HOME", "010-9999-0000", "02-123-4567"])
    table.to_csv(tmp_path / "in.csv", index=False)
    done = _run(tmp_path, tmp_path / "in.csv")
    assert done.returncode == 0, done.stderr
    pairs = pd.read_parquet(tmp_path / "out" / "pairs.parquet")
    assert set(pairs["phone_level"]) == {-1}  # null: neither agrees with the other
    (warning,) = [w for w in _summary(tmp_path)["warnings"] if "`phone`" in w]
    assert "2 of 4 records" in warning and "'010-CALL-HOME'" in warning


def test_a_phone_with_letters_stops_the_run_with_on_error_raise(tmp_path):
    table = GOOD.assign(phone=["010-CALL-NOW", "010-1234-5678", "010-9999-0000", "02-123-4567"])
    table.to_csv(tmp_path / "in.csv", index=False)
    rules = _rules(tmp_path, RULES.replace("type: phone}", "type: phone, on_error: raise}"))
    done = _run(tmp_path, tmp_path / "in.csv", rules=rules)
    _rejected(done, "'phone'", "record id 'a'", "'010-CALL-NOW'", "on_error")


@pytest.mark.parametrize("placeholder", ["0001-01-01", "9999-12-31", "2999-12-31"])
def test_placeholder_years_are_not_dates(tmp_path, placeholder):
    table = GOOD.assign(dob=[placeholder, placeholder, "1991-02-03", "1985-05-06"])
    # Three runs of the table, each in a folder of its own: strict rules, the rules as they
    # are (`on_error: "null"`), and the range widened.
    texts = {"strict": RULES.replace(', on_error: "null"', ""), "null": RULES,
             # The range is the user's to widen, for a table of historical figures say.
             "wide": RULES.replace('on_error: "null"', "min_year: 1, max_year: 9999")}
    cases = []
    for name, text in texts.items():
        folder = tmp_path / name
        folder.mkdir()
        table.to_csv(folder / "in.csv", index=False)
        cases.append((folder, folder / "in.csv", _rules(folder, text)))
    strict, done, wide = _run_together(*cases)
    _rejected(strict, "'dob'", "record id 'a'", repr(placeholder), "min_year", "max_year")
    assert done.returncode == 0, done.stderr
    (warning,) = [w for w in _summary(tmp_path / "null")["warnings"] if "`dob`" in w]
    assert "2 of 4 records" in warning and repr(placeholder) in warning
    assert wide.returncode == 0, wide.stderr
    assert not [w for w in _summary(tmp_path / "wide")["warnings"] if "`dob`" in w]


# --- item 5f: rows shorter or longer than the header -------------------------------------------


@pytest.mark.parametrize(
    ("text", "line", "fields"),
    [
        ("id,name,surname,dob,phone\na,kim,kim,1990-01-02,010\nb,kim,kim\n"
         "c,lee,lee,1991-02-03,011\n", 3, 3),
        ("id,name,surname,dob,phone\na,kim,kim,1990-01-02,010\nb,kim,kim,1990-01-02,010,x\n",
         3, 6),
        # Every row one longer: pandas made the first column the index, silently.
        ("id,name,surname,dob,phone\na,kim,kim,1990-01-02,010,x\nb,kim,kim,1990-01-02,010,x\n",
         2, 6),
        # A quoted value with the separator and a line break is one field, not a short row.
        ('id,name,surname,dob,phone\na,"kim,\nminsu",kim,1990-01-02,010\nb,kim\n', 4, 2),
    ],
    ids=["short-row", "long-row", "every-row-long", "after-a-quoted-newline"],
)
def test_a_row_with_the_wrong_number_of_fields_names_its_line(tmp_path, text, line, fields):
    (tmp_path / "in.csv").write_text(text, encoding="utf-8")
    done = _run(tmp_path, tmp_path / "in.csv")
    _rejected(done, "in.csv", f"line {line}", f"{fields} fields", "header has 5",
              "LINKAGE_ALLOW_SHORT_ROWS")


def test_short_rows_are_read_when_asked(tmp_path, monkeypatch):
    (tmp_path / "in.csv").write_text(
        "id,name,surname,dob,phone\na,kim,kim,1990-01-02,010\nb,kim,kim\n", encoding="utf-8")
    monkeypatch.setenv("LINKAGE_ALLOW_SHORT_ROWS", "1")
    done = _run(tmp_path, tmp_path / "in.csv")
    assert done.returncode == 0, done.stderr


# --- item 5g: ids that print the same -----------------------------------------------------------


def test_ids_that_print_the_same_are_one_id(tmp_path):
    # 1 and "1" are two values to pandas and one to anyone reading the output.
    frame = GOOD.assign(id=pd.Series([1, "1", "c", "d"], dtype=object))
    frame.to_pickle(tmp_path / "in.pkl")  # an object column survives only in Python
    rules = _rules(tmp_path)
    before = snapshot(tmp_path)
    from linkage import dedupe
    from linkage.errors import InputError

    with pytest.raises(InputError, match=r"`id`.*'1'.*unique"):
        dedupe(frame, str(rules))
    assert_unchanged_outside(before, snapshot(tmp_path), "out")


@pytest.mark.parametrize(
    ("left_ids", "kinds"),
    [([1.0, 2.0, 3.0, 4.0], "floating"), ([1, 2, 3, 4], "integer")],
    ids=["float-and-text", "integer-and-text"],
)
def test_ids_of_two_types_across_a_link_are_an_error(tmp_path, left_ids, kinds):
    # Left ids from a Parquet number column, right ids text from a CSV: both go to one column
    # of clusters.parquet, where 1.0 beside "1" could not be written (a traceback, exit 1).
    GOOD.assign(id=left_ids).to_parquet(tmp_path / "left.parquet")
    GOOD.assign(id=["1", "2", "3", "4"]).to_csv(tmp_path / "right.csv", index=False)
    done = _run(tmp_path, tmp_path / "left.parquet", tmp_path / "right.csv", verb="link")
    _rejected(done, "left.parquet", "right.csv", "`id`", kinds, "one type", "as text")


def test_ids_of_two_types_in_one_table_are_an_error(tmp_path):
    from linkage import dedupe
    from linkage.errors import InputError

    with pytest.raises(InputError, match=r"`id` must hold values of one type.*mixed"):
        dedupe(GOOD.assign(id=pd.Series([1, "2", "c", "d"], dtype=object)),
               str(_rules(tmp_path)))


# --- item 8 (part): nested Parquet columns ------------------------------------------------------


@pytest.mark.parametrize(
    ("values", "kind"),
    [([["kim"], ["kim"], ["lee"], ["park"]], "list"),
     ([{"a": "kim"}, {"a": "kim"}, {"a": "lee"}, {"a": "park"}], "struct")],
    ids=["list", "struct"],
)
@pytest.mark.parametrize("column", ["name", "id"])
def test_a_nested_parquet_column_names_its_type(tmp_path, values, kind, column):
    GOOD.assign(**{column: values}).to_parquet(tmp_path / "in.parquet")
    done = _run(tmp_path, tmp_path / "in.parquet")
    _rejected(done, "in.parquet", f"`{column}`", kind, "one value per record", "Flatten it")


# --- the classes around them: encodings, separators, quoting, types, sizes ----------------------

HEADER = "id,name,surname,dob,phone\n"
ROWS = ("a,kim minsu,kim,1990-01-02,010-1234-5678\nb,kim minsu,kim,1990-01-02,010-1234-5678\n"
        "c,lee jiwon,lee,1991-02-03,010-9999-0000\n")


def _same_cluster(folder: Path, *ids: str) -> bool:
    clusters = pd.read_parquet(folder / "out" / "clusters.parquet")
    return clusters.set_index("id").loc[list(ids), "cluster_id"].nunique() == 1


@pytest.mark.parametrize(
    ("data", "extra"),
    [
        ((HEADER + ROWS).encode("utf-8-sig"), []),
        ((HEADER + ROWS).replace("kim minsu", "김민수").encode("cp949"), ["--encoding", "cp949"]),
        ((HEADER + ROWS).replace("kim minsu", "jöns").encode("latin-1"),
         ["--encoding", "latin-1"]),
        ((HEADER + ROWS).replace(",", ";").encode(), []),
        ((HEADER + ROWS).replace(",", "\t").encode(), []),
        ((HEADER + ROWS).replace(",", "|").encode(), []),
        ((HEADER + ROWS).replace(",", "|").encode(), ["--sep", "|"]),
        ((HEADER + ROWS).replace("\n", "\r\n").encode(), []),
        ((HEADER + ROWS).replace("kim minsu", '"kim\nminsu"').encode(), []),
        ((HEADER + ROWS).replace("kim minsu", '"kim, ""minsu"""').encode(), []),
        ((HEADER + "\n" + ROWS + "\n\n").encode(), []),
        ((HEADER + ROWS).rstrip("\n").encode(), []),
        ((HEADER.replace(",", ", ") + ROWS.replace(",", ", ")).encode(), []),
    ],
    ids=["utf8-bom", "cp949", "latin-1", "semicolon", "tab", "pipe", "pipe-given", "crlf",
         "quoted-newline", "quoted-separator-and-quotes", "blank-lines", "no-final-newline",
         "space-after-separator"],
)
def test_csv_dialects_that_read(tmp_path, data, extra):
    (tmp_path / "in.csv").write_bytes(data)
    done = _run(tmp_path, tmp_path / "in.csv", *extra)
    assert done.returncode == 0, done.stderr
    assert _summary(tmp_path)["stages"]["read"]["records"] == 3
    assert _same_cluster(tmp_path, "a", "b") and not _same_cluster(tmp_path, "a", "c")


@pytest.mark.parametrize(
    ("data", "extra", "fragments"),
    [
        ((HEADER + ROWS).replace("kim minsu", "jöns").encode("latin-1"), [],
         ["line 2", "not valid utf-8", "--encoding"]),
        ((HEADER + ROWS).replace("kim minsu", "김민수").encode("cp949"), [],
         ["line 2", "--encoding cp949"]),
        ((HEADER + ROWS).encode("utf-16"), [], ["line 1", "--encoding"]),
        ((HEADER + ROWS).replace(",", ";").encode(), ["--sep", ","], ["column `name`",
                                                                       "is not in the table"]),
        ((HEADER + ROWS).replace("kim minsu", '"kim minsu').encode(), [], ["in.csv", "line 2"]),
        (b"", [], ["in.csv", "empty"]),
        (HEADER.encode(), [], ["in.csv", "no records"]),
        (b"\n\n\n", [], ["in.csv", "empty"]),
    ],
    ids=["latin-1-as-utf8", "cp949-as-utf8", "utf-16-as-utf8", "wrong-sep", "unbalanced-quote",
         "empty-file", "header-only", "blank-lines-only"],
)
def test_csv_that_cannot_be_read(tmp_path, data, extra, fragments):
    (tmp_path / "in.csv").write_bytes(data)
    _rejected(_run(tmp_path, tmp_path / "in.csv", *extra), *fragments)


def test_one_record(tmp_path):
    (tmp_path / "in.csv").write_text(HEADER + ROWS.splitlines()[0] + "\n", encoding="utf-8")
    done = _run(tmp_path, tmp_path / "in.csv")
    assert done.returncode == 0, done.stderr
    assert _summary(tmp_path)["actions"] == {"keep": 1, "duplicate": 0, "preserved": 0,
                                             "review": 0}


def test_a_one_megabyte_cell(tmp_path):
    big = "x" * (1 << 20)
    (tmp_path / "in.csv").write_text(HEADER + ROWS + f"d,{big},kim,1990-01-02,010\n",
                                     encoding="utf-8")
    done = _run(tmp_path, tmp_path / "in.csv")
    assert done.returncode == 0, done.stderr
    assert _same_cluster(tmp_path, "a", "b") and not _same_cluster(tmp_path, "a", "d")


@pytest.mark.parametrize(
    "column",
    [
        pd.Series(pd.to_datetime(["1990-01-02", "1990-01-02", "1991-02-03", "1985-05-06"]),
                  name="dob"),
        pd.Series([19900102, 19900102, 19910203, 19850506], name="dob"),
        pd.Series([19900102.0, 19900102.0, None, 19850506.0], name="dob"),
        pd.Series([True, True, False, None], dtype="boolean", name="surname"),
        pd.Series([1012345678, 1012345678, 1099990000, 212345], name="phone"),
        pd.Series(["kim", "kim", None, None], dtype="category", name="surname"),
    ],
    ids=["datetime", "integer-dates", "float-dates", "bool", "integer-phone", "category"],
)
def test_parquet_types_that_read(tmp_path, column):
    GOOD.assign(**{column.name: column}).to_parquet(tmp_path / "in.parquet")
    done = _run(tmp_path, tmp_path / "in.parquet")
    assert done.returncode == 0, done.stderr
    assert _summary(tmp_path)["warnings"] == []
    assert _same_cluster(tmp_path, "a", "b")


@pytest.mark.parametrize(
    ("column", "fragments"),
    [
        (pd.Series([None] * 4, dtype="string", name="name"), ["`name`", "empty in every"]),
        (pd.Series(["", " ", None, "\t"], name="surname"), ["`surname`", "empty in every"]),
    ],
    ids=["all-null", "all-blank"],
)
def test_parquet_columns_that_cannot_be_used(tmp_path, column, fragments):
    GOOD.assign(**{column.name: column}).to_parquet(tmp_path / "in.parquet")
    _rejected(_run(tmp_path, tmp_path / "in.parquet"), "in.parquet", *fragments)


def test_a_damaged_parquet_file(tmp_path):
    GOOD.to_parquet(tmp_path / "in.parquet")
    data = (tmp_path / "in.parquet").read_bytes()
    (tmp_path / "in.parquet").write_bytes(data[: len(data) // 2])
    _rejected(_run(tmp_path, tmp_path / "in.parquet"), "in.parquet", "cannot read as Parquet",
              "Write the file again")


def test_a_warning_quotes_a_long_value_cut_short(tmp_path):
    table = GOOD.assign(dob=["1990-01-02", "x" * (1 << 20), "1991-02-03", "1985-05-06"])
    table.to_csv(tmp_path / "in.csv", index=False)
    done = _run(tmp_path, tmp_path / "in.csv")
    assert done.returncode == 0, done.stderr
    (warning,) = [w for w in _summary(tmp_path)["warnings"] if "`dob`" in w]
    assert len(warning) < 1000 and "xxx…" in warning


def test_the_warning_is_the_same_in_chunks(tmp_path):
    table = GOOD.assign(dob=["not a date", "garbage", "31/31/1990", "not a date"])
    table.to_csv(tmp_path / "in.csv", index=False)
    assert _run(tmp_path, tmp_path / "in.csv").returncode == 0
    whole = _summary(tmp_path)
    assert _run(tmp_path, tmp_path / "in.csv", "--chunk-rows", "1").returncode == 0
    chunked = _summary(tmp_path)
    assert chunked["warnings"] == whole["warnings"]
    assert chunked["stages"]["normalize"] == whole["stages"]["normalize"]
    assert whole["stages"]["normalize"]["dob"]["emptied"] == 4


@pytest.mark.parametrize("quoted", [False, True], ids=["plain", "quoted"])
def test_lines_of_spaces_are_skipped_as_pandas_skips_them(tmp_path, quoted):
    rows = ROWS.replace("kim minsu", '"kim minsu"') if quoted else ROWS
    (tmp_path / "in.csv").write_text(HEADER + "   \n" + rows + " \t \r\n", encoding="utf-8")
    done = _run(tmp_path, tmp_path / "in.csv")
    assert done.returncode == 0, done.stderr
    assert _summary(tmp_path)["stages"]["read"]["records"] == 3


def test_a_column_of_mixed_types_from_python(tmp_path):
    # An object column as a notebook builds it: numbers, text, a float and a gap. Each value
    # is read as its text, 2.0 as "2".
    from linkage import dedupe

    frame = GOOD.assign(surname=pd.Series([7, 7, "lee", None], dtype=object),
                        phone=pd.Series([1012345678.0, "01012345678", None, 2.5], dtype=object))
    run = dedupe(frame, str(_rules(tmp_path)))
    clusters = run.clusters.set_index("id")["cluster_id"]
    assert clusters["a"] == clusters["b"]
    assert run.summary_data["stages"]["normalize"]["phone"]["emptied"] == 0


def test_a_short_row_past_the_first_block_is_found(tmp_path, monkeypatch):
    # The row check reads a block at a time; a row cut across two blocks is still one row.
    monkeypatch.setattr("linkage.io._BLOCK_BYTES", 64)
    from linkage.errors import InputError
    from linkage.io import read

    (tmp_path / "in.csv").write_text(HEADER + ROWS * 20 + "z,kim\n" + ROWS, encoding="utf-8")
    with pytest.raises(InputError, match="line 62 has 2 fields"):
        read(tmp_path / "in.csv")
    (tmp_path / "in.csv").write_text(HEADER + ROWS * 20 + "z,kim,kim,1990-01-02,010",
                                     encoding="utf-8")
    assert len(read(tmp_path / "in.csv")) == 61
