"""Dedupe one person table with Splink (DuckDB backend) and write its clusters as Parquet.

Runs INSIDE bench/.venv-splink (bench/splink_bench.py starts it there, under _measure.py):

    bench/.venv-splink/bin/python bench/splink_run.py --data bench/data/persons_100000_42.parquet \
        --out-clusters bench/data/splink_100000/clusters.parquet --settings bench/splink_settings.py

Writes the clusters (rec_id, cluster_id), and timings.json (seconds per stage, Splink and DuckDB
versions, predicted pairs) beside them. Reads and writes Parquet through DuckDB, so this venv
needs no pyarrow.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import time
from pathlib import Path

import duckdb
import splink
from splink import DuckDBAPI, Linker


def load_settings(path: Path):
    spec = importlib.util.spec_from_file_location("splink_settings", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def sql_string(path: Path) -> str:
    return "'" + str(path).replace("'", "''") + "'"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, required=True, help="person table (Parquet)")
    parser.add_argument("--out-clusters", type=Path, required=True, help="clusters (Parquet)")
    parser.add_argument(
        "--memory-limit", default=None,
        help="DuckDB memory_limit (e.g. 18GB): above it DuckDB spills to disk beside the output "
             "instead of the process growing past the machine's memory")
    parser.add_argument(
        "--settings",
        type=Path,
        default=Path(__file__).resolve().parent / "splink_settings.py",
        help="Python file with settings(), train(linker) and the two thresholds",
    )
    args = parser.parse_args(argv)
    model = load_settings(args.settings)

    seconds: dict[str, float] = {}
    mark = time.perf_counter()

    def lap(stage: str) -> None:
        nonlocal mark
        now = time.perf_counter()
        seconds[stage] = round(now - mark, 2)
        mark = now

    con = duckdb.connect()
    if args.memory_limit:
        con.execute(f"SET memory_limit = {sql_string(args.memory_limit)}")
        spill = args.out_clusters.parent / "duckdb_spill"
        spill.mkdir(parents=True, exist_ok=True)
        con.execute(f"SET temp_directory = {sql_string(spill)}")
    con.execute(f"CREATE TABLE persons AS SELECT * FROM read_parquet({sql_string(args.data)})")
    linker = Linker("persons", model.settings(), DuckDBAPI(connection=con))
    lap("read")
    model.train(linker)
    lap("train")
    predictions = linker.inference.predict(threshold_match_probability=model.PREDICT_THRESHOLD)
    predicted_pairs = con.execute(f"SELECT count(*) FROM {predictions.physical_name}").fetchall()[0]
    lap("predict")
    clusters = linker.clustering.cluster_pairwise_predictions_at_threshold(
        predictions, model.CLUSTER_THRESHOLD
    )
    lap("cluster")
    args.out_clusters.parent.mkdir(parents=True, exist_ok=True)
    con.execute(
        f"COPY (SELECT {model.ID_COLUMN} AS rec_id, cluster_id FROM {clusters.physical_name}) "
        f"TO {sql_string(args.out_clusters)} (FORMAT parquet)"
    )
    lap("write")
    facts = {
        "splink": splink.__version__,
        "duckdb": duckdb.__version__,
        "predicted_pairs": predicted_pairs[0],
        "seconds": seconds,
    }
    args.out_clusters.with_name("timings.json").write_text(json.dumps(facts, indent=2) + "\n")
    print(json.dumps(facts))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
