"""A linker for notebooks, in scikit-learn's manner: fitted once, then asked again and again.

    linker = lk.Linker().fit("customers.csv")          # rules suggested, EM fitted: one run
    linker.predict()                                     # scored pairs, levels by their labels
    linker.cluster(threshold=6)                          # another threshold: no new blocking,
    linker.cluster(threshold=10)                         #   comparing or fitting
    linker.explain("C-000019", "C-000004")               # why two records were (not) linked
    linker.evaluate(truth)                               # against true entities
    linker.report()                                      # the report page, inline

`fit` runs the pipeline once and keeps its candidate pairs and comparison matrix (a checkpoint
in a temporary folder, removed with the linker) and the fitted scorer. `cluster` at another
threshold runs again from there: the records are normalized again and the pairs scored with the
fitted model (cheap), the blocking, comparing and fitting are reused, so that the result is the
very run the CLI would write at that threshold, byte for byte. `get_params`/`set_params` work as
scikit-learn's: changing what the fit depends on (rules, labels, ids) unfits the linker; the
threshold does not.
"""

from __future__ import annotations

import copy
import html
import math
import shutil
import tempfile
import weakref
from pathlib import Path
from typing import Any

import pandas as pd

from linkage.errors import InputError
from linkage.explain import Explanation
from linkage.result import Result

_FIT_PARAMS = ("rules", "labels", "id_column", "sep", "encoding", "candidates")


