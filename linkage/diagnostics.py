"""Signs that a run went wrong, found without any truth.

A run with no labels cannot measure its own precision, but some outcomes are impossible for a
good model on any table. `diagnose` looks for them after clustering and returns, for
summary.json's `diagnostics`, one entry per sign found::

    {"code": "giant_cluster", "severity": "unreliable", "message": "...", "what_to_do": "..."}

`severity` is `warning` (look before trusting the output) or `unreliable` (the model most
likely learned the wrong thing: the output is not a result). `model_reliable` is false when any
entry is `unreliable`; `linkage check` then exits 3. The signs:

- `scorer_fit`: a problem the scorer found in its own fit (`scorer.diagnostics["problems"]`).
  Unreliable when the fit failed (the start EM kept broke a constraint, or its prior is more
  than 4 times off the prior estimated independently of EM), else a warning (EM stopped
  before converging, its classes came out swapped and were swapped back, or with u kept as
  measured on random pairs it called nearly every candidate pair a match).
- `implausible_prior`: Fellegi-Sunter's prior says more than half of the candidate pairs match.
  Blocking keeps the pairs that share some key, and most such pairs are different things;
  a majority of matches means EM took a shared trait (a surname, a household, a city) for the
  match class. Unreliable. Not raised where the prior estimated without EM confirms the
  majority (its floor above one half, and EM's prior not far off it): a table of a few things
  recorded many times each (citations of one paper by the dozen).
- `non_monotone_weights`: a comparison whose match weight falls by more than one bit (a factor
  2 in m/u) from one similarity level to a more similar one: agreeing more cannot be less
  evidence of a match. Dips the scorer traced to blocking (`blocking_dips`: m against random
  pairs rises there, the candidates' non-matches are enriched at a level a key agrees on)
  are not counted. Warning.
- `giant_cluster`: the largest cluster, or the largest connected component before clusters
  held together by weak links were split (`linkage.clustering.split_weak_links`), holds more
  than 1% of the records and more than ten times the typical cluster size the matched pairs
  support (1 + twice the matched pairs per linked record: the size of a cluster whose members
  all match one another). One thing is rarely 1% of a table; a component that large is a
  model matching a shared trait. Only the model's own links count: records joined by a stage
  that proves them identical (`exact`, `url`, and copies equal on every value the rules read)
  are one thing however many they are (10,000 loads of one record are one cluster, not a
  failed model). Unreliable.
- `removal_rate`: the share of records removed as duplicates is above `max_removal_rate`.
  Warning.
- `inconsistent_clusters`: among the clusters of several records, the share in which two
  members were compared and scored as a non-match. Records of one thing mostly match one
  another, though heavy errors leave some pairs apart (a third of the clusters in a table of
  historical persons with many typos); above half of the clusters this is a warning, above
  80% the clusters are chains and the model is unreliable.

Each entry says what to do: label a few pairs the run is least sure of (`linkage sample RUN
--active --n 25 --out todo.csv`, fill in `label`) and run again with `--labels todo.csv`.
"""

from __future__ import annotations

import math
import shlex
from typing import Any

import numpy as np

from linkage.scoring import MAJORITY, majority_confirmed

__all__ = ["LABEL_PAIRS", "diagnose", "format_diagnostics"]

LABEL_PAIRS = ("Label 25 pairs: `linkage sample RUN_DIR --active --n 25 --out todo.csv`, fill "
               "in its `label` column (1 same, 0 different), then run again with "
               "`--labels todo.csv`.")

_FLOOR = 1e-5  # m or u at or below this: the level was not seen among matches or non-matches
PRIOR_FACTOR = 4.0  # EM's prior this many times off the independent estimate: a failed fit
GIANT_SHARE = 0.01  # of all records
GIANT_FACTOR = 10  # times the cluster size the matched pairs support
INCONSISTENT_WARNING = 0.5
INCONSISTENT_UNRELIABLE = 0.8


