"""A few labels fix what EM cannot: pick the pairs worth labelling, and learn from the labels.

The loop (`linkage dedupe --help` shows it as commands)::

    run  ->  sample --active (or review --active)  ->  a person labels  ->  run --labels  -> ...

**Which pairs** (`active_pairs`). Labelling a pair teaches the model about every pair that
reached the same comparison levels (its *level pattern*), so the pairs are picked pattern by
pattern, one pair per pattern, and never a pair already labelled:

- about three fifths are the *uncertain* ones, taken in turn: the patterns whose match weight
  is closest to the threshold, where a label most often flips decisions, and those whose
  match probability is nearest one half (a threshold set above even odds has mostly matches
  around it; these make both classes expected);
- in a dedupe, the *merges the clusters refused* take their turn among the uncertain ones:
  two clusters kept apart although a pair between them scores at or above the threshold (cut
  by `split_non_matches`), the merge deciding the most record pairs (the product of the two
  sizes) first, asked by the open pair between the two most central records (the largest
  share of their cluster each is matched with), and not asked again once a pair between the
  two clusters is labelled: a labelled match joins them (see **The clusters agree with the
  labels** below), so one label decides every pair between them (measured on cora, in-sample:
  25 labels 0.866 -> 0.894);
- the rest are *spread* over score bands on both sides of the threshold, so that a model that is
  confidently wrong about a whole kind of pair (EM that learned "same household" as the match
  class) is caught too: the pairs above the threshold, and those below it, are ranked by their
  distance from it and cut into bands whose sizes grow geometrically (the nearest band is the
  smallest), and each band gives the pair nearest its middle rank of a pattern not yet
  picked (the bands' labels then sample the weight axis, where the matches give out);
- from the second round, the labels so far bracket the threshold they ask for (between the
  labelled weights around it, `choose_threshold`): pairs at the middle rank of that span come
  first (a bisection of the weight axis), where pairs near a threshold the labels have
  already placed would say again what is known (measured on a product link: 25 labels moved
  the threshold from -1.9 to -3.3 before, to -22 with the bisection).

In a one-to-one link only the pairs the assignment keeps are picked (while there are enough of
them): a pair that loses to a better candidate of either record is linked at no threshold, so
its label teaches the threshold nothing (measured on a product link: 14 of 25 picks were such
pairs). Patterns that already hold a labelled pair come last. Everything is ordered by numbers
and then by a seeded draw, so one run and one seed give one file.

**How the labels are used** (`fit_labelled`, called by the pipeline where the scorer is fit).
A label is judged as the output decides the pair, not by its weight alone: in a dedupe, the two
records are together at a threshold when a chain of pairs at or above it joins them (a labelled
non-match so joined is an error, a labelled match so joined is not; judged pair by pair, 5,000
labels took a person table's threshold where the clusters chained, precision 0.997 -> 0.82);
where the run splits clusters at non-matches (`split_non_matches`), only the chains the split
lets stand count (`linkage.clustering.split_joining_weights`; a labelled non-match the split
keeps apart at every threshold is right at all of them: judged by the chains alone, 3 of 25
such labels on a person table held its threshold at the rules' 6.0, F1 0.963, where the labels
ask for the 9:1 floor, 0.973); in a one-to-one link, a pair the assignment drops is linked at
no threshold.

- Fellegi-Sunter (`_guarded`): the unlabelled model (EM alone) is fit first and kept unless
  a model that used the labels misclassifies clearly fewer of them (by at least 2 and by more
  than the square root of both counts, McNemar-style) than it and than every simpler
  candidate. The candidates, simplest first: the unlabelled model with the threshold the labels
  justify; semi-supervised EM (the labelled pairs enter EM with their class known, which pins
  m and the prior where EM alone would learn another concept) with the same; and, from 20
  labelled pairs of each class, the supervised scorer (a classifier over the same
  comparisons, with random record pairs as background non-matches), judged out of fold.
  Nothing changes with fewer than 3 labelled pairs of each class. `summary.json` `labels`
  says which won and, when the unlabelled model was kept, why;
- rules whose scorer is already `supervised` train it on the rules' labels and these;
- a rule sum keeps its weights and takes the threshold the labels justify;
- the threshold the labels justify (`labels_threshold`) is conservative: the labels are few
  and picked near the decision, not at random, so the threshold that misclassifies the
  fewest of them is no estimate of the best one, and a threshold too low costs far more than
  its labelled errors show (clustering chains matches). It moves only when that corrects at
  least 2 labelled pairs net, only as far as the labels demand (half-way between the
  labelled weights around it, the nearest such place to the model's own threshold), and a
  handful of labels never takes it below 9:1 odds of a match by the model's own weights.
  Where the rules set it above those odds, the model itself claims the pairs down to them are
  90% matches: the labels there need only not refute that. A one-to-one link has no floors
  (a false link costs one pair, as a missed one does; nothing chains): a lower threshold needs
  the labels to show the pairs it adds are mostly matches, which labels of one class can show
  (six labelled matches below the threshold and no non-match), so there the threshold may
  move before 3 pairs of each class are labelled.

**The clusters agree with the labels** (a dedupe without guards): whichever model the guard
keeps, a labelled match is a fact about its pair, so where the clusters keep its two records
apart (scored below the threshold, or cut apart by `split_non_matches`) the pair is added as a
link and their clusters join, unless that would put the records of a labelled non-match in one
cluster (`linkage.clustering.labelled_joins`, the strongest labelled match first;
`summary.json` `labels.joined_clusters` counts the joins). Measured on cora (citations, in-sample
for this figure): the 25 bench labels kept the unlabelled model (11 of their 13 matches lie
below the threshold among as many non-matches), F1 0.857; joining them, 0.880.

The run folder keeps the labels it used as `labels.csv` (`id_l`, `id_r`, `label`), and
`summary.json` says under `labels` how many there were, how they were used and where the
threshold came from.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from linkage.errors import InputError
from linkage.run.compare import compare_pairs, weights_of

LABEL_COLUMNS = ("id_l", "id_r", "label")
GUARD_RULE = ("the unlabelled model is kept unless a model that used the labels (its "
              "threshold moved by them, semi-supervised EM, or the supervised scorer out of "
              "fold) misclassifies clearly fewer labelled pairs: by more than the square root "
              "of both counts and by at least 2, and than each simpler of these; nothing "
              "changes with fewer than 3 labelled pairs of each class, and the supervised "
              "scorer needs 20 of each")
MIN_EACH = 3  # labelled pairs of each class before the labels change anything
MIN_CORRECTED = 2  # labelled errors a change must correct, net, to be made
# The classifier learns a weight per level of every comparison (dozens) and its threshold by
# cross-validation: with a dozen labels of a class, picked near the decision, it calls the
# bulk of pairs wrong (measured: 25 labels on a person table, F1 0.91 -> 0.30).
SUPERVISED_MIN_EACH = 20
# Floors for a threshold the labels lower, as the model's odds of a match at it, and how many
# labelled matches between the floor and the new threshold take it past: a false match costs
# a cluster merge, a missed one a single pair, so a few labels never take the threshold where
# the model itself expects one pair in ten or more to be a non-match, and no handful of labels
# takes it to even odds.
FLOORS = ((9.0, 5), (1.0, 10))
SHOWN_MATCH_RATE = 0.9  # the match rate labels must show (95% lower bound) to lower a threshold
# A one-to-one link's lower threshold: the pairs it adds must be shown mostly matches (a false
# link costs one pair there, as a missed one does; adding pairs pays when more than half match).
ONE_TO_ONE_MATCH_RATE = 0.5
UNCERTAIN_SHARE = 0.6
# Candidate pairs up to which a dedupe's picks see each pair's cluster (a Python walk per pair,
# about a second per 200,000); above, pairs are placed by their own weight.
JOINED_PAIRS = 2_000_000  # of the picked pairs: nearest the threshold; the rest spread over bands
# The classifier trained on a few dozen labels: a logistic regression over the one-hot levels
# (additive, so every score is explained, and smooth where the labels are few; boosted trees
# overfit two dozen labels).
SUPERVISED_MODEL = "logistic_regression"
# With a few hundred labels of each class the classifier may also combine fields (title and
# authors agree, venue and year differ: a match), which no additive model, Fellegi-Sunter or
# the logistic one, can weigh: boosted trees become a candidate, held to the same rule as the
# others (cross-validated errors on the labels, clearly fewer than every simpler candidate's).
TREES_MIN_EACH = 100
TREES_MODEL = "gradient_boosting"
BACKGROUND_PER_LABEL = 4  # random record pairs beside each labelled pair, as non-matches
LABELS_FILE = "labels.csv"  # the labels a run used, kept in its folder
_MATCH = {"1", "1.0", "match", "yes", "true"}
_NON_MATCH = {"0", "0.0", "non-match", "no", "false"}
_UNLABELLED = {"", "unsure", "?"}

LabelsLike = str | Path | pd.DataFrame | Sequence[str | Path | pd.DataFrame]


# ---------------------------------------------------------------------- reading labels


def _fix() -> str:
    return ("A labels file is a CSV with columns id_l, id_r and label (1 match, 0 non-match, "
            "blank or unsure left out), as `linkage sample` writes it.")


def _one_file(source: str | Path | pd.DataFrame, what: str) -> pd.DataFrame:
    if isinstance(source, pd.DataFrame):
        frame = source.astype(str).where(source.notna(), "")
    else:
        path = Path(source)
        if not path.exists():
            raise InputError(f"{what}: no such labels file. {_fix()}")
        if path.is_dir():
            raise InputError(f"{what}: is a folder, not a labels file. Pass the CSV itself "
                             f"(a run folder keeps the labels it used in {LABELS_FILE}).")
        try:
            frame = pd.read_csv(path, dtype=str, keep_default_na=False, encoding="utf-8-sig")
        except (UnicodeDecodeError, pd.errors.ParserError, pd.errors.EmptyDataError) as err:
            reason = str(err).splitlines()[0] if str(err) else type(err).__name__
            raise InputError(f"{what}: cannot read the labels ({reason}). {_fix()}") from None
    missing = [c for c in LABEL_COLUMNS if c not in frame.columns]
    if missing:
        have = ", ".join(map(str, frame.columns)) or "none"
        raise InputError(f"{what}: the labels have no column {', '.join(missing)} (the columns "
                         f"are: {have}). {_fix()}")
    text = frame["label"].astype(str).str.strip().str.lower()
    y = np.full(len(frame), -1, dtype=np.int8)
    y[text.isin(_MATCH).to_numpy()] = 1
    y[text.isin(_NON_MATCH).to_numpy()] = 0
    bad = (y < 0) & ~text.isin(_UNLABELLED).to_numpy()
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise InputError(f"{what}: line {row + 2} has label {frame['label'].iloc[row]!r}. "
                         "Write 1 (match) or 0 (non-match); blank or unsure leaves the pair out.")
    ids = frame[["id_l", "id_r"]].astype(str).apply(lambda c: c.str.strip())
    out = pd.DataFrame({"id_l": ids["id_l"].to_numpy(), "id_r": ids["id_r"].to_numpy(),
                        "label": y, "file": what, "line": np.arange(len(frame)) + 2})
    empty = (out["id_l"] == "") | (out["id_r"] == "")
    if (empty & (y >= 0)).any():
        row = int(np.flatnonzero(empty & (y >= 0))[0])
        raise InputError(f"{what}: line {row + 2} is labelled but names no id in id_l or id_r. "
                         "Fill in both ids, or clear the label.")
    return out[y >= 0]


def read_labels(labels: LabelsLike) -> pd.DataFrame:
    """Every labelled pair of `labels` (a CSV path, a DataFrame, or a list of them, oldest
    first): columns id_l, id_r (text), label (1 or 0), file and line. Blank and unsure labels
    are left out; anything else that is not 1 or 0 is an `InputError` naming the file and line.
    """
    sources = [labels] if isinstance(labels, str | Path | pd.DataFrame) else list(labels)
    if not sources:
        raise InputError(f"no labels file given. {_fix()}")
    frames = []
    for k, source in enumerate(sources):
        what = str(source) if not isinstance(source, pd.DataFrame) else f"labels table {k + 1}"
        frames.append(_one_file(source, what))
    table = pd.concat(frames, ignore_index=True)
    if table.empty:
        names = ", ".join(str(s) for s in sources if not isinstance(s, pd.DataFrame)) or "labels"
        raise InputError(f"{names}: no pair is labelled yet. Fill the label column (1 match, 0 "
                         "non-match) first.")
    return table


def labelled_rows(table: pd.DataFrame, ids: pd.Series, source: np.ndarray,
                  mode: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, pd.DataFrame]:
    """Row numbers of the labelled pairs in the run's records (left id among the left table's,
    right id among the right's when linking), their labels, and the labels as kept (one row
    per pair: a later file's label replaces an earlier one's; within one file a pair labelled
    both ways is an `InputError`). Ids the input does not hold are an `InputError` too."""
    left, right = table["id_l"].to_numpy(dtype=object), table["id_r"].to_numpy(dtype=object)
    if mode == "dedupe":  # a pair in either order is the same pair
        swap = left > right
        left, right = np.where(swap, right, left), np.where(swap, left, right)
        same = left == right
        if same.any():
            row = table.iloc[int(np.flatnonzero(same)[0])]
            raise InputError(f"{row['file']}: line {row['line']} pairs record {row['id_l']} "
                             "with itself. A pair names two different records.")
    keyed = table.assign(id_l=left, id_r=right)
    clash = keyed.groupby(["file", "id_l", "id_r"], sort=False)["label"].nunique() > 1
    if clash.any():
        file, a, b = clash[clash].index[0]
        raise InputError(f"{file}: the pair {a} ~ {b} is labelled both a match and a "
                         "non-match. Keep one label per pair (a pair and its reverse are the "
                         "same pair when deduplicating).")
    kept = keyed.drop_duplicates(["id_l", "id_r"], keep="last").reset_index(drop=True)
    text_ids = ids.astype(str).to_numpy()
    sides = (0, 1) if mode == "link" else (0, 0)
    rows = []
    for side, column in zip(sides, ("id_l", "id_r"), strict=True):
        on_side = source == side
        position = pd.Series(np.flatnonzero(on_side), index=text_ids[on_side])
        position = position[~position.index.duplicated()]
        found = kept[column].map(position)
        if found.isna().any():
            row = kept[found.isna()].iloc[0]
            where = {0: "left table", 1: "right table"}[side] if mode == "link" else "input"
            raise InputError(
                f"{row['file']}: line {row['line']} names {column} {row[column]!r}, which is not "
                f"a record id of the {where} ({int(found.isna().sum())} labelled pair(s) name "
                "unknown ids). The labels must come from a run on this input, with ids from "
                "its id column (--id-column), left ids in id_l and right ids in id_r."
            )
        rows.append(found.to_numpy(dtype=np.int64))
    y = kept["label"].to_numpy(dtype=np.float64)
    return rows[0], rows[1], y, kept[["id_l", "id_r", "label"]]


# ---------------------------------------------------------------------- the threshold


def choose_threshold(weights: np.ndarray, y: np.ndarray, current: float, *,
                     cost_match: np.ndarray | None = None,
                     cost_non_match: np.ndarray | None = None) -> tuple[float, float]:
    """The match weight with the least cost of misclassified labelled pairs (a pair is a match
    at or above it), and that cost. By default each error costs 1 (the cost is the number of
    misclassified pairs); `cost_match[i]` is what calling pair i a match costs and
    `cost_non_match[i]` what calling it a non-match costs. Among equally good thresholds:
    `current` when it is one of them, else the middle of the nearest run of them (half-way
    between the labelled weights around it; a hair beyond the last one where the run is
    open)."""
    w = np.asarray(weights, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    cm = (y == 0.0).astype(np.float64) if cost_match is None else np.asarray(cost_match, float)
    cn = (y == 1.0).astype(np.float64) if cost_non_match is None else np.asarray(
        cost_non_match, float)
    values = np.unique(w)
    cuts = np.concatenate([[-math.inf], values])  # span k: thresholds in (cuts[k], values[k]]
    order = np.argsort(w, kind="stable")
    under = np.concatenate([[0], np.searchsorted(w[order], values, side="right")])
    cn_sum = np.concatenate([[0.0], np.cumsum(cn[order])])
    cm_sum = np.concatenate([[0.0], np.cumsum(cm[order])])
    errors = cn_sum[under] + (cm_sum[-1] - cm_sum[under])  # non-matches below, matches above
    best = float(errors.min())
    slack = 1e-9 * max(1.0, best)
    current_errors = float(cn[w < current].sum() + cm[w >= current].sum())
    if current_errors <= best + slack:
        return float(current), current_errors
    spans = []  # (low, high) of each optimal span: thresholds in (low, high] cost `best`
    for k in np.flatnonzero(errors <= best + slack):
        spans.append((cuts[k], values[k] if k < len(values) else math.inf))
    scale = max(float(np.ptp(values)) if len(values) > 1 else 1.0, 1e-9)

    def place(low: float, high: float) -> float:
        if math.isinf(low) and math.isinf(high):
            return float(current)
        if math.isinf(low):
            return float(high - 1e-6 * scale)
        if math.isinf(high):
            return float(low + 1e-6 * scale)
        return float((low + high) / 2.0)

    def distance(span: tuple[float, float]) -> float:
        low, high = span
        return 0.0 if low < current <= high else min(abs(current - low), abs(current - high))

    low, high = min(spans, key=distance)
    return place(low, high), best


# ---------------------------------------------------------------------- fitting


def _rules_labels(scorer, rules) -> pd.DataFrame:
    """The labels file a `supervised` scorer in the rules names, as a labels table."""
    from linkage.scoring import read_labels as read_supervised

    path = Path(scorer.labels)
    if not path.is_absolute() and Path(rules.source).is_file():
        candidate = Path(rules.source).parent / path
        path = candidate if candidate.exists() else path
    frame = read_supervised(path, id_columns=scorer.id_columns, label_column=scorer.label_column)
    left, right = scorer.id_columns
    return frame.rename(columns={left: "id_l", right: "id_r", scorer.label_column: "label"})


def fit_labelled(rules, labels: LabelsLike, *, ids: pd.Series, source: np.ndarray, mode: str,
                 work: dict, fit, random, judge=None) -> tuple[Any, Any, dict, pd.DataFrame]:
    """Fit the rules' scorer with the labelled pairs (see the module's docstring).

    `fit(scorer, labelled)` fits a scorer on the candidate pairs with `labelled` = (levels of
    the labelled pairs, their 0/1 labels) or None; `random(count, seed)` is the comparison
    matrix of that many seeded random record pairs. Returns the rules
    (a copy, whose scorer is the fitted one), the fitted scorer, the `labels` report for
    summary.json and the labels as kept (id_l, id_r, label) for the run folder's labels.csv.
    The rules given are not changed.

    `judge(scorer, left_rows, right_rows, weights)`, where given, turns the labelled pairs'
    weights into the weights the output decides them by (dedupe: the highest threshold at
    which the two records end in one cluster; a one-to-one link: minus infinity for a pair the
    assignment drops, which no threshold links), so that a label counts as an error only
    where the output would be wrong about it: a labelled non-match whose records a chain of
    matches puts in one cluster is an error, a labelled match so joined is not.
    """
    from linkage.scoring import RuleSum, Supervised

    sources = [labels] if isinstance(labels, str | Path | pd.DataFrame) else list(labels)
    rules = copy.copy(rules)
    scorer = copy.deepcopy(rules.scoring)
    if isinstance(scorer, Supervised):  # the rules' own labels first, --labels over them
        sources = [_rules_labels(scorer, rules), *sources]
    table = read_labels(sources)
    li, ri, y, kept = labelled_rows(table, ids, source, mode)
    n_match, n_non = int(y.sum()), int(len(y) - y.sum())
    matrix = compare_pairs(rules.comparisons, work, li, ri, tf_columns=scorer.tf_columns)
    judged = _Judged(matrix, None if judge is None else
                     (lambda fitted, weight: judge(fitted, li, ri, weight)),
                     bool(mode == "link" and getattr(rules, "one_to_one", False)))
    files = list(dict.fromkeys(str(f) for f in table["file"]))
    report: dict[str, Any] = {"files": files, "pairs": len(y), "matches": n_match,
                              "non_matches": n_non, "rules_threshold": float(scorer.threshold)}
    if isinstance(scorer, Supervised):
        scorer = scorer.fit(matrix, y)
        report.update(mode="supervised", threshold_source="cross-validation on the labels",
                      rule="the rules ask for the supervised scorer")
    elif isinstance(scorer, RuleSum):
        scorer = fit(scorer, None)
        report.update(mode="threshold", rule="a rule sum keeps its weights; the labels set "
                                             "the threshold")
        scorer.threshold, _ = _labelled_threshold(scorer, judged, y, report, floor=-math.inf)
    else:
        scorer = _guarded(scorer, judged, y, report, fit=fit, random=random)
    _settle_moved_threshold(scorer, report)
    weight = _weights(scorer, judged)
    predicted = weight >= scorer.threshold
    report["threshold"] = float(scorer.threshold)
    report["labelled_errors"] = {
        "false_matches": int(np.sum(predicted & (y == 0))),
        "false_non_matches": int(np.sum(~predicted & (y == 1))),
    }
    rules.scoring = scorer
    kept = kept.assign(label=kept["label"].astype(int)).reset_index(drop=True)
    return rules, scorer, report, kept


def _settle_moved_threshold(scorer, report: dict) -> None:
    """A one-to-one threshold moved by the record prior (`one_to_one_threshold`) stays the
    model's only while the labels left it there: where they set another, theirs is the
    threshold, written as such (rules.yaml, model.json), and the move is dropped."""
    rules_threshold = scorer.__dict__.get("threshold_rules_")
    moved = (getattr(scorer, "diagnostics", None) or {}).get("one_to_one_threshold")
    if rules_threshold is None or not isinstance(moved, dict):
        return
    if float(scorer.threshold) == float(moved["threshold"]):
        report["one_to_one_threshold"] = "record prior (the labels left it)"
        return
    del scorer.__dict__["threshold_rules_"]
    del scorer.diagnostics["one_to_one_threshold"]
    report["one_to_one_threshold"] = "replaced by the labels' threshold"


def labels_threshold(weights: np.ndarray, y: np.ndarray, current: float, *,
                     floor: float = 0.0, one_to_one: bool = False,
                     apart: int = 0) -> tuple[float, str]:
    """The threshold a few labelled pairs justify, and why (see `_labels_threshold`)."""
    threshold, why, _ = _labels_threshold(weights, y, current, floor=floor,
                                          one_to_one=one_to_one, apart=apart)
    return threshold, why


def _labels_threshold(weights: np.ndarray, y: np.ndarray, current: float, *,
                      floor: float = 0.0, one_to_one: bool = False, apart: int = 0
                      ) -> tuple[float, str, float | None]:
    """The threshold a few labelled pairs justify, why, and, where a floor held it short of
    the threshold the labels ask for, how many of `weights` that one misclassifies (else
    None). Conservative, because the labels
    are few and picked near the decision (not at random), so the threshold that misclassifies
    the fewest of them is no estimate of the best one, and a threshold set too low costs far
    more than its labelled errors show (clustering chains the extra matches).

    - `current` (the model's own) is kept unless at least `MIN_EACH` pairs of each class are
      labelled, and unless moving it corrects at least `MIN_CORRECTED` labelled pairs more than
      it breaks (one surprising label never moves it);
    - else it moves to the nearest threshold that misclassifies the fewest labelled pairs
      (`choose_threshold`: half-way between the labelled weights around it, so with a margin
      on both sides), and no further;
    - it never goes below the weight where the model's odds of a match are 9 to 1 (`floor`
      is the weight of even odds: 0 for Fellegi-Sunter) unless 5 labelled matches lie
      below that and above the new threshold, nor below even odds unless 10 do (`FLOORS`).
      A one-to-one link (`one_to_one`, the weights as the assignment decides them) has no
      floors: a record links to one record at most, so a false link costs one pair, as a
      missed one does, and nothing chains.
    - the move is made only as far as the labelled pairs it moves across show it (`_shown`);
      a move a floor held short needs them to show it and to correct one of them, not
      `MIN_CORRECTED` of its own: the whole move the labels ask for corrects that many.

    `apart`: labelled non-matches not in `weights` because the output keeps them apart at
    every threshold (a dedupe's clusters split at non-matches; a one-to-one link's assignment
    drops them for a better candidate): right whatever the threshold,
    so they place nothing, but they are non-matches labelled where the sampler looked
    (near the threshold) that a lower one would not join, and count towards `MIN_EACH`."""
    w = np.asarray(weights, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    n_match, n_non = int(np.sum(y == 1.0)), int(np.sum(y == 0.0)) + int(apart)
    if min(n_match, n_non) < MIN_EACH and (len(y) < 2 * MIN_EACH or not one_to_one):
        return float(current), (f"rules: fewer than {MIN_EACH} labelled pairs of each class "
                                "(the threshold is left where the model put it)"), None
    errors_now = int(np.sum((w >= current) != (y == 1.0)))
    candidate, best = choose_threshold(w, y, current)
    if errors_now - best < MIN_CORRECTED:
        return (float(current), "rules (the labels do not clearly ask for another threshold)",
                None)
    held = False
    for odds, needed in () if one_to_one else FLOORS:  # more labelled matches per floor
        low = min(float(current), floor + math.log2(odds))
        if candidate >= low:
            continue
        shown = int(np.sum((y == 1.0) & (w >= candidate) & (w < low)))
        if shown < needed:
            candidate, held = low, True
            break
    if int(np.sum((w >= candidate) != (y == 1.0))) >= errors_now:
        return float(current), "rules (the labels ask for a threshold below the floor)", None
    # A move held at a floor is the part of a move the labels clearly ask for (it corrects
    # MIN_CORRECTED or more, checked above) that the floor lets through: the floor limits how
    # far it goes, not whether, so the part kept needs the labels it crosses to show it
    # (`_shown`) and to correct one of them, not MIN_CORRECTED of its own.
    threshold, why = _shown(w, y, float(current), float(candidate),
                            rate=ONE_TO_ONE_MATCH_RATE if one_to_one else SHOWN_MATCH_RATE,
                            claimed=floor + math.log2(FLOORS[0][0]),
                            corrected=1 if held else MIN_CORRECTED)
    if threshold == candidate and candidate != float(choose_threshold(w, y, current)[0]):
        why = f"labels, held at a floor (odds {odds:g} to 1 of a match by the model's weights)"
    return threshold, why, (best if held and threshold != float(current) else None)


def _shown(w: np.ndarray, y: np.ndarray, current: float, candidate: float, *,
           rate: float = SHOWN_MATCH_RATE, claimed: float = math.inf,
           corrected: int = MIN_CORRECTED) -> tuple[float, str]:
    """`candidate`, or the farthest threshold towards it (a labelled weight's midpoint) whose
    move the labelled pairs it moves across show with 95% confidence (Clopper-Pearson): a
    lower threshold adds pairs, which the labels between must show to be matches at a rate of
    at least `rate`; a higher one drops pairs, which they must show to be mostly non-matches
    (a rate of at most one half). The labelled pairs near the decision are too few to see a
    band's non-matches otherwise, and each false match merges two clusters.

    Where the model's own weights already claim that rate (a lower threshold at or above
    `claimed`, the weight of 9:1 odds of a match, the first of `FLOORS`: a threshold the rules
    set above where the model itself is sure), the labels need only not refute the claim:
    their match rate in the band is not shown below `SHOWN_MATCH_RATE` with 95% confidence.
    Each step must also correct `corrected` labelled pairs, net."""
    from scipy.stats import beta

    if candidate == current:
        return candidate, "rules (the labels agree with it)"
    down = candidate < current
    values = np.unique(w[(w >= candidate) & (w < current)] if down
                       else w[(w >= current) & (w < candidate)])
    steps = np.concatenate([(values[1:] + values[:-1]) / 2.0, [candidate]]) if down else \
        np.concatenate([[candidate], (values[1:] + values[:-1]) / 2.0])
    errors_now = int(np.sum((w >= current) != (y == 1.0)))
    order = np.sort(steps)  # the farthest move first
    if not down:
        order = order[::-1]
    for step in order:
        band = (w >= step) & (w < current) if down else (w >= current) & (w < step)
        n, k = _patterns(w[band], y[band])
        if n == 0:
            continue
        if down and step >= claimed:
            ok = k > 0 and (k == n or beta.ppf(0.95, k + 1, n - k) >= SHOWN_MATCH_RATE)
        elif down:
            ok = k > 0 and beta.ppf(0.05, k, n - k + 1) >= rate
        else:
            ok = k < n and beta.ppf(0.95, k + 1, n - k) <= 0.5
        if ok and errors_now - int(np.sum((w >= step) != (y == 1.0))) >= corrected:
            return float(step), ("labels" if step == candidate else
                                 "labels, as far as they show with 95% confidence")
    return current, "rules (too few labelled pairs show the move with 95% confidence)"


def _patterns(w: np.ndarray, y: np.ndarray) -> tuple[int, float]:
    """(n, k) for a confidence bound on a band's match rate: labelled pairs of one weight (one
    level pattern, to the model the same evidence, as the sampler's rounds may pick twice) are
    one observation, whose share of matches is its labels' mean. The labels stand for the
    patterns they were drawn from, not for as many independent draws as there are pairs."""
    if len(w) == 0:
        return 0, 0.0
    values, which = np.unique(w, return_inverse=True)
    share = np.bincount(which, weights=(y == 1.0).astype(np.float64)) / np.bincount(which)
    return len(values), float(share.sum())


@dataclass
class _Judged:
    """The labelled pairs as the output decides them: their comparison matrix; `judge`
    (scorer, weights) -> the weights the output decides them by (`fit_labelled`'s; None:
    their own); and whether the output is a one-to-one link."""

    matrix: Any  # ComparisonMatrix
    judge: Callable[[Any, np.ndarray], np.ndarray] | None = None
    one_to_one: bool = False


def _weights(scorer, pairs: _Judged) -> np.ndarray:
    """The labelled pairs' weights by `scorer`, as the output decides them (`pairs.judge`)
    where the scorer is a Fellegi-Sunter model."""
    from linkage.scoring import FellegiSunter

    weight, _ = weights_of(scorer, pairs.matrix)
    if pairs.judge is not None and isinstance(scorer, FellegiSunter):
        weight = pairs.judge(scorer, weight)
    return weight


def _errors(scorer, pairs: _Judged, y: np.ndarray) -> int:
    """How many labelled pairs the scorer misclassifies at its own threshold."""
    weight = _weights(scorer, pairs)
    return int(np.sum((weight >= scorer.threshold) != (y == 1.0)))


def _labelled_threshold(scorer, pairs: _Judged, y: np.ndarray, report: dict, *,
                        floor: float = 0.0) -> tuple[float, int]:
    """`labels_threshold` on the labelled pairs' weights (noting in `report` where the
    threshold came from), and how many labelled pairs it misclassifies."""
    weight = _weights(scorer, pairs)
    one_to_one = pairs.one_to_one
    moved = (getattr(scorer, "diagnostics", None) or {}).get("one_to_one_threshold")
    if one_to_one and isinstance(moved, dict):  # even odds of a record's best candidate
        floor = -float(moved.get("shift", 0.0))
    linkable = np.isfinite(weight)  # the others are right or wrong at every threshold
    apart = int(np.sum(np.isneginf(weight) & (y == 0.0)))
    threshold, why, asked = _labels_threshold(weight[linkable], y[linkable],
                                              float(scorer.threshold), floor=floor,
                                              one_to_one=one_to_one, apart=apart)
    report["threshold_source"] = why
    errors = int(np.sum((weight >= threshold) != (y == 1.0)))
    if asked is not None:
        # Held at a floor: the floor limits how far the move goes, not whether the labels ask
        # for it, so the move is judged by the threshold they ask for (the pairs outside
        # `linkable` are right or wrong there as at every threshold).
        report["threshold_judged_by"] = "the threshold the labels ask for, below a floor"
        errors = int(asked) + int(np.sum((weight[~linkable] >= threshold)
                                         != (y[~linkable] == 1.0)))
    return threshold, errors


def _guarded(scorer, pairs: _Judged, y: np.ndarray, report: dict, *, fit, random):
    """The Fellegi-Sunter scorer the labels justify: the unlabelled model (EM alone, its own
    threshold) unless a model that used the labels misclassifies clearly fewer of them.

    Candidates: the unlabelled model with the threshold the labels justify
    (`labels_threshold`), semi-supervised EM (the labelled pairs enter EM with their class
    known) with the same, and the supervised scorer (its errors out of fold). The one with the
    fewest labelled errors replaces the unlabelled model only when it misclassifies fewer by
    more than the square root of both counts (McNemar's z > 1 if the two disagreed on every
    pair either got wrong) and by at least `MIN_CORRECTED`; the in-sample candidates are
    measured on the very pairs they saw, so the margin is the least they must beat; ties go
    to the simpler model."""
    def clearly(fewer: int, than: int) -> bool:
        gain = than - fewer
        return gain >= MIN_CORRECTED and gain > math.sqrt(than + fewer)

    n_match, n_non = int(y.sum()), int(len(y) - y.sum())
    base = fit(copy.deepcopy(scorer), None)
    base_errors = _errors(base, pairs, y)
    report.update(mode="unlabelled", rule=GUARD_RULE, unlabelled_errors=base_errors,
                  threshold_source="rules (the unlabelled model)")
    few = min(n_match, n_non) < MIN_EACH
    if few and not pairs.one_to_one:
        report["kept_because"] = (f"fewer than {MIN_EACH} labelled pairs of each class "
                                  f"({n_match} matches, {n_non} non-matches): label more")
        return base
    candidates = []
    moved = copy.deepcopy(base)
    sub: dict = {}
    moved.threshold, errors = _labelled_threshold(moved, pairs, y, sub)
    candidates.append(("threshold", moved, errors, sub["threshold_source"]))
    if few:  # one threshold only: the labels of one class can show a band (`_shown`)
        if clearly(errors, base_errors):
            report.update(mode="threshold", threshold_source=sub["threshold_source"])
            return moved
        report["kept_because"] = (f"fewer than {MIN_EACH} labelled pairs of each class "
                                  f"({n_match} matches, {n_non} non-matches) and they do not "
                                  "clearly ask for another threshold: label more")
        return base
    semi = fit(scorer, (pairs.matrix.levels.copy(), y.astype(np.int8)))
    sub = {}
    semi.threshold, errors = _labelled_threshold(semi, pairs, y, sub)
    report["semi_supervised_errors"] = errors
    candidates.append(("semi-supervised", semi, errors, sub["threshold_source"]))
    seed = getattr(scorer, "seed", 0)
    trained = None
    if min(n_match, n_non) >= SUPERVISED_MIN_EACH:  # a classifier needs more than EM does
        background = random(BACKGROUND_PER_LABEL * len(y), seed)
        trained = _supervised(pairs.matrix, y, background, seed=seed)
    if trained is not None:
        supervised, cv_errors = trained
        report["supervised_cv_errors"] = cv_errors
        candidates.append(("supervised", supervised, cv_errors,
                           "cross-validation on the labels"))
    if trained is not None and min(n_match, n_non) >= TREES_MIN_EACH:
        trees, trees_errors = _supervised(pairs.matrix, y, background, seed=seed,
                                          model=TREES_MODEL)
        report["supervised_trees_cv_errors"] = trees_errors
        candidates.append(("supervised", trees, trees_errors, "cross-validation on the labels"))
    # Each candidate must clearly beat the unlabelled model and every simpler candidate: the
    # in-sample ones are judged on the pairs they learned from, so a richer model that only
    # matches a moved threshold on those pairs has shown nothing more.
    chosen = None
    for k, (name, model, errors, source) in enumerate(candidates):
        beats = clearly(errors, base_errors) and all(clearly(errors, c[2])
                                                     for c in candidates[:k])
        if beats and (chosen is None or errors < chosen[2]):
            chosen = (name, model, errors, source)
    if chosen is None:
        name, _, errors, _ = min(candidates, key=lambda c: c[2])
        report["kept_because"] = (
            f"no model that used the labels misclassifies clearly fewer of them (the "
            f"unlabelled model: {base_errors}, the best other, {name}: {errors})")
        return base
    name, best, errors, source = chosen
    report.update(mode=name, threshold_source=source)
    if name == "supervised":
        best.n_labelled_ = len(y)  # the person's labels; the background aside
        report["supervised_model"] = best.model
        report["background_non_matches"] = BACKGROUND_PER_LABEL * len(y)
    return best


def _supervised(matrix, y: np.ndarray, background, *, seed: int,
                model: str = SUPERVISED_MODEL):
    """The supervised scorer trained on the labelled pairs, with random record pairs as
    non-matches beside them, and how many labelled pairs its cross-validation misclassifies;
    None when the labels are too few to train one.

    The random pairs (`background`, nearly all non-matches, as for Fellegi-Sunter's u) show
    the classifier what the bulk of pairs looks like: labels picked near the decision say
    nothing of the pairs that agree on nothing, and a classifier that never saw them may call
    them matches."""
    import warnings

    from linkage.scoring import MIN_LABELLED, ComparisonMatrix, Supervised

    n_match, n_non = int(y.sum()), int(len(y) - y.sum())
    if len(y) < MIN_LABELLED or min(n_match, n_non) < 2:
        return None
    both = ComparisonMatrix(matrix.comparisons, np.vstack([matrix.levels, background.levels]),
                            np.vstack([matrix.similarities, background.similarities]))
    target = np.concatenate([y, np.zeros(len(background))])
    with warnings.catch_warnings():  # fewer folds than asked for: expected with few labels
        warnings.simplefilter("ignore")
        scorer = Supervised(labels=LABELS_FILE, seed=seed, model=model)
        scorer = scorer.fit(both, target)
    # The fit's own cross-validation (every pair held out once), read on the labelled pairs.
    held_out = scorer.cv_probability_[: len(y)]
    errors = int(np.sum((held_out >= scorer.threshold_) != (y == 1.0)))
    return scorer, errors


# ---------------------------------------------------------------------- active sampling


def used_labels(run_dir: str | Path) -> pd.DataFrame | None:
    """The labels a run was made with (its labels.csv), or None."""
    path = Path(run_dir) / LABELS_FILE
    return read_labels(path) if path.is_file() else None


def _pair_keys(left: np.ndarray, right: np.ndarray, mode: str) -> np.ndarray:
    left = np.asarray(left).astype(str)
    right = np.asarray(right).astype(str)
    if mode == "dedupe":
        swap = left > right
        left, right = np.where(swap, right, left), np.where(swap, left, right)
    return np.char.add(np.char.add(left, "\x1f"), right)


def _rules_one_to_one(run_dir: Path) -> bool:
    """Whether a run folder's rules (its rules.yaml) link one-to-one."""
    path = run_dir / "rules.yaml"
    if not path.is_file():
        return False
    import yaml

    try:
        rules = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError):
        return False
    return isinstance(rules, dict) and rules.get("one_to_one") is True


