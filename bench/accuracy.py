"""Pairwise accuracy of shipped and suggested rules on the benchmark data with ground truth.

    python bench/accuracy.py            # writes bench/ACCURACY.md

Each dataset runs twice: with the rules shipped in rules/ (where there are some) and with the
rules `linkage suggest` writes (unsupervised Fellegi-Sunter). Ids that carry the truth are made
opaque first, and the truth never reaches linkage.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import time
from pathlib import Path

import pandas as pd

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DATA = ROOT.parent / "shared" / "datasets"
sys.path.insert(0, str(ROOT))

import linkage as lk  # noqa: E402
from linkage.suggest import suggest_rules  # noqa: E402


def _opaque(values: pd.Series, salt: str) -> list[str]:
    return ["r" + hashlib.sha256(f"{salt}:{v}".encode()).hexdigest()[:12] for v in values]


def _febrl(name: str) -> pd.DataFrame:
    return pd.read_csv(DATA / "febrl" / name, dtype=str, skipinitialspace=True,
                       keep_default_na=False, na_values=[""])


def febrl_dedupe(name: str, salt: str):
    """A FEBRL dedupe file: its `rec_id` (rec-N-org, rec-N-dup-k) holds the truth, so the
    pipeline gets an opaque id instead; the truth is each record's N."""
    df = _febrl(name)
    entity = df["rec_id"].str.extract(r"rec-(\d+)-")[0].to_numpy()
    df["rec_id"] = _opaque(df["rec_id"], salt)
    return "dedupe", [df], pd.DataFrame({"id": df["rec_id"], "e": entity})


def febrl3():
    return febrl_dedupe("dataset3.csv", "3")


def febrl4():
    a, b = _febrl("dataset4a.csv"), _febrl("dataset4b.csv")
    ea = a["rec_id"].str.extract(r"rec-(\d+)-")[0].to_numpy()
    eb = b["rec_id"].str.extract(r"rec-(\d+)-")[0].to_numpy()
    a["rec_id"], b["rec_id"] = _opaque(a["rec_id"], "a"), _opaque(b["rec_id"], "b")
    m = pd.DataFrame({"l": a["rec_id"], "e": ea}).merge(pd.DataFrame({"r": b["rec_id"], "e": eb}))
    return "link", [a, b], set(zip(m["l"], m["r"], strict=True))


def fake_1000():
    df = pd.read_csv(DATA / "splink" / "fake_1000.csv", dtype=str)
    truth = pd.DataFrame({"id": df["unique_id"], "e": df["cluster"]})
    return "dedupe", [df.drop(columns=["cluster"])], truth


def historical_50k():
    df = pd.read_parquet(DATA / "splink" / "historical_figures_with_errors_50k.parquet")
    entity = df["cluster"].to_numpy()
    df["unique_id"] = _opaque(df["unique_id"], "h")  # the id embeds the truth
    return "dedupe", [df.drop(columns=["cluster"])], pd.DataFrame({"id": df["unique_id"],
                                                                    "e": entity})


def _magellan(folder: str, left: str, right: str, sep: str):
    path = DATA / "magellan" / folder
    a = pd.read_csv(path / left, sep=sep, dtype=str)
    b = pd.read_csv(path / right, sep=sep, dtype=str)
    gt = pd.read_csv(path / "gt.csv", sep=sep, dtype=str)
    return "link", [a, b], set(zip(gt["D1"], gt["D2"], strict=True))


def dblp_acm():
    return _magellan("dblp_acm", "dblp.csv", "acm.csv", "%")


def abt_buy():
    return _magellan("abt_buy", "abt.csv", "buy.csv", "|")


def amazon_google():
    return _magellan("amazon_google", "amazon.csv", "gp.csv", "#")


def _jedai(folder: str, left: str, right: str):
    path = DATA / "jedai" / folder
    a, b = (pd.read_csv(path / f, sep="|", dtype=str) for f in (left, right))
    gt = pd.read_csv(path / "gt.csv", sep="|", dtype=str)
    return "link", [a, b], set(zip(gt["D1"], gt["D2"], strict=True))


def walmart_amazon():
    return _jedai("walmart_amazon", "walmart.csv", "amazon.csv")


def imdb_tmdb():
    return _jedai("imdb_tmdb", "imdb.csv", "tmdb.csv")


def cora():
    path = DATA / "jedai" / "cora"
    df = pd.read_csv(path / "cora.csv", sep="|", dtype=str)
    df = df.loc[:, ~df.columns.str.startswith("Unnamed")]  # the header ends with a separator
    gt = pd.read_csv(path / "gt.csv", sep="|", header=None, dtype=str)
    # entities are the connected components of the listed pairs; a record in none is alone
    parent = {i: i for i in df["Entity Id"]}

    def find(x):
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for x, y in zip(gt[0], gt[1], strict=True):
        parent[find(x)] = find(y)
    truth = pd.DataFrame({"id": df["Entity Id"], "e": [find(i) for i in df["Entity Id"]]})
    return "dedupe", [df], truth