def _entry(code: str, severity: str, message: str, what_to_do: str = LABEL_PAIRS) -> dict:
    return {"code": code, "severity": severity, "message": message, "what_to_do": what_to_do}


def diagnose(summary: dict, scorer: Any, max_removal_rate: float, n: int,
             clusters: np.ndarray, left: np.ndarray, right: np.ndarray,
             matched: np.ndarray, identical: np.ndarray | None = None,
             ) -> tuple[list[dict], bool]:
    """(diagnostics, model_reliable) of a finished run: `clusters` per record, `left`,
    `right` and `matched` per scored candidate pair (after guards and splitting);
    `identical` per pair: proposed by a stage that proves the two records identical."""
    out: list[dict] = []
    out += _scorer(scorer)
    out += _weights(scorer)
    if identical is not None and np.any(identical):
        # The giant-cluster test reads the model's own links: identical records are one thing.
        # Their clusters lie inside the run's, so none can be giant where no cluster of the
        # run's is large enough to be (and counting them took 0.8 s at ten million records).
        if giant_possible(n, int(np.bincount(clusters).max()) if n else 0):
            own = np.asarray(matched, dtype=bool) & ~np.asarray(identical, dtype=bool)
            from linkage.clustering import connected_components

            model_clusters = connected_components(n, np.asarray(left)[own],
                                                  np.asarray(right)[own])
            out += _giant(summary, n, model_clusters, int(np.count_nonzero(own)),
                          identical=True)
    else:
        out += _giant(summary, n, clusters, int(np.count_nonzero(matched)))
    out += _removal_rate(summary, max_removal_rate)
    out += _inconsistent(clusters, left, right, matched)
    return out, not any(d["severity"] == "unreliable" for d in out)


def _scorer(scorer: Any) -> list[dict]:
    out = []
    found = getattr(scorer, "diagnostics", None)
    found = found if isinstance(found, dict) else {}
    severity = "unreliable" if _fit_failed(found) else "warning"
    for problem in found.get("problems") or []:
        out.append(_entry("scorer_fit", severity, str(problem)))
    prior = getattr(scorer, "prior_", None)
    if prior is not None and float(prior) > MAJORITY and not _majority_confirmed(found):
        out.append(_entry(
            "implausible_prior", "unreliable",
            f"The scorer's prior says {float(prior):.0%} of the candidate pairs match. Blocking "
            "keeps pairs that share a key, and most of those are different things: the model "
            "has most likely learned a trait many records share (a surname, a household, a "
            "city) as the match."))
    return out


def _majority_confirmed(found: dict) -> bool:
    """Whether the prior estimated independently of EM (pairs that agree on several
    identifying fields) also says most candidate pairs match: its point estimate is above one
    half (`FellegiSunter`'s `majority_confirmed`, the check EM's fit meets too), and EM's prior
    is not far from it (the fit did not fail). A table whose records cite a few
    works many times (a citation table, a log of repeated submissions) has clusters of dozens,
    and then most of a record's nearest records are truly the same thing; EM's majority is no
    sign of a wrong concept there."""
    low_high = found.get("prior_independent_range")
    if not low_high or low_high[0] is None:
        return False
    return majority_confirmed((float(low_high[0]), float(low_high[1]))) and \
        not _fit_failed(found)


def _fit_failed(found: dict) -> bool:
    """Whether the scorer's own diagnostics say its fit failed: the start it kept broke a
    constraint, or its prior is more than `PRIOR_FACTOR` times off the prior estimated
    independently of EM. Other problems (EM stopped before converging, classes swapped back)
    are warnings."""
    won = [s for s in found.get("starts") or [] if s.get("start") == found.get("start_won")]
    if won and won[0].get("failed"):
        return True
    ratio = found.get("prior_ratio")
    return ratio is not None and not 1 / PRIOR_FACTOR <= float(ratio) <= PRIOR_FACTOR


