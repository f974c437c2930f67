"""Hostile blocking: copies that fill a block beyond `max_block_size` (issue 13, item 2)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from tests.hostile.conftest import assert_unchanged_outside, run_cli, run_clis, snapshot

ROOT = Path(__file__).resolve().parents[2]
RULES = ROOT / "rules" / "customers.yaml"


def _copies(folder: Path, count: int) -> Path:
    """`count` copies of one sample customer, each with its own id."""
    one = pd.read_csv(ROOT / "sample_data" / "customers.csv", dtype=str).iloc[[0]]
    table = pd.concat([one] * count, ignore_index=True)
    table["customer_id"] = [f"X-{k:06d}" for k in range(count)]
    path = folder / "copies.csv"
    table.to_csv(path, index=False)
    return path


def test_ten_thousand_copies_of_one_record_are_9999_duplicates(workdir):
    data = _copies(workdir, 10_000)
    before = snapshot(workdir)
    # The run and the gate at once: the gate reads the table and writes nothing.
    done, gate = run_clis(("dedupe", data, "--rules", RULES, "--out", workdir / "out"),
                          ("check", data, "--rules", RULES, "--max-duplicate-rate", "0.01"))
    assert done.returncode == 0, done.stderr
    summary = json.loads((workdir / "out" / "summary.json").read_text(encoding="utf-8"))
    assert summary["actions"]["duplicate"] == 9_999
    assert summary["stages"]["copies"] == {"groups_with_copies": 1, "records_collapsed": 9_999}
    # One representative is left to block: no block is oversized, so nothing is skipped.
    assert summary["stages"]["block"]["skipped_blocks"] == []
    assert_unchanged_outside(before, snapshot(workdir), "out")

    assert gate.returncode == 1, gate.stdout + gate.stderr
    assert "FAIL: 9,999 of 10,000 records are duplicates" in gate.stdout
    assert_unchanged_outside(before, snapshot(workdir), "out")


def test_copies_and_near_duplicates_mixed(workdir):
    """Copies collapse to one representative; a near-duplicate of it is still found through
    blocking, and an oversized block is sub-blocked (not skipped), with a warning in
    summary.json and on stderr."""
    one = pd.read_csv(ROOT / "sample_data" / "customers.csv", dtype=str).iloc[[0, 1]]
    copies = pd.concat([one.iloc[[0]]] * 30, ignore_index=True)
    near = one.iloc[[0]].assign(name="정광슈", phone="010-7481-2847")  # typos, same person
    # Other people sharing the first one's postcode: a block of 31 + 8 records on the postcode
    # key, above `max_block_size`, of which only the representative stays after the copies go.
    others = pd.concat([one.iloc[[1]]] * 8, ignore_index=True).assign(
        postcode=one.iloc[0]["postcode"],
        name=["정민준", "정서연", "정도윤", "정하은", "정시우", "정지유", "정주원", "정예준"],
        phone=[f"010-1111-{k:04d}" for k in range(8)],
        email=[f"p{k}@example.com" for k in range(8)],
        birth_date=[f"{1940 + 7 * k}-{k + 1:02d}-{3 * k + 1:02d}" for k in range(8)])
    table = pd.concat([copies, near, others], ignore_index=True)
    table["customer_id"] = [f"M-{k:04d}" for k in range(len(table))]
    data = workdir / "mixed.csv"
    table.to_csv(data, index=False)
    rules = workdir / "rules.yaml"
    rules.write_text(RULES.read_text(encoding="utf-8") + "max_block_size: 8\n",
                     encoding="utf-8")
    before = snapshot(workdir)
    done = run_cli("dedupe", data, "--rules", rules, "--out", workdir / "out")
    assert done.returncode == 0, done.stderr
    summary = json.loads((workdir / "out" / "summary.json").read_text(encoding="utf-8"))
    clusters = pd.read_parquet(workdir / "out" / "clusters.parquet")
    first = clusters.set_index("customer_id")["cluster_id"]
    assert first["M-0030"] == first["M-0000"] == first["M-0029"]  # the near-duplicate too
    assert summary["actions"]["duplicate"] == 30
    assert summary["stages"]["copies"] == {"groups_with_copies": 1, "records_collapsed": 29}
    # 1 representative + 1 near-duplicate + 8 others on one postcode: a block of 10 > 8.
    skipped = summary["stages"]["block"]["skipped_blocks"]
    assert [s["size"] for s in skipped] == [10]
    assert skipped[0]["how"].startswith("sorted neighbourhood on ")
    warning = next(w for w in summary["warnings"] if "sub-blocked" in w)
    for part in ("`place`", "[postcode, first(name, 1)]", "10 records", "`max_block_size`"):
        assert part in warning
    assert warning in done.stdout + done.stderr  # printed, not only written
    assert_unchanged_outside(before, snapshot(workdir), "out")

    # The same bytes again, and in chunks (out of core) as in memory.
    cases = (("again", []), ("chunked", ["--chunk-rows", "7"]))
    runs = run_clis(*[("dedupe", data, "--rules", rules, "--out", workdir / again, *more)
                      for again, more in cases])
    for (again, _), done in zip(cases, runs, strict=True):
        assert done.returncode == 0, done.stderr
        for name in ("clusters.parquet", "pairs.parquet", "deduplicated.parquet"):
            assert (workdir / "out" / name).read_bytes() == (workdir / again / name).read_bytes()
