"""The Fellegi-Sunter scorer: m and u probabilities per comparison level, learned by EM.

For each comparison level, `m` is the probability of that level among true matches and `u` the
probability among non-matches. A pair's match weight is the prior log-odds plus, per
comparison, `log2(m / u)` of the level it reached (a null level is no evidence: 0). The match
probability is `2^w / (1 + 2^w)`, so a weight of 0 is a probability of one half.

`u` comes from random record pairs when the pipeline supplies them (nearly all of them are
non-matches); `m` and the prior (lambda, the share of candidate pairs that match) come from EM
over the *distinct* level patterns of the candidate pairs, so its cost does not grow with the
number of pairs. Without random pairs EM estimates `u` too.

Term-frequency adjustment (`tf_adjust`): agreeing exactly on a rare value is stronger evidence
than agreeing on a common one, so at the exact level of those comparisons `u` is replaced by the
share of records holding the agreed value.

Example (YAML)::

    scoring:
      type: fellegi_sunter
      threshold: 2.0
      identifying: [given_name, date_of_birth]
      tf_adjust: [surname]
      fixed_u:
        sex: {exact: 0.5, else: 0.5}
"""

from __future__ import annotations

import itertools
import json
import math
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field as dataclass_field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from linkage._schema import SchemaViolation, check, did_you_mean
from linkage.comparators import NULL_LEVEL, Comparison
from linkage.errors import InputError, LinkageWarning, user_stacklevel
from linkage.options import UEstimation
from linkage.scoring._base import ComparisonMatrix, Scorer

MAJORITY = 0.5  # a prior above it says most candidate pairs match (also a check in EM)
_FLOOR = 1e-6  # no learned probability goes below this, so no weight is infinite
_DEFAULT_PRIOR = 0.1  # EM's starting lambda when `prior` is not given
# Above this prior, with u kept as measured on random pairs, EM has explained nearly every
# candidate pair as a match: a warning at the fit and a problem in `diagnostics`.
_EVERY_PAIR_PRIOR = 0.99
_EVERY_PAIR_A_MATCH = (
    "EM explains nearly every candidate pair as a match, because u measured on random pairs "
    "does not describe the non-matches that blocking lets through. Use `u_estimation: em`, "
    "or fix `prior`.")
_FORMAT = "linkage.fellegi_sunter"
_FORMAT_VERSION = 1


def expit(x):
    """scipy's logistic function, imported when first used (scipy costs a `validate` run a
    quarter of its start-up)."""
    from scipy.special import expit as _expit

    return _expit(x)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _check_fixed(owner: Scorer, field: str, value: Any) -> dict[str, dict[str, float]] | None:
    if value is None:
        return None
    check(isinstance(value, Mapping), owner, field,
          "must map comparison names to {level label: probability}", value)
    out: dict[str, dict[str, float]] = {}
    for name, levels in value.items():
        check(isinstance(levels, Mapping), owner, f"{field}.{name}",
              "must map level labels to probabilities", levels)
        for label, p in levels.items():
            check(_is_number(p) and 0.0 < p <= 1.0, owner, f"{field}.{name}.{label}",
                  "must be a probability in (0, 1]", p)
        total = sum(float(p) for p in levels.values())
        check(total <= 1.0 + 1e-9, owner, f"{field}.{name}",
              f"must hold probabilities that sum to at most 1 (they sum to {total:g})", levels)
        out[str(name)] = {str(label): float(p) for label, p in levels.items()}
    return out