def _weights(scorer: Any) -> list[dict]:
    """Comparisons whose match weight falls by more than a bit from a level to the next more
    similar one (levels run from least to most similar; null is not a level)."""
    if not hasattr(scorer, "m_probabilities_") or not hasattr(scorer, "parameter_table"):
        return []
    table = scorer.parameter_table()
    # A dip the scorer traced to blocking (the candidates' non-matches enriched at a level
    # a key agrees on exactly, while m against random pairs rises) is the right weight for a
    # candidate pair, not a fit that learned the wrong thing.
    explained = {(d["comparison"], str(d["levels"][-1]))
                 for d in (getattr(scorer, "diagnostics", None) or {}).get("blocking_dips", [])}
    falls = []
    for name, rows in table.groupby("comparison", sort=False):
        # A level with m and u both at the floor was never seen: it carries no weight.
        seen = (rows["m"].to_numpy(dtype=float) > _FLOOR) | (rows["u"].to_numpy(dtype=float)
                                                             > _FLOOR)
        weights = rows["match_weight"].to_numpy(dtype=float)[seen]
        levels = rows["level"].astype(str).to_numpy()[seen]
        for k in range(1, len(weights)):
            drop = weights[k - 1] - weights[k]
            if math.isfinite(drop) and drop > 1.0 and (name, levels[k]) not in explained:
                falls.append(f"`{name}`: {levels[k]} ({weights[k]:+.1f}) below "
                             f"{levels[k - 1]} ({weights[k - 1]:+.1f})")
    if not falls:
        return []
    return [_entry(
        "non_monotone_weights", "warning",
        "Agreeing more counts as less evidence of a match for " + "; ".join(falls)
        + ". The fit did not learn that closer agreement is stronger evidence: it may have "
        "fit noise in rare levels, or a trait other than the match.")]


def diagnose_counts(summary: dict, scorer: Any, max_removal_rate: float, n: int, *,
                    largest: int, linked: int, matched_pairs: int, several: int,
                    flagged: int, identical: bool = False) -> tuple[list[dict], bool]:
    """`diagnose` from counts an engine aggregates without holding the pairs (Spark's
    distributed route): the largest cluster, the records in clusters of several, the matched
    pairs, the clusters of several records and those holding a scored non-match. With
    `identical` (matched pairs a stage proved identical), `largest`, `linked` and
    `matched_pairs` are those of the model's own links, as `diagnose` takes them."""
    out: list[dict] = []
    out += _scorer(scorer)
    out += _weights(scorer)
    out += _giant_counts(summary, n, largest, linked, matched_pairs, identical)
    out += _removal_rate(summary, max_removal_rate)
    out += _inconsistent_counts(several, flagged)
    return out, not any(d["severity"] == "unreliable" for d in out)


def _removal_rate(summary: dict, max_removal_rate: float) -> list[dict]:
    rate = summary.get("removal_rate")
    if rate is None or rate <= max_removal_rate:
        return []
    return [_entry(
        "removal_rate", "warning",
        f"{rate:.1%} of the records were removed as duplicates, above `max_removal_rate` "
        f"({max_removal_rate:.0%}).",
        "If the table should hold few duplicates, check the loads (rows loaded twice) or "
        "the model: " + LABEL_PAIRS + " Raise `max_removal_rate` in the rules if this "
        "rate is expected.")]


def _giant(summary: dict, n: int, clusters: np.ndarray, matched_pairs: int,
           identical: bool = False) -> list[dict]:
    if n == 0:
        return []
    sizes = np.bincount(clusters)
    return _giant_counts(summary, n, int(sizes.max()), int(sizes[sizes > 1].sum()),
                         matched_pairs, identical)


