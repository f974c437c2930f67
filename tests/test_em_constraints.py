"""EM that finds the right class: constraints in every M-step, several starts, an independent
prior, labelled pairs, and the diagnostics that say when a fit looks wrong (issue 14)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from linkage.comparators import Date, Exact, JaroWinkler
from linkage.errors import InputError, LinkageWarning
from linkage.scoring import ComparisonMatrix, FellegiSunter

# Level-space tables: given name, surname, date of birth, address, city.
COMPARISONS = [
    JaroWinkler("given", thresholds=[0.9]),
    JaroWinkler("surname", thresholds=[0.9]),
    Date("dob", within_days=[365], swapped=False, typo=False),
    JaroWinkler("address", thresholds=[0.9]),
    Exact("city"),
]
# Level shares (else, fuzzy, exact) of: duplicates, members of one household, other candidates
# that blocking let through, and random record pairs.
DUPLICATE = [[.05, .1, .85], [.03, .07, .9], [.05, .05, .9], [.1, .2, .7], [.05, .95]]
HOUSEHOLD = [[.97, .02, .01], [0, .02, .98], [.9, .07, .03], [0, .05, .95], [0, 1]]
OTHER = [[.95, .04, .01], [.3, .1, .6], [.7, .2, .1], [.97, .02, .01], [.7, .3]]
RANDOM = [[.97, .02, .01], [.98, .01, .01], [.97, .02, .01], [.99, .009, .001], [.9, .1]]


def _matrix(levels: np.ndarray) -> ComparisonMatrix:
    levels = np.asarray(levels, dtype=np.int8)
    return ComparisonMatrix(list(COMPARISONS), levels, np.zeros(levels.shape, np.float32))


def _draw(rng, probs, n):
    return np.column_stack([rng.choice(len(p), n, p=p) for p in probs])


def _households(seed=1, duplicates=1000, household=6000, other=3000):
    rng = np.random.default_rng(seed)
    levels = np.vstack([_draw(rng, DUPLICATE, duplicates), _draw(rng, HOUSEHOLD, household),
                        _draw(rng, OTHER, other)])
    y = np.r_[np.ones(duplicates), np.zeros(household + other)].astype(int)
    return _matrix(levels), _matrix(_draw(rng, RANDOM, 20_000)), y


def _f1(scorer, X, y) -> float:
    predicted = scorer.match_weight(X) >= 0
    tp = int((predicted & (y == 1)).sum())
    return 2 * tp / (predicted.sum() + y.sum())


def test_labelled_pairs_enter_em_with_their_class_known():
    """The semi-supervised interface: `labelled=(levels, y)` on fit and fit_patterns. With one
    non-match class and no identifying comparisons, EM alone calls "same household" a match;
    25 labels pick the right class."""
    X, random, y = _households()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LinkageWarning)
        alone = FellegiSunter(non_match_components=1).fit(X, random=random)
    assert alone.prior_ > 0.5 and _f1(alone, X, y) < 0.5
    rng = np.random.default_rng(5)
    pick = np.r_[rng.choice(np.flatnonzero(y == 1), 10, replace=False),
                 rng.choice(np.flatnonzero(y == 0), 15, replace=False)]
    labelled = (X.levels[pick], y[pick])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LinkageWarning)
        scorer = FellegiSunter(non_match_components=1).fit(X, random=random, labelled=labelled)
    d = scorer.diagnostics
    assert d["labelled"]["matches"] == 10 and d["labelled"]["non_matches"] == 15
    assert d["labelled"]["agreement"] >= 0.9
    assert "labels" in [s["start"] for s in d["starts"]]
    assert _f1(scorer, X, y) >= 0.9
    # fit_patterns takes the same argument and gives the same model.
    from linkage.scoring._fellegi_sunter import distinct_patterns

    patterns, counts = distinct_patterns(X.levels, [3, 3, 3, 3, 2])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LinkageWarning)
        again = FellegiSunter(non_match_components=1).fit_patterns(
            COMPARISONS, patterns, counts, random=random, labelled=labelled)
    assert again.prior_ == pytest.approx(scorer.prior_)
    with pytest.raises(InputError, match="labelled"):
        FellegiSunter().fit(X, random=random, labelled=(X.levels[:3], np.array([0, 1, 2])))
