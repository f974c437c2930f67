"""The physical reference of a run: the time to read its input and write its output tables
alone, with the same readers and writers linkage uses (`linkage.io.read`, `write_parquet`),
and nothing in between. A stage table beside it shows how close each stage is to the I/O any
tool must do.

    python bench/physical_io.py --data INPUT.parquet --outputs RUN_DIR --out SCRATCH_DIR

The output tables of RUN_DIR (a finished run's folder) are loaded first, untimed; then the input
is read and those tables written to SCRATCH_DIR, timed. Prints one JSON line: read_s, write_s.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import pandas as pd

from linkage.io import read, write_parquet

TABLES = ("clusters", "deduplicated", "links", "pairs", "golden", "review", "guards")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--outputs", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    tables = {name: pd.read_parquet(args.outputs / f"{name}.parquet") for name in TABLES
              if (args.outputs / f"{name}.parquet").exists()}
    args.out.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    frame = read(args.data)
    read_s = time.perf_counter() - start
    start = time.perf_counter()
    for name, table in tables.items():
        write_parquet(table, args.out / f"{name}.parquet")
    write_s = time.perf_counter() - start
    print(json.dumps({"read_s": round(read_s, 3), "write_s": round(write_s, 3),
                      "records": len(frame), "tables": sorted(tables)}))


if __name__ == "__main__":
    main()