class FellegiSunter(Scorer):
    """Fellegi-Sunter match weights with m, u and the prior learned by EM.

    A pair is a match when its match weight (which includes the prior's log-odds) is at or
    above `threshold`; 0.0 means a match probability of at least one half.

    Parameters: `prior` fixes lambda (estimated when None); `u_sample_size` and `seed` tell the
    pipeline how many random pairs to draw for `u`; `max_iterations` and `tolerance` bound EM
    (each start's; a mixture of kinds of non-match moves slowly near its end: 109 iterations
    on the bundled customers sample with suggested rules);
    `fixed_m` and `fixed_u` (comparison name -> level label -> probability) are kept as given
    during EM (the other levels of that comparison share the rest); `tf_adjust` names the
    comparisons whose exact level is term-frequency adjusted, with `u` floored at
    `tf_minimum_u`. `u_estimation`: "em" (default) starts u from the random pairs and lets EM
    re-estimate it on the candidate pairs, so the weights are those of a candidate pair;
    "random" keeps u as measured on random pairs (as Splink does), which can drive the prior
    towards 1 when blocking leaves few non-matches — a warning then says so.

    EM that finds the right class (issue 14). EM is symmetric and happy with any concept the
    level patterns support ("same household" as readily as "same person"), so:

    - Monotone: in every M-step, within each comparison (two levels or more, nothing fixed),
      m/u may not fall as the similarity level rises (level 0, "else", is disagreement). The
      M-step is the constrained maximum: adjacent levels that violate the order are pooled
      (pool adjacent violators on the share of matches per level, which is the exact
      maximiser for a two-class split). With one non-match class, m/u is that of the
      candidates; with several non-match components, m rises against u of the random pairs
      (each component holds the non-matches one blocking key let through, which agree on
      that key more than on a closer level, so the components' mixture may dip).
    - `identifying`: comparisons that identify an entity (a given name, a date of birth, an
      id). A match is one entity recorded twice, so its identifying fields differ only by a
      recording error: the match class may disagree outright on one no more often than the
      surest matches do (the pairs that agree exactly on another identifying field and
      disagree on no telling field; twice their share, at most one half: see
      `_disagreement_caps`, in `diagnostics["identifying_disagreement_max"]`). The bound acts
      in the E-step (the nearest posterior that meets it, `_identifying_posterior`), not only
      on m: a household outvotes given name and birth date on surname, address and city, so
      capping m alone kept it in the match class. Exact agreement must also be more likely
      among matches than among random pairs (checked). Default: none.
    - An independent prior, not from EM: the share of candidate pairs that agree exactly on
      at least two of the identifying comparisons (without any named: the three on which
      random pairs agree least) and disagree outright on none, divided by that rule's recall
      (estimated from the pairs the other comparisons find alone; a range, see
      `_rule_recall`; with two comparisons a floor only), less the random pairs' rate. A fit
      whose prior lies more than twice beyond that range fails the checks; where every start
      fails so (and identifying comparisons are named), EM runs again from each start with
      the prior held within the range (`diagnostics["prior_held"]`).
    - Chance bounds the non-matches (`_chance_bound`): two different people agree exactly
      on every identifying field, and on a telling other field, only as often as random
      pairs do, so of the candidates of such a pattern at most that many (times a slack) can
      be non-matches; the E-step keeps their posterior above the rest, and the pattern's
      match weight is at least the floor (`chance_term`, model.json `chance_bound`). A kind
      of non-match otherwise takes the matches that moved (same names and birth date, another
      address) as "same names, other place" beside the namesakes blocking lets in.
    - Several starts (default, prior 0.5, prior 0.01, the rule's split, the labels) each run
      to convergence; the best likelihood among those that pass the checks wins (with labels:
      among those that explain the labels as well as the best).

    With several non-match components, m rises against u of the random pairs; the pairs are
    scored against the candidates' non-match u, which blocking enriches at the levels its keys
    let in (exact agreement on a key, not near agreement), so those weights can dip there:
    `diagnostics["blocking_dips"]` lists each dip (the weights, and m against the random
    pairs' u, which does not dip). A pair's match weight then also holds `non_match_term`:
    its whole pattern set against the kinds of non-match EM found (saved in model.json as
    `non_match_mixture`), which restores what a dip hid for pairs another key found.

    After `fit`, `diagnostics` (JSON-able, saved in model.json) holds the prior, the
    independent estimate, iterations, convergence, each start's log-likelihood, the start
    that won, the constraints that bound (comparison, levels), whether the classes were
    swapped back, the non-match components used, and `problems`: sentences for what looks
    wrong.
    """

    kind = "fellegi_sunter"

    def __init__(
        self,
        *,
        threshold: float = 0.0,
        prior: float | None = None,
        u_sample_size: int = 200_000,
        seed: int = 0,
        max_iterations: int = 300,
        tolerance: float = 1e-4,
        fixed_m: dict[str, dict[str, float]] | None = None,
        fixed_u: dict[str, dict[str, float]] | None = None,
        tf_adjust: list[str] = (),
        tf_minimum_u: float = 1e-6,
        u_estimation: UEstimation = "em",
        non_match_components: int = 3,
        identifying: list[str] = (),
    ):
        check(_is_number(threshold), self, "threshold", "must be a number", threshold)
        check(prior is None or (_is_number(prior) and 0.0 < prior < 1.0), self, "prior",
              "must be a probability strictly between 0 and 1, or null to estimate it", prior)
        check(isinstance(u_sample_size, int) and not isinstance(u_sample_size, bool)
              and u_sample_size > 0, self, "u_sample_size", "must be a positive integer",
              u_sample_size)
        check(isinstance(seed, int) and not isinstance(seed, bool), self, "seed",
              "must be an integer", seed)
        check(isinstance(max_iterations, int) and not isinstance(max_iterations, bool)
              and max_iterations >= 1, self, "max_iterations", "must be an integer >= 1",
              max_iterations)
        check(_is_number(tolerance) and tolerance > 0, self, "tolerance",
              "must be a positive number", tolerance)
        check(not isinstance(tf_adjust, str | bytes) and all(
            isinstance(n, str) for n in tf_adjust), self, "tf_adjust",
              "must be a list of comparison names", tf_adjust)
        check(_is_number(tf_minimum_u) and 0.0 < tf_minimum_u <= 1.0, self, "tf_minimum_u",
              "must be a number in (0, 1]", tf_minimum_u)
        self.threshold = float(threshold)
        self.prior = None if prior is None else float(prior)
        self.u_sample_size = u_sample_size
        self.seed = seed
        self.max_iterations = max_iterations
        self.tolerance = float(tolerance)
        self.fixed_m = _check_fixed(self, "fixed_m", fixed_m)
        self.fixed_u = _check_fixed(self, "fixed_u", fixed_u)
        self.tf_adjust = list(tf_adjust)
        self.tf_minimum_u = float(tf_minimum_u)
        check(u_estimation in ("em", "random"), self, "u_estimation",
              "must be 'em' or 'random'", u_estimation)
        self.u_estimation = u_estimation
        check(isinstance(non_match_components, int) and not isinstance(non_match_components, bool)
              and 1 <= non_match_components <= 10, self, "non_match_components",
              "must be an integer from 1 to 10", non_match_components)
        self.non_match_components = non_match_components
        check(not isinstance(identifying, str | bytes) and all(
            isinstance(n, str) for n in identifying), self, "identifying",
              "must be a list of comparison names", identifying)
        self.identifying = list(identifying)

    # ------------------------------------------------------------------ pipeline hooks

    @property
    def tf_columns(self) -> list[str]:
        return list(self.tf_adjust)

    @property
    def needs_random_pairs(self) -> bool:
        return True

    def validate_against(self, comparisons: list[Comparison]) -> None:
        """Every name and level in fixed_m, fixed_u and tf_adjust must exist (`RulesError`)."""
        by_name = {c.output_name: c for c in comparisons}
        known = sorted(by_name)

        def unknown(path: str, name: str) -> SchemaViolation:
            return SchemaViolation(
                path,
                f"must name a comparison; the comparisons are: {', '.join(known)}."
                + did_you_mean(name, known),
                name,
                "FellegiSunter",
            )

        for field in ("fixed_m", "fixed_u"):
            for name, levels in (getattr(self, field) or {}).items():
                if name not in by_name:
                    raise unknown(f"{field}.{name}", name)
                labels = by_name[name].level_labels
                for label in levels:
                    if label not in labels:
                        raise SchemaViolation(
                            f"{field}.{name}.{label}",
                            f"must be a level of comparison `{name}`: {', '.join(labels)} "
                            "(null is no evidence and has no probability)."
                            + did_you_mean(str(label), labels),
                            label,
                            "FellegiSunter",
                        )
                if set(levels) == set(labels):
                    total = sum(levels.values())
                    if abs(total - 1.0) > 1e-6:
                        raise SchemaViolation(
                            f"{field}.{name}",
                            "must sum to 1 when it gives every level "
                            f"(these sum to {total:g})",
                            levels,
                            "FellegiSunter",
                        )
        for i, name in enumerate(self.tf_adjust):
            if name not in by_name:
                raise unknown(f"tf_adjust[{i}]", name)
        for i, name in enumerate(self.identifying):
            if name not in by_name:
                raise unknown(f"identifying[{i}]", name)

    # ------------------------------------------------------------------ fitting

    def fit(
        self,
        X: ComparisonMatrix,
        y: np.ndarray | None = None,
        *,
        random: ComparisonMatrix | None = None,
        labelled: tuple[np.ndarray, np.ndarray] | None = None,
        chance: dict[str, tuple[float, float]] | None = None,
    ) -> FellegiSunter:
        """Estimate m (and u without `random`) and the prior by EM; `y` is not used (labelled
        pairs come in `labelled`, see `fit_patterns`; `chance` there too)."""
        self.validate_against(X.comparisons)
        names = X.names
        sizes = [len(c.level_labels) for c in X.comparisons]
        if len(X) == 0:
            raise _no_pairs()
        _check_levels(X, sizes, "candidate pairs")
        patterns, counts = distinct_patterns(X.levels, sizes)
        exact_frequencies = {}
        for n in self.tf_adjust:
            freqs = X.term_frequencies.get(n)
            if freqs is not None:
                k = names.index(n)
                freqs = np.asarray(freqs, dtype=np.float64)
                exact_frequencies[n] = freqs[(X.levels[:, k] == sizes[k] - 1)
                                             & np.isfinite(freqs)]
        return self._fit_patterns(X.comparisons, patterns, counts, random, exact_frequencies,
                                  labelled, chance)

    def fit_patterns(
        self,
        comparisons: list[Comparison],
        patterns: np.ndarray,
        counts: np.ndarray,
        *,
        random: ComparisonMatrix | None = None,
        exact_frequencies: dict[str, np.ndarray] | None = None,
        labelled: tuple[np.ndarray, np.ndarray] | None = None,
        chance: dict[str, tuple[float, float]] | None = None,
    ) -> FellegiSunter:
        """`fit` from what a pass over the candidate pairs in batches collects: the distinct
        level patterns (`distinct_patterns`) with their pair counts, and per `tf_adjust`
        comparison the term frequencies of its exactly agreeing pairs, in pair order. Gives
        the same model as `fit` on the whole comparison matrix.

        `labelled`: pairs whose class a person gave, as `(levels, y)`: `levels` an integer
        array of shape (n, number of comparisons), one row per labelled pair with its level
        per comparison in the order of `comparisons` (-1 null), and `y` an array of n 0/1
        (1 match). They enter EM with their class known (their posterior is fixed to `y`), so
        they pull m towards what labelled matches look like and u towards labelled
        non-matches. They do not count in the prior, which describes the candidate pairs (a
        labelled pair is usually picked because it is uncertain, not at random); pass them in
        addition to the candidate pairs, whether or not they are among them. Among the fits
        EM finds from its starts, the one that explains the labels best wins (fits within
        a likelihood-ratio margin of the best on the labels are then ranked on the candidate
        pairs), and a start from the labels themselves is tried. With labelled matches, each
        `identifying` comparison is checked against them: if most labelled matches disagree
        on it, it is not identifying and `diagnostics["problems"]` says so.

        `chance` (a link): comparison name -> (the cross pairs of the whole tables that agree
        exactly on it, how many of those chance alone explains), see
        `linkage.pipeline.chance_agreement`. Where u is learned on the candidates, a field that
        is also a blocking key agrees exactly in nearly every candidate pair that has it, match
        or not, so its learned weight says nothing (a person known only by name: m = u = 1).
        The share of exact agreements that chance does not explain is the match rate among
        them, measured outside the candidates; the exact level weighs at least what takes a
        pair with no other evidence from the prior to that rate (`diagnostics["chance_floor"]`).
        """
        self.validate_against(comparisons)
        if float(np.sum(counts)) == 0:
            raise _no_pairs()
        return self._fit_patterns(comparisons, np.asarray(patterns, dtype=np.int64),
                                  np.asarray(counts), random, exact_frequencies or {}, labelled,
                                  chance)

    def _fit_patterns(self, comparisons, patterns, counts, random, exact_frequencies,
                      labelled=None, chance=None):
        names = [c.output_name for c in comparisons]
        labels = [c.level_labels for c in comparisons]
        sizes = [len(lab) for lab in labels]
        counts = counts.astype(np.float64)

        fixed_m = [self._fixed(self.fixed_m, n, lab) for n, lab in zip(names, labels, strict=True)]
        fixed_u = [self._fixed(self.fixed_u, n, lab) for n, lab in zip(names, labels, strict=True)]

        # u from the random pairs where they say something; EM estimates the rest.
        u_learned = [True] * len(names)
        u: list[np.ndarray] = []
        random_u = _u_from_random(random, names, sizes) if random is not None else {}
        for k, n in enumerate(names):
            if n in random_u:
                u.append(_constrain(random_u[n], *fixed_u[k], floor=0.0))
                # "random" keeps u as measured; "em" starts there and lets EM adapt it to the
                # non-matches among candidates, which agree on blocking keys far more often
                # than random pairs do (otherwise EM can explain every candidate as a match).
                u_learned[k] = self.u_estimation == "em"
            else:
                u.append(_constrain(_marginal(patterns[:, k], counts, sizes[k]), *fixed_u[k]))
        free = [s > 1 and not fm[0].any() and not fu[0].any()
                for s, fm, fu in zip(sizes, fixed_m, fixed_u, strict=True)]
        data = _Data(
            patterns=patterns, counts=counts, sizes=sizes, names=names, labels=labels,
            u_learned=u_learned, fixed_m=fixed_m, fixed_u=fixed_u, monotone=free,
            identifying=[free[k] and n in self.identifying for k, n in enumerate(names)],
            random_u=[random_u.get(n) for n in names],
            labelled=_labelled_patterns(labelled, sizes),
            agree=[_agree_level(c, size) for c, size in zip(comparisons, sizes, strict=True)],
        )
        data.caps = _disagreement_caps(data)
        data.floors = _disagreement_floors(data)
        data.population = getattr(random, "population", None)
        data.chance_bound = _chance_bound(data)
        rule = _rule_pairs(data)
        random_rule = _random_rule_share(data, random)
        data.prior_independent, data.rule_recall = _independent_prior(data, rule, random_rule)
        data.rule_pairs = float(data.counts[rule].sum())
        data.check_prior = self.prior is None

        # Several starts, each run to convergence with the constraints in every M-step; the
        # best (on the labels first, when there are some, then on the candidates) wins.
        starts = self._starts(data, u, rule)
        fits = []
        for name, start in starts:
            fit = self._em(data, u, 1, self.max_iterations, start)
            fit["start"] = name
            fit["failed"] = _failed_checks(data, fit)
            fits.append(fit)
        # Where every start lands on a prior far from the independent estimate, EM has found
        # another concept than "same entity" (a household, a street) that the likelihood
        # prefers; the constrained maximum is then the fit with the prior held within the
        # independent range (the prior's M-step clipped to it, the exact constrained step as
        # the likelihood is concave in the prior), run from the same starts.
        held = None
        if data.check_prior and data.prior_independent is not None and any(
                data.identifying) and all(
                any(r.startswith("its prior") for r in f["failed"]) for f in fits):
            held = _plausible_range(data.prior_independent)
            for name, start in starts:
                fit = self._em(data, u, 1, self.max_iterations, start, held)
                fit["start"] = f"{name}, prior held"
                fit["failed"] = _failed_checks(data, fit)
                fits.append(fit)
        fit = _best(fits, data)
        held = held if fit["start"].endswith("prior held") else None
        # Where EM learns u, the non-matches may be a mixture: blocking on several keys lets
        # through different kinds of non-match (same date of birth and other names; same
        # surname and other dates ...). One u for all of them makes EM split the candidates by
        # the key that brought them in rather than by match status, so EM is also run with
        # several non-match components, and kept when the data support it (BIC).
        components = 1
        mixtures: list[dict] = []
        if any(u_learned) and self.non_match_components > 1:
            for name, start in [("default", None), (fit["start"], fit)]:
                if name == "default" and mixtures:
                    continue
                mixture = self._em(data, u, self.non_match_components, self.max_iterations,
                                   None if start is None else self._mixture_start(data, start),
                                   held)
                mixture["start"] = (f"{name.removesuffix(', prior held')}, "
                                    f"{self.non_match_components} kinds of non-match"
                                    + (", prior held" if held is not None else ""))
                mixture["failed"] = _failed_checks(data, mixture)
                mixtures.append(mixture)
                if fit["start"] == "default":
                    break
            mixture = _best(mixtures, data)
            extra = (self.non_match_components - 1) * (
                1 + sum(s - 1 for s, learned in zip(sizes, u_learned, strict=True) if learned))
            gain = mixture["loglik"] - fit["loglik"]
            # A match class that never disagrees on some field is only a subgroup of the
            # matches (`_match_like`), which costs the matches with an error there; that is
            # the lesser fault where one non-match class found no plausible prior unless held
            # (it took a key's chance pairs, which agree on the key's fields, for matches).
            # The extra components are kinds of non-match: a mixture that takes the prior
            # out of the independent range the one-class fit lies in has let a component take
            # a kind of match (the matches recorded in another style, which disagree on
            # several fields together), and its match class is only the closest copies.
            # Where the prior is held, the range it is held in already says how many may
            # match: a mixture at its top (one half, where the truth lies near it) stands.
            majority = mixture["lam"] >= MAJORITY and (held is None or mixture["lam"] > held[1])
            if (gain > 0.5 * extra * math.log(counts.sum()) and not majority
                    and (held is not None or not _match_like(mixture, data, fit))
                    and not _leaves_range(data, fit["lam"], mixture["lam"], held)
                    and not mixture["failed"]
                    and _label_fit(mixture) >= _label_fit(fit) - _LABEL_MARGIN):
                fit = mixture
                components = self.non_match_components
        m, u, lam = fit["m"], fit["u"], fit["lam"]
        iterations, converged = fit["iterations"], fit["converged"]
        moved, moved_prior = fit["moved"], fit["moved_prior"]
        m_before = m
        m, u, lam = self._check_labels(names, m, u, lam, u_learned)
        switched = m is not m_before

        self.diagnostics = self._diagnostics(data, fit, fits + mixtures, components, switched,
                                             lam, rule,
                                             random_rule, held)
        u_learned_fit = u
        u, floors = _chance_floor(data, m, u, lam, chance or {})
        self.diagnostics["chance_floor"] = floors
        # Pairs are scored with the non-matches as EM described them: the mixture of the kinds
        # of non-match the blocking keys let through (see `non_match_term`).
        mixture = None
        if components > 1 and not switched:
            comps = [[np.asarray(level, dtype=np.float64).copy() for level in comp]
                     for comp in fit["comps"]]
            for k in range(len(names)):  # a chance floor lowers every kind's u alike, so the
                # mixture term leaves the weight it raised as raised
                before = np.asarray(u_learned_fit[k], dtype=np.float64)
                ratio = np.divide(np.asarray(u[k], dtype=np.float64), before,
                                  out=np.ones_like(before), where=before > 0)
                for comp in comps:
                    comp[k] = comp[k] * ratio
            mixture = {"shares": [float(x) for x in fit["shares"]],
                       "u": [{n: [float(x) for x in comp[k]] for k, n in enumerate(names)}
                             for comp in comps]}
        if self._every_pair_a_match(lam, u_learned):
            warnings.warn(
                f"FellegiSunter estimated a prior of {lam:.4f}: {_EVERY_PAIR_A_MATCH}",
                LinkageWarning,
                stacklevel=user_stacklevel(),
            )
        if not converged:
            still = [n for n, d in moved.items() if d >= self.tolerance]
            parts = [f"`{n}` (by {moved[n]:.2g})" for n in still]
            if moved_prior >= self.tolerance:
                parts.append(f"the prior (by {moved_prior:.2g})")
            warnings.warn(
                f"FellegiSunter EM did not converge in {self.max_iterations} iterations: "
                f"the parameters of {', '.join(parts)} still moved by more than the tolerance "
                f"{self.tolerance:g}. Raise `max_iterations`, loosen `tolerance`, or fix some "
                "parameters with `fixed_m` / `fixed_u`.",
                LinkageWarning,
                stacklevel=user_stacklevel(),
            )

        # Term-frequency adjustment scales u at the exact level by how common the agreed value
        # is relative to the values candidate pairs typically agree on. Where u was learned on
        # the candidates (who agree on blocking keys far more often than random records do),
        # that reference is the mean frequency among the candidates' exact agreements; using
        # the value's frequency as u outright would add the blocking's enrichment on top of
        # the learned u (the 50k historical table: +8.7 bits on every surname agreement, which
        # chained 1,500 records into one cluster).
        tf_u = {}
        for n in self.tf_adjust:
            k = names.index(n)
            tf_u[n] = float(u[k][-1])
            freqs = exact_frequencies.get(n)
            if u_learned[k] and not fixed_u[k][0][-1] and freqs is not None and len(freqs):
                tf_u[n] = float(np.clip(np.maximum(freqs, self.tf_minimum_u).mean(),
                                        _FLOOR, 1.0))
        self._set_learned(
            {n: dict(zip(lab, map(float, m[k]), strict=True))
             for k, (n, lab) in enumerate(zip(names, labels, strict=True))},
            {n: dict(zip(lab, map(float, u[k]), strict=True))
             for k, (n, lab) in enumerate(zip(names, labels, strict=True))},
            float(lam),
            iterations,
            converged,
            tf_u,
            mixture,
            _chance_bound_table(data),
        )
        if self.chance_bound_ is not None:
            floored = data.chance_bound > 0.0
            self.diagnostics["chance_bound"] = {
                "patterns": int(floored.sum()), "pairs": int(data.counts[floored].sum())}
        return self

    # ------------------------------------------------------------------ EM

    def _starts(self, data: _Data, u: list[np.ndarray], rule: np.ndarray):
        """(name, start) for each start EM runs from; None is the default start."""
        starts: list[tuple[str, dict | None]] = [("default", None)]
        if self.prior is None:
            m0 = self._default_start(data, u, 1)[0]
            starts += [("high_prior", {"m": m0, "comps": [list(u)], "shares": np.ones(1),
                                       "lam": 0.5}),
                       ("low_prior", {"m": m0, "comps": [list(u)], "shares": np.ones(1),
                                      "lam": 0.01})]
        weight = float(data.counts[rule].sum())
        if 0 < weight < data.counts.sum():
            starts.append(("rule", {"g": rule.astype(np.float64)}))
        if data.labelled is not None and data.labelled[1].sum() > 0:
            start = self._labels_start(data, u)
            # The labels' m, free to move, and held where the labels put it (EM then learns
            # only u and the prior): a few labels weigh little against many pairs in EM, so
            # the second keeps what they say for the selection to weigh (`_best`).
            starts += [("labels", start), ("labels_m", {**start, "hold_m": True})]
        return starts

    def _labels_start(self, data: _Data, u: list[np.ndarray]) -> dict:
        """m from the labelled matches (half a pair added to each level, so a level no label
        reached keeps some mass), u as given, the default prior."""
        lpat, lm, _ = data.labelled
        m0 = self._default_start(data, u, 1)[0]
        m = []
        for k, size in enumerate(data.sizes):
            col = lpat[:, k]
            a = np.bincount(col[col != NULL_LEVEL], weights=lm[col != NULL_LEVEL],
                            minlength=size)
            if not data.monotone[k] or a.sum() <= 0:
                m.append(m0[k])
                continue
            m.append(_monotone_weights(_constrain(_monotone_to(a + 0.5, u[k])[0],
                                                  *data.fixed_m[k]), u[k]))
        lam = _DEFAULT_PRIOR if self.prior is None else self.prior
        return {"m": m, "comps": [list(u)], "shares": np.ones(1), "lam": lam}

    def _mixture_start(self, data: _Data, fit: dict) -> dict:
        """A mixture start that keeps `fit`'s match class and splits its non-match class."""
        _, comps, shares, _ = self._default_start(data, fit["u"], self.non_match_components)
        return {"m": fit["m"], "comps": comps, "shares": shares, "lam": fit["lam"]}

    def _em(self, data: _Data, u: list[np.ndarray], n_comp: int, max_iterations: int,
            start: dict | None = None, prior_range: tuple[float, float] | None = None
            ) -> dict[str, Any]:
        """EM with one match class and `n_comp` non-match components, the constraints applied
        in every M-step. `start`: None (the default start), parameters (m, comps, shares,
        lam), or a posterior `g` over the candidate patterns to begin with an M-step from (NaN
        where only the labelled pairs should speak). `prior_range`: (low, high) the prior is
        held within (the start's prior too)."""
        names, sizes = data.names, data.sizes
        if start is None:
            m, comps, shares, lam = self._default_start(data, u, n_comp)
        elif "g" in start:
            m, comps, shares, lam = self._default_start(data, u, 1)
            n_comp = 1
        else:
            m, comps, shares, lam = start["m"], start["comps"], start["shares"], start["lam"]
            n_comp = len(comps)
        if prior_range is not None and self.prior is None:
            lam = float(np.clip(lam, *prior_range))
        u = comps[0] if n_comp == 1 else u
        patterns, n_cand = data.all_patterns, len(data.patterns)
        present = [patterns[:, k] != NULL_LEVEL for k in range(len(names))]
        cols = [patterns[:, k][present[k]] for k in range(len(names))]
        lab_m, lab_n = data.labelled_weights()

        converged = False
        iterations = 0
        moved: dict[str, float] = {}
        moved_prior = 0.0
        bound: list[dict] = []
        g0 = None if start is None or "g" not in start else start["g"]
        hold_m = bool(start is not None and start.get("hold_m"))
        for iterations in range(1, max_iterations + 1):
            g, resp, _ = _posterior_mixture(patterns, m, comps, shares, lam)
            if g0 is not None and iterations == 1:
                g = np.concatenate([g0, lab_m * 0.0])
            g = np.concatenate([_identifying_posterior(data, g[:n_cand]), g[n_cand:]])
            if data.chance_bound is not None:  # what chance cannot explain stays a match
                g[:n_cand] = np.maximum(g[:n_cand], data.chance_bound)
            cand = data.counts
            w_match = np.concatenate([cand * g[:n_cand], lab_m])
            w_non = np.concatenate([cand * (1.0 - g[:n_cand]), lab_n])
            moved = {}
            new_m, new_u = [], []
            bound = []
            for k, n in enumerate(names):
                a = np.bincount(cols[k], weights=w_match[present[k]], minlength=sizes[k])
                b = np.bincount(cols[k], weights=w_non[present[k]], minlength=sizes[k])
                nm, nu, binds = self._m_step(data, k, a, b, m[k], u[k], n_comp > 1)
                if hold_m:
                    nm, binds = m[k], []
                    if data.monotone[k] and data.u_learned[k] and b.sum() > 0:
                        # u under the order with m held: u/m falls as the level rises.
                        nu = _constrain(_monotone_to(b[::-1], m[k][::-1])[0][::-1],
                                        *data.fixed_u[k])
                bound += binds
                change = float(np.max(np.abs(nm - m[k])))
                if data.u_learned[k]:
                    change = max(change, float(np.max(np.abs(nu - u[k]))))
                new_m.append(nm)
                new_u.append(nu)
                moved[n] = change
            if n_comp > 1:
                # Each component's expected pairs: P(non-match) times its share of them.
                w_comp = w_non[:, None] * resp
                comps = [
                    [_reestimate(cols[k], w_comp[present[k], j], sizes[k],
                                 comps[j][k], data.fixed_u[k]) if data.u_learned[k] else u[k]
                     for k in range(len(names))]
                    for j in range(n_comp)
                ]
                weight = w_comp.sum(axis=0)
                shares = np.maximum(weight / max(weight.sum(), _FLOOR), _FLOOR)
                shares = shares / shares.sum()
            else:
                comps = [new_u]
            if self.prior is not None:
                new_lam = lam
            else:
                new_lam = float(np.clip((cand * g[:n_cand]).sum() / cand.sum(),
                                        _FLOOR, 1.0 - _FLOOR))
                if prior_range is not None:
                    new_lam = float(np.clip(new_lam, *prior_range))
            moved_prior = abs(new_lam - lam)
            m, u, lam = new_m, new_u, new_lam
            if max([moved_prior, *moved.values()]) < self.tolerance and (
                    g0 is None or iterations > 1):
                converged = True
                break
        g, _, loglik = _posterior_mixture(patterns[:n_cand], m, comps, shares, lam, data.counts)
        if n_comp > 1:
            # u: the non-matches' level shares under the final posterior, all components
            # together; m pooled as one M-step would, so that m rises against the random
            # pairs' u. Its weight against this u (the one pairs are scored with) may dip where
            # blocking enriched the candidates' non-matches at a level (a key on the exact
            # value lets in exact agreements, not near ones): that is the right weight for a
            # candidate pair, and `diagnostics["blocking_dips"]` lists them.
            g = _identifying_posterior(data, g)
            if data.chance_bound is not None:
                g = np.maximum(g, data.chance_bound)
            w_match = np.concatenate([data.counts * g, lab_m])
            w_non = np.concatenate([data.counts * (1.0 - g), lab_n])
            bound = []
            for k in range(len(names)):
                a = np.bincount(cols[k], weights=w_match[present[k]], minlength=sizes[k])
                b = np.bincount(cols[k], weights=w_non[present[k]], minlength=sizes[k])
                if data.u_learned[k] and not data.monotone[k]:
                    u[k] = u[k] if b.sum() <= 0 else _constrain(b, *data.fixed_u[k])
                elif data.u_learned[k] or data.monotone[k]:
                    m[k], u[k], binds = self._m_step(data, k, a, b, m[k], u[k], True)
                    bound += binds
        lab_loglik, lab_fit = _labelled_logliks(data, m, comps, shares, lam)
        return {"m": m, "u": u, "lam": lam, "iterations": iterations, "converged": converged,
                "moved": moved, "moved_prior": moved_prior, "loglik": loglik + lab_loglik,
                "label_fit": lab_fit, "comps": comps, "shares": shares, "bound": bound}

    def _m_step(self, data: _Data, k: int, a: np.ndarray, b: np.ndarray, m: np.ndarray,
                u: np.ndarray, mixture: bool = False
                ) -> tuple[np.ndarray, np.ndarray, list[dict]]:
        """m and u of comparison k from the expected matches `a` and non-matches `b` per
        level, under the constraints; also the constraints that bound."""
        fm, fu = data.fixed_m[k], data.fixed_u[k]
        if not data.monotone[k]:
            nm = m if a.sum() <= 0 else _constrain(a, *fm)
            nu = (u if b.sum() <= 0 else _constrain(b, *fu)) if data.u_learned[k] else u
            return nm, nu, []
        if a.sum() <= 0:
            return m, u, []
        name, labels = data.names[k], data.labels[k]
        binds: list[dict] = []
        reference = data.random_u[k]
        if reference is not None and (mixture or not data.u_learned[k]):
            nm, pooled = _monotone_to(a, reference)
            nu = _constrain(b, *fu) if data.u_learned[k] and b.sum() > 0 else u
        elif data.u_learned[k] and b.sum() > 0:
            nm, nu, pooled = _monotone_pair(a, b)
            nu = _constrain(nu, *fu)
        else:
            nm, pooled = _monotone_to(a, u)
            nu = u
        for lo, hi in pooled:
            binds.append({"comparison": name, "constraint": "monotone",
                          "levels": labels[lo:hi + 1]})
        if data.identifying[k] and nm[0] > data.caps[k] * (1.0 + 1e-6):
            # The match class may disagree on an identifying field no more often than the
            # surest matches do (`_disagreement_caps`). (The E-step's posterior meets the cap
            # already; its share at the cap, renormalised, is no binding here.)
            cap = data.caps[k]
            rest = nm[1:].sum()
            nm = nm.copy()
            nm[1:] = nm[1:] * ((1 - cap) / rest) if rest > 0 else (1 - cap) / (len(nm) - 1)
            nm[0] = cap
            binds.append({"comparison": name, "constraint": "identifying",
                          "levels": [labels[0]]})
        nm = _monotone_weights(_constrain(nm, *fm), data.reference(k, nu) if mixture else nu)
        return nm, nu, binds

    def _default_start(self, data: _Data, u: list[np.ndarray], n_comp: int):
        patterns, counts, sizes, names = data.patterns, data.counts, data.sizes, data.names
        m = [
            _constrain(2.0 ** np.arange(s, dtype=np.float64), *data.fixed_m[k])
            for k, s in enumerate(sizes)
        ]
        lam = _DEFAULT_PRIOR if self.prior is None else self.prior
        comps = [list(u)]
        if n_comp > 1:
            # Each extra component starts from the candidates' level shares, tilted towards
            # agreement on one of the comparisons the candidates agree on most.
            base = [_constrain(_marginal(patterns[:, k], counts, sizes[k]), *data.fixed_u[k])
                    for k in range(len(names))]
            agree = [b[-1] if s > 1 else 0.0 for b, s in zip(base, sizes, strict=True)]
            order = sorted(range(len(names)), key=lambda k: (-agree[k], k))
            comps = [[b if data.u_learned[i] else u[i] for i, b in enumerate(base)]]
            for j in range(n_comp - 1):
                tilted = [b.copy() for b in base]
                k = order[j % len(order)]
                tilted[k][-1] *= 10.0
                tilted[k] = _constrain(tilted[k], *data.fixed_u[k])
                comps.append([t if data.u_learned[i] else u[i] for i, t in enumerate(tilted)])
        shares = np.full(n_comp, 1.0 / n_comp)
        return m, comps, shares, lam

    def _every_pair_a_match(self, lam: float, u_learned: list[bool]) -> bool:
        """Whether EM, its prior free and u kept as measured on random pairs, called nearly
        every candidate pair a match (`_EVERY_PAIR_A_MATCH`)."""
        return self.prior is None and lam > _EVERY_PAIR_PRIOR and not any(u_learned)

    def _prior_on_random_pairs(self) -> bool:
        """Whether the prior is the chance that two random records match (fixed beside u kept
        as measured on random pairs) rather than a share of the candidate pairs."""
        return self.prior is not None and self.u_estimation == "random"

    def _candidate_prior(self, data: _Data, lam: float) -> float | None:
        """The prior as a share of the candidate pairs, the scale of the independent
        estimate. A fixed prior beside u kept as measured on random pairs (`u_estimation:
        random`, Splink's convention) is the probability that two random records match: on
        the candidates' scale that times all record pairs over the candidate pairs (blocking
        taken to keep every match). Not capped at 1: a prior that expects more matches than
        there are candidate pairs is as wrong as one that expects too few. None where the
        record pairs are not known."""
        if not self._prior_on_random_pairs():
            return lam
        pairs = float(data.counts.sum())
        if not data.population or pairs <= 0:
            return None
        return lam * data.population / pairs

    def _diagnostics(self, data: _Data, fit: dict, fits: list[dict], components: int,
                     switched: bool, lam: float, rule: np.ndarray,
                     random_rule: float | None, held: tuple[float, float] | None = None
                     ) -> dict[str, Any]:
        """What a reviewer needs to trust the fit (JSON-able), with `problems` in words."""
        problems: list[str] = []
        fields = [data.names[k] for k in data.rule_fields()]
        independent, recall = data.prior_independent, data.rule_recall
        if held is not None:
            free = [f["lam"] for f in fits if not f["start"].endswith("prior held")]
            majority = all(1.0 / _PRIOR_FACTOR <= (_prior_ratio(data, x) or 1.0) <= _PRIOR_FACTOR
                           for x in free)
            problems.append(
                f"Left free, EM's prior ({min(free):.4g} to {max(free):.4g} over its starts) "
                + ("said most candidate pairs match, which the independent estimate "
                   if majority else "lay far outside the independent estimate ")
                + f"({independent[0]:.4g} to {independent[1]:.4g}, from the pairs that agree "
                f"exactly on at least two of {', '.join(fields)})"
                + (" does not confirm" if majority else "")
                + ": its match class was another concept than 'same entity' (a family, a "
                "household, a street, a shared name and birth date). The prior was held "
                f"within {held[0]:.4g} to {held[1]:.4g}. Label some pairs (`linkage sample "
                "--active`) to confirm the model."
            )
        on_candidates = self._candidate_prior(data, lam)
        ratio = None if on_candidates is None else _prior_ratio(data, on_candidates)
        if ratio is not None and not 1.0 / _PRIOR_FACTOR <= ratio <= _PRIOR_FACTOR:
            low, high = independent
            scale = ""
            if self._prior_on_random_pairs():
                expected = lam * float(data.population)
                scale = (f" on random record pairs: {expected:.4g} matches among the "
                         f"{data.population:.4g} record pairs, "
                         + (f"{on_candidates:.3g} times as many as" if on_candidates > 1
                            else f"{on_candidates:.4g} of") + " the candidate pairs")
            problems.append(
                f"The prior ({lam:.4g}, {'fixed' if self.prior is not None else 'from EM'}"
                f"{scale}) is {ratio:.3g} times the nearest end of the independent estimate "
                f"({low:.4g} to {high:.4g}, from the candidate pairs that agree exactly on at "
                f"least two of {', '.join(fields)} and disagree on none): the model may "
                "describe another concept than 'same entity'. Label some pairs (`linkage "
                "sample --active`), or name the comparisons that identify an entity in "
                "`identifying`."
            )
        if self._every_pair_a_match(lam, data.u_learned):
            # also warned at the fit; said here so that summary.json, the report and the
            # terminal's summary carry it (a run at 50,000 persons: prior 0.9998, only the
            # removal rate said anything)
            problems.append(f"EM's prior is {lam:.4f}: {_EVERY_PAIR_A_MATCH}")
        bound = [dict(b) for b in fit["bound"]]
        ident_bound = sorted({b["comparison"] for b in bound if b["constraint"] == "identifying"})
        if ident_bound:
            problems.append(
                "EM fitted only with the identifying constraint binding on "
                f"{', '.join(ident_bound)}: left free, its match class would disagree on them "
                "more often than the surest matches do (pairs that agree on every other "
                "identifying field). Check that they identify an entity, or label some pairs."
            )
        if not fit["converged"]:
            problems.append(f"EM did not converge in {self.max_iterations} iterations.")
        if switched:
            problems.append("EM's classes came out swapped (the 'matches' agreed less) and were "
                            "swapped back.")
        for reason in fit["failed"]:
            if reason.startswith("its prior"):
                continue  # said above
            problems.append(f"No start met every constraint: {reason}.")
        labelled = None
        if data.labelled is not None:
            lpat, lm, ln = data.labelled
            g, _, _ = _posterior_mixture(lpat, fit["m"], fit["comps"], fit["shares"], fit["lam"])
            agree = float((lm * (g >= 0.5) + ln * (g < 0.5)).sum() / (lm.sum() + ln.sum()))
            labelled = {"matches": int(np.rint(lm.sum())), "non_matches": int(np.rint(ln.sum())),
                        "agreement": _round(agree)}
            for k, name in enumerate(data.names):
                if not data.identifying[k]:
                    continue
                seen = lpat[:, k] != NULL_LEVEL
                total = float(lm[seen].sum())
                differ = float(lm[seen & (lpat[:, k] == 0)].sum())
                if total > 0 and differ > total / 2:
                    problems.append(
                        f"{differ:g} of {total:g} labelled matches disagree on `{name}`, which "
                        "is named identifying: it does not identify an entity here. Remove it "
                        "from `identifying`."
                    )
        return {
            "prior": _round(lam),
            # The geometric middle of the range, and the range itself (see _independent_prior);
            # its floor where the range is open above.
            "prior_independent": None if independent is None else _round(
                independent_point(independent)),
            "prior_independent_range": None if independent is None else [
                _round(independent[0]), _round(independent[1])],
            "prior_independent_fields": fields,
            "prior_independent_recall": None if recall is None else [
                _round(recall[0]), _round(recall[1])],
            "prior_ratio": None if ratio is None else _round(ratio),
            "iterations": int(fit["iterations"]),
            "converged": bool(fit["converged"]),
            "starts": [{"start": f["start"], "loglik": _round(f["loglik"]),
                        "prior": _round(f["lam"]), "iterations": int(f["iterations"]),
                        "converged": bool(f["converged"]), "failed": list(f["failed"])}
                       for f in fits],
            "start_won": fit["start"],
            "prior_held": None if held is None else [_round(held[0]), _round(held[1])],
            "constraints_bound": bound,
            "identifying": [n for k, n in enumerate(data.names) if data.identifying[k]],
            # The most the match class may disagree on each (`_disagreement_caps`).
            "identifying_disagreement_max": {
                n: _round(data.caps[k]) for k, n in enumerate(data.names)
                if data.identifying[k]},
            "label_switch_fixed": bool(switched),
            "blocking_dips": _blocking_dips(data, fit),
            "non_match_components": int(components),
            "labelled": labelled,
            "problems": problems,
        }

    def _check_labels(
        self, names: list[str], m: list[np.ndarray], u: list[np.ndarray], lam: float,
        u_learned: list[bool],
    ) -> tuple[list[np.ndarray], list[np.ndarray], float]:
        """Guard against label switching: EM is symmetric in its two classes, and the match
        class is the one whose records agree. When u is learned throughout and exact agreement
        is evidence *against* a match for most comparisons, the classes came out swapped: swap
        them back (and say so).

        "Agrees less" is judged on the whole level distribution (the mean level under m below
        the mean under u), and only where the two differ by more than rounding: where every
        candidate pair shows one and the same pattern (a blocking that let through only the
        matches), m equals u up to floating noise, and noise must not swap a correct fit."""
        inverted = [k for k in range(len(names)) if len(m[k]) > 1
                    and _mean_level(m[k]) < _mean_level(u[k]) - _SWAP_MARGIN]
        if (all(u_learned) and 2 * len(inverted) > len(names)
                and not self.fixed_m and not self.fixed_u):
            warnings.warn(
                "FellegiSunter EM found a class whose pairs agree less than the other's and "
                "called it the matches; the classes were swapped back. Check the comparisons, "
                "or fix `prior`.",
                LinkageWarning,
                stacklevel=user_stacklevel(),
            )
            m, u = u, m
            if self.prior is None:
                lam = 1.0 - lam
        return m, u, lam

    @staticmethod
    def _fixed(
        fixed: dict[str, dict[str, float]] | None, name: str, labels: list[str]
    ) -> tuple[np.ndarray, np.ndarray]:
        given = (fixed or {}).get(name, {})
        mask = np.array([lab in given for lab in labels], dtype=bool)
        values = np.array([given.get(lab, 0.0) for lab in labels], dtype=np.float64)
        return mask, values

    def _set_learned(
        self,
        m: dict[str, dict[str, float]],
        u: dict[str, dict[str, float]],
        prior: float,
        n_iterations: int,
        converged: bool,
        tf_u: dict[str, float] | None = None,
        mixture: dict | None = None,
        chance_bound: dict | None = None,
    ) -> None:
        """Store the learned state and the lookup tables built from it (fit and load share
        this, so a loaded scorer computes bit-identical weights)."""
        self.chance_bound_ = chance_bound
        self._chance_table_ = None
        if chance_bound is not None:
            # Each bounded pattern (levels in the order of `m`, the fit's) as one code, and
            # the least weight it may score: a dense table of every code where that is small
            # (a lookup is then one gather per pair), else the codes sorted for a search.
            names = list(m)
            sizes = [len(m[n]) for n in names]
            patterns = np.asarray(chance_bound["patterns"], dtype=np.int64).reshape(
                -1, len(names))
            weights = np.asarray(chance_bound["weights"], dtype=np.float64)
            cells = math.prod(s + 1 for s in sizes)
            dense = None
            if cells < _ONE_CODE:
                codes = pattern_codes(patterns, sizes)
                order = np.argsort(codes, kind="stable")
                if cells <= _DENSE_CELLS:
                    dense = np.full(cells, -np.inf)
                    dense[codes] = weights
                keys = codes[order]
            else:  # too many combinations for one int64: the level rows, in their order
                order = np.lexsort(patterns.T[::-1])
                keys = patterns[order]
            self._chance_table_ = (names, sizes, keys, weights[order], dense)
        self.m_probabilities_ = m
        self.u_probabilities_ = u
        self.prior_ = prior
        self.n_iterations_ = n_iterations
        self.converged_ = converged
        self.level_labels_ = {n: list(levels) for n, levels in m.items()}
        self.non_match_mixture_ = mixture
        self._mixture_tables_ = None
        if mixture is not None:
            # Per component, log2 u per level of each comparison, a 0 slot for null; and the
            # log2 share of each component.
            self._mixture_tables_ = (
                np.log2(np.asarray(mixture["shares"], dtype=np.float64)),
                [{n: np.append(np.log2(np.asarray(comp[n], dtype=np.float64)), 0.0)
                  for n in m} for comp in mixture["u"]],
            )
        # The value frequency at which a TF-adjusted exact agreement weighs what the learned u
        # says (see `_tf_adjusted`); where it equals that u, the weight is log2(m / frequency).
        self.tf_u_ = {n: float((tf_u or {}).get(n, list(u[n].values())[-1]))
                      for n in self.tf_adjust if n in m}
        self._tf_shift_ = {}
        for n, base in self.tf_u_.items():
            u_exact = list(u[n].values())[-1]
            self._tf_shift_[n] = 0.0 if base == u_exact else math.log2(base) - math.log2(u_exact)
        self._m_tables_: dict[str, np.ndarray] = {}
        self._weight_tables_: dict[str, np.ndarray] = {}
        for name, levels in m.items():
            mk = np.array(list(levels.values()), dtype=np.float64)
            uk = np.array([u[name][lab] for lab in levels], dtype=np.float64)
            self._m_tables_[name] = mk
            # One extra slot at the end holds the null level (-1 indexes it): no evidence.
            self._weight_tables_[name] = np.append(np.log2(mk) - np.log2(uk), 0.0)

    # ------------------------------------------------------------------ scoring

    def contributions(self, X: ComparisonMatrix) -> pd.DataFrame:
        """log2(m / u) of each pair's level per comparison (0 where null), TF-adjusted."""
        return pd.DataFrame(dict(self._contribution_columns(X)))

    def _contribution_columns(self, X: ComparisonMatrix):
        """(comparison name, contributions) for each comparison, in order."""
        self._check_fitted("_weight_tables_")
        for k, comparison in enumerate(X.comparisons):
            name = comparison.output_name
            table = self._weight_tables_.get(name)
            if table is None:
                raise InputError(
                    f"FellegiSunter was fitted without a comparison `{name}` (it knows: "
                    f"{', '.join(self._weight_tables_)}). Refit it on these comparisons."
                )
            if list(comparison.level_labels) != self.level_labels_[name]:
                raise InputError(
                    f"comparison `{name}` has levels {comparison.level_labels}, but "
                    f"FellegiSunter was fitted with {self.level_labels_[name]}. Refit it."
                )
            levels = X.levels[:, k].astype(np.int64)
            values = table[levels]
            if name in self.tf_adjust:
                values = self._tf_adjusted(X, name, levels, values)
            yield name, values

    def match_weight(self, X: ComparisonMatrix) -> np.ndarray:
        """The prior's log-odds plus each comparison's contribution, added in comparison
        order (as `contributions(X).sum(axis=1)` adds them), without building the frame; at
        least the chance bound's floor for the pair's pattern (`chance_term`)."""
        total = self._additive_weight(X)
        if getattr(self, "_chance_table_", None) is not None:
            total = np.maximum(total, self._chance_bound_weights(X))
        return total

    def _additive_weight(self, X: ComparisonMatrix) -> np.ndarray:
        total = np.zeros(len(X), dtype=np.float64)
        for k, (_, values) in enumerate(self._contribution_columns(X)):
            total = values.astype(np.float64, copy=True) if k == 0 else total + values
        if self._mixture_tables_ is not None:
            total = total + self.non_match_term(X)
        return total + self.bias()

    def chance_term(self, X: ComparisonMatrix) -> np.ndarray:
        """What the weight of each pair gains from the chance bound, zero for most pairs.

        Of the candidate pairs that agree exactly on every identifying field, no more can be
        non-matches than chance explains (`_chance_bound`); the fit keeps, per such pattern,
        the least match weight that allows (model.json `chance_bound`), and a pair of that
        pattern weighs at least that: the additive weights cannot say it, as they take the
        fields as independent within each kind of non-match."""
        if getattr(self, "_chance_table_", None) is None:
            return np.zeros(len(X), dtype=np.float64)
        return np.maximum(self._chance_bound_weights(X) - self._additive_weight(X), 0.0)

    def _chance_bound_weights(self, X: ComparisonMatrix) -> np.ndarray:
        """Per pair, the least weight the chance bound allows its pattern (-inf: none, or X
        lacks a comparison the bound reads). X's comparisons are found by name, in any order."""
        names, sizes, codes, weights, dense = self._chance_table_
        out = np.full(len(X), -np.inf)
        where = {c.output_name: k for k, c in enumerate(X.comparisons)}
        if len(X) == 0 or len(codes) == 0 or any(n not in where for n in names):
            return out
        levels = X.levels[:, [where[n] for n in names]].astype(np.int64)
        if codes.ndim == 1:
            keys = pattern_codes(levels, sizes)
            if dense is not None:
                return dense[keys]
        else:  # level rows (too many combinations for one int64): number both together,
            # the table's rows first; np.unique numbers rows in the order they sort, as the
            # table's rows are sorted, so its numbers ascend
            both = np.unique(np.vstack([codes, levels]), axis=0,
                             return_inverse=True)[1].reshape(-1)
            codes, keys = both[: len(codes)], both[len(codes):]
        at = np.clip(np.searchsorted(codes, keys), 0, len(codes) - 1)
        hit = codes[at] == keys
        out[hit] = weights[at[hit]]
        return out

    def non_match_term(self, X: ComparisonMatrix) -> np.ndarray:
        """What the weight of each pair adds to its contributions and prior when EM found
        several kinds of non-match (zero otherwise): log2 of the pooled non-match u of the
        pair's levels, less log2 of their likelihood under the mixture of kinds.

        The contributions score each comparison against all non-matches pooled. Where a key
        let in one kind of non-match (a key on the city: pairs that share the city and
        nothing else), the pooled u at that level is high, and agreeing on the city weighed
        nothing or less, also for a pair another key found, among whose kind of non-match
        agreeing on the city is rare. The mixture scores the levels together, as EM fit
        them: a pair is set against the kinds of non-match its whole pattern resembles. The
        term is never negative (below)."""
        self._check_fitted("m_probabilities_")
        if self._mixture_tables_ is None:
            return np.zeros(len(X), dtype=np.float64)
        log_shares, tables = self._mixture_tables_
        levels = X.levels.astype(np.int64)
        pooled = np.zeros(len(X), dtype=np.float64)
        comps = np.tile(log_shares, (len(X), 1))
        for k, comparison in enumerate(X.comparisons):
            name = comparison.output_name
            u = np.asarray([self.u_probabilities_[name][lab] for lab in self.level_labels_[name]])
            pooled += np.append(np.log2(u), 0.0)[levels[:, k]]
            for j, table in enumerate(tables):
                comps[:, j] += table[name][levels[:, k]]
        top = comps.max(axis=1)
        mixed = top + np.log2(np.exp2(comps - top[:, None]).sum(axis=1))
        # Never below the pooled weight: the kinds are fit without labels, and one of them
        # may hold matches (agreeing on every identifying field, it would explain them as a
        # non-match); the mixture restores evidence the pooling hid, it takes none away.
        return np.maximum(pooled - mixed, 0.0)

    def weight_and_probability(self, X: ComparisonMatrix) -> tuple[np.ndarray, np.ndarray]:
        """`match_weight` and `match_probability` with the weights computed once."""
        weight = self.match_weight(X)
        return weight, expit(weight * math.log(2.0))

    def _tf_adjusted(
        self, X: ComparisonMatrix, name: str, levels: np.ndarray, values: np.ndarray
    ) -> np.ndarray:
        freqs = X.term_frequencies.get(name)
        if freqs is None:
            warnings.warn(
                f"FellegiSunter: `tf_adjust` names `{name}`, but the comparison matrix has no "
                f"term frequencies for it, so its exact level uses the plain u.",
                LinkageWarning,
                stacklevel=user_stacklevel(),
            )
            return values
        freqs = np.asarray(freqs, dtype=np.float64)
        top = len(self.level_labels_[name]) - 1
        use = (levels == top) & np.isfinite(freqs)
        if use.any():
            values = values.copy()
            m_exact = self._m_tables_[name][top]
            u_tf = np.maximum(freqs[use], self.tf_minimum_u)
            # log2(m / u_exact) + log2(tf_u / u_tf): the plain exact weight, moved by how much
            # rarer this value is than those the candidates typically agree on.
            adjusted = np.log2(m_exact) - np.log2(u_tf) + self._tf_shift_.get(name, 0.0)
            # Agreeing exactly on a common value is still no less evidence than agreeing
            # less closely: where the plain weights rise to the exact level, the adjusted
            # ones do too. (Where they dip there, blocking let in exact agreements: see
            # `_blocking_dips`; the level below is no floor then.)
            table = self._weight_tables_[name]
            floor = table[top - 1] if top > 0 and table[top - 1] <= table[top] + 1e-9 else -np.inf
            values[use] = np.maximum(adjusted, floor)
        return values

    def bias(self) -> float:
        self._check_fitted("prior_")
        return math.log2(self.prior_) - math.log2(1.0 - self.prior_)

    def match_probability(self, X: ComparisonMatrix) -> np.ndarray:
        """2^w / (1 + 2^w) of the match weight w, computed without overflow."""
        return expit(self.match_weight(X) * math.log(2.0))

    def parameter_table(self) -> pd.DataFrame:
        """One row per comparison level: comparison, level, m, u, match_weight (log2 m/u)."""
        self._check_fitted("m_probabilities_")
        rows = []
        for name, levels in self.m_probabilities_.items():
            for label, m in levels.items():
                u = self.u_probabilities_[name][label]
                rows.append(
                    {"comparison": name, "level": label, "m": m, "u": u,
                     "match_weight": math.log2(m) - math.log2(u)}
                )
        return pd.DataFrame(rows, columns=["comparison", "level", "m", "u", "match_weight"])

    # ------------------------------------------------------------------ persistence

    def save(self, path: str | Path) -> None:
        """Write the settings and the learned parameters as JSON (`load` reads it back)."""
        self._check_fitted("m_probabilities_")
        doc = {
            "format": _FORMAT,
            "version": _FORMAT_VERSION,
            "params": self.to_dict(),
            "prior": self.prior_,
            "n_iterations": self.n_iterations_,
            "converged": self.converged_,
            "diagnostics": getattr(self, "diagnostics", None),
            "comparisons": [
                {
                    "name": name,
                    "levels": self.level_labels_[name],
                    "m": [self.m_probabilities_[name][lab] for lab in self.level_labels_[name]],
                    "u": [self.u_probabilities_[name][lab] for lab in self.level_labels_[name]],
                    **({"tf_u": self.tf_u_[name]} if name in self.tf_u_ else {}),
                }
                for name in self.level_labels_
            ],
            **({"non_match_mixture": self.non_match_mixture_}
               if getattr(self, "non_match_mixture_", None) is not None else {}),
            **({"chance_bound": self.chance_bound_}
               if getattr(self, "chance_bound_", None) is not None else {}),
        }
        Path(path).write_text(json.dumps(doc, indent=2, ensure_ascii=False), encoding="utf-8")

    @classmethod
    def load(cls, path: str | Path) -> FellegiSunter:
        """A fitted scorer from a file written by `save`; it gives identical scores."""
        source = str(path)
        try:
            doc = json.loads(Path(path).read_text(encoding="utf-8"))
        except json.JSONDecodeError as err:
            raise InputError(f"{source}: not a saved FellegiSunter model ({err}).") from None
        if not isinstance(doc, dict) or doc.get("format") != _FORMAT:
            raise InputError(f"{source}: not a saved FellegiSunter model (no format {_FORMAT!r}).")
        if doc.get("version") != _FORMAT_VERSION:
            raise InputError(
                f"{source}: saved model version {doc.get('version')!r} is not supported "
                f"(this version of linkage reads {_FORMAT_VERSION})."
            )
        scorer = cls.from_dict(doc["params"], source=source)
        assert isinstance(scorer, FellegiSunter)
        try:
            m = {c["name"]: dict(zip(c["levels"], map(float, c["m"]), strict=True))
                 for c in doc["comparisons"]}
            u = {c["name"]: dict(zip(c["levels"], map(float, c["u"]), strict=True))
                 for c in doc["comparisons"]}
            prior = float(doc["prior"])
            tf_u = {c["name"]: float(c["tf_u"]) for c in doc["comparisons"] if "tf_u" in c}
            mixture = doc.get("non_match_mixture")
            if mixture is not None:
                mixture = {"shares": [float(x) for x in mixture["shares"]],
                           "u": [{n: [float(x) for x in comp[n]] for n in m}
                                 for comp in mixture["u"]]}
            chance = doc.get("chance_bound")
            if chance is not None:
                chance = {"patterns": [[int(x) for x in row] for row in chance["patterns"]],
                          "weights": [float(x) for x in chance["weights"]]}
                sizes = [len(levels) for levels in m.values()]
                if len(chance["patterns"]) != len(chance["weights"]) or any(
                        len(row) != len(m) or not all(-1 <= x < n for x, n in zip(
                            row, sizes, strict=True)) for row in chance["patterns"]):
                    raise ValueError("its chance_bound does not fit its comparisons: refit it")
        except (KeyError, TypeError, ValueError) as err:
            raise InputError(f"{source}: a saved FellegiSunter model is damaged ({err}).") from None
        scorer._set_learned(m, u, prior, int(doc.get("n_iterations", 0)),
                            bool(doc.get("converged", True)), tf_u, mixture, chance)
        if isinstance(doc.get("diagnostics"), dict):
            scorer.diagnostics = doc["diagnostics"]
            moved = doc["diagnostics"].get("one_to_one_threshold")
            if isinstance(moved, dict) and "threshold" in moved:  # the run's moved threshold
                scorer.move_threshold(float(moved["threshold"]))
        return scorer

    def move_threshold(self, threshold: float) -> None:
        """Decide at `threshold`, while the rules (`to_dict`: rules.yaml, model.json's
        params) keep the threshold they gave, which the move is computed from again. Like m
        and u, the moved threshold is learned state: equality compares the rules' value."""
        self.__dict__.setdefault("threshold_rules_", float(self.threshold))
        self.threshold = float(threshold)

    def _param_value(self, name: str) -> Any:
        if name == "threshold" and "threshold_rules_" in self.__dict__:
            return self.__dict__["threshold_rules_"]
        return super()._param_value(name)


