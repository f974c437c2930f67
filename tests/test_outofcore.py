"""Out-of-core runs: working a chunk at a time writes the same files, in less memory.

`LINKAGE_CHUNK_ROWS` (or `chunk_rows=`) makes the local engine encode and normalize records,
and compare, score and write pairs, that many at a time, streaming pairs, clusters and
deduplicated records to Parquet; `LINKAGE_ROW_GROUP_ROWS` sets the row groups of every written
table. Every test here runs the real CLI or `run_local` on real data.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest

import linkage as lk
from linkage.errors import InputError
from linkage.io import ParquetFrame, ParquetSink, arrow_data, read, write_parquet
from linkage.normalize._encoded import encode_chunks, encode_series
from linkage.pipeline import run_local
from linkage.run.state import Table
from linkage.synth import persons
from tests.conftest import ROOT, run_cli


def _cli(*args, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """The CLI run in a process of its own (`run_cli`), with `env`'s chunk settings only."""
    extra = {k: v for k, v in (env or {}).items() if v is not None}
    base = {k: v for k, v in os.environ.items()
            if k not in ("LINKAGE_CHUNK_ROWS", "LINKAGE_ROW_GROUP_ROWS")}
    return run_cli(*args, "--no-progress", env={**base, **extra})


def _files(folder) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.name != "timings.json"}


def _both_ways(tmp_path, args, chunk: int, rows_per_group: str | None = None):
    """The same run in memory and in chunks of `chunk`; both output folders."""
    outs = []
    for name, chunk_env in (("memory", None), ("chunked", str(chunk))):
        out = tmp_path / name
        done = _cli(*args, "--out", out, env={"LINKAGE_CHUNK_ROWS": chunk_env,
                                              "LINKAGE_ROW_GROUP_ROWS": rows_per_group})
        assert done.returncode == 0, done.stderr
        outs.append(out)
    return outs


@pytest.mark.parametrize("case", ["febrl3", "customers", "febrl4_link"])
def test_chunked_run_writes_the_same_bytes_as_in_memory(tmp_path, datasets, case):
    febrl = datasets / "febrl"
    args = {
        "febrl3": ["dedupe", febrl / "dataset3.csv", "--rules", ROOT / "rules" / "febrl.yaml"],
        "customers": ["dedupe", ROOT / "sample_data" / "customers.csv", "--rules",
                      ROOT / "rules" / "customers.yaml"],
        "febrl4_link": ["link", febrl / "dataset4a.csv", febrl / "dataset4b.csv", "--rules",
                        ROOT / "rules" / "febrl.yaml"],
    }[case]
    memory, chunked = _both_ways(tmp_path, args, chunk=257)
    assert _files(memory) == _files(chunked)
    summary = json.loads((chunked / "summary.json").read_text())
    assert summary["stages"]["block"]["candidate_pairs"] > 257 * 4  # several pair batches
    assert summary["stages"]["read"]["records"] > 257 * 4  # several record chunks


def test_a_chunk_with_no_linked_record_writes_the_bytes_of_a_run_in_memory(tmp_path, datasets):
    """A run no guard speaks in builds each part of clusters.parquet as Arrow columns; a part
    whose records are all alone (the first 257 here) has only the lone reason to give."""
    febrl = pd.read_csv(datasets / "febrl" / "dataset3.csv", skipinitialspace=True, dtype=str)
    duplicated = febrl["rec_id"].str.contains("dup")
    originals = febrl["rec_id"].str.replace(r"-(org|dup-\d+)$", "", regex=True)
    alone = ~originals.isin(originals[duplicated])
    table = pd.concat([febrl[alone].head(600), febrl[~alone]])  # the singles first
    path = tmp_path / "singles_first.csv"
    table.to_csv(path, index=False)
    memory, chunked = _both_ways(
        tmp_path, ["dedupe", path, "--rules", ROOT / "rules" / "febrl.yaml"], chunk=257)
    assert _files(memory) == _files(chunked)
    clusters = pd.read_parquet(chunked / "clusters.parquet")
    assert (clusters["cluster_size"].head(257) == 1).all()
    assert (clusters["cluster_size"] > 1).sum() > 1000
    assert clusters["reason"].head(257).nunique() == 1


