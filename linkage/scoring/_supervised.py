"""The supervised scorer: a classifier trained on clerically labelled pairs.

Features: for each comparison, a one-hot column per level (null included) and its similarity
(-1 where null). The classifier is a logistic regression, gradient boosting or a random forest
from scikit-learn, seeded, so the same data and settings give the same model.

The probability threshold is chosen by stratified k-fold cross-validation unless given: the
out-of-fold probabilities of the labelled pairs pick the threshold with the best F1 (or, with
`target: precision`, the lowest threshold whose precision reaches `min_precision`). The final
model is then fitted on all labelled pairs.

Match weights are the log2 odds of the match probability (clipped to +/-30), so the pipeline's
`match_weight >= threshold` is `probability >= the chosen probability`: after `fit`,
`threshold` is the log2 odds of the probability threshold (`threshold_`), while the value given
to the constructor stays in `probability_threshold` (that is what `to_dict` writes back).

Contributions: a logistic regression is additive in its features, so each comparison gets the
sum of its features' coefficients times their values (in log2 odds) and the intercept is the
bias. Trees have no additive explanation: their contributions are one column, `model`, holding
the whole log2 odds (and the bias is 0). Either way contributions + bias = match weight.

Persistence: `save` writes JSON (settings, the chosen threshold, the CV figures) and, beside
it, an `.npz` of the training features and labels (no pickle). `load` refits the same seeded
model on them, which gives identical scores with the same scikit-learn version (a different
version warns).

Labels come from a CSV (`labels:`) of two id columns and a label column. `read_labels` reads
it and `labels_for_pairs` aligns it with candidate pairs (order-insensitive, ids as text).

Example (YAML)::

    scoring:
      type: supervised
      labels: labels.csv
      id_columns: [unique_id_l, unique_id_r]
      label_column: clerical_match_score
      model: logistic_regression
"""

from __future__ import annotations

import json
import math
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from linkage._schema import check, did_you_mean, is_default, plain
from linkage.comparators import NULL_LEVEL, Comparison
from linkage.errors import InputError, LinkageWarning, user_stacklevel
from linkage.options import SupervisedModel, SupervisedTarget
from linkage.scoring._base import ComparisonMatrix, Scorer

_CLIP = 30.0  # match weights (log2 odds) are clipped to +/- this
MIN_LABELLED = 10
_FORMAT = "linkage.supervised"
_FORMAT_VERSION = 1
_MODELS = ("logistic_regression", "gradient_boosting", "random_forest")
_TRUE = {"1", "true", "match", "yes"}
_FALSE = {"0", "false", "non-match", "non_match", "nonmatch", "no-match", "no"}


# ---------------------------------------------------------------------- labels


def read_labels(
    path: str | Path,
    *,
    id_columns: Sequence[str] = ("id_l", "id_r"),
    label_column: str = "label",
) -> pd.DataFrame:
    """Read a CSV of labelled pairs as text; InputError names the file, the column and the fix."""
    source = str(path)
    try:
        frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    except FileNotFoundError:
        raise InputError(
            f"{source}: the labels file does not exist. Point `labels` at a CSV of labelled "
            f"pairs with columns {', '.join(id_columns)} and {label_column}."
        ) from None
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as err:
        raise InputError(
            f"{source}: cannot read the labels file as CSV ({err}). Save it as UTF-8 CSV with "
            f"a header row naming {', '.join(id_columns)} and {label_column}."
        ) from None
    _check_label_columns(frame, id_columns, label_column, source)
    return frame


def _check_label_columns(
    frame: pd.DataFrame, id_columns: Sequence[str], label_column: str, source: str
) -> None:
    present = [str(c) for c in frame.columns]
    for role, column in [("id column", c) for c in id_columns] + [("label column", label_column)]:
        if column not in present:
            key = "id_columns" if role == "id column" else "label_column"
            raise InputError(
                f"{source}: the labels have no {role} `{column}` (their columns are: "
                f"{', '.join(present) or 'none'}).{did_you_mean(column, present)} Rename the "
                f"column in the file, or set `{key}` in the scoring settings."
            )


