"""Encoding throughput: the bundled all-MiniLM-L6-v2 against its model2vec static distillation.

    HF_HUB_OFFLINE=1 python bench/embedding_bench.py --texts 2000

Both models encode the same N synthetic sentences in the same run, with the vector cache off
(model load and distillation are timed apart, not counted in texts/s). A paraphrase check on
the same sentences (each sentence has a reworded twin) shows what the speed costs: the share of
sentences whose nearest neighbour is their twin. Writes bench/RESULTS_embeddings.md.
"""

from __future__ import annotations

import argparse
import os
import platform
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent

SUBJECTS = ["the customer", "my manager", "the new intern", "our supplier", "the landlord",
            "a student", "the support team", "the driver", "my neighbour", "the bank"]
VERBS = ["cancelled", "confirmed", "moved", "paid", "questioned", "approved", "rejected",
         "forgot", "renewed", "updated"]
OBJECTS = ["the order", "the invoice", "the meeting", "the subscription", "the lease",
           "the delivery", "the refund", "the password reset", "the insurance claim",
           "the flight booking"]
WHEN = ["on Monday", "yesterday", "last week", "this morning", "after lunch", "in March",
        "before the deadline", "at midnight", "without notice", "twice"]
REWORD = {"cancelled": "called off", "confirmed": "verified", "moved": "rescheduled",
          "paid": "settled", "questioned": "queried", "approved": "signed off on",
          "rejected": "turned down", "forgot": "did not remember", "renewed": "extended",
          "updated": "changed"}


def sentences(n: int, seed: int = 42) -> tuple[list[str], list[str]]:
    """n sentences and a reworded twin of each."""
    rng = np.random.default_rng(seed)
    texts, twins = [], []
    for _ in range(n):
        s, v, o, w = (rng.choice(x) for x in (SUBJECTS, VERBS, OBJECTS, WHEN))
        extra = int(rng.integers(0, 10_000))
        texts.append(f"{s.capitalize()} {v} {o} {w} (ref {extra}).")
        twins.append(f"{o.capitalize()} was {REWORD[v]} by {s} {w}, ref {extra}.")
    return texts, twins


def measure(model: str, texts: list[str], twins: list[str], cache_dir: str) -> dict:
    from linkage.text.embeddings import Encoder

    t0 = time.perf_counter()
    warm = Encoder(model, cache_dir=cache_dir, cache=False, progress=False)
    warm.encode(texts[:8])  # load (and for "static": distil on first use) the model
    load_s = time.perf_counter() - t0
    enc = Encoder(model, cache_dir=cache_dir, cache=False, progress=False)
    t0 = time.perf_counter()
    vec = enc.encode(texts)
    encode_s = time.perf_counter() - t0
    twin_vec = enc.encode(twins)
    sims = vec @ twin_vec.T
    recall_at_1 = float(np.mean(sims.argmax(axis=1) == np.arange(len(texts))))
    return {"model": model, "dim": vec.shape[1], "load_s": load_s, "encode_s": encode_s,
            "texts_per_s": len(texts) / encode_s, "twin_at_1": recall_at_1}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--texts", type=int, default=2000, help="number of sentences (N)")
    parser.add_argument("--out", type=Path, default=HERE / "RESULTS_embeddings.md")
    parser.add_argument("--cache-dir", default=None,
                        help="where the distilled static model is kept (default: a temp dir, "
                             "so distillation is timed too)")
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import torch

    texts, twins = sentences(args.texts)
    cache_dir = args.cache_dir or tempfile.mkdtemp(prefix="linkage-bench-")
    rows = [measure(m, texts, twins, cache_dir) for m in ("all-MiniLM-L6-v2", "static")]
    base = rows[0]["texts_per_s"]
    command = f"HF_HUB_OFFLINE=1 python bench/embedding_bench.py --texts {args.texts}"
    lines = [
        "# Embedding throughput",
        "",
        f"Command: `{command}`",
        f"Machine: {platform.machine()}, {os.cpu_count()} cores, torch {torch.__version__} "
        f"CPU ({torch.get_num_threads()} threads), Python {platform.python_version()}, "
        f"{platform.system()}.",
        f"Data: {args.texts:,} synthetic English sentences (seed 42), each with a reworded "
        "twin; batch size 64, vector cache off. `load (s)` is model loading plus, for "
        "`static`, distillation from the bundled model (done once, then cached on disk). "
        "`twin@1` is the share of sentences whose nearest neighbour among the twins is their "
        "own twin.",
        "",
        "| model | dim | load (s) | encode (s) | texts/s | speed-up | twin@1 |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in rows:
        lines.append(
            f"| {r['model']} | {r['dim']} | {r['load_s']:.1f} | {r['encode_s']:.2f} | "
            f"{r['texts_per_s']:,.0f} | {r['texts_per_s'] / base:.1f}x | {r['twin_at_1']:.3f} |"
        )
    args.out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
