"""Embedding quality on real linkage tasks: does the faster backend find the same neighbours?

    HF_HUB_OFFLINE=1 python bench/embedding_quality.py

For Abt-Buy and Amazon-Google (../shared/datasets/magellan), each model embeds every record's
name/title on both sides; for every true link (left, right) the right record's rank among the
left record's nearest right records by cosine is taken. Reported: recall@1, @5 and @10 (the
share of true links whose right record is within the k nearest: what an `embedding` blocker
with k neighbours would propose), per model, and the agreement of each model's top-10 lists
with the transformer's. The truth is read only to score. Writes bench/RESULTS_embedding_quality.md.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

import accuracy  # noqa: E402  (the loaders of ../shared/datasets)

MODELS = ("all-MiniLM-L6-v2", "onnx", "onnx-int8", "static")
TASKS = {"Abt-Buy": (accuracy.abt_buy, "name"), "Amazon-Google": (accuracy.amazon_google,
                                                                   "title")}
KS = (1, 5, 10)


def ranks(left: np.ndarray, right: np.ndarray, pairs: np.ndarray) -> tuple[np.ndarray,
                                                                            np.ndarray]:
    """Rank (0 = nearest) of each true pair's right record among its left record's
    neighbours, and every left record's ten nearest right records."""
    sims = left @ right.T
    top = np.argsort(-sims, axis=1, kind="stable")[:, :10]
    true = sims[pairs[:, 0], pairs[:, 1]]
    return (sims[pairs[:, 0]] > true[:, None]).sum(axis=1), top


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=HERE / "RESULTS_embedding_quality.md")
    parser.add_argument("--cache-dir", default=None,
                        help="where the derived models are kept (default: a temp dir)")
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from linkage.text.embeddings import Encoder

    cache = args.cache_dir or tempfile.mkdtemp(prefix="linkage-quality-")
    load = os.getloadavg()
    lines = ["# Embedding quality on real linkage tasks", "",
             "Command: `HF_HUB_OFFLINE=1 python bench/embedding_quality.py`",
             f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python "
             f"{platform.python_version()}; load average at the start {load[0]:.2f} / "
             f"{load[1]:.2f} / {load[2]:.2f}.", "",
             "For every true link, the rank of its right record among its left record's "
             "nearest right records by the cosine of the names' vectors (recall@k: within the "
             "k nearest, as an `embedding` blocker with k neighbours proposes). `top-10 "
             "agreement`: the share of each left record's ten nearest that the transformer's "
             "ten nearest also hold. `encode (s)`: both sides, vector cache off, derived models "
             "built beforehand.", "",
             "| task | model | links | recall@1 | recall@5 | recall@10 | top-10 agreement "
             "| encode (s) |", "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for task, (load_task, column) in TASKS.items():
        _, (left, right), truth = load_task()
        lpos = {v: i for i, v in enumerate(left["id"])}
        rpos = {v: i for i, v in enumerate(right["id"])}
        pairs = np.array([(lpos[a], rpos[b]) for a, b in sorted(truth)
                          if a in lpos and b in rpos])
        texts_l = left[column].fillna("").astype(str).tolist()
        texts_r = right[column].fillna("").astype(str).tolist()
        reference_top = None
        for model in MODELS:
            Encoder(model, cache_dir=cache, cache=False).encode(["warm up"])
            encoder = Encoder(model, cache_dir=cache, cache=False)
            start = time.perf_counter()
            vl, vr = encoder.encode(texts_l), encoder.encode(texts_r)
            seconds = time.perf_counter() - start
            rank, top = ranks(vl, vr, pairs)
            if reference_top is None:
                reference_top = top
            agreement = np.mean([len(set(a) & set(b)) / 10
                                 for a, b in zip(top, reference_top, strict=True)])
            recall = [float(np.mean(rank < k)) for k in KS]
            lines.append(f"| {task} | {model} | {len(pairs):,} | "
                         + " | ".join(f"{r:.3f}" for r in recall)
                         + f" | {agreement:.3f} | {seconds:.1f} |")
            print(lines[-1], flush=True)
    args.out.write_text("\n".join(lines) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