def _parse_labels(values: pd.Series, source: str, label_column: str) -> np.ndarray:
    """1.0 / 0.0 per row, NaN where blank; InputError names the first bad value and its line."""
    text = values.astype(str).str.strip().str.lower()
    out = np.full(len(text), np.nan)
    out[text.isin(_TRUE).to_numpy()] = 1.0
    out[text.isin(_FALSE).to_numpy()] = 0.0
    rest = np.isnan(out) & (text != "").to_numpy() & ~values.isna().to_numpy()
    if rest.any():
        score = pd.to_numeric(text[rest], errors="coerce").to_numpy(dtype=np.float64)
        bad = ~((score >= 0.0) & (score <= 1.0))  # NaN (not a number) is bad too
        if bad.any():
            row = int(np.flatnonzero(rest)[np.flatnonzero(bad)[0]])
            raise InputError(
                f"{source}: label {values.iloc[row]!r} in column `{label_column}` (line "
                f"{row + 2}) is not a label. Use 1/0, true/false, match/non-match, or a match "
                "score between 0 and 1 (0.5 and above is a match); leave it blank for unknown."
            )
        out[rest] = (score >= 0.5).astype(np.float64)
    return out


def _pair_keys(a: np.ndarray, b: np.ndarray, ordered: bool = False) -> np.ndarray:
    """One text key per pair; unordered (a dedupe pair and its reverse are one pair) unless
    `ordered` (a link: left id a, right id b; the reverse names two other records)."""
    a = np.asarray(a).astype(str)
    b = np.asarray(b).astype(str)
    if ordered:
        return np.char.add(np.char.add(a, "\x1f"), b)
    lo, hi = np.where(a <= b, a, b), np.where(a <= b, b, a)
    return np.char.add(np.char.add(lo, "\x1f"), hi)


def labels_for_pairs(
    labels: pd.DataFrame,
    id_l: np.ndarray,
    id_r: np.ndarray,
    *,
    id_columns: Sequence[str] = ("id_l", "id_r"),
    label_column: str = "label",
    source: str = "labels",
    ordered: bool = False,
) -> np.ndarray:
    """y aligned with the pairs (id_l[i], id_r[i]): 1.0, 0.0, or NaN where unlabelled.

    A label applies to a pair in either order (unless `ordered`: in a link the first id is a
    left record and the second a right one, so a pair and its reverse are different pairs),
    ids are compared as text, blank labels are unlabelled, and one pair labelled both ways
    raises `InputError`.
    """
    _check_label_columns(labels, id_columns, label_column, source)
    left, right = (labels[c].astype(str).str.strip().to_numpy() for c in id_columns)
    values = _parse_labels(labels[label_column], source, label_column)
    keep = ~np.isnan(values)
    keys, values = _pair_keys(left[keep], right[keep], ordered), values[keep]
    table = pd.DataFrame({"key": keys, "y": values}).drop_duplicates()
    clash = table["key"].duplicated(keep=False)
    if clash.any():
        a, _, b = table.loc[clash, "key"].iloc[0].partition("\x1f")
        raise InputError(
            f"{source}: the pair ({a}, {b}) is labelled both a match and a non-match "
            f"({int(clash.sum()) // 2} pair(s) conflict). Keep one label per pair"
            + (" (the left id comes first)." if ordered
               else " (a pair and its reverse are the same pair).")
        )
    id_l, id_r = np.asarray(id_l), np.asarray(id_r)
    if len(id_l) != len(id_r):
        raise InputError(f"id_l has {len(id_l)} ids but id_r has {len(id_r)}; pass aligned ids.")
    where = pd.Index(table["key"].to_numpy()).get_indexer(_pair_keys(id_l, id_r, ordered))
    y = np.full(len(id_l), np.nan)
    hit = where >= 0
    y[hit] = table["y"].to_numpy()[where[hit]]
    return y