def assignment(left: np.ndarray, right: np.ndarray, weight: np.ndarray) -> np.ndarray:
    """The pairs a one-to-one link keeps at some threshold: greedy by weight (as the run
    links), a pair is kept at threshold t exactly when it is kept here and its weight is at
    least t (the greedy's choice of a pair depends only on the pairs weighed above it)."""
    from linkage.clustering import one_to_one

    left_codes = pd.factorize(pd.Series(np.asarray(left)).astype(str))[0]
    right_codes = pd.factorize(pd.Series(np.asarray(right)).astype(str))[0]
    return one_to_one(left_codes, right_codes + len(left_codes) + 1,
                      np.asarray(weight, dtype=np.float64))


def joined_weights(left: np.ndarray, right: np.ndarray, weight: np.ndarray) -> np.ndarray:
    """Each deduplication pair's weight as its cluster decides it: the highest threshold at
    which its two records end in one cluster (`linkage.clustering.joining_weights`)."""
    from linkage.clustering import joining_weights

    codes, _ = pd.factorize(np.concatenate([np.asarray(left).astype(str),
                                            np.asarray(right).astype(str)]))
    a, b = codes[: len(left)], codes[len(left):]
    return joining_weights(int(codes.max()) + 1, a, b, weight, a, b, weight)


