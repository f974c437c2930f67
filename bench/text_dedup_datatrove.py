"""datatrove's MinHash deduplication (its four stages, LocalPipelineExecutor) on a folder of
Parquet files with `doc_id` and `text`. Run by bench/text_dedup_bench.py with the Python of
the separate environment that holds datatrove (`make bench-text`); never imports linkage.

    python text_dedup_datatrove.py PARTS_DIR WORK_DIR --n-grams 3 --buckets 14 --rows 9 \
        --tasks 2 --workers 2

Writes WORK_DIR/output (the documents kept) and WORK_DIR/removed (the documents removed), both
with datatrove's `minhash_cluster_id` metadata (-1: in no cluster).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from datatrove.executor import LocalPipelineExecutor
from datatrove.pipeline.dedup import (
    MinhashDedupBuckets,
    MinhashDedupCluster,
    MinhashDedupFilter,
    MinhashDedupSignature,
)
from datatrove.pipeline.dedup.minhash import MinhashConfig
from datatrove.pipeline.readers import ParquetReader
from datatrove.pipeline.writers import ParquetWriter
from datatrove.utils.hashing import HashConfig


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("parts", type=Path)
    p.add_argument("work", type=Path)
    p.add_argument("--n-grams", type=int, default=3)
    p.add_argument("--buckets", type=int, default=14)
    p.add_argument("--rows", type=int, default=9)
    p.add_argument("--tasks", type=int, default=2)
    p.add_argument("--workers", type=int, default=2)
    a = p.parse_args()
    config = MinhashConfig(n_grams=a.n_grams, num_buckets=a.buckets, hashes_per_bucket=a.rows,
                           hash_config=HashConfig(precision=64))
    w = a.work

    def reader():
        return ParquetReader(str(a.parts), glob_pattern="*.parquet", text_key="text",
                             id_key="doc_id")

    stages = [
        LocalPipelineExecutor(
            pipeline=[reader(), MinhashDedupSignature(output_folder=str(w / "signatures"),
                                                      config=config, language="en")],
            tasks=a.tasks, workers=a.workers, logging_dir=str(w / "logs/1"),
            skip_completed=False),
        LocalPipelineExecutor(
            pipeline=[MinhashDedupBuckets(input_folder=str(w / "signatures"),
                                          output_folder=str(w / "buckets"), config=config)],
            tasks=config.num_buckets, workers=a.workers, logging_dir=str(w / "logs/2"),
            skip_completed=False),
        LocalPipelineExecutor(
            pipeline=[MinhashDedupCluster(input_folder=str(w / "buckets"),
                                          output_folder=str(w / "remove_ids"), config=config,
                                          save_cluster_id=True)],
            tasks=1, logging_dir=str(w / "logs/3"), skip_completed=False),
        LocalPipelineExecutor(
            pipeline=[reader(),
                      MinhashDedupFilter(input_folder=str(w / "remove_ids"),
                                         exclusion_writer=ParquetWriter(str(w / "removed")),
                                         load_cluster_ids=True),
                      ParquetWriter(str(w / "output"))],
            tasks=a.tasks, workers=a.workers, logging_dir=str(w / "logs/4"),
            skip_completed=False),
    ]
    times = []
    for executor in stages:
        t0 = time.perf_counter()
        executor.run()
        times.append(time.perf_counter() - t0)
    (w / "stage_seconds.json").write_text(json.dumps(times))


if __name__ == "__main__":
    main()