def _giant_counts(summary: dict, n: int, largest: int, linked: int, matched_pairs: int,
                  identical: bool = False) -> list[dict]:
    """`_giant` from counts: the largest cluster, the records in clusters of several."""
    if n == 0:
        return []
    supported = 1 + 2 * matched_pairs / linked if linked else 1.0
    bar = max(GIANT_SHARE * n, GIANT_FACTOR * supported)
    split = summary.get("stages", {}).get("cluster", {}).get("split_weak_links") or {}
    # The component before the split counts identical records too: measured on the model's
    # own links, the largest cluster stands for it.
    before = largest if identical else int(split.get("largest_before_split", largest))
    why = (f"more than {GIANT_SHARE:.0%} of the records and more than {GIANT_FACTOR} times the "
           f"{supported:.1f} records a cluster has when its members all match one another")
    if largest > bar:
        return [_entry(
            "giant_cluster", "unreliable",
            f"The largest cluster holds {largest:,} of {n:,} records ({largest / n:.1%}): "
            f"{why}. The model matches records that share a trait, not records of one thing.")]
    if before > bar:
        return [_entry(
            "giant_cluster", "unreliable",
            f"The matched pairs joined {before:,} of {n:,} records ({before / n:.1%}) into one "
            f"connected component: {why}. It was split at its weak links, but a model that "
            "chains that many records matches a shared trait (a household, an address), not "
            "one thing: the split clusters are a repair, not a result.")]
    return []


def giant_possible(n: int, largest: int) -> bool:
    """Whether `_giant_counts` can name a giant cluster when no cluster or component it is
    given holds more than `largest` records (its bar is never below GIANT_FACTOR records nor
    GIANT_SHARE of them): an engine that counts the components of the model's own links only
    to feed it can skip them otherwise."""
    return n > 0 and largest > max(GIANT_SHARE * n, GIANT_FACTOR)


def inconsistent_possible(several: int, unmatched: int) -> bool:
    """Whether `_inconsistent_counts` can warn when at most `unmatched` clusters hold a scored
    non-match (each such cluster holds one of the `unmatched` pairs at least)."""
    return several > 0 and unmatched > INCONSISTENT_WARNING * several


def _inconsistent(clusters: np.ndarray, left: np.ndarray, right: np.ndarray,
                  matched: np.ndarray) -> list[dict]:
    if len(clusters) == 0:
        return []
    sizes = np.bincount(clusters)
    several = int((sizes > 1).sum())
    if several == 0:
        return []
    left = np.asarray(left)
    right = np.asarray(right)
    inside = clusters[left] == clusters[right]
    apart = inside & ~np.asarray(matched, dtype=bool)
    return _inconsistent_counts(several, len(np.unique(clusters[left[apart]])))


def _inconsistent_counts(several: int, flagged: int) -> list[dict]:
    """`_inconsistent` from counts: clusters of several records, and those of them holding a
    scored pair that is not a match."""
    if several == 0:
        return []
    share = flagged / several
    if share <= INCONSISTENT_WARNING:
        return []
    severity = "unreliable" if share > INCONSISTENT_UNRELIABLE else "warning"
    return [_entry(
        "inconsistent_clusters", severity,
        f"In {flagged:,} of the {several:,} clusters of several records ({share:.0%}), two "
        "members were compared and scored as a non-match: they are in one cluster only "
        "through others. Records of one thing match one another.")]


def format_diagnostics(summary: dict, run_dir: Any = None) -> list[str]:
    """Terminal lines for summary.json's diagnostics (none when there are none); `run_dir`
    replaces RUN_DIR in what to do."""
    found = summary.get("diagnostics") or []
    if not found:
        return []
    lines = ["  model: UNRELIABLE, do not use its clusters before acting on this"
             if summary.get("model_reliable") is False
             else "  model: look at these before trusting it"]
    for d in found:
        what = d["what_to_do"]
        if run_dir is not None:
            what = what.replace("RUN_DIR", shlex.quote(str(run_dir)))
        lines.append(f"  {d['severity']}: [{d['code']}] {d['message']}")
        lines.append(f"    what to do: {what}")
    return lines