def _log_bands(count: int, bands: int) -> list[np.ndarray]:
    """Ranks 0..count-1 (0 nearest the threshold) cut into `bands` runs whose lengths grow
    geometrically: band k ends near count^((k+1)/bands)."""
    if count == 0 or bands == 0:
        return []
    ends = sorted({min(count, max(1, round(count ** ((k + 1) / bands)))) for k in range(bands)})
    ends[-1] = count
    starts = [0, *ends[:-1]]
    return [np.arange(a, b) for a, b in zip(starts, ends, strict=True) if b > a]


def _labels_ask(pairs: pd.DataFrame, keys: np.ndarray, known: np.ndarray, weight: np.ndarray,
                done: list[pd.DataFrame], mode: str, threshold: float,
                linkable: np.ndarray | None) -> tuple[float, float] | None:
    """The span of thresholds the labelled candidate pairs ask for (low, high: between the
    labelled weights around the threshold with the least labelled errors nearest the run's
    own, `choose_threshold`), by the weights the run decides them by, where it
    differs from the run's threshold (labels of one class ask for a threshold just past the
    farthest of them); else None. `linkable`
    (a one-to-one link): the pairs the assignment keeps, the others linked at no threshold."""
    rows = np.flatnonzero(known if linkable is None else known & linkable)
    if len(rows) == 0:
        return None
    table = pd.concat([t for t in done if "label" in t.columns], ignore_index=True) \
        if any("label" in t.columns for t in done) else None
    if table is None:
        return None
    labels = pd.to_numeric(table["label"], errors="coerce")
    answer = dict(zip(_pair_keys(table["id_l"], table["id_r"], mode), labels, strict=True))
    y = np.array([answer.get(k, np.nan) for k in keys[rows]], dtype=np.float64)
    ok = np.isin(y, (0.0, 1.0))
    rows, y = rows[ok], y[ok]
    if len(y) == 0:
        return None
    w = weight[rows]
    asked, _ = choose_threshold(w, y, threshold)
    if asked == threshold or not np.isfinite(asked):
        return None
    below, above = w[w < asked], w[w >= asked]
    return (float(below.max()) if len(below) else -math.inf,
            float(above.min()) if len(above) else math.inf)


