"""`--resume` on Spark: finished stages kept as Parquet folders and read back by a rerun.

The candidate pairs (l, r, mask, with the blocking and exact stages' counts beside them in a
JSON file, and the semantic stage's centroid distances) and the compared pairs (levels,
similarities, term frequencies) are written to the checkpoint folder as each stage finishes,
under the fingerprint of the rules and inputs (`run_fingerprint`, the local engine's: the
threshold is not in it). A rerun with the same fingerprint reads them instead of blocking and
comparing again, and writes the same outputs; another fingerprint's files are replaced. The
JSON is written last and removed first, so a stage cut off half-way is never read. The
folder must be one every executor can write (shared storage on a cluster).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np

from linkage.blocking import SkippedBlock


class SparkCheckpoint:
    """The checkpoint folder of one run (`folder` None: nothing is kept)."""

    def __init__(self, folder, fingerprint: str):
        self.folder = None if folder is None else Path(folder)
        self.fingerprint = fingerprint

    def _paths(self, stage: str) -> tuple[Path, Path]:
        return self.folder / f"spark-{stage}.json", self.folder / f"spark-{stage}.parquet"

    def _load(self, spark, stage: str):
        if self.folder is None:
            return None
        meta_path, data = self._paths(stage)
        if not meta_path.exists() or not (data / "_SUCCESS").exists():
            return None
        saved = json.loads(meta_path.read_text(encoding="utf-8"))
        if saved["fingerprint"] != self.fingerprint:
            return None  # another run's: computed again and replaced
        return spark.read.parquet(str(data)), saved["meta"]

    def _save(self, stage: str, frame, meta: dict):
        """`frame` written, then its JSON; the frame read back from the files (which also
        cuts its plan there)."""
        if self.folder is None:
            return frame
        self.folder.mkdir(parents=True, exist_ok=True)
        meta_path, data = self._paths(stage)
        meta_path.unlink(missing_ok=True)
        frame.write.mode("overwrite").parquet(str(data))
        partial = meta_path.with_name(f".{meta_path.name}.partial")
        partial.write_text(json.dumps({"fingerprint": self.fingerprint, "meta": meta},
                                      default=str), encoding="utf-8")
        os.replace(partial, meta_path)
        return frame.sparkSession.read.parquet(str(data))

    def blocked(self, spark, make):
        """(candidate pairs as `BlockedPairs`, exact stats, centroid distances or None): read
        back, else `make()`'s, kept."""
        from linkage.engines.spark._blocking import BlockedPairs

        saved = self._load(spark, "block")
        if saved is not None:
            pairs, meta = saved
            distance = None
            if meta["semantic"]:
                distance = np.load(self.folder / "spark-centroid.npy", allow_pickle=False)
            return (BlockedPairs(pairs.cache(), meta["count"], meta["estimated"],
                                 meta["proposed"],
                                 [SkippedBlock(**s) for s in meta["skipped"]]),
                    meta["exact_stats"], distance), True
        blocked, exact_stats, distance = make()
        if self.folder is None:
            return (blocked, exact_stats, distance), False
        self.folder.mkdir(parents=True, exist_ok=True)
        if distance is not None:
            np.save(self.folder / "spark-centroid.npy", distance, allow_pickle=False)
        kept = self._save("block", blocked.pairs, {
            "count": blocked.count, "estimated": blocked.estimated,
            "proposed": blocked.proposed, "skipped": [vars(s) for s in blocked.skipped],
            "exact_stats": exact_stats, "semantic": distance is not None}).cache()
        blocked.pairs.unpersist()
        blocked.pairs = kept
        return (blocked, exact_stats, distance), False

    def compared(self, spark, make):
        """The compared pairs: read back, else `make()`'s, kept; and whether read back."""
        saved = self._load(spark, "compare")
        if saved is not None:
            return saved[0], True
        return self._save("compare", make(), {}), False