class Linker:
    """Fit once (rules given or suggested, with or without labels), then predict, cluster at
    any threshold, explain, evaluate and report without running the pipeline again.

    `rules`: a `Rules`, a YAML path or a mapping; None suggests them from the table(s) at
    `fit`, as `linkage dedupe TABLE` does. `labels`: labelled pairs (a CSV path, a DataFrame
    with id_l, id_r, label, or a list of them; see `linkage.active`). `threshold`: the match
    weight `predict`, `cluster`, `evaluate` and `report` use when not given one; None: the
    fitted model's. `id_column`, `sep`, `encoding`: as for `linkage.dedupe`. `candidates`:
    the candidate pairs to compare instead of the rules' blocking, a pandas MultiIndex of
    (left id, right id) index labels as `recordlinkage.Index` makes them (`linkage.interop`).
    """

    def __init__(self, rules=None, *, labels=None, threshold: float | None = None,
                 id_column: str | None = None, sep: str | None = None,
                 encoding: str = "utf-8", progress: bool | None = False, candidates=None):
        self.rules = rules
        self.candidates = candidates
        self.labels = labels
        self.threshold = threshold
        self.id_column = id_column
        self.sep = sep
        self.encoding = encoding
        self.progress = progress
        self._unfit()

    # ------------------------------------------------------------------ scikit-learn manners

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        """The constructor's arguments, as scikit-learn's `get_params`."""
        return {name: getattr(self, name) for name in
                ("rules", "labels", "threshold", "id_column", "sep", "encoding", "progress",
                 "candidates")}

    def set_params(self, **params) -> Linker:
        """Set constructor arguments; those the fit depends on (rules, labels, ids, how files
        are read) unfit the linker, the threshold and progress do not."""
        known = self.get_params()
        for name, value in params.items():
            if name not in known:
                raise InputError(f"Linker has no parameter {name!r}; it has "
                                 f"{', '.join(known)}.")
            setattr(self, name, value)
            if name in _FIT_PARAMS:
                self._unfit()
        return self

    def __sklearn_is_fitted__(self) -> bool:
        return self.result_ is not None

    # ------------------------------------------------------------------ fitting

    def fit(self, table, right=None) -> Linker:
        """Run the pipeline once on `table` (dedupe) or on `table` and `right` (link): a path
        or any DataFrame (`linkage.io.as_frame`). Returns the linker, fitted."""
        from linkage import api

        self._unfit()
        tables = [api.as_native(table, "the table" if right is None else "the left table")]
        if right is not None:
            tables.append(api.as_native(right, "the right table"))
        self._id_column, given = self.id_column, None
        if self.candidates is not None:  # the pairs given replace the rules' blocking
            from linkage.interop import with_candidates

            tables, self._id_column, given = with_candidates(tables, self.candidates,
                                                             self.id_column)
        rules = self.rules
        if rules is None:
            from linkage.io import read
            from linkage.suggest import suggest_rules

            frames = [read(t, sep=self.sep, encoding=self.encoding) for t in tables]
            rules = suggest_rules(frames).as_rules()
        rules = api.as_rules(rules)
        if given is not None:
            rules = copy.copy(rules)
            rules.blocking = [given]
            rules.exact = rules.url = rules.semantic = None  # the pairs given are all the pairs
        folder = Path(tempfile.mkdtemp(prefix="linkage-linker-"))
        self._cleanup = weakref.finalize(self, shutil.rmtree, folder, True)
        self._tables, self._checkpoint = tables, folder / "checkpoint"
        result = self._run(rules, labels=self.labels)
        self.mode_ = result.mode
        self.rules_ = result.rules
        self.scorer_ = result.scorer
        self.result_ = result
        self._by_threshold = {float(result.scorer.threshold): result}
        return self

    def _run(self, rules, *, labels=None, model=None) -> Result:
        from linkage import api

        run = api.dedupe if len(self._tables) == 1 else api.link
        return run(*self._tables, rules, id_column=self._id_column, sep=self.sep,
                   encoding=self.encoding, progress=self.progress, model=model,
                   checkpoint=self._checkpoint, labels=labels)

    def _unfit(self) -> None:
        self.result_: Result | None = None
        self.mode_ = self.rules_ = self.scorer_ = None
        self._id_column = self.id_column
        self._by_threshold: dict[float, Result] = {}
        cleanup = getattr(self, "_cleanup", None)
        if cleanup is not None:
            cleanup()
        self._cleanup = None

    def _fitted(self) -> Result:
        if self.result_ is None:
            raise InputError("this Linker is not fitted yet: call linker.fit(table) (or "
                             "linker.fit(left, right) to link) first.")
        return self.result_

    # ------------------------------------------------------------------ asking

    def _threshold(self, threshold: float | None) -> float:
        self._fitted()
        if threshold is None:
            threshold = self.threshold
        if threshold is None:
            return float(self.scorer_.threshold)
        if not isinstance(threshold, int | float) or not math.isfinite(threshold):
            raise InputError(f"threshold must be a finite match weight. Got {threshold!r}.")
        return float(threshold)

    def cluster(self, threshold: float | None = None) -> Result:
        """The run at `threshold` (default: the linker's, else the model's): the same Result,
        and the same files when written, as a run of these rules at that threshold, made from
        the fitted model and the kept candidate pairs and comparisons."""
        at = self._threshold(threshold)
        if at not in self._by_threshold:
            scorer = copy.deepcopy(self.scorer_)
            for name in ("threshold_rules_",):  # a moved threshold gives way to the one asked
                scorer.__dict__.pop(name, None)
            diagnostics = getattr(scorer, "diagnostics", None)
            if isinstance(diagnostics, dict):
                diagnostics.pop("one_to_one_threshold", None)
            scorer.threshold = at
            rules = copy.copy(self.rules_)
            rules.scoring = scorer
            self._by_threshold[at] = self._run(rules, model=scorer)
        return self._by_threshold[at]

    def predict(self, threshold: float | None = None) -> pd.DataFrame:
        """Every scored candidate pair, each comparison's level as its label (an ordered
        categorical: `null`, then the levels from least to most alike), and `is_match` at
        `threshold` (the weight alone decides it; `cluster` adds the clusters' say)."""
        at = self._threshold(threshold)
        pairs = self.result_.readable_pairs()
        return pairs.assign(is_match=pairs["match_weight"].to_numpy() >= at)

    def explain(self, record_id, other_id=None, *, threshold: float | None = None
                ) -> Explanation:
        """Why a record is in its cluster, or why two records were or were not linked."""
        return Explanation(self.cluster(threshold).explain(record_id, other_id))

    def evaluate(self, truth: pd.Series | pd.DataFrame, *, threshold: float | None = None,
                 thresholds: list[float] | None = None) -> dict[str, Any]:
        """`linkage evaluate`'s figures for the run at `threshold` against `truth`: a Series of
        true entity by record id, or a DataFrame of two columns (record id, entity)."""
        from linkage.measure.evaluate import evaluate_result

        if isinstance(truth, pd.DataFrame):
            if truth.shape[1] != 2:
                raise InputError("truth: a DataFrame of two columns (record id, entity), or a "
                                 f"Series of entity by record id. Got columns {list(truth)}.")
            truth = pd.Series(truth.iloc[:, 1].astype(str).to_numpy(),
                              index=truth.iloc[:, 0].astype(str).to_numpy())
        else:
            truth = pd.Series(truth.astype(str).to_numpy(), index=truth.index.astype(str))
        return evaluate_result(self.cluster(threshold), truth, thresholds, where="this linker")

    def report(self, path: str | Path | None = None, *, threshold: float | None = None,
               **options):
        """The report page of the run at `threshold`, inline in a notebook; with `path`, also
        saved there. `options`: those of `Result.report` (`labels=`, `redact=["email"]`,
        `redact_mode="mask"`, ...)."""
        return self.cluster(threshold).report(path, **options)

    # ------------------------------------------------------------------ interactive views

    def records(self) -> list[pd.DataFrame]:
        """The table(s) the linker was fitted on, as DataFrames (a link: left, right)."""
        from linkage.io import read

        self._fitted()
        return [read(t, sep=self.sep, encoding=self.encoding) for t in self._tables]

    def _records(self):
        frames = self.records()
        return frames if len(frames) > 1 else frames[0]

    def comparison_viewer(self, path: str | Path | None = None, *,
                          threshold: float | None = None, **options):
        """Pairs grouped by their pattern of comparison levels, with their records side by
        side (`linkage.views.comparison_viewer`)."""
        from linkage.views import comparison_viewer

        return comparison_viewer(self.cluster(threshold), self._records(), path=path,
                                 **options)

    def cluster_view(self, clusters: list | None = None, path: str | Path | None = None, *,
                     threshold: float | None = None):
        """Clusters as their records and the graph of their scored pairs (default: the
        largest and the weakest; `linkage.views.cluster_view`)."""
        from linkage.views import cluster_view

        return cluster_view(self.cluster(threshold), self._records(), clusters, path=path)

    def self_match_weights(self) -> pd.Series:
        """Each record's match weight against an exact copy of itself: the most its values can
        earn (a missing value earns nothing), by record id. A record whose weight is below the
        threshold can never be linked, however good its duplicate (Splink's "unlinkables")."""
        import numpy as np

        from linkage import api
        from linkage.pipeline import compare_pairs, normalize_columns, start_run, weights_of

        self._fitted()
        tables = [api.as_table(t, self.sep, self.encoding) for t in self._tables]
        _, _, (_, _, _, _, ids, combined) = start_run(tables, self.rules_, self._id_column)
        work, _ = normalize_columns(self.rules_, combined, ids)
        rows = np.arange(len(combined))
        matrix = compare_pairs(self.rules_.comparisons, work, rows, rows,
                               tf_columns=getattr(self.scorer_, "tf_columns", ()))
        weight, _ = weights_of(self.scorer_, matrix)
        return pd.Series(weight, index=ids.astype(str).to_numpy(), name="self_match_weight")

    def unlinkables_chart(self, path: str | Path | None = None, *,
                          threshold: float | None = None):
        """The share of records that could not be linked even to an exact copy of themselves,
        by threshold (`self_match_weights`; `linkage.views.unlinkables_chart`)."""
        from linkage.views import unlinkables_chart

        return unlinkables_chart(self.self_match_weights(), self._threshold(threshold),
                                 path=path)

    def accuracy_charts(self, labels, path: str | Path | None = None, *,
                        threshold: float | None = None):
        """Precision/recall and threshold charts from labelled pairs
        (`linkage.views.accuracy_charts`)."""
        from linkage.views import accuracy_charts

        return accuracy_charts(self.cluster(threshold), labels, path=path)

    # ------------------------------------------------------------------ display

    def __repr__(self) -> str:
        if self.result_ is None:
            return "<linkage.Linker, not fitted>"
        return (f"<linkage.Linker {self.mode_}: {len(self.result_.clusters):,} records, "
                f"{self.scorer_.kind}, threshold {self._threshold(None):g}>")

    def _repr_html_(self) -> str:
        if self.result_ is None:
            rules = "suggested at fit" if self.rules is None else html.escape(str(
                getattr(self.rules, "source", self.rules)))
            return (f"<div><b>linkage.Linker</b>, not fitted (rules: {rules}). Call "
                    "<code>fit(table)</code>.</div>")
        return (f"<div><b>linkage.Linker</b> {html.escape(self.mode_)}, threshold "
                f"{self._threshold(None):g} ({len(self._by_threshold)} threshold(s) "
                f"clustered)</div>" + self.cluster(None)._repr_html_())