def _merge_picks(pairs: pd.DataFrame, open_rows: np.ndarray, known: np.ndarray,
                 threshold: float, count: int) -> list[tuple[int, str]]:
    """Up to `count` pairs, each asking about one merge the clusters refused: two clusters
    kept apart although a pair between them scores at or above the threshold (cut by
    `split_non_matches`, or held back by a guard), the merges deciding the most record pairs
    (the product of the two sizes) first. Of each merge, the open pair between its two most
    central records (the largest share of their cluster each is matched with), so that its
    label speaks for the clusters, not for a stray record between them. A merge asked
    before (a `known` pair lies between the two clusters) is not asked again."""
    if count < 1 or len(open_rows) == 0:
        return []
    ids = pd.factorize(np.concatenate([pairs["id_l"].to_numpy().astype(str),
                                       pairs["id_r"].to_numpy().astype(str)]))[0]
    a, b = ids[: len(pairs)], ids[len(pairs):]
    matched = pairs["is_match"].to_numpy(dtype=bool)
    weight = pairs["match_weight"].to_numpy(dtype=np.float64)
    from linkage.clustering import connected_components

    n_ids = int(ids.max()) + 1
    cluster = connected_components(n_ids, a[matched], b[matched])
    size = np.bincount(cluster, minlength=n_ids)
    degree = np.bincount(np.concatenate([a[matched], b[matched]]), minlength=n_ids)
    central = degree / np.maximum(size[cluster] - 1, 1)
    ca, cb = cluster[a], cluster[b]
    refused = open_rows[(weight[open_rows] >= threshold) & ~matched[open_rows]
                        & (ca[open_rows] != cb[open_rows])]
    if len(refused) == 0:
        return []
    lo, hi = np.minimum(ca, cb), np.maximum(ca, cb)
    merges = np.setdiff1d(lo[refused] * n_ids + hi[refused], lo[known] * n_ids + hi[known])
    between = open_rows[np.isin(lo[open_rows] * n_ids + hi[open_rows], merges)]
    key = lo[between] * n_ids + hi[between]
    decides = size[lo[between]] * size[hi[between]]
    order = np.lexsort((-weight[between], -(central[a[between]] + central[b[between]]),
                        key, -decides))
    ranked = between[order]
    _, first = np.unique(key[order], return_index=True)  # each merge's first pair, in order
    out = []
    for row in ranked[np.sort(first)][:count].tolist():
        x, y = int(size[ca[row]]), int(size[cb[row]])
        out.append((int(row), f"merge: clusters of {x} and {y} records the model matches but "
                              f"keeps apart (the label decides {x * y} record pairs)"))
    return out


