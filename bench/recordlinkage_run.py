"""Dedupe one table with the recordlinkage package and write its clusters as Parquet.

Runs INSIDE bench/.venv-recordlinkage (bench/compare.py creates it and starts this script
there, under _measure.py); recordlinkage 0.16 needs pandas < 3, so it never shares the
project's environment:

    bench/.venv-recordlinkage/bin/python bench/recordlinkage_run.py \
        --data bench/data/persons_100000_42.parquet --spec spec.json \
        --out-clusters bench/data/recordlinkage_100000/clusters.parquet

The spec (JSON, written by compare.py from the linkage rules) names the id column, the columns
to clean, the blocking keys (recordlinkage's Block index; a key part may be a column,
soundex(c), first(c, n) or year(c)), sorted-neighbourhood keys, and the comparisons (string
similarity at a threshold, or exact). Pairs are classified by recordlinkage's unsupervised ECM
classifier (its Fellegi-Sunter EM on binary agreements), then clustered as connected
components. Writes clusters (rec_id, cluster_id) and timings.json (seconds per stage,
candidate and predicted pairs, versions) beside them.
"""

from __future__ import annotations

import argparse
import json
import re
import time
from pathlib import Path

import numpy as np
import pandas as pd
import recordlinkage
from recordlinkage.preprocessing import clean, phonetic
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

_PART = re.compile(r"^\s*(?:(?P<fn>[a-z_]+)\s*\(\s*(?P<col>[^,()]+?)\s*(?:,\s*(?P<arg>\d+)\s*)?\)"
                   r"|(?P<bare>[^()]+?))\s*$")


def key_column(frame: pd.DataFrame, part: str) -> pd.Series:
    """The values of one blocking-key part: a column, or soundex/first/year of one."""
    match = _PART.match(part)
    if match is None:
        raise SystemExit(f"unsupported key part {part!r}")
    if match.group("bare"):
        return frame[match.group("bare").strip()]
    fn, values = match.group("fn"), frame[match.group("col")]
    if fn == "soundex":
        return phonetic(values, "soundex")
    if fn == "first":
        return values.str.slice(0, int(match.group("arg")))
    if fn == "year":
        return values.str.extract(r"(\d{4})", expand=False)
    raise SystemExit(f"unsupported key function {fn!r} in {part!r}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, required=True, help="the table (Parquet)")
    parser.add_argument("--spec", type=Path, required=True, help="what to block and compare")
    parser.add_argument("--out-clusters", type=Path, required=True, help="clusters (Parquet)")
    args = parser.parse_args(argv)
    spec = json.loads(args.spec.read_text(encoding="utf-8"))

    seconds: dict[str, float] = {}
    mark = time.perf_counter()

    def lap(stage: str) -> None:
        nonlocal mark
        now = time.perf_counter()
        seconds[stage] = round(now - mark, 2)
        mark = now

    frame = pd.read_parquet(args.data).astype(object)
    frame = frame.where(frame.notna(), None).reset_index(drop=True)
    ids = frame[spec["id"]].astype(str).to_numpy()
    lap("read")

    for column in spec["clean"]:
        frame[column] = clean(frame[column].astype("string")).astype(object)
        frame.loc[frame[column].isin(["", None]), column] = None
    keys = []
    for k, key in enumerate(spec["blocks"]):
        names = []
        for p, part in enumerate(key):
            name = f"_key{k}_{p}"
            frame[name] = key_column(frame, part)
            names.append(name)
        keys.append(names)
    for k, item in enumerate(spec.get("sorted", [])):
        parts = [key_column(frame, part).fillna("").astype(str) for part in item["key"]]
        text = parts[0]
        for more in parts[1:]:
            text = text + "\x1f" + more
        frame[f"_sorted{k}"] = text.where(text.str.strip("\x1f") != "", None)
    lap("prepare")

    indexer = recordlinkage.Index()
    for names in keys:
        indexer.block(left_on=names)
    for k, item in enumerate(spec.get("sorted", [])):
        indexer.sortedneighbourhood(left_on=f"_sorted{k}", window=item["window"])
    candidates = indexer.index(frame)
    lap("index")

    compare = recordlinkage.Compare(n_jobs=1)
    for item in spec["compare"]:
        column = item["column"]
        if item["type"] == "string":
            compare.string(column, column, method=item["method"], threshold=item["threshold"],
                           label=column)
        else:
            compare.exact(column, column, label=column)
    features = compare.compute(candidates, frame)
    lap("compare")

    classifier = recordlinkage.ECMClassifier(binarize=None)
    matches = classifier.fit_predict(features.astype(int))
    lap("classify")

    n = len(frame)
    left = np.asarray(matches.get_level_values(0), dtype=np.int64)
    right = np.asarray(matches.get_level_values(1), dtype=np.int64)
    graph = coo_matrix((np.ones(len(left), dtype=np.int8), (left, right)), shape=(n, n))
    _, labels = connected_components(graph, directed=False)
    clusters = pd.DataFrame({"rec_id": ids, "cluster_id": labels.astype(np.int64)})
    lap("cluster")
    args.out_clusters.parent.mkdir(parents=True, exist_ok=True)
    clusters.to_parquet(args.out_clusters, index=False)
    lap("write")
    facts = {
        "recordlinkage": recordlinkage.__version__,
        "pandas": pd.__version__,
        "candidate_pairs": len(candidates),
        "predicted_pairs": len(matches),
        "seconds": seconds,
    }
    args.out_clusters.with_name("timings.json").write_text(json.dumps(facts, indent=2) + "\n")
    print(json.dumps(facts))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