# ---------------------------------------------------------------------- features


def feature_matrix(X: ComparisonMatrix) -> np.ndarray:
    """One-hot levels (null is the last slot of each comparison) and similarities (NaN -> -1)."""
    n = len(X)
    sizes = [len(c.level_labels) for c in X.comparisons]
    width = sum(s + 2 for s in sizes)
    out = np.zeros((n, width), dtype=np.float64)
    rows = np.arange(n)
    start = 0
    for k, size in enumerate(sizes):
        levels = X.levels[:, k].astype(np.int64)
        if n and (levels.min() < NULL_LEVEL or levels.max() >= size):
            raise InputError(
                f"comparison `{X.names[k]}` holds levels {int(levels.min())}..."
                f"{int(levels.max())}, but it has levels -1..{size - 1}."
            )
        out[rows, start + np.where(levels == NULL_LEVEL, size, levels)] = 1.0
        sims = X.similarities[:, k].astype(np.float64)
        out[:, start + size + 1] = np.where(np.isnan(sims), -1.0, sims)
        start += size + 2
    return out


def _feature_names(comparisons: list[Comparison]) -> list[str]:
    names = []
    for c in comparisons:
        names += [f"{c.output_name}={lab}" for lab in c.level_labels]
        names += [f"{c.output_name}=null", f"{c.output_name}_similarity"]
    return names