def test_a_few_rows_are_taken_as_iloc_takes_them():
    """`few_rows` (one-row slices put together, for the report and the outputs' typed row)
    gives `iloc`'s rows, types and index for every kind of column."""
    from linkage.io import few_rows

    frame = pd.DataFrame({
        "text": pd.array(["x", None, "z", "w"], dtype="str"), "int": [1, 2, 3, 4],
        "category": pd.Categorical(["p", "q", "p", "r"]), "float": [1.0, np.nan, 3.0, 4.0],
        "when": pd.to_datetime(["2020-01-01", None, "2021-01-01", "2022-01-01"], utc=True),
        "nullable": pd.array([1, None, 3, 4], dtype="Int64"), "mixed": [1.5, "a", 3, None],
        "flag": [True, False, True, True]}, index=[10, 11, 12, 13])
    for rows in ([], [0], [3, 1], [1, 1, 2], np.array([2, 0])):
        pd.testing.assert_frame_equal(few_rows(frame, rows), frame.iloc[list(rows)])


@pytest.fixture(scope="module")
def person_table(tmp_path_factory):
    """20,000 generated persons (truth left out) as Parquet."""
    records, _ = persons(20_000, seed=7)
    path = tmp_path_factory.mktemp("persons") / "persons.parquet"
    records.to_parquet(path, index=False)
    return path


def test_pairs_are_written_in_row_groups_and_match_in_memory(tmp_path, person_table):
    rules = ROOT / "bench" / "persons_fs.yaml"  # Fellegi-Sunter: EM from batched patterns
    memory, chunked = _both_ways(tmp_path, ["dedupe", person_table, "--rules", rules],
                                 chunk=3_000, rows_per_group="2000")
    assert _files(memory) == _files(chunked)
    meta = pq.ParquetFile(chunked / "pairs.parquet").metadata
    sizes = [meta.row_group(i).num_rows for i in range(meta.num_row_groups)]
    assert len(sizes) >= 3 and all(s == 2000 for s in sizes[:-1]) and 0 < sizes[-1] <= 2000
    clusters = pq.ParquetFile(chunked / "clusters.parquet").metadata
    assert clusters.num_row_groups == 10  # 20,000 records in groups of 2,000


def test_python_result_of_a_chunked_run_reads_like_a_frame(person_table):
    frame = pd.read_parquet(person_table)
    rules = lk.Rules.from_yaml(ROOT / "bench" / "persons.yaml")
    table = Table(frame, "persons", "sha256:test")
    memory = run_local("dedupe", [table], rules, progress=False)
    chunked = run_local("dedupe", [table], rules, progress=False, chunk_rows=4_000)
    assert isinstance(chunked.pairs, ParquetFrame) and isinstance(memory.pairs, pd.DataFrame)
    assert len(chunked.pairs) == len(memory.pairs) and list(chunked.pairs.columns) == list(
        memory.pairs.columns)
    np.testing.assert_array_equal(chunked.pairs["match_weight"].to_numpy(),
                                  memory.pairs["match_weight"].to_numpy())
    assert chunked.pairs.to_pandas().equals(memory.pairs)
    assert chunked.clusters["cluster_id"].equals(memory.clusters["cluster_id"])
    assert chunked.summary() == memory.summary()