# ---------------------------------------------------------------------- EM helpers


def _chance_floor(data: _Data, m: list[np.ndarray], u: list[np.ndarray], lam: float,
                  chance: dict[str, tuple[float, float]]
                  ) -> tuple[list[np.ndarray], list[dict[str, Any]]]:
    """u with the exact level of each comparison in `chance` lowered where the learned weight
    there is below what the exact agreements' match rate outside the candidates shows (see
    `fit_patterns`); and a record of each change.

    Of the C cross pairs of the tables that agree exactly on a field, chance explains E (how
    often records agree on it within one table, where each entity appears once); the other
    C - E are matches, so a pair that agrees exactly and has nothing else to compare is a
    match with probability s = (C - E) / C. Its weight is the prior's log-odds plus the exact
    level's weight, so that weight is at least logit(s) - logit(prior). Only raised, never
    lowered (the candidates' own estimate stands where it says more), only where EM learned
    u and the level is not fixed, and only where the excess is clear of chance."""
    u = [x.copy() for x in u]
    floors = []
    bias = math.log2(lam) - math.log2(1.0 - lam)
    for k, name in enumerate(data.names):
        if name not in chance or not data.u_learned[k] or data.sizes[k] < 2:
            continue
        if data.fixed_u[k][0][-1] or data.fixed_m[k][0][-1]:
            continue
        cross, by_chance = (float(x) for x in chance[name])
        # The excess must be clear of the chance count's own noise (Poisson: 3 s.d.); the
        # count is already an upper bound (see `chance_agreement`).
        excess = cross - by_chance
        if cross <= 0 or excess < 3.0 * math.sqrt(by_chance + 1.0):
            continue
        share = excess / cross
        m_exact, u_exact = float(m[k][-1]), float(u[k][-1])
        before = math.log2(m_exact) - math.log2(u_exact)
        floor = (math.log2(share) - math.log2(1.0 - share) if share < 1.0 else
                 math.log2(cross)) - bias
        if floor <= before:
            continue
        u[k][-1] = max(m_exact / 2.0 ** floor, _FLOOR)
        floors.append({"comparison": name, "cross_agreements": _round(cross),
                       "by_chance": _round(by_chance), "match_share": _round(share),
                       "weight_before": _round(before),
                       "weight": _round(math.log2(m_exact) - math.log2(u[k][-1]))})
    return u, floors