def _log2_odds(p: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore"):
        w = np.log2(p) - np.log2(1.0 - p)
    return np.clip(w, -_CLIP, _CLIP)


def _choose_threshold(
    p: np.ndarray, t: np.ndarray, target: str, min_precision: float
) -> tuple[float, bool]:
    """The probability threshold, and whether the precision target was reached."""
    order = np.argsort(-p, kind="stable")
    ps, ts = p[order], t[order]
    tp = np.cumsum(ts)
    k = np.arange(1, len(ps) + 1)
    ends = np.flatnonzero(np.append(ps[1:] != ps[:-1], True))  # last of each run of equal p
    precision = tp[ends] / k[ends]
    f1 = 2.0 * tp[ends] / (k[ends] + tp[-1])
    reached = True
    if target == "f1":
        pick = int(np.argmax(f1))
    else:
        ok = np.flatnonzero(precision >= min_precision)
        reached = len(ok) > 0
        pick = int(ok[-1]) if reached else int(np.argmax(precision))
    i = ends[pick]
    if i + 1 < len(ps):  # halfway to the next lower probability: same CV verdicts, more margin
        return float((ps[i] + ps[i + 1]) / 2.0), reached
    return float(ps[i]), reached


def _metrics(p: np.ndarray, t: np.ndarray, threshold: float) -> tuple[float, float, float]:
    predicted = p >= threshold
    tp = float(np.sum(predicted & (t == 1.0)))
    precision = tp / predicted.sum() if predicted.any() else 0.0
    recall = tp / float(np.sum(t == 1.0))
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return precision, recall, f1


# ---------------------------------------------------------------------- the scorer


class Supervised(Scorer):
    """A classifier trained on labelled pairs; a pair is a match at or above the threshold.

    Parameters: `labels` is the CSV of labelled pairs (`id_columns` and `label_column` name its
    columns; labels are 1/0, true/false, match/non-match or a score thresholded at 0.5);
    `model` picks the classifier; `threshold` is a match probability (null: chosen by `cv`-fold
    cross-validation for `target`: best F1, or the lowest threshold reaching `min_precision`);
    `seed` makes it all repeatable.

    `fit(X, y)` takes y aligned with X (1.0, 0.0, NaN = unlabelled; see `labels_for_pairs` or
    `labels_for`). Learned: `threshold_` (probability), `cv_precision_`, `cv_recall_`,
    `cv_f1_` (of the out-of-fold probabilities at `threshold_`), `n_labelled_`, `model_`.
    """

    kind = "supervised"

    def __init__(
        self,
        *,
        labels: str,
        id_columns: list[str] = ("id_l", "id_r"),
        label_column: str = "label",
        model: SupervisedModel = "gradient_boosting",
        threshold: float | None = None,
        target: SupervisedTarget = "f1",
        min_precision: float = 0.95,
        cv: int = 5,
        seed: int = 0,
    ):
        check(isinstance(labels, str) and labels.strip() != "", self, "labels",
              "must be the path of a CSV of labelled pairs", labels)
        check(not isinstance(id_columns, str | bytes) and len(id_columns) == 2
              and all(isinstance(c, str) and c for c in id_columns)
              and id_columns[0] != id_columns[1], self, "id_columns",
              "must be two different column names (the ids of the two records of a pair)",
              id_columns)
        check(isinstance(label_column, str) and label_column != "", self, "label_column",
              "must be a column name", label_column)
        check(model in _MODELS, self, "model", "must be one of " + ", ".join(_MODELS), model)
        check(threshold is None or (isinstance(threshold, int | float)
                                    and not isinstance(threshold, bool)
                                    and 0.0 < threshold < 1.0), self, "threshold",
              "must be a match probability strictly between 0 and 1, or null to choose it by "
              "cross-validation", threshold)
        check(target in ("f1", "precision"), self, "target", "must be 'f1' or 'precision'",
              target)
        check(isinstance(min_precision, int | float) and not isinstance(min_precision, bool)
              and 0.0 < min_precision <= 1.0, self, "min_precision",
              "must be a number in (0, 1]", min_precision)
        check(isinstance(cv, int) and not isinstance(cv, bool) and cv >= 2, self, "cv",
              "must be an integer >= 2 (the number of cross-validation folds)", cv)
        check(isinstance(seed, int) and not isinstance(seed, bool), self, "seed",
              "must be an integer", seed)
        self.labels = labels
        self.id_columns = list(id_columns)
        self.label_column = label_column
        self.model = model
        self.probability_threshold = None if threshold is None else float(threshold)
        self.target = target
        self.min_precision = float(min_precision)
        self.cv = cv
        self.seed = seed

    # ------------------------------------------------------------------ settings

    @property
    def threshold(self) -> float:  # type: ignore[override]
        """The match-weight threshold: log2 odds of the probability threshold.

        Before `fit` this is the given probability's log2 odds, or NaN when cross-validation
        is still to choose it.
        """
        p = getattr(self, "threshold_", self.probability_threshold)
        if p is None:
            return math.nan
        return float(_log2_odds(np.array([p]))[0])

    def to_dict(self) -> dict[str, Any]:
        """The constructor arguments that differ from their defaults (threshold as given)."""
        out: dict[str, Any] = {"type": self.kind}
        for name, param in self._params().items():
            value = self.probability_threshold if name == "threshold" else getattr(self, name)
            if is_default(param, value):
                continue
            out[name] = plain(value)
        return out

    def validate_against(self, comparisons: list[Comparison]) -> None:
        """Any comparisons will do; there must be at least one to learn from."""
        check(len(comparisons) > 0, self, "comparisons",
              "must list at least one comparison for a supervised scorer to learn from",
              comparisons)

    def labels_for(
        self, id_l: np.ndarray, id_r: np.ndarray, *, base: str | Path = "."
    ) -> np.ndarray:
        """y for these pairs from the `labels` file (a relative path is taken from `base`)."""
        path = Path(base) / self.labels
        frame = read_labels(path, id_columns=self.id_columns, label_column=self.label_column)
        return labels_for_pairs(frame, id_l, id_r, id_columns=self.id_columns,
                                label_column=self.label_column, source=str(path))

    @property
    def weighs_rows_apart(self) -> bool:
        # a logistic regression's decision function is one matrix product over the block
        return self.model != "logistic_regression"

    # ------------------------------------------------------------------ fitting

    def new_model(self):
        if self.model == "logistic_regression":
            from sklearn.linear_model import LogisticRegression

            return LogisticRegression(C=1.0, max_iter=5000, random_state=self.seed)
        if self.model == "gradient_boosting":
            from sklearn.ensemble import GradientBoostingClassifier

            return GradientBoostingClassifier(random_state=self.seed)
        from sklearn.ensemble import RandomForestClassifier

        return RandomForestClassifier(n_estimators=200, min_samples_leaf=2,
                                      random_state=self.seed)

    def fit(
        self,
        X: ComparisonMatrix,
        y: np.ndarray | None = None,
        *,
        random: ComparisonMatrix | None = None,
    ) -> Supervised:
        """Choose the threshold by cross-validation, then fit the model on every labelled pair."""
        from sklearn.model_selection import StratifiedKFold, cross_val_predict

        self.validate_against(X.comparisons)
        if y is None:
            raise InputError(
                f"Supervised.fit needs labels y aligned with the candidate pairs. Read them "
                f"from {self.labels!r} with `scorer.labels_for(id_l, id_r)` (or "
                "`labels_for_pairs`) and pass them as `fit(X, y)`."
            )
        y = np.asarray(y, dtype=np.float64)
        if y.shape != (len(X),):
            raise InputError(
                f"Supervised.fit got {y.shape[0] if y.ndim else 0} labels for {len(X)} pairs; "
                "y must hold one value per candidate pair (NaN where unlabelled)."
            )
        known = ~np.isnan(y)
        if not np.all((y[known] == 0.0) | (y[known] == 1.0)):
            raise InputError("Supervised.fit: labels y must be 1.0, 0.0 or NaN (unlabelled).")
        features = feature_matrix(X)[known]
        target = y[known]
        n_match = int(target.sum())
        n_non = len(target) - n_match
        if len(target) < MIN_LABELLED or n_match == 0 or n_non == 0:
            raise InputError(
                f"Supervised.fit: {len(target)} of the {len(X)} candidate pairs are labelled "
                f"({n_match} match(es), {n_non} non-match(es)); it needs at least "
                f"{MIN_LABELLED} labelled pairs with both matches and non-matches. Label more "
                f"pairs in {self.labels!r} (check that its ids are the ids of the input "
                f"tables, in columns {self.id_columns}), or use `type: fellegi_sunter`, which "
                "needs no labels."
            )
        folds = min(self.cv, n_match, n_non)
        if folds < 2:
            raise InputError(
                f"Supervised.fit: cross-validation needs at least 2 labelled matches and 2 "
                f"non-matches among the candidate pairs; there are {n_match} and {n_non}. "
                f"Label more pairs in {self.labels!r}."
            )
        if folds < self.cv:
            warnings.warn(
                f"Supervised: only {min(n_match, n_non)} labelled pairs of the rarer class, so "
                f"cross-validation uses {folds} folds instead of cv={self.cv}.",
                LinkageWarning,
                stacklevel=user_stacklevel(),
            )
        splitter = StratifiedKFold(n_splits=folds, shuffle=True, random_state=self.seed)
        cv_p = cross_val_predict(self.new_model(), features, target, cv=splitter,
                                 method="predict_proba")[:, 1]
        # each labelled pair's probability from the fold that held it out (the labels' judge
        # reads them; not saved with the model)
        self.cv_probability_ = cv_p
        if self.probability_threshold is None:
            chosen, reached = _choose_threshold(cv_p, target, self.target, self.min_precision)
            if not reached:
                warnings.warn(
                    f"Supervised: no threshold reaches precision {self.min_precision:g} in "
                    "cross-validation; using the one with the best precision. Label more "
                    "pairs, add comparisons, or lower `min_precision`.",
                    LinkageWarning,
                    stacklevel=user_stacklevel(),
                )
        else:
            chosen = self.probability_threshold
        precision, recall, f1 = _metrics(cv_p, target, chosen)
        self._set_learned(X.comparisons, features, target, chosen,
                          {"precision": precision, "recall": recall, "f1": f1, "folds": folds})
        return self

    def _set_learned(
        self,
        comparisons: list[Comparison],
        features: np.ndarray,
        target: np.ndarray,
        threshold: float,
        cv: dict[str, float],
    ) -> None:
        """Fit the final model and store the learned state (fit and load share this)."""
        self.model_ = self.new_model().fit(features, target)
        self.level_labels_ = {c.output_name: list(c.level_labels) for c in comparisons}
        self.feature_names_ = _feature_names(comparisons)
        groups = np.repeat(np.arange(len(comparisons)),
                           [len(c.level_labels) + 2 for c in comparisons])
        self._groups_ = np.eye(len(comparisons))[groups]  # feature -> comparison indicator
        self._train_features_ = features
        self._train_target_ = target
        self.n_labelled_ = len(target)
        self.cv_precision_ = float(cv["precision"])
        self.cv_recall_ = float(cv["recall"])
        self.cv_f1_ = float(cv["f1"])
        self.cv_folds_ = int(cv["folds"])
        self.threshold_ = float(threshold)

    # ------------------------------------------------------------------ scoring

    def _checked_features(self, X: ComparisonMatrix) -> np.ndarray:
        self._check_fitted("model_")
        names = [c.output_name for c in X.comparisons]
        if names != list(self.level_labels_):
            raise InputError(
                f"Supervised was fitted on comparisons {list(self.level_labels_)}, but these "
                f"pairs have {names}. Refit it on these comparisons."
            )
        for c in X.comparisons:
            if list(c.level_labels) != self.level_labels_[c.output_name]:
                raise InputError(
                    f"comparison `{c.output_name}` has levels {c.level_labels}, but Supervised "
                    f"was fitted with {self.level_labels_[c.output_name]}. Refit it."
                )
        return feature_matrix(X)

    def _raw_log2_odds(self, features: np.ndarray) -> np.ndarray:
        if len(features) == 0:
            return np.zeros(0)
        if hasattr(self.model_, "decision_function"):  # log-odds without rounding p to 0 or 1
            return self.model_.decision_function(features) / math.log(2.0)
        return _log2_odds(self.model_.predict_proba(features)[:, 1])

    def match_weight(self, X: ComparisonMatrix) -> np.ndarray:
        """log2 odds of the match probability, clipped to +/-30."""
        return np.clip(self._raw_log2_odds(self._checked_features(X)), -_CLIP, _CLIP)

    def match_probability(self, X: ComparisonMatrix) -> np.ndarray:
        features = self._checked_features(X)
        if len(features) == 0:
            return np.zeros(0)
        return self.model_.predict_proba(features)[:, 1]

    def predict(self, X: ComparisonMatrix) -> np.ndarray:
        return self.match_weight(X) >= self.threshold

    def contributions(self, X: ComparisonMatrix) -> pd.DataFrame:
        """Logistic regression: each comparison's share of the log2 odds. Trees: one column
        `model` with the whole log2 odds (trees have no additive explanation)."""
        features = self._checked_features(X)
        if self.model == "logistic_regression":
            coef = self.model_.coef_[0] / math.log(2.0)
            parts = (features * coef) @ self._groups_
            w = parts.sum(axis=1) + self.bias()
            clipped = np.clip(w, -_CLIP, _CLIP)
            # Where the clip binds, scale the parts so they still add up to the match weight.
            over = w != clipped
            if over.any():
                total = parts[over].sum(axis=1)
                scale = np.divide(clipped[over] - self.bias(), total,
                                  out=np.ones_like(total), where=total != 0)
                parts[over] *= scale[:, None]
            return pd.DataFrame(parts, columns=[c.output_name for c in X.comparisons])
        return pd.DataFrame({"model": self.match_weight(X)})

    def bias(self) -> float:
        self._check_fitted("model_")
        if self.model == "logistic_regression":
            return float(self.model_.intercept_[0]) / math.log(2.0)
        return 0.0

    def coefficient_table(self) -> pd.DataFrame:
        """Logistic regression only: feature, comparison, coefficient (log2 odds per unit)."""
        self._check_fitted("model_")
        if self.model != "logistic_regression":
            raise InputError(f"coefficient_table needs model: logistic_regression, not "
                             f"{self.model!r} (trees have no coefficients).")
        comp = [n.split("=")[0] if "=" in n else n[: -len("_similarity")]
                for n in self.feature_names_]
        return pd.DataFrame({"feature": self.feature_names_, "comparison": comp,
                             "coefficient": self.model_.coef_[0] / math.log(2.0)})

    # ------------------------------------------------------------------ persistence

    @staticmethod
    def _data_path(path: str | Path) -> Path:
        return Path(path).with_suffix(".npz")

    def save(self, path: str | Path) -> None:
        """Write JSON at `path` and the training data as `.npz` beside it (no pickle)."""
        import sklearn

        self._check_fitted("model_")
        path = Path(path)
        data = self._data_path(path)
        doc = {
            "format": _FORMAT,
            "version": _FORMAT_VERSION,
            "params": self.to_dict(),
            "threshold": self.threshold_,
            "cv": {"precision": self.cv_precision_, "recall": self.cv_recall_,
                   "f1": self.cv_f1_, "folds": self.cv_folds_},
            "n_labelled": self.n_labelled_,
            "comparisons": [{"name": n, "levels": lv} for n, lv in self.level_labels_.items()],
            "feature_names": self.feature_names_,
            "training_data": data.name,
            "sklearn_version": sklearn.__version__,
        }
        with data.open("wb") as fh:
            np.savez_compressed(fh, features=self._train_features_, target=self._train_target_)
        path.write_text(json.dumps(doc, indent=2, ensure_ascii=False), encoding="utf-8")

    @classmethod
    def load(cls, path: str | Path) -> Supervised:
        """A fitted scorer from `save`'s files: the model is refitted on the saved data."""
        import sklearn

        source = str(path)
        try:
            doc = json.loads(Path(path).read_text(encoding="utf-8"))
        except json.JSONDecodeError as err:
            raise InputError(f"{source}: not a saved Supervised model ({err}).") from None
        if not isinstance(doc, dict) or doc.get("format") != _FORMAT:
            raise InputError(f"{source}: not a saved Supervised model (no format {_FORMAT!r}).")
        if doc.get("version") != _FORMAT_VERSION:
            raise InputError(
                f"{source}: saved model version {doc.get('version')!r} is not supported "
                f"(this version of linkage reads {_FORMAT_VERSION})."
            )
        scorer = cls.from_dict(doc["params"], source=source)
        assert isinstance(scorer, Supervised)
        data = Path(path).parent / doc.get("training_data", cls._data_path(path).name)
        try:
            with np.load(data, allow_pickle=False) as npz:
                features, target = npz["features"], npz["target"]
            comparisons = [_Stub(c["name"], list(c["levels"])) for c in doc["comparisons"]]
            cv = doc["cv"]
            threshold = float(doc["threshold"])
        except FileNotFoundError:
            raise InputError(
                f"{source}: the training data {data} is missing. Keep the .npz that `save` "
                "wrote beside the JSON; the model is refitted from it."
            ) from None
        except (KeyError, TypeError, ValueError) as err:
            raise InputError(f"{source}: a saved Supervised model is damaged ({err}).") from None
        if doc.get("sklearn_version") != sklearn.__version__:
            warnings.warn(
                f"{source} was saved with scikit-learn {doc.get('sklearn_version')}, this is "
                f"{sklearn.__version__}: the refitted model may score slightly differently.",
                LinkageWarning,
                stacklevel=user_stacklevel(),
            )
        scorer._set_learned(comparisons, features, target, threshold, cv)  # type: ignore[arg-type]
        return scorer


class _Stub:
    """The name and level labels of a saved comparison: all `_set_learned` needs of one."""

    def __init__(self, name: str, levels: list[str]):
        self.output_name = name
        self.level_labels = levels


assert NULL_LEVEL == -1