def _peaks_in_memory_and_chunked(table, rules, folder, chunk_rows: str,
                                 row_group_rows: str) -> dict[str, float]:
    """Dedupe `table` with `rules` in memory (into folder/memory) and in chunks of
    `chunk_rows` (folder/chunked), each in its own process under bench/_measure.py; the peak
    resident memory of each run in MiB. The two run side by side: each peak is its own
    process's, which the other does not change, and on two cores the pair takes the time of
    one."""
    runs = {name: subprocess.Popen(
        [sys.executable, str(ROOT / "bench" / "_measure.py"), sys.executable, "-m",
         "linkage", "dedupe", str(table), "--rules", str(rules), "--out", str(folder / name),
         "--no-progress"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
        env={**os.environ, "LINKAGE_ROW_GROUP_ROWS": row_group_rows,
             **({"LINKAGE_CHUNK_ROWS": chunk} if chunk else {})})
        for name, chunk in (("memory", None), ("chunked", chunk_rows))}
    outputs = {name: process.communicate(timeout=600) for name, process in runs.items()}
    peaks = {}
    for name, (stdout, stderr) in outputs.items():
        assert runs[name].returncode == 0, stderr
        peaks[name] = json.loads(stdout.strip().splitlines()[-1])["peak_rss_mib"]
    return peaks


def test_a_chunked_run_holds_less_in_memory(tmp_path, person_table):
    # Blocking on the birth year alone: ~2.7 million candidate pairs for 20,000 records, so
    # pairs, not records, fill the memory. Peak RSS of each whole run, in its own process.
    rules = tmp_path / "rules.yaml"
    rules.write_text(
        "id_column: rec_id\n"
        "blocking: [{name: year, keys: [['year(dob)']]}]\n"
        "comparisons:\n"
        "  - {type: jaro_winkler, column: first_name}\n"
        "  - {type: jaro_winkler, column: surname}\n"
        "  - {type: exact, column: email}\n"
        "scoring: {type: rule_sum, threshold: 4.0}\n"
        "max_pairs: 50000000\n", encoding="utf-8")
    peaks = _peaks_in_memory_and_chunked(person_table, rules, tmp_path, "50000", "100000")
    pairs = json.loads((tmp_path / "chunked" / "summary.json").read_text())
    assert pairs["stages"]["block"]["candidate_pairs"] > 2_000_000
    assert (tmp_path / "memory" / "pairs.parquet").read_bytes() == (
        tmp_path / "chunked" / "pairs.parquet").read_bytes()
    # Measured: about 0.55 of the in-memory peak; a generous bound so only a regression fails.
    assert peaks["chunked"] < 0.8 * peaks["memory"], peaks


def test_sink_regroups_batches_into_the_bytes_of_one_write(tmp_path, monkeypatch):
    monkeypatch.setenv("LINKAGE_ROW_GROUP_ROWS", "1000")
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({
        "id": pd.Series([f"r{i}" for i in range(5_500)], dtype="str"),
        "weight": rng.normal(size=5_500),  # many distinct floats: dictionary encoding gives up
        "level": rng.integers(-1, 3, 5_500).astype(np.int8),
        "note": pd.Series([None] * 3_000 + ["x"] * 2_500, dtype=object),  # empty at first
    })
    write_parquet(frame, tmp_path / "whole.parquet")
    sink = ParquetSink(tmp_path / "parts.parquet", frame.iloc[:0], like=frame.iloc[-1:])
    for start in range(0, len(frame), 777):
        sink.write(frame.iloc[start:start + 777].reset_index(drop=True))
    streamed = sink.close()
    assert (tmp_path / "parts.parquet").read_bytes() == (tmp_path / "whole.parquet").read_bytes()
    assert streamed.num_row_groups == 6 and len(streamed) == 5_500


def test_encoding_in_chunks_keeps_every_value(person_table):
    column = pd.read_parquet(person_table)["email"]
    whole = encode_series(column)
    pieces = encode_chunks(column.iloc[s:s + 3_001] for s in range(0, len(column), 3_001))
    assert whole.values().tolist() == pieces.values().tolist()
    assert sorted(whole.uniques) == sorted(pieces.uniques)


def test_a_bad_chunk_size_is_named(tmp_path, datasets):
    done = _cli("dedupe", datasets / "febrl" / "dataset1.csv", "--rules",
                ROOT / "rules" / "febrl.yaml", "--out", tmp_path / "out",
                env={"LINKAGE_CHUNK_ROWS": "lots"})
    assert done.returncode == 2
    assert "LINKAGE_CHUNK_ROWS='lots'" in done.stderr and "whole number" in done.stderr
    assert not (tmp_path / "out").exists()


def test_cli_chunk_rows_gives_the_same_files(tmp_path):
    outs = []
    for extra in ([], ["--chunk-rows", "300"]):
        out = tmp_path / f"out{len(outs)}"
        done = run_cli("dedupe", ROOT / "sample_data" / "customers.csv", "--rules",
                       ROOT / "rules" / "customers.yaml", "--out", out, *extra)
        assert done.returncode == 0, done.stderr
        outs.append(out)
    for name in ("clusters.parquet", "pairs.parquet", "deduplicated.parquet", "summary.json"):
        assert (outs[0] / name).read_bytes() == (outs[1] / name).read_bytes(), name
    bad = run_cli("dedupe", ROOT / "sample_data" / "customers.csv", "--rules",
                  ROOT / "rules" / "customers.yaml", "--out", tmp_path / "bad", "--chunk-rows", "0")
    assert bad.returncode == 2 and "--chunk-rows" in bad.stderr


def _wide(records: pd.DataFrame, columns: int, width: int) -> pd.DataFrame:
    """The persons with `columns` more text columns the rules never read (notes, say), each
    `width` characters, missing in the first rows (their type shows only later), and a number."""
    rng = np.random.default_rng(11)
    wide = records.copy()
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz 가나다라"))
    for k in range(columns):
        # a row of `width - 1` letters read as one string (drawn at once: a Python loop over
        # the rows took 18 s for 20 columns of 20,000)
        rows = rng.choice(letters, size=(len(wide), width - 1)).view(f"<U{width - 1}")
        text = ["n" + row for row in rows.ravel().tolist()]
        wide[f"note_{k}"] = pd.Series([None] * (50 + k) + text[50 + k:], dtype="str")
    wide["score"] = rng.integers(0, 1000, len(wide)).astype(np.int64)
    return wide


@pytest.mark.parametrize("form", ["csv", "parquet"])
def test_a_run_in_chunks_reads_only_the_rules_columns_and_writes_whole_rows(tmp_path, form):
    # Rules without an id column (row numbers are the ids) and a wide input: the chunked run
    # reads 7 of 21 columns, and writes every column of the kept records by a second pass.
    records, _ = persons(6_000, seed=5)
    wide = _wide(records.drop(columns=["rec_id"]), columns=12, width=40)
    path = tmp_path / f"wide.{form}"
    if form == "csv":
        wide.to_csv(path, index=False)
    else:
        wide.to_parquet(path)  # with pandas' index metadata, as most Parquet files have
    rules = tmp_path / "rules.yaml"
    text = (ROOT / "bench" / "persons.yaml").read_text(encoding="utf-8")
    rules.write_text(text.replace("id_column: rec_id\n", ""), encoding="utf-8")
    memory, chunked = _both_ways(tmp_path, ["dedupe", path, "--rules", rules], chunk=1_000)
    assert _files(memory) == _files(chunked)
    kept = pd.read_parquet(chunked / "deduplicated.parquet")
    assert list(kept.columns) == ["row_id", *wide.columns]
    summary = json.loads((chunked / "summary.json").read_text())
    assert 0 < len(kept) < len(wide) and summary["actions"]["duplicate"] == len(wide) - len(kept)
    whole = read(path)  # the file read at once, as an in-memory run reads it
    original = whole.iloc[kept["row_id"].to_numpy()].reset_index(drop=True)
    kept = kept.drop(columns="row_id")
    assert list(kept.dtypes) == list(original.dtypes)
    # Missing as missing (None or NaN, as the pandas version reads them), values as values.
    assert kept.isna().equals(original.isna())
    assert kept.astype(str).where(kept.notna(), "").equals(
        original.astype(str).where(original.notna(), ""))


def test_guarded_review_rows_come_whole_from_the_second_pass(tmp_path):
    # Conflicting labels go to review with their input rows, a column the rules never read
    # included; chunked or not, the same files.
    texts = read(ROOT / "sample_data" / "labelled_text.csv")
    texts["annotator_note"] = [f"note {i}" if i % 3 else None for i in range(len(texts))]
    source = tmp_path / "labelled_text.csv"
    texts.to_csv(source, index=False)
    memory, chunked = _both_ways(tmp_path, ["dedupe", source, "--rules",
                                            ROOT / "rules" / "labelled_text.yaml"], chunk=100)
    assert _files(memory) == _files(chunked)
    review = pd.read_parquet(chunked / "review.parquet")
    assert len(review) > 0 and {"doc_id", "text", "label", "annotator_note"} <= set(
        review.columns)
    assert review["annotator_note"].notna().any()


def test_a_wide_input_in_chunks_holds_less_in_memory(tmp_path):
    # 20 text columns of 300 characters the rules never read: in memory they are read and
    # kept; in chunks only the rules' columns are, and the rest streams to the outputs a row
    # group at a time (128 MiB of rows by default; 2,000 rows here, as the table is small).
    records, _ = persons(20_000, seed=9)
    path = tmp_path / "wide.csv"
    _wide(records, columns=20, width=300).to_csv(path, index=False)
    peaks = _peaks_in_memory_and_chunked(path, ROOT / "bench" / "persons.yaml", tmp_path,
                                         "5000", "2000")
    assert _files(tmp_path / "memory") == _files(tmp_path / "chunked")
    assert peaks["chunked"] < 0.8 * peaks["memory"], peaks


def test_a_file_that_changes_during_the_run_is_named(tmp_path):
    from linkage.api import as_table
    from linkage.run.outputs import whole_rows as _rows_of

    path = tmp_path / "people.csv"
    records, _ = persons(300, seed=2)
    records.to_csv(path, index=False)
    table = as_table(path, None, "utf-8", ["rec_id", "first_name"])
    assert list(table.frame.columns) == ["rec_id", "first_name"]
    assert table.columns == list(records.columns)
    with open(path, "a", encoding="utf-8") as handle:
        handle.write("X1,Late,Row,2000-01-01,Leeds,LS1,late@example.com,0700\n")
    with pytest.raises(InputError, match="changed during the run"):
        list(_rows_of(table, len(table.frame), "rec_id")(100))


def test_text_is_factorized_as_pandas_does(person_table):
    # Arrow's hash table numbers values as pandas does (first appearance; None and NaN
    # missing), over one array or several chunks, so encoded columns keep their codes.
    import pyarrow as pa

    from linkage.normalize._encoded import factorize_text

    emails = pd.read_parquet(person_table)["email"].to_numpy(dtype=object)
    emails[::7], emails[3::11] = None, np.nan
    expected_codes, expected = pd.factorize(emails, use_na_sentinel=True)
    codes, uniques = factorize_text(emails)
    np.testing.assert_array_equal(codes, expected_codes)
    assert uniques.to_pylist() == expected.tolist()
    present = [v for v in emails if isinstance(v, str)]
    chunked = pa.chunked_array([pa.array(present[:5_000], pa.large_string()),
                                pa.array(present[5_000:], pa.large_string())])
    codes, uniques = factorize_text(chunked)
    expected_codes, expected = pd.factorize(np.array(present, dtype=object))
    np.testing.assert_array_equal(codes, expected_codes)
    assert uniques.to_pylist() == expected.tolist()


def test_arrow_data_is_the_arrow_array_pandas_holds(tmp_path):
    """`arrow_data` gives the Arrow strings behind a column read from Parquet without a copy
    (the fast paths of normalize, profiling, the id check and `one_chunk` use it, where they
    reached into pandas' private `_pa_array` before), pieces and all; and nothing for a column
    that pandas holds otherwise, which it would convert."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path / "t.parquet"
    table = pa.table({"name": ["ann", None, "bo", "cy"], "n": [1, 2, 3, 4]})
    pq.write_table(table, path, row_group_size=2)
    frame = read(path)
    data = arrow_data(frame["name"])
    assert isinstance(data, pa.ChunkedArray)
    assert data is frame["name"].array.__arrow_array__()  # the same object: no copy
    assert data.to_pylist() == ["ann", None, "bo", "cy"]
    assert arrow_data(frame["n"]) is None
    assert arrow_data(pd.Series(["ann", "bo"], dtype=object)) is None
    arrow = pd.Series(["ann", "bo"], dtype=pd.ArrowDtype(pa.large_string()))
    assert arrow_data(arrow).to_pylist() == ["ann", "bo"]


def test_the_outputs_per_record_integers_hold_every_row_count_and_stage():
    """`record_outputs` keeps each record's strongest link (a row, -1 for none), its degree and
    its cluster's size in the narrowest integer type `_narrow_int` gives for the record count:
    every value from -1 to the bound must fit, at each type's edge."""
    from linkage.run.outputs import _narrow_int

    for bound, kind in ((0, np.int8), (127, np.int8), (128, np.int16), (32_767, np.int16),
                        (32_768, np.int32), (2**31 - 1, np.int32), (2**31, np.int64)):
        assert _narrow_int(bound) is kind, bound
        held = np.array([-1, bound], dtype=kind)
        assert held.tolist() == [-1, bound]
