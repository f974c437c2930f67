"""What the scorers could reach on a dedupe data set's candidate pairs, and what labels teach.

    PYTHONPATH=. python bench/label_ceiling.py cora
    PYTHONPATH=. python bench/label_ceiling.py fake_1000 FEBRL3

For each data set (the dedupe ones of bench/generalization.py), with its suggested rules and the
candidate pairs they propose, pairwise F1 end to end (the run's own clustering: matched pairs,
split where the pairs scored inside a cluster say non-match, then components):

- `fellegi_sunter`: the run without labels (the Python API on the loader's DataFrame;
  bench/generalization.py runs the CLI on Parquet copies, which can differ a little: cora
  0.8573 both ways, fake_1000 0.9744 here and 0.9627 there);
- `fellegi_sunter, best shift`: its weights moved by the constant that scores best (in-sample:
  chosen on the truth; what any threshold or prior could do);
- `additive, all labels`: a logistic regression on the comparisons' Fellegi-Sunter weights,
  fitted on every candidate pair labelled from the truth and scoring the same pairs (in-sample:
  the best reweighing of the fields any number of labels could give an additive model; the
  weights are without term-frequency adjustment, which a warning says where the rules ask for
  it);
- `gradient boosting, N labels`: as bench/generalization.py's reference (b), a seeded sample of
  N candidate pairs labelled, features as the supervised scorer's (each level one-hot, each
  similarity), probability 1/2; once with the labelled pairs scored by the model fitted on
  them (as the reference does), once with them scored out of fold (5 folds);
- `25 active labels`: the labelling loop of bench/generalization.py (10, then 15 more), and for
  the labelled pairs the weights the unlabelled model gave them: where matches and non-matches
  interleave there, no threshold or reweighing that the labels justify separates them.

The truth only scores and answers labels. Figures on a data set the rules were tuned on are
in-sample.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import generalization  # noqa: E402  (the loaders and the truth by row)

import linkage as lk  # noqa: E402
from linkage.active import active_pairs  # noqa: E402
from linkage.clustering import connected_components, split_non_matches  # noqa: E402
from linkage.suggest import suggest_rules  # noqa: E402

SEED = 42


class Candidates:
    """The run without labels, its candidate pairs by row and their truth."""

    def __init__(self, frame: pd.DataFrame, entity: np.ndarray):
        self.frame, self.entity, self.n = frame, entity, len(frame)
        self.rules = suggest_rules([frame]).rules
        self.run = lk.dedupe(frame, lk.Rules.from_dict(self.rules), progress=False)
        id_column = self.run.summary_data.get("id_column")
        if isinstance(id_column, str) and id_column in frame:
            self.position = {str(v): i for i, v in enumerate(frame[id_column])}
        else:
            self.position = {str(i): i for i in range(self.n)}
        pairs = self.run.pairs
        self.left = pairs["id_l"].astype(str).map(self.position).to_numpy()
        self.right = pairs["id_r"].astype(str).map(self.position).to_numpy()
        self.y = (entity[self.left] == entity[self.right]).astype(int)
        self.weight = pairs["match_weight"].to_numpy(dtype=float)
        names = [c[: -len("_level")] for c in pairs.columns if c.endswith("_level")]
        levels = pairs[[f"{c}_level" for c in names]].to_numpy().astype(np.int64)
        sims = np.nan_to_num(pairs[[f"{c}_similarity" for c in names]].to_numpy(float), nan=-1)
        one_hot = [levels[:, k] == v for k in range(len(names))
                   for v in range(-1, levels[:, k].max() + 1)]
        self.features = np.column_stack([*one_hot, sims]).astype(float)
        scorer = self.run.scorer
        self.contributions = (scorer.contributions(_matrix(self.run, names))
                              if hasattr(scorer, "contributions") else None)

    def labels(self, table: pd.DataFrame) -> pd.DataFrame:
        """`table` (id_l, id_r) answered from the truth."""
        left = table["id_l"].astype(str).map(self.position).to_numpy()
        right = table["id_r"].astype(str).map(self.position).to_numpy()
        return pd.DataFrame({"id_l": table["id_l"].astype(str), "id_r": table["id_r"].astype(str),
                             "label": (self.entity[left] == self.entity[right]).astype(int)})

    def f1(self, weight: np.ndarray, threshold: float = 0.0) -> tuple[float, float, float]:
        """Pairwise precision, recall and F1 of the clusters these weights give."""
        matched = np.flatnonzero(weight >= threshold)
        keep, _ = split_non_matches(self.n, self.left[matched], self.right[matched],
                                    weight[matched], (self.left, self.right, weight),
                                    threshold=threshold)
        kept = matched[keep]
        cluster = connected_components(self.n, self.left[kept], self.right[kept])
        return generalization.pairwise(cluster, self.entity)


def _matrix(run, names):
    """The run's pairs as the ComparisonMatrix its scorer reads."""
    from linkage.scoring import ComparisonMatrix

    rules = run.rules
    comparisons = [c for c in rules.comparisons if c.output_name in names]
    pairs = run.pairs
    return ComparisonMatrix(
        comparisons, pairs[[f"{c.output_name}_level" for c in comparisons]].to_numpy(np.int8),
        pairs[[f"{c.output_name}_similarity" for c in comparisons]].to_numpy(np.float32))