def active_pairs(run, n: int, *, seed: int = 0,
                 exclude: pd.DataFrame | None = None) -> pd.DataFrame:
    """The `n` candidate pairs of a run whose labels would change its model most, as the CSV
    `linkage sample` writes (the records side by side, an empty `label` column), with a column
    `picked` that says why each pair was picked. Pairs the run learned from (its labels.csv),
    and those in `exclude` (a labels table), are never picked.

    `run`: a run folder, or a `Result` in memory (then the records are put side by side only
    when its inputs were files that are still there)."""
    from linkage.measure.calibrate import read_run, side_by_side
    from linkage.result import Result

    if n < 1:
        raise InputError(f"--n must be at least 1. Got {n!r} instead.")
    if isinstance(run, Result):
        run_dir, summary, used = Path("."), run.summary(), run.labels
        pairs = run.pairs if isinstance(run.pairs, pd.DataFrame) else run.pairs.to_pandas()
        one_to_one_link = bool(getattr(run.rules, "one_to_one", False))
    else:
        run_dir = Path(run)
        pairs, summary = read_run(run_dir)
        used = used_labels(run_dir)
        one_to_one_link = _rules_one_to_one(run_dir)
    mode = summary.get("mode", "dedupe")
    one_to_one_link = one_to_one_link and mode == "link"
    threshold = float(summary["stages"]["score"]["threshold"])
    levels = [c for c in pairs.columns if str(c).endswith("_level")]
    done = [t for t in (used, exclude) if t is not None]
    keys = _pair_keys(pairs["id_l"].to_numpy(), pairs["id_r"].to_numpy(), mode)
    labelled_patterns: set = set()
    matrix = (pairs[levels].to_numpy(dtype=np.int64) if levels
              else np.zeros((len(pairs), 1), dtype=np.int64))
    pattern = np.unique(matrix, axis=0, return_inverse=True)[1].reshape(-1)
    if done:
        known = np.isin(keys, np.concatenate([_pair_keys(t["id_l"], t["id_r"], mode)
                                              for t in done]))
        labelled_patterns = set(pattern[known].tolist())
        open_rows = np.flatnonzero(~known)
    else:
        known = np.zeros(len(pairs), dtype=bool)
        open_rows = np.arange(len(pairs))
    weight = pairs["match_weight"].to_numpy(dtype=np.float64)
    if one_to_one_link and len(pairs):
        # Only a pair the one-to-one assignment keeps can be linked at any threshold: one
        # that loses to a better candidate of either record is a non-match in the output
        # whatever its label, so labelling it teaches the threshold nothing.
        assigned = assignment(pairs["id_l"].to_numpy(), pairs["id_r"].to_numpy(), weight)
        if np.sum(assigned & ~known) >= n:
            open_rows = np.flatnonzero(assigned & ~known)
    chained = np.zeros(len(pairs), dtype=bool)
    if mode == "dedupe" and 0 < len(pairs) <= JOINED_PAIRS:
        # A pair is decided by its cluster: one whose records a chain of stronger pairs
        # already joins is together at a higher threshold than its own weight, and is
        # placed (uncertain, or in a band) by that.
        joined = joined_weights(pairs["id_l"].to_numpy(), pairs["id_r"].to_numpy(), weight)
        chained = joined > weight
        weight = joined
        if chained.any():
            # The pairs one chain joins at one weight are one decision (a merge of two
            # clusters): they count as one pattern, so that one label asks about that merge.
            merge = np.unique(weight[chained], return_inverse=True)[1].reshape(-1)
            pattern = pattern.copy()
            pattern[chained] = int(pattern.max()) + 1 + merge
            labelled_patterns = set(pattern[known].tolist())
    if len(pairs) == 0:
        raise InputError(f"{run_dir}: the run scored no candidate pair; there is nothing to "
                         "label. Check its blocking (summary.json, stages.block).")
    if len(open_rows) == 0:
        raise InputError(f"{run_dir}: every candidate pair is labelled already; there is "
                         "nothing left to ask.")
    rng = np.random.default_rng(seed)
    tiebreak = rng.random(len(pairs))
    picked_rows: list[int] = []
    why: list[str] = []
    used_patterns: set = set()

    def pick(rows: np.ndarray, reason: str) -> bool:
        """A pair of `rows` (a band, nearest the threshold first) of a pattern not yet
        picked: already labelled patterns last; then the pair nearest the band's middle rank,
        so that the bands' labels sample the weight axis evenly (the place where the matches
        give out is what a threshold needs; the band's edge nearest the threshold says no
        more than the band before it); then the seeded draw."""
        middle = (len(rows) - 1) / 2.0
        rank = np.arange(len(rows), dtype=np.float64)
        keep = ~np.isin(pattern[rows], list(used_patterns))
        rows, rank = rows[keep], rank[keep]
        if len(rows) == 0:
            return False
        seen = np.isin(pattern[rows], list(labelled_patterns))
        best = np.lexsort((tiebreak[rows], np.abs(rank - middle), seen))[0]
        row = int(rows[best])
        picked_rows.append(row)
        why.append(reason)
        used_patterns.add(int(pattern[row]))
        return True

    n_uncertain = max(1, math.ceil(n * UNCERTAIN_SHARE)) if n > 1 else n
    # Uncertain: patterns in order of their distance from the threshold, one pair each, taken
    # in turn with those whose match probability is nearest one half: a threshold set above
    # the model's even odds (to favour precision) has mostly matches around it, and a labeller
    # who sees only matches teaches nothing about where the non-matches begin.
    seen_before = np.isin(pattern[open_rows], list(labelled_patterns))
    gap = np.abs(weight[open_rows] - threshold)
    order = open_rows[np.lexsort((tiebreak[open_rows], seen_before, gap))]
    orders = [(order, "uncertain: nearest the threshold")]
    if "match_probability" in pairs.columns:
        odds = np.abs(pairs["match_probability"].to_numpy(dtype=np.float64)[open_rows] - 0.5)
        odds[chained[open_rows]] = np.inf  # its own probability does not decide it
        orders.append((open_rows[np.lexsort((tiebreak[open_rows], seen_before, odds))],
                       "uncertain: match probability nearest one half"))
    asked = _labels_ask(pairs, keys, known, weight, done, mode, threshold,
                        assigned if one_to_one_link and len(pairs) else None)
    if asked is not None:
        # Bisection: the labels so far bracket the threshold they ask for (between the
        # labelled weights around it, `choose_threshold`); the pairs at the middle rank of
        # that bracket halve it, where pairs near the run's own threshold, already labelled
        # on both sides, would say again what is known. (Ranks, not weights: a bracket open
        # on one side reaches the tail of the weights.)
        low, high = asked
        inside = open_rows[(weight[open_rows] > low) & (weight[open_rows] < high)]
        if len(inside):
            inside = inside[np.lexsort((tiebreak[inside], weight[inside]))]
            middle = np.abs(np.arange(len(inside)) - (len(inside) - 1) / 2.0)
            seen_inside = np.isin(pattern[inside], list(labelled_patterns))
            orders.insert(0, (inside[np.lexsort((tiebreak[inside], middle, seen_inside))],
                              "uncertain: halving the span of thresholds the labels ask for"))
    if mode == "dedupe" and "is_match" in pairs.columns:
        # Merges the clusters refused, in turn with the others: one label decides every
        # pair between two clusters (a labelled match joins them, see `labelled_links`).
        merges = _merge_picks(pairs, open_rows, known, threshold, n_uncertain)
        if merges:
            orders.append((np.array([row for row, _ in merges], dtype=np.int64),
                           [reason for _, reason in merges]))
    cursor = [0] * len(orders)
    turn = 0
    while len(picked_rows) < n_uncertain and any(
            cursor[k] < len(o) for k, (o, _) in enumerate(orders)):
        k = turn % len(orders)
        turn += 1
        rows, reason = orders[k]
        while cursor[k] < len(rows):
            row = int(rows[cursor[k]])
            cursor[k] += 1
            if isinstance(reason, list):  # one merge each, whatever its level pattern
                if row not in picked_rows:
                    picked_rows.append(row)
                    why.append(reason[cursor[k] - 1])
                    used_patterns.add(int(pattern[row]))
                    break
            elif int(pattern[row]) not in used_patterns:
                picked_rows.append(row)
                why.append(reason)
                used_patterns.add(int(pattern[row]))
                break
    # Spread: bands above and below the threshold, nearest first, alternating sides.
    rest = n - len(picked_rows)
    above = open_rows[weight[open_rows] >= threshold]
    below = open_rows[weight[open_rows] < threshold]
    above = above[np.lexsort((tiebreak[above], weight[above]))]  # nearest first
    below = below[np.lexsort((tiebreak[below], -weight[below]))]
    n_above = (rest + 1) // 2 if len(above) else 0
    n_below = rest - n_above if len(below) else 0
    if not len(below):
        n_above = rest
    sides = []
    for rows, count, name in ((above, n_above, "above"), (below, n_below, "below")):
        sides.append([(rows[b], f"spread: band {k + 1} of {count} {name} the threshold")
                      for k, b in enumerate(_log_bands(len(rows), count))])
    for k in range(max((len(s) for s in sides), default=0)):
        for side in sides:
            if k < len(side):
                pick(*side[k])
    # Fill up (patterns ran out in a band, or few pairs): the nearest unpicked pairs, one of
    # each pattern not yet picked first.
    if len(picked_rows) < n:
        left = np.setdiff1d(order, picked_rows, assume_unique=False)
        left = left[np.lexsort((tiebreak[left], np.abs(weight[left] - threshold)))]
        first = np.unique(pattern[left], return_index=True)[1]
        fresh = np.zeros(len(left), dtype=bool)
        fresh[first] = True
        fresh &= ~np.isin(pattern[left], list(used_patterns))
        left = np.concatenate([left[fresh], left[~fresh]])
        for row in left[: n - len(picked_rows)]:
            picked_rows.append(int(row))
            why.append("uncertain: nearest the threshold")
    chosen = pairs.iloc[picked_rows].assign(picked=why)
    chosen = chosen.iloc[np.argsort(-chosen["match_weight"].to_numpy(), kind="stable")]
    if isinstance(run, Result) and not all(Path(i["name"]).is_file()
                                           for i in summary.get("inputs", [])):
        columns = ["picked", "id_l", "id_r", "match_weight", "match_probability", "is_match"]
        return chosen[columns].assign(label="").reset_index(drop=True)
    return side_by_side(run_dir, summary, chosen, ["picked"])