def _no_pairs() -> InputError:
    return InputError(
        "FellegiSunter.fit got no candidate pairs: there is nothing to learn m and the "
        "prior from. Loosen the blocking rules or check the inputs."
    )


def pattern_codes(levels: np.ndarray, sizes: list[int]) -> np.ndarray:
    """One int64 per row of a level matrix, ordered as the rows sort (levels -1..size-1)."""
    code = np.zeros(len(levels), dtype=np.int64)
    for k, size in enumerate(sizes):
        code = code * (size + 1) + (levels[:, k].astype(np.int64) + 1)
    return code


def decode_patterns(codes: np.ndarray, sizes: list[int]) -> np.ndarray:
    """The level rows of `pattern_codes`."""
    patterns = np.empty((len(codes), len(sizes)), dtype=np.int64)
    rest = np.asarray(codes, dtype=np.int64).copy()
    for k in range(len(sizes) - 1, -1, -1):
        patterns[:, k] = rest % (sizes[k] + 1) - 1
        rest //= sizes[k] + 1
    return patterns


def distinct_patterns(levels: np.ndarray, sizes: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """The distinct rows of a level matrix, sorted, and how many times each occurs: what
    `np.unique(levels, axis=0, return_counts=True)` gives, from one integer per row."""
    if math.prod(s + 1 for s in sizes) >= _ONE_CODE:  # too many combinations for one int64
        patterns, counts = np.unique(levels.astype(np.int64), axis=0, return_counts=True)
        return patterns, counts
    codes, counts = np.unique(pattern_codes(levels, sizes), return_counts=True)
    return decode_patterns(codes, sizes), counts


def _check_levels(X: ComparisonMatrix, sizes: list[int], what: str) -> None:
    if X.levels.ndim != 2 or X.levels.shape[1] != len(sizes):
        raise InputError(
            f"the {what}' levels have shape {X.levels.shape}, expected (n, {len(sizes)})."
        )
    if len(X) == 0:
        return
    low, high = X.levels.min(axis=0), X.levels.max(axis=0)
    for k, name in enumerate(X.names):
        if low[k] < NULL_LEVEL or high[k] >= sizes[k]:
            raise InputError(
                f"the {what} hold levels {int(low[k])}..{int(high[k])} for comparison "
                f"`{name}`, which has levels -1..{sizes[k] - 1}."
            )


def _u_from_random(
    random: ComparisonMatrix, names: list[str], sizes: list[int]
) -> dict[str, np.ndarray]:
    """Each level's share among the non-null random pairs, floored at 1 / (2 n)."""
    if sorted(random.names) != sorted(names):
        raise InputError(
            f"the random pairs have comparisons {random.names}, but the candidate pairs have "
            f"{names}; both must come from the same rules."
        )
    by_name = dict(zip(names, sizes, strict=True))
    _check_levels(random, [by_name[n] for n in random.names], "random pairs")
    out = {}
    for k, name in enumerate(random.names):
        col = random.levels[:, k].astype(np.int64)
        col = col[col != NULL_LEVEL]
        if len(col) == 0:
            continue  # nothing learned here: EM estimates this u
        share = np.bincount(col, minlength=by_name[name]).astype(np.float64) / len(col)
        share = np.maximum(share, 1.0 / (2.0 * len(col)))
        out[name] = share / share.sum()
    return out


def _marginal(col: np.ndarray, counts: np.ndarray, size: int) -> np.ndarray:
    present = col != NULL_LEVEL
    share = np.bincount(col[present], weights=counts[present], minlength=size)
    return share + 1.0  # smoothed: a level never seen still starts above zero


def _constrain(
    p: np.ndarray, fixed_mask: np.ndarray, fixed_values: np.ndarray, floor: float = _FLOOR
) -> np.ndarray:
    """Normalise the free levels to share what the fixed ones leave, each at least `floor`."""
    p = np.asarray(p, dtype=np.float64).copy()
    free = ~fixed_mask
    p[fixed_mask] = fixed_values[fixed_mask]
    if free.any():
        rest = max(1.0 - fixed_values[fixed_mask].sum(), 0.0)
        est = np.maximum(p[free], 0.0)
        total = est.sum()
        est = est / total if total > 0 else np.full(free.sum(), 1.0 / free.sum())
        est = np.maximum(est * rest, floor)
        if floor > 0 and rest > 0:
            est = est / est.sum() * rest  # renormalise after flooring ...
            est = np.maximum(est, floor)  # ... without letting a level sink below it again
        p[free] = est
    return p


def _posterior(
    patterns: np.ndarray, m: list[np.ndarray], u: list[np.ndarray], lam: float
) -> np.ndarray:
    """P(match | pattern) for each distinct pattern; nulls contribute a factor of 1."""
    log_odds = np.full(len(patterns), math.log(lam) - math.log1p(-lam))
    for k in range(patterns.shape[1]):
        table = np.append(np.log(m[k]) - np.log(u[k]), 0.0)  # last slot: null
        log_odds += table[patterns[:, k]]
    return expit(log_odds)


def _blocking_dips(data: _Data, fit: dict) -> list[dict]:
    """Where the weight a pair is scored with (m against the candidates' non-match u) falls
    from a level to the next more similar one while m against the random pairs' u does not:
    the candidates' non-matches are enriched at the higher level (blocking on the exact value
    lets in the non-matches that agree exactly, not those that nearly agree). Only a fit with
    several non-match components can show one (one class pools m and u together)."""
    dips: list[dict] = []
    if len(fit["comps"]) <= 1:
        return dips
    for k, name in enumerate(data.names):
        reference = data.random_u[k]
        if not data.monotone[k] or reference is None:
            continue
        m, u = fit["m"][k], fit["u"][k]
        scored = np.log2(m) - np.log2(u)
        population = np.log2(m) - np.log2(reference)
        for i in range(1, len(m)):
            if scored[i] < scored[i - 1] - 1e-9 and population[i] >= population[i - 1] - 1e-9:
                dips.append({"comparison": name,
                             "levels": [data.labels[k][i - 1], data.labels[k][i]],
                             "weights": [_round(scored[i - 1]), _round(scored[i])],
                             "against_random_pairs": [_round(population[i - 1]),
                                                      _round(population[i])]})
    return dips


def _identifying_posterior(data: _Data, g: np.ndarray) -> np.ndarray:
    """The E-step under the disagreement bounds (posterior regularization): the posterior
    nearest to `g` (in KL) under which, for each bounded comparison, the share of the expected
    matches that disagree outright on it lies within its bounds: at most its cap on an
    identifying comparison (`_disagreement_caps`), at least its floor on another
    (`_disagreement_floors`). Capping m at "else" in the M-step alone leaves the pairs where
    it lies in the match class whenever the other fields outvote it (a household agrees on
    surname, address, postcode and city; its members differ on given name and birth date), so
    EM keeps the group as its match class; here they leave it. A floor works the other way:
    where the candidates' non-matches agree on given name and birth date far more often than
    random pairs (blocking keyed on them), a match that moved (another city, postcode and
    address) looks like a non-match, none are left in the match class to say that matches
    move, its m at "else" sinks to nothing, and every mover is lost; the floor keeps the
    surest movers in. Each bound is linear in the posterior, so the nearest posterior shifts
    the log-odds by a weighted sum of the bounds (`_projection_dual`)."""
    patterns, counts = data.patterns, data.counts
    # Each bound is a linear constraint on the posterior: sum(counts * q * a) >= 0, with
    # a = differ - floor * seen (a floor) or a = cap * seen - differ (a cap).
    bounds = []
    for k in range(len(data.names)):
        differ = (patterns[:, k] == 0).astype(np.float64)
        seen = (patterns[:, k] != NULL_LEVEL).astype(np.float64)
        if data.identifying[k] and data.caps[k] < 1.0:
            bounds.append(data.caps[k] * seen - differ)
        if data.floors and data.floors[k] > 0.0:  # NaN: no floor
            bounds.append(differ - data.floors[k] * seen)
    if not bounds:
        return g
    logit = np.log(np.clip(g, 1e-300, None)) - np.log(np.clip(1.0 - g, 1e-300, None))
    a = np.array(bounds)
    lam = _projection_dual(logit, a, counts)
    if not lam.any():
        return g
    return expit(logit + lam @ a)


def _chance_bound(data: _Data) -> np.ndarray | None:
    """Per candidate pattern, the least posterior of a match that chance allows it: None
    where nothing bounds it.

    Two different people agree exactly on every identifying field (a given name and a birth
    date) only by chance, and then on another telling field (a surname) as often as random
    pairs do: the fields of two people are independent, except those a group shares (a
    household's surname, address and city), and a household's members differ on the
    identifying fields. So of the pairs of a pattern that agrees exactly on every identifying
    comparison, at most population x the random pairs' exact share of each identifying
    comparison x the random pairs' share at the pattern's level of its most telling other
    comparison can be non-matches (times `_CHANCE_SLACK` for the count's noise and for
    dependence the random pairs do not show). A kind of non-match EM found that holds more
    of them has taken matches: the same person recorded twice after a move (another address,
    postcode and city) agrees with itself on names and birth date, and a mixture of non-match
    kinds could hold those pairs as 'same names, other place' beside the namesakes its
    blocking keys let in. Needs the random pairs and two identifying comparisons.

    The random pairs' exact share is the average chance of agreeing (the sum of each value's
    squared frequency), not the chance on the pair's own values: two John Smiths born on one
    day are likelier than the average suggests, which the slack only partly covers (term
    frequencies would tell it pair by pair; not done)."""
    ident = [k for k, flag in enumerate(data.identifying) if flag]
    if not data.population or len(ident) < 2 or any(data.random_u[k] is None for k in ident):
        return None
    patterns, counts = data.patterns, data.counts
    every = np.ones(len(patterns), dtype=bool)
    chance = np.full(len(patterns), float(data.population))
    for k in ident:
        every &= patterns[:, k] == data.sizes[k] - 1
        chance *= float(data.random_u[k][-1])
    if not every.any():
        return None
    others = [j for j in range(len(data.names)) if j not in ident
              and data.random_u[j] is not None]
    if others:
        least = np.ones(len(patterns))
        for j in others:
            # a null (NULL_LEVEL, -1) takes the 1.0 appended: it says nothing
            share = np.append(np.asarray(data.random_u[j], dtype=np.float64), 1.0)[
                patterns[:, j]]
            least = np.minimum(least, share)
        chance *= least
    floors = np.where(every, 1.0 - _CHANCE_SLACK * chance / np.maximum(counts, 1.0), 0.0)
    floors = np.clip(floors, 0.0, 1.0 - 1e-9)
    return floors if floors.any() else None


def _chance_bound_table(data: _Data) -> dict | None:
    """The candidate patterns `_chance_bound` bounds, with the least match weight each may
    score (log2 of the floor's odds), as model.json keeps them; None where none is bounded."""
    if data.chance_bound is None:
        return None
    rows = np.flatnonzero(data.chance_bound > 0.0)
    if not len(rows):
        return None
    floor = data.chance_bound[rows]
    return {"patterns": data.patterns[rows].astype(np.int64).tolist(),
            "weights": (np.log2(floor) - np.log2(1.0 - floor)).tolist()}


def _projection_dual(logit: np.ndarray, a: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """The multipliers of the KL projection of a posterior (log-odds `logit` per pattern) onto
    {q: sum(counts * q * a[j]) >= 0 for each row j of `a`}: the projection's log-odds are
    logit + lam @ a, lam >= 0, and lam maximises the concave dual
    D(lam) = -sum(counts * log(1 - g + g * exp(lam @ a))). Projected Newton steps on the
    bounds that bind (or would), with a backtracking line search: a few steps suffice (the
    bounds are a handful), where adjusting one bound at a time zig-zags between bounds on
    related fields for hundreds of passes. Each multiplier stays at most `_MAX_SHIFT` (a
    bound no posterior meets)."""
    log_g = -np.logaddexp(0.0, -logit)
    log_not = -np.logaddexp(0.0, logit)

    def dual(lam: np.ndarray) -> float:
        return -float((counts * np.logaddexp(log_not, log_g + lam @ a)).sum())

    lam = np.zeros(len(a))
    scale = max(float((counts * np.abs(a)).sum(axis=1).max()), 1.0)
    tol = 1e-13 * scale
    value = dual(lam)
    for _ in range(_PROJECTION_STEPS):
        q = expit(logit + lam @ a)
        grad = -(a * (counts * q)).sum(axis=1)  # dD/dlam: minus each bound's sum
        free = (lam > 0.0) | (grad > 0.0)
        if not free.any() or np.max(np.abs(grad[free])) <= tol:
            break
        af = a[free]
        hess = (af * (counts * q * (1.0 - q))) @ af.T + 1e-12 * scale * np.eye(len(af))
        step = np.zeros(len(a))
        step[free] = np.linalg.solve(hess, grad[free])
        t = 1.0
        while True:
            trial = np.clip(lam + t * step, 0.0, _MAX_SHIFT)
            trial_value = dual(trial)
            if trial_value >= value or t < 1e-8:
                break
            t *= 0.5
        if np.max(np.abs(trial - lam)) < 1e-10:
            break
        lam, value = trial, trial_value
    return lam


def _match_like(fit: dict[str, Any], data: _Data, than: dict[str, Any] | None = None) -> bool:
    """Whether the match class never disagrees on some comparison (its m at "else" sank to
    the floor) where nothing says matches never do: then the non-match components have taken
    the matches with an error in that field, and the match class is only a subgroup of the
    matches. A level the non-matches do not reach either (a tolerance wider than the values'
    range) says nothing, and neither does a field on which the surest matches never disagree
    (a sex recorded alike in both sources: see `_disagreement_caps`, `_disagreement_floors`),
    nor, where `than` (the one-class fit the mixture would replace) is given, one on which
    its match class never disagrees either: the mixture took no matches there that the other
    fit held. (At scale the surest matches hold more namesakes, whose birth dates differ:
    the cap then allows disagreement that the matches do not show, and a mixture that fits a
    million-record link far better was refused for agreeing with the one-class fit.)"""
    def never(k: int) -> bool:
        if than is not None and than["m"][k][0] < _SURE_NEVER:
            return True
        if data.identifying[k]:
            return data.caps[k] < _SURE_NEVER * _SURE_MARGIN
        floors = data.floors
        return bool(floors) and not math.isnan(floors[k]) and floors[k] < _SURE_NEVER
    return any(s > 1 and m[0] < _SURE_NEVER and u[0] > 1e-2 and not never(k)
               for k, (m, u, s) in enumerate(zip(fit["m"], fit["u"], data.sizes, strict=True)))


def _posterior_mixture(
    patterns: np.ndarray,
    m: list[np.ndarray],
    comps: list[list[np.ndarray]],
    shares: np.ndarray,
    lam: float,
    counts: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, float]:
    """P(match | pattern), each non-match component's share of P(non-match | pattern), and
    the log-likelihood of the patterns weighted by `counts` (0.0 without them)."""
    n = len(patterns)
    log_match = np.full(n, math.log(lam))
    for k in range(patterns.shape[1]):
        log_match += np.append(np.log(m[k]), 0.0)[patterns[:, k]]
    log_non = np.empty((n, len(comps)))
    for j, u in enumerate(comps):
        log_non[:, j] = math.log1p(-lam) + math.log(shares[j])
        for k in range(patterns.shape[1]):
            log_non[:, j] += np.append(np.log(u[k]), 0.0)[patterns[:, k]]
    top = np.maximum(log_non.max(axis=1), log_match)
    non = np.exp(log_non - top[:, None])
    match = np.exp(log_match - top)
    total = match + non.sum(axis=1)
    resp = non / np.maximum(non.sum(axis=1, keepdims=True), 1e-300)
    loglik = 0.0 if counts is None else float((counts * (np.log(total) + top)).sum())
    return match / total, resp, loglik


def _reestimate(
    col: np.ndarray,
    weights: np.ndarray,
    size: int,
    previous: np.ndarray,
    fixed: tuple[np.ndarray, np.ndarray],
) -> np.ndarray:
    sums = np.bincount(col, weights=weights, minlength=size)
    if sums.sum() <= 0:
        return previous  # this comparison is all null (or no weight here): nothing to learn
    return _constrain(sums, *fixed)


# ---------------------------------------------------------------------- constraints and starts

# Two fits explain the labels equally well when their log-likelihoods on the labels differ by
# less than half the 95% quantile of chi-square with one degree of freedom (3.84 / 2).
_LABEL_MARGIN = 1.92
# EM's prior disagrees with the independent range (`_independent_prior`) when it lies more
# than this many times beyond either end. The range already spans what the rule's recall can
# be; the factor leaves room for the comparisons' dependence among matches, which the recall
# estimate ignores.
_PRIOR_FACTOR = 2.0
# The most a match class may disagree outright on an identifying comparison: a match is one
# entity recorded twice, so most of its pairs agree on a field that identifies it.
_IDENTIFYING_DISAGREE = 0.5
# The fewest sure matches (`_disagreement_caps`) a tighter bound is read from.
_SURE_MATCHES = 20
# Recording errors cluster in records (a record typed carelessly errs in several fields), so
# matches selected for agreeing on the other fields disagree on this one less often than
# matches at large: the bound allows this many times their share.
_SURE_MARGIN = 2.0
# The most Newton steps of the E-step's projection (`_projection_dual`).
_PROJECTION_STEPS = 50
# The largest shift of the log-odds the projection applies for one bound.
_MAX_SHIFT = 1e3
# The most cells a dense table of the chance bound's patterns holds (8 MiB of float64).
_DENSE_CELLS = 1 << 20
# Patterns of fewer combinations than this are one int64 each (`pattern_codes`).
_ONE_CODE = 2**62
# The chance count of non-matches on a pattern (`_chance_bound`) times this is the most it
# may hold: the count's noise, and dependence between fields the random pairs do not show.
_CHANCE_SLACK = 3.0
# A share of matches that disagree below this is "never" (`_match_like`).
_SURE_NEVER = 1e-4
# A comparison on which at least this share of random pairs disagree outright.
_MOSTLY_DIFFER = 0.8


def _disagreement_caps(data: _Data) -> list[float]:
    """Per comparison, the most its match class may disagree outright on it (1 where it is not
    identifying): the share that disagree on it among the surest matches the candidates hold,
    the pairs that agree exactly on every other identifying comparison (one at least) and
    disagree outright on no other comparison; at most `_IDENTIFYING_DISAGREE`.

    Those pairs are matches but for the rare coincidence of agreeing on all the rest, which
    makes their share an upper estimate of how often a match's field is recorded beyond
    recognition: it varies from table to table (a clean register, a table of heavy typos), so
    it is read from the data rather than fixed (with `_SURE_MARGIN`). Without `_SURE_MATCHES`
    of them (a single identifying comparison, too few pairs), the fixed bound stands."""
    caps = [1.0] * len(data.names)
    fields = [k for k, flag in enumerate(data.identifying) if flag]
    patterns, counts = data.patterns, data.counts
    for k in fields:
        others = [j for j in fields if j != k]
        if not others:
            caps[k] = _IDENTIFYING_DISAGREE
            continue
        sure = patterns[:, k] != NULL_LEVEL
        exact = np.zeros(len(patterns), dtype=bool)
        for j in others:
            exact |= patterns[:, j] == data.sizes[j] - 1
        sure &= exact
        for j in range(len(data.names)):
            # Only a disagreement that random pairs rarely escape says "another entity" (two
            # sources, two sexes are no such evidence).
            random_u = data.random_u[j]
            if j != k and data.sizes[j] > 1 and (
                    random_u is None or random_u[0] >= _MOSTLY_DIFFER):
                sure &= patterns[:, j] != 0
        weight = float(counts[sure].sum())
        if weight < _SURE_MATCHES:
            caps[k] = _IDENTIFYING_DISAGREE
            continue
        differ = float(counts[sure & (patterns[:, k] == 0)].sum())
        caps[k] = min(_IDENTIFYING_DISAGREE, max(_SURE_MARGIN * differ / weight, _FLOOR))
    return caps


def _disagreement_floors(data: _Data) -> list[float]:
    """Per comparison that is not identifying (an address, a city, a surname), the least
    share of its match class that disagrees outright on it; NaN where the data do not say
    (identifying comparisons have caps instead, `_disagreement_caps`).

    The share is read from the surest matches that leave the comparison free: the pairs that
    agree exactly on the two most identifying comparisons (those random pairs agree on least)
    and on another telling one (a comparison random pairs mostly disagree on,
    `_MOSTLY_DIFFER`). Agreeing on a given name and a birth date alone, two different people
    of a large table often do; with a surname or an address as well, rarely. Only two: where
    a record's errors are spread over its fields (a generator that alters k fields of every
    copy), pairs that agree on many fields hold their errors in the few left. Recording
    errors also cluster in records, and a move changes the city, the postcode and the address
    together, so those pairs may disagree less often than matches at large: the share, less
    `_SURE_MARGIN` for both biases and for the few different entities among them, is a floor.
    Read from fewer than `_SURE_MATCHES` pairs, or where fewer than two identifying
    comparisons are named, NaN."""
    floors = [math.nan] * len(data.names)
    ident = [k for k, flag in enumerate(data.identifying) if flag]
    if len(ident) < 2:
        return floors

    def chance(k: int) -> float:
        random_u = data.random_u[k]
        return float(random_u[-1]) if random_u is not None else 1.0

    surest = sorted(ident, key=lambda k: (chance(k), k))[:2]
    patterns, counts = data.patterns, data.counts
    sure = np.ones(len(patterns), dtype=bool)
    for j in surest:
        sure &= patterns[:, j] >= data.agrees(j)
    telling = [j for j in range(len(data.names))
               if j not in surest and data.monotone[j] and data.random_u[j] is not None
               and data.random_u[j][0] >= _MOSTLY_DIFFER]
    for k in range(len(data.names)):
        others = [j for j in telling if j != k]
        if data.identifying[k] or not data.monotone[k] or not others:
            continue
        agree = np.zeros(len(patterns), dtype=bool)
        for j in others:
            agree |= patterns[:, j] >= data.agrees(j)
        seen = sure & agree & (patterns[:, k] != NULL_LEVEL)
        weight = float(counts[seen].sum())
        if weight < _SURE_MATCHES:
            continue
        differ = float(counts[seen & (patterns[:, k] == 0)].sum())
        floors[k] = min(differ / weight / _SURE_MARGIN, _IDENTIFYING_DISAGREE)
    return floors


@dataclass
class _Data:
    """What EM reads: the candidates' distinct patterns and counts, the comparisons, which
    constraints apply to each, and the labelled pairs (patterns, matches, non-matches)."""

    patterns: np.ndarray
    counts: np.ndarray
    sizes: list[int]
    names: list[str]
    labels: list[list[str]]
    u_learned: list[bool]
    fixed_m: list
    fixed_u: list
    monotone: list[bool]
    identifying: list[bool]
    random_u: list[np.ndarray | None]
    labelled: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
    prior_independent: tuple[float, float] | None = None  # see `_independent_prior`
    rule_recall: tuple[float, float] | None = None
    rule_pairs: float = 0.0  # candidate pairs the rule of `_rule_pairs` finds
    check_prior: bool = False  # whether a fit's prior must agree with `prior_independent`
    caps: list[float] = dataclass_field(default_factory=list)  # see `_disagreement_caps`
    floors: list[float] = dataclass_field(default_factory=list)  # `_disagreement_floors`
    # per comparison, the lowest level the independent rule counts as agreement (see
    # `_agree_level`); empty: the top level
    agree: list[int] = dataclass_field(default_factory=list)
    # the record pairs the random pairs were drawn from (`ComparisonMatrix.population`)
    population: int | None = None
    # per candidate pattern, the least match posterior chance allows (`_chance_bound`)
    chance_bound: np.ndarray | None = None
    all_patterns: np.ndarray = dataclass_field(init=False)

    def agrees(self, k: int) -> int:
        return self.agree[k] if self.agree else self.sizes[k] - 1

    def __post_init__(self) -> None:
        self.all_patterns = (self.patterns if self.labelled is None
                             else np.vstack([self.patterns, self.labelled[0]]))

    def labelled_weights(self) -> tuple[np.ndarray, np.ndarray]:
        if self.labelled is None:
            return np.zeros(0), np.zeros(0)
        return self.labelled[1], self.labelled[2]

    def reference(self, k: int, u: np.ndarray) -> np.ndarray:
        """What m/u must rise against with several non-match components: u of random record
        pairs where there are some, else `u`. (Each component is the non-matches one kind of
        blocking key let through, which agree on that key more than on a closer level; so
        m/u of their mixture can fall where m/u of the population rises.)"""
        return u if self.random_u[k] is None else self.random_u[k]

    def rule_fields(self) -> list[int]:
        """The comparisons the independent prior reads: the identifying ones when named,
        else the three on which random pairs agree exactly least often (all comparisons
        under the monotone constraint when there are no random pairs)."""
        ident = [k for k, flag in enumerate(self.identifying) if flag]
        if ident:
            return ident
        free = [k for k, flag in enumerate(self.monotone) if flag]
        known = [k for k in free if self.random_u[k] is not None]
        if len(known) < 2:
            return free
        # Without names, the fields that identify best are those random records agree on
        # least (judged from values); three of them let the rule forgive one field wrong.
        return sorted(sorted(known, key=lambda k: (self.random_u[k][-1], k))[:3])


def _labelled_patterns(labelled, sizes: list[int]):
    """(distinct patterns, labelled matches, labelled non-matches per pattern), or None."""
    if labelled is None:
        return None
    try:
        levels, y = labelled
    except (TypeError, ValueError):
        raise InputError("`labelled` must be a pair (levels, y): the labelled pairs' level "
                         "matrix and their 0/1 labels.") from None
    levels = np.asarray(levels)
    y = np.asarray(y)
    if levels.ndim != 2 or levels.shape[1] != len(sizes) or len(y) != len(levels):
        raise InputError(
            f"`labelled` levels have shape {levels.shape} and labels {y.shape}; expected "
            f"(n, {len(sizes)}) and (n,)."
        )
    if len(levels) == 0:
        return None
    if not np.isin(y, [0, 1]).all():
        raise InputError("`labelled` labels must be 0 (non-match) or 1 (match).")
    levels = levels.astype(np.int64)
    for k, size in enumerate(sizes):
        if levels[:, k].min() < NULL_LEVEL or levels[:, k].max() >= size:
            raise InputError(f"`labelled` levels of comparison {k} must lie in -1..{size - 1}.")
    patterns, inverse = np.unique(levels, axis=0, return_inverse=True)
    inverse = inverse.reshape(-1)
    y = y.astype(np.float64)
    matches = np.bincount(inverse, weights=y, minlength=len(patterns))
    non = np.bincount(inverse, weights=1.0 - y, minlength=len(patterns))
    return patterns, matches, non


def _rule_pairs(data: _Data) -> np.ndarray:
    """Which candidate patterns a deterministic rule calls matches, independently of EM: at
    least two of the rule's comparisons (`_Data.rule_fields`) agree exactly and none is at its
    disagreement level (a null says nothing either way)."""
    fields = data.rule_fields()
    if len(fields) < 2:
        return np.zeros(len(data.patterns), dtype=bool)
    return _rule_on(data.patterns, data, fields)


TEXT_AGREEMENT = 0.9  # word cosine at which two texts are one text written two ways
_COSINES = ("token_cosine", "name_list")  # comparisons whose level is a weighted cosine


def _agree_level(comparison, size: int) -> int:
    """The lowest level of a comparison that the independent rule counts as agreement: the
    top level (exact), except for word cosine, where texts of one entity are seldom written
    character for character alike (a citation style, punctuation, a word abbreviated) and a
    cosine of TEXT_AGREEMENT or more is the same text (or list of names); counting exact
    equality alone there puts the independent prior far below the true share of matches, and
    holds EM to it."""
    thresholds = sorted(getattr(comparison, "thresholds", None) or [])
    if getattr(comparison, "kind", None) not in _COSINES or not thresholds:
        return size - 1
    above = [i for i, t in enumerate(thresholds) if t >= TEXT_AGREEMENT]
    return above[0] + 1 if above else size - 1


def _rule_on(patterns: np.ndarray, data: _Data, fields: list[int]) -> np.ndarray:
    exact = np.zeros(len(patterns), dtype=np.int64)
    differ = np.zeros(len(patterns), dtype=bool)
    for k in fields:
        exact += patterns[:, k] >= data.agrees(k)
        differ |= patterns[:, k] == 0
    return (exact >= 2) & ~differ


def _random_rule_share(data: _Data, random: ComparisonMatrix | None) -> float | None:
    """The share of random record pairs the rule calls matches (nearly all are non-matches)."""
    fields = data.rule_fields()
    if random is None or len(random) == 0 or len(fields) < 2:
        return None
    order = [random.names.index(n) for n in data.names]
    return float(_rule_on(random.levels[:, order].astype(np.int64), data, fields).mean())


def _independent_prior(data: _Data, rule: np.ndarray, random_share: float | None
                       ) -> tuple[tuple[float, float] | None, tuple[float, float] | None]:
    """The prior estimated without EM, as a range, and the recall range it assumed: the share
    of candidate pairs the rule of `_rule_pairs` finds is prior * recall + (1 - prior) *
    (the share of random pairs it finds), with the recall between the floor and the ceiling
    of `_rule_recall` (with two comparisons it cannot be estimated and is taken as 1: the
    estimate is then a floor). Where the floor on the recall would put more matches than
    pairs, only the ceiling stands. None where the rule finds no pair, or finds more than
    even the ceiling allows."""
    if len(data.rule_fields()) < 2 or data.counts[rule].sum() <= 0:
        return None, None
    recall = _rule_recall(data)
    if recall is None:
        recall = (1.0, 1.0) if len(data.rule_fields()) == 2 else (0.0, 0.0)
    share = float(data.counts[rule].sum() / data.counts.sum())
    p_random = random_share or 0.0
    low, high = (max(share - p_random, 0.0) / max(r - p_random, _FLOOR) for r in recall[::-1])
    if min(recall) <= 0 or low > 1.0:
        return None, recall
    if len(data.rule_fields()) == 2:
        # The recall is unknown: the estimate is a floor, and nothing bounds it from above.
        return (low, 1.0), recall
    if high > 1.0:
        # The floor on the recall is refuted (more matches than pairs): the pairs that agree
        # on two of the comparisons and disagree on the third are mostly non-matches, as
        # the ceiling assumes (a household shares surname and address, not a birth date).
        return (low, low), (recall[1], recall[1])
    return (low, high), recall

def _prior_ratio(data: _Data, lam: float) -> float | None:
    """How far EM's prior lies outside the independent range: its ratio to the range's top
    when above it, to its bottom when below, 1 inside (None without a range)."""
    if data.prior_independent is None:
        return None
    low, high = data.prior_independent
    lowest = 1.0 / float(data.counts.sum())
    if lam > high:
        return lam / max(high, lowest)
    if lam < low:
        return lam / max(low, lowest)
    return 1.0

def _leaves_range(data: _Data, before: float, after: float,
                  held: tuple[float, float] | None = None) -> bool:
    """Whether a prior of `after` lies outside the independent range (`_independent_prior`)
    while `before` lies within it; where EM held the prior within `held`, a prior on held's
    floor counts as outside (EM stopped it there on its way out)."""
    if _prior_ratio(data, before) != 1.0:
        return False
    if held is not None and after <= held[0] * (1.0 + 1e-6):
        return True
    ratio = _prior_ratio(data, after)
    if ratio is None:
        return False
    # The range is counted from the pairs the rule finds: a count of n has a sampling error
    # of about 1 / sqrt(n) of itself, so a prior within two of those of an end is not out of
    # it (a small table's range is a few per cent wide in its own noise).
    slack = 1.0 + 2.0 / math.sqrt(max(data.rule_pairs, 1.0))
    return not 1.0 / slack <= ratio <= slack


def _rule_recall(data: _Data) -> tuple[float, float] | None:
    """How many of the matches the rule of `_rule_pairs` finds, estimated without EM: for each
    of its comparisons, the shares of exact, disagreeing and other (or null) levels among the
    pairs the rule finds on the other comparisons alone, combined as if the comparisons were
    independent among matches. Those pairs are nearly all matches, except the non-matches
    that agree on the others by coincidence, which blocking brings in when it keys on those
    comparisons; they disagree outright on the rest. So two figures: counting every outright
    disagreement as a match's (a floor on the recall), and none (a ceiling). None with fewer
    than three comparisons (the others could not find matches alone) or where they find no
    pair."""
    fields = data.rule_fields()
    if len(fields) < 3:
        return None
    shares = []
    for j in fields:
        others = [k for k in fields if k != j]
        found = _rule_on(data.patterns, data, others)
        weight, col = data.counts[found], data.patterns[found, j]
        if weight.sum() <= 0:
            return None
        exact = float(weight[col >= data.agrees(j)].sum() / weight.sum())
        differ = float(weight[col == 0].sum() / weight.sum())
        shares.append((exact, differ))
    floor = ceiling = 0.0
    for states in itertools.product(range(3), repeat=len(fields)):
        if states.count(0) < 2 or 1 in states:
            continue
        floor += math.prod((e, d, 1.0 - e - d)[st] for (e, d), st in zip(shares, states,
                                                                          strict=True))
        ceiling += math.prod((e / (1.0 - d), 0.0, 1.0 - e / (1.0 - d))[st] if d < 1 else 0.0
                             for (e, d), st in zip(shares, states, strict=True))
    return floor, ceiling

def _pava(values: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, list[tuple[int, int]]]:
    """Weighted least-squares non-decreasing fit of `values` (pool adjacent violators), and the
    pooled runs (first, last level) of more than one level. Zero-weight levels take their
    neighbours' value and pool nothing."""
    blocks: list[list[float]] = []  # [weighted sum, weight, first, last]
    for i, (v, w) in enumerate(zip(values, weights, strict=True)):
        if w <= 0:
            continue
        blocks.append([v * w, w, i, i])
        while len(blocks) > 1 and (blocks[-2][0] / blocks[-2][1]
                                   > blocks[-1][0] / blocks[-1][1] * (1 + 1e-12) + 1e-300):
            s, w2, _, last = blocks.pop()
            blocks[-1][0] += s
            blocks[-1][1] += w2
            blocks[-1][3] = last
    fitted = np.full(len(values), np.nan)
    pooled = []
    if not blocks:
        return np.zeros(len(values), dtype=np.float64), pooled
    for s, w, first, last in blocks:
        fitted[first:last + 1] = s / w
        if sum(1 for i in range(first, last + 1) if weights[i] > 0) > 1:
            pooled.append((first, last))
    # Empty levels between or before blocks take the value of the level below (or above).
    for i in range(1, len(fitted)):
        if np.isnan(fitted[i]):
            fitted[i] = fitted[i - 1]
    fitted[np.isnan(fitted)] = blocks[0][0] / blocks[0][1]
    return fitted, pooled


def _monotone_pair(a: np.ndarray, b: np.ndarray):
    """m and u maximising sum(a log m) + sum(b log u) with m/u non-decreasing over the levels:
    the share of matches at each level, a / (a + b), fitted non-decreasing by pooling adjacent
    violators weighted by a + b; each level then keeps its pairs, split by that share."""
    n = a + b
    with np.errstate(divide="ignore", invalid="ignore"):
        theta = np.where(n > 0, a / n, 0.0)
    fitted, pooled = _pava(theta, n)
    m = n * fitted
    u = n * (1.0 - fitted)
    m = m / m.sum() if m.sum() > 0 else np.full(len(a), 1.0 / len(a))
    u = u / u.sum() if u.sum() > 0 else np.full(len(a), 1.0 / len(a))
    return m, u, pooled


def _monotone_to(a: np.ndarray, u: np.ndarray):
    """m maximising sum(a log m) with m/u non-decreasing, u fixed: the ratio (a / A) / u
    fitted non-decreasing by pooling adjacent violators weighted by u."""
    u = np.maximum(np.asarray(u, dtype=np.float64), _FLOOR)
    ratio, pooled = _pava(a / a.sum() / u, u)
    m = u * ratio
    return m / m.sum(), pooled


def _monotone_weights(m: np.ndarray, u: np.ndarray) -> np.ndarray:
    """m raised where its ratio to u falls below the level under it (floors and fixed values
    can leave a rare level out of order), then renormalised: a weight that never drops as the
    similarity rises."""
    ratio = np.maximum.accumulate(m / np.maximum(u, 1e-300))
    out = u * ratio
    return out / out.sum()


def _labelled_logliks(data: _Data, m, comps, shares, lam) -> tuple[float, float]:
    """The labelled pairs' joint log-likelihood (pattern and class) and the conditional one
    (class given pattern), or zeros without labels."""
    if data.labelled is None:
        return 0.0, 0.0
    lpat, lm, ln = data.labelled
    log_match = np.full(len(lpat), math.log(lam))
    for k in range(lpat.shape[1]):
        log_match += np.append(np.log(m[k]), 0.0)[lpat[:, k]]
    parts = []
    for j, u in enumerate(comps):
        part = np.full(len(lpat), math.log1p(-lam) + math.log(shares[j]))
        for k in range(lpat.shape[1]):
            part += np.append(np.log(u[k]), 0.0)[lpat[:, k]]
        parts.append(part)
    log_non = np.logaddexp.reduce(np.vstack(parts), axis=0)
    log_total = np.logaddexp(log_match, log_non)
    joint = float((lm * log_match + ln * log_non).sum())
    conditional = float((lm * (log_match - log_total) + ln * (log_non - log_total)).sum())
    return joint, conditional


# Mean levels (on a 0..1 scale) that differ by less than this are the same: the classes' level
# distributions then say nothing about which of them agrees more.
_SWAP_MARGIN = 1e-6


def _mean_level(p: np.ndarray) -> float:
    """The expected level under the level distribution `p`, on a 0..1 scale."""
    return float(np.dot(p, np.arange(len(p))) / (p.sum() * (len(p) - 1)))


def _label_fit(fit: dict) -> float:
    return fit["label_fit"]




def independent_point(independent: tuple[float, float]) -> float:
    """The independent estimate of the prior as one figure: the geometric middle of its range
    (the recall of the rule lies between a floor and a ceiling, and the middle is no more
    than a factor of the range's square root from either end), or its floor where the range
    is open above (two rule fields: the recall is unknown)."""
    low, high = independent
    return low if high >= 1.0 else math.sqrt(low * high)


def majority_confirmed(independent: tuple[float, float] | None) -> bool:
    """Whether the independent estimate says most candidate pairs match: its point estimate
    (`independent_point`) is above one half. Not its floor: the floor is the prior under the
    highest recall the rule can have (no outright disagreement among the pairs it finds is a
    match's), the most pessimistic reading of the rule's pairs. A table whose entities
    are cited dozens of times (clusters of 60 records, most of a record's nearest records the
    same thing) has a floor a little under one half once blocking takes a few more neighbours
    per record, while the middle and the truth stay above it; holding its prior below one half
    then makes EM learn a narrower concept than "same entity" (same version of a paper), and
    recall falls. Where a key lets in more chance pairs than matches (a household, a given name
    and birth date at scale), the middle is well under one half."""
    return independent is not None and independent_point(independent) > MAJORITY


def _plausible_range(independent: tuple[float, float]) -> tuple[float, float]:
    """The priors a fit may have, given the independent estimate: within it, and no
    majority of matches among the candidates unless the estimate says so
    (`majority_confirmed`). Blocking keeps pairs that share a key, and most such pairs are
    different things; at scale a key of two identifying fields (a given name and a birth date)
    lets in more chance pairs than matches, which agree on those fields as matches do, and EM
    can take "same given name and birth date" for the match class (`linkage.diagnostics` calls
    such a prior unreliable)."""
    low, high = independent
    return (low, high) if majority_confirmed(independent) else (
        low, min(high, max(low, MAJORITY)))


def _failed_checks(data: _Data, fit: dict) -> list[str]:
    """The constraints a finished fit breaks (the M-step keeps most of them by construction;
    this also compares exact agreement with the random pairs)."""
    failed = []
    ratio = _prior_ratio(data, fit["lam"])
    if data.check_prior and ratio is not None and not (
            1.0 / _PRIOR_FACTOR <= ratio <= _PRIOR_FACTOR):
        failed.append(f"its prior ({fit['lam']:.4g}) is {ratio:.3g} times the nearest end of "
                      "the independent estimate "
                      f"({data.prior_independent[0]:.4g} to {data.prior_independent[1]:.4g})")
    elif data.check_prior and data.prior_independent is not None and \
            fit["lam"] > MAJORITY and not majority_confirmed(data.prior_independent):
        failed.append(f"its prior ({fit['lam']:.4g}) says most candidate pairs match, which "
                      "the independent estimate "
                      f"({data.prior_independent[0]:.4g} to {data.prior_independent[1]:.4g}) "
                      "does not confirm")
    for k, name in enumerate(data.names):
        m, u = fit["m"][k], fit["u"][k]
        if len(fit["comps"]) > 1:
            u = data.reference(k, u)
        if data.monotone[k] and np.any(np.diff(np.log(m) - np.log(u)) < -1e-9):
            failed.append(f"the weights of `{name}` fall as its similarity rises")
        if not data.identifying[k]:
            continue
        if m[0] > data.caps[k] + 1e-9:
            failed.append(f"more matches disagree on the identifying `{name}` than the "
                          f"surest matches do ({data.caps[k]:.3g})")
        ur = data.random_u[k]
        if ur is not None and m[-1] <= ur[-1]:
            failed.append(f"exact agreement on the identifying `{name}` is no more likely "
                          "among matches than among random pairs")
    return failed


def _best(fits: list[dict], data: _Data) -> dict:
    """The fit that meets the constraints with the best likelihood; with labels, among those
    that explain the labels as well as the best does (`_LABEL_MARGIN`)."""
    pool = [f for f in fits if not f["failed"]] or fits
    if data.labelled is not None:
        top = max(_label_fit(f) for f in pool)
        pool = [f for f in pool if _label_fit(f) >= top - _LABEL_MARGIN]
    best = max(f["loglik"] for f in pool)
    # Starts that reach the same optimum differ in the last digits: the first of them wins.
    return next(f for f in pool if f["loglik"] >= best - 1e-3 - 1e-9 * abs(best))


def _round(x: float) -> float:
    return float(f"{x:.6g}")


assert NULL_LEVEL == -1  # the weight tables rely on -1 indexing their last slot