def _log2_odds(p: np.ndarray) -> np.ndarray:
    p = np.clip(p, 1e-6, 1 - 1e-6)
    return np.log2(p / (1 - p))


def measure(name: str, reference_pairs: int) -> list[tuple[str, str]]:
    from sklearn.ensemble import GradientBoostingClassifier
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import StratifiedKFold, cross_val_predict

    mode, frames, truth = generalization.DATASETS[name][0]()
    if mode != "dedupe":
        raise SystemExit(f"{name} is a link; this bench reads dedupe data sets only")
    c = Candidates(frames[0], generalization._rows_truth(mode, frames, truth))
    rows = [("candidate pairs", f"{len(c.y):,}, {c.y.mean():.3f} of them matches")]

    def fmt(prf):
        return f"F1 {prf[2]:.4f} (precision {prf[0]:.4f}, recall {prf[1]:.4f})"

    rows.append(("fellegi_sunter, no labels", fmt(c.f1(c.weight))))
    shifts = {s: c.f1(c.weight + s) for s in np.arange(-6.0, 6.5, 0.5)}
    best = max(shifts, key=lambda s: shifts[s][2])
    rows.append((f"fellegi_sunter, best shift ({best:+.1f}; in-sample)", fmt(shifts[best])))
    if c.contributions is not None:
        additive = LogisticRegression(C=1.0, max_iter=5000).fit(c.contributions, c.y)
        rows.append(("additive, all labels (in-sample)",
                     fmt(c.f1(additive.decision_function(c.contributions) / np.log(2)))))
    rng = np.random.default_rng(SEED)
    sample = rng.permutation(len(c.y))[: min(reference_pairs, len(c.y))]
    boosted = GradientBoostingClassifier(random_state=0).fit(c.features[sample], c.y[sample])
    scores = boosted.predict_proba(c.features)[:, 1]
    rows.append((f"gradient boosting, {len(sample):,} labels, labelled pairs in-sample",
                 fmt(c.f1(_log2_odds(scores)))))
    folds = StratifiedKFold(5, shuffle=True, random_state=0)
    scores[sample] = cross_val_predict(GradientBoostingClassifier(random_state=0),
                                       c.features[sample], c.y[sample], cv=folds,
                                       method="predict_proba")[:, 1]
    rows.append((f"gradient boosting, {len(sample):,} labels, labelled pairs out of fold",
                 fmt(c.f1(_log2_odds(scores)))))

    labelled, source = None, c.run
    for n in (10, 15):
        answered = c.labels(active_pairs(source, n, exclude=labelled))
        labelled = answered if labelled is None else pd.concat([labelled, answered])
        labelled = labelled.drop_duplicates(["id_l", "id_r"])
        source = lk.dedupe(c.frame, lk.Rules.from_dict(c.rules), progress=False,
                           labels=labelled)
    used = source.summary_data.get("labels") or {}
    index = {key: i for i, key in enumerate(zip(c.run.pairs["id_l"].astype(str),
                                                c.run.pairs["id_r"].astype(str), strict=True))}
    at = np.array([index.get((a, b), index.get((b, a), -1))
                   for a, b in zip(labelled["id_l"], labelled["id_r"], strict=True)])
    y = labelled["label"].to_numpy()[at >= 0]
    w = c.weight[at[at >= 0]]
    wrong = int(((w >= 0) != (y == 1)).sum())
    rows.append(("25 active labels", f"{int(y.sum())} matches, {int((1 - y).sum())} non-matches; "
                 f"mode {used.get('mode')!s}; by its weight alone the unlabelled model "
                 f"misclassifies {wrong}"))
    rows.append(("  their weights, matches", " ".join(f"{x:.1f}" for x in sorted(w[y == 1]))))
    rows.append(("  their weights, non-matches", " ".join(f"{x:.1f}" for x in sorted(w[y == 0]))))
    return rows


def main() -> None:
    dedupe = [n for n, (load, _) in generalization.DATASETS.items()
              if n in ("cora", "FEBRL3", "fake_1000", "historical_50k")]
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("names", nargs="+", choices=dedupe, metavar="NAME",
                        help="dedupe data sets: " + ", ".join(dedupe))
    parser.add_argument("--reference-pairs", type=int, default=generalization.REFERENCE_PAIRS,
                        help="labelled pairs of the gradient-boosting rows")
    args = parser.parse_args()
    for name in args.names:
        print(f"## {name}")
        for what, figure in measure(name, args.reference_pairs):
            print(f"- {what}: {figure}", flush=True)


if __name__ == "__main__":
    main()
