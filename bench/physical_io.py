"""The physical reference of a run: the time to read its input and write its output tables
alone, with the same readers and writers linkage uses (`linkage.io.read`, `write_parquet`),
and nothing in between. A stage table beside it shows how close each stage is to the I/O any
tool must do.

    python bench/physical_io.py --data INPUT.parquet --outputs RUN_DIR --out SCRATCH_DIR
    python bench/physical_io.py --data TABLE.parquet --also RULES.yaml --out SCRATCH_DIR
    python bench/physical_io.py --data TEXTS.parquet --vectors 384 --out SCRATCH_DIR

The output tables of RUN_DIR (a finished run's folder) are loaded first, untimed; then the input
is read and those tables written to SCRATCH_DIR, timed. `--also`: other output files (a
suggested rules file), loaded untimed and written as they are. `--vectors DIM`: the output is
one float32 vector of DIM per input record (what an embedding model gives), written as a
Parquet column of fixed-size lists. Prints one JSON line: read_s, write_s.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from linkage.io import read, write_parquet

TABLES = ("clusters", "deduplicated", "links", "pairs", "golden", "review", "guards")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--outputs", type=Path, default=None)
    parser.add_argument("--also", type=Path, nargs="*", default=[])
    parser.add_argument("--vectors", type=int, default=None, metavar="DIM")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    tables = {} if args.outputs is None else {
        name: pd.read_parquet(args.outputs / f"{name}.parquet") for name in TABLES
        if (args.outputs / f"{name}.parquet").exists()}
    files = {path.name: path.read_bytes() for path in args.also}
    args.out.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    frame = read(args.data)
    read_s = time.perf_counter() - start
    vectors = None
    if args.vectors is not None:  # made untimed: the model's work, not I/O
        vectors = np.random.default_rng(0).standard_normal(
            (len(frame), args.vectors)).astype(np.float32)
    start = time.perf_counter()
    for name, table in tables.items():
        write_parquet(table, args.out / f"{name}.parquet")
    for name, data in files.items():
        (args.out / name).write_bytes(data)
    if vectors is not None:
        column = pa.FixedSizeListArray.from_arrays(pa.array(vectors.reshape(-1)),
                                                   args.vectors)
        pq.write_table(pa.table({"vector": column}), args.out / "vectors.parquet")
    write_s = time.perf_counter() - start
    print(json.dumps({"read_s": round(read_s, 3), "write_s": round(write_s, 3),
                      "records": len(frame), "tables": sorted(tables) + sorted(files)
                      + (["vectors"] if vectors is not None else [])}))


if __name__ == "__main__":
    main()
