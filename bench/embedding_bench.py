"""Encoding throughput: the bundled all-MiniLM-L6-v2 (torch), the same network through ONNX
Runtime (`onnx`, and `onnx-int8` with int8 matrix products), and its model2vec static
distillation.

    HF_HUB_OFFLINE=1 python bench/embedding_bench.py --texts 2000 --threads 1 2

Every model encodes the same N synthetic sentences (short texts) and N/8 texts of eight
sentences each (long texts, about 130 word pieces) in the same run, with the vector cache off
(model load, export and distillation are timed apart, not counted in texts/s), on one thread
(per core) and on all. A paraphrase check on the same sentences (each sentence has a reworded
twin) shows what the speed costs: the share of sentences whose nearest neighbour is their twin;
`cos vs torch` is each vector's cosine with the transformer's (min and mean). Writes
bench/RESULTS_embeddings.md.
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

from _versions import packages_line  # noqa: E402

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


MODELS = ("all-MiniLM-L6-v2", "onnx", "onnx-int8", "static")


def measure(model: str, texts: list[str], twins: list[str], long: list[str],
            cache_dir: str) -> dict:
    """One model in this process (its thread count set by the caller's environment)."""
    from linkage.text.embeddings import Encoder

    t0 = time.perf_counter()
    warm = Encoder(model, cache_dir=cache_dir, cache=False, progress=False)
    warm.encode(texts[:8])  # load (and: distil or export on first use) the model
    load_s = time.perf_counter() - t0
    enc = Encoder(model, cache_dir=cache_dir, cache=False, progress=False)
    t0 = time.perf_counter()
    vec = enc.encode(texts)
    encode_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    long_vec = enc.encode(long)
    long_s = time.perf_counter() - t0
    twin_vec = enc.encode(twins)
    sims = vec @ twin_vec.T
    recall_at_1 = float(np.mean(sims.argmax(axis=1) == np.arange(len(texts))))
    return {"model": model, "dim": vec.shape[1], "load_s": load_s, "encode_s": encode_s,
            "texts_per_s": len(texts) / encode_s, "long_per_s": len(long) / long_s,
            "twin_at_1": recall_at_1, "vectors": np.vstack([vec, long_vec])}


def _child(args) -> None:
    """`--child MODEL`: measure one model, print the figures and save the vectors."""
    import json

    texts, twins = sentences(args.texts)
    row = measure(args.child, texts, twins, long_texts(texts), args.cache_dir)
    np.save(Path(args.cache_dir) / f"vectors-{args.child}-{args.threads[0]}.npy",
            row.pop("vectors"))
    print(json.dumps(row))


def long_texts(texts: list[str]) -> list[str]:
    """Eight sentences a text: N/8 texts of about 130 word pieces."""
    return [" ".join(texts[k:k + 8]) for k in range(0, len(texts) - 7, 8)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--texts", type=int, default=2000, help="number of sentences (N)")
    parser.add_argument("--out", type=Path, default=HERE / "RESULTS_embeddings.md")
    parser.add_argument("--cache-dir", default=None,
                        help="where the distilled static model is kept (default: a temp dir, "
                             "so distillation is timed too)")
    parser.add_argument("--threads", type=int, nargs="+", default=[1, os.cpu_count() or 1],
                        help="thread counts to measure each model with (1: per core)")
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    if args.child:
        return _child(args)
    import json
    import subprocess
    import sys

    import torch

    cache_dir = args.cache_dir or tempfile.mkdtemp(prefix="linkage-bench-")
    Path(cache_dir).mkdir(parents=True, exist_ok=True)
    load = os.getloadavg()
    rows = []
    for threads in args.threads:
        for model in MODELS:  # each in a process of its own: the thread count holds
            env = {**os.environ, "OMP_NUM_THREADS": str(threads),
                   "MKL_NUM_THREADS": str(threads)}
            done = subprocess.run([sys.executable, __file__, "--texts", str(args.texts),
                                   "--cache-dir", cache_dir, "--threads", str(threads),
                                   "--child", model], env=env, capture_output=True,
                                  text=True, check=True)
            rows.append({**json.loads(done.stdout.strip().splitlines()[-1]),
                         "threads": threads})
    for r in rows:
        ours = np.load(Path(cache_dir) / f"vectors-{r['model']}-{r['threads']}.npy")
        ref = np.load(Path(cache_dir) / f"vectors-all-MiniLM-L6-v2-{r['threads']}.npy")
        cos = (ours * ref).sum(axis=1) if ours.shape == ref.shape else None
        r["cos"] = "" if cos is None else f"{cos.min():.4f} / {cos.mean():.4f}"
    command = (f"HF_HUB_OFFLINE=1 python bench/embedding_bench.py --texts {args.texts} "
               f"--threads {' '.join(map(str, args.threads))}")
    lines = [
        "# Embedding throughput",
        "",
        f"Command: `{command}`",
        f"Machine: {platform.machine()}, {os.cpu_count()} cores, torch {torch.__version__} "
        f"CPU, Python {platform.python_version()}, {platform.system()}; load average at the "
        f"start {load[0]:.2f} / {load[1]:.2f} / {load[2]:.2f} (1, 5, 15 min).",
        packages_line(("numpy", "torch", "sentence-transformers", "onnxruntime",
                       "model2vec", "tokenizers", "transformers")),
        f"Data: {args.texts:,} synthetic English sentences (seed 42), each with a reworded "
        f"twin (short texts), and {args.texts // 8:,} texts of eight of them (long texts, "
        "about 130 word pieces); batch size 64, vector cache off. `load (s)` is model loading "
        "plus, on first use, building the derived model (distilling `static`, exporting and "
        "quantizing `onnx`; `make setup` builds them ahead, `build_models`). `twin@1` is the "
        "share of sentences whose nearest neighbour among the twins is their own twin. `cos vs "
        "torch`: the cosine of each vector (short and long texts) with the transformer's, min "
        "/ mean (static has other dimensions). Each model runs in a process of its own with "
        "OMP_NUM_THREADS set to `threads` (ONNX Runtime and torch both honour it).",
        "",
        "| threads | model | dim | load (s) | short texts/s | long texts/s | speed-up (short) "
        "| twin@1 | cos vs torch |",
        "| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |",
    ]
    for r in rows:
        base = next(b for b in rows if b["threads"] == r["threads"]
                    and b["model"] == "all-MiniLM-L6-v2")["texts_per_s"]
        lines.append(
            f"| {r['threads']} | {r['model']} | {r['dim']} | {r['load_s']:.1f} | "
            f"{r['texts_per_s']:,.0f} | {r['long_per_s']:,.0f} | "
            f"{r['texts_per_s'] / base:.1f}x | {r['twin_at_1']:.3f} | {r['cos']} |")
    args.out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