DATASETS = {
    "FEBRL3": (febrl3, "febrl.yaml"),
    "FEBRL4": (febrl4, "febrl.yaml"),
    "fake_1000": (fake_1000, None),
    "historical_50k": (historical_50k, None),
    "DBLP-ACM": (dblp_acm, "dblp_acm.yaml"),
    "Abt-Buy": (abt_buy, "abt_buy.yaml"),
    "Amazon-Google": (amazon_google, "amazon_google.yaml"),
    "cora": (cora, None),
    "Walmart-Amazon": (walmart_amazon, None),
    "imdb_tmdb": (imdb_tmdb, None),
}


NOTES = """\
Notes. The weights of the shipped DBLP-ACM, Abt-Buy and Amazon-Google rules were set by hand on
these benchmarks, so their figures are in-sample, not held-out estimates.

Suggested rules for tables of text (DBLP-ACM, Abt-Buy, Amazon-Google, cora, Walmart-Amazon)
come from `linkage/suggest_text.py`: TF-IDF word-neighbour blocking, IDF-weighted word cosine and
model-number comparisons, one-to-one links when neither side repeats its records. Its design
was chosen on DBLP-ACM, Abt-Buy and cora; Walmart-Amazon and Amazon-Google were held out at
first (first measurement 0.504 and 0.419) but have been measured many times since, so every
text figure in the table is in-sample, not a held-out estimate.

Round 2 (issue 14), each change for a reason that holds beyond these tables: a column of short
capitalised words with many values (kind "name") vetoes the word rules only where no column
holds titles or free text, since next to titles it is a brand or maker (Walmart-Amazon's brand
had sent it to person rules); the word and code comparisons of the blocking columns (titles,
model numbers) are named `identifying` for the constrained EM, so that it cannot learn "same
kind of product" (Amazon-Google went from 0.0 to 0.64 on the constrained EM). Figures are with
the EM on main when measured (constrained EM, several starts); it may still change. Not reached:
cora 0.90 (the misses are conference and journal versions of one paper, which differ on year,
venue and pages together) and Walmart-Amazon 0.70 (0.71 at threshold 0, which costs Abt-Buy
0.03 and DBLP-ACM 0.004; a threshold from the valley of the best-candidate weights came out
at 0 on three of the four link tables).""".splitlines()


def _score(mode, result, truth) -> tuple[float, float, float]:
    if mode == "link":
        links = result.links.astype({"id_l": str, "id_r": str})
        predicted = set(zip(links["id_l"], links["id_r"], strict=True))
        tp = len(predicted & truth)
        p = tp / len(predicted) if predicted else 0.0
        r = tp / len(truth)
    else:
        clusters = result.clusters
        frame = pd.DataFrame({"id": clusters.iloc[:, 0].astype(str),
                              "c": clusters["cluster_id"]}).merge(truth.astype({"id": str}))

        def pairs(keys):
            sizes = frame.groupby(keys).size().to_numpy()
            return int((sizes * (sizes - 1) // 2).sum())

        both, predicted, actual = pairs(["c", "e"]), pairs(["c"]), pairs(["e"])
        p = both / predicted if predicted else 0.0
        r = both / actual
    return p, r, (2 * p * r / (p + r) if p + r else 0.0)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", default=list(DATASETS))
    parser.add_argument("--results", type=Path, default=HERE / "ACCURACY.md")
    args = parser.parse_args(argv)
    rows = []
    for name in args.only:
        load, shipped = DATASETS[name]
        mode, frames, truth = load()
        variants = [("suggested", lk.Rules.from_dict(suggest_rules(frames).rules))]
        if shipped:
            variants.insert(0, (f"rules/{shipped}", lk.Rules.from_yaml(ROOT / "rules" / shipped)))
        for label, rules in variants:
            start = time.perf_counter()
            run = lk.dedupe if mode == "dedupe" else lk.link
            try:
                result = run(*frames, rules, progress=False)
            except lk.LinkageError as err:  # report it in the table rather than stop
                print(f"{name} | {label} | error: {err}", flush=True)
                rows.append((name, label, "error", 0, float("nan"), float("nan"), float("nan"),
                             0.0))
                continue
            seconds = time.perf_counter() - start
            p, r, f1 = _score(mode, result, truth)
            row = (name, label, rules.scoring.kind, len(result.pairs), p, r, f1, seconds)
            print(" | ".join(map(str, row)), flush=True)
            rows.append(row)
    only = "" if args.only == list(DATASETS) else " --only " + " ".join(args.only)
    lines = [
        "# Accuracy on benchmark data with ground truth",
        "",
        f"Command: `python bench/accuracy.py{only}`.",
        "Pairwise precision, recall and F1, end to end (blocking included): for dedupe over the",
        "pairs implied by the clusters, for link over links.parquet. `suggested` is what",
        "`linkage dedupe/link` does without --rules.",
        "",
        "| dataset | rules | scorer | candidate pairs | precision | recall | F1 | seconds |",
        "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for name, label, scorer, pairs, p, r, f1, seconds in rows:
        lines.append(f"| {name} | {label} | {scorer} | {pairs:,} | {p:.4f} | {r:.4f} | "
                     f"{f1:.4f} | {seconds:.1f} |")
    lines += ["", *NOTES]
    args.results.write_text("\n".join(lines) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
