"""The Fellegi-Sunter scorer: EM recovers a known model, weights add up, TF, persistence, YAML."""

from __future__ import annotations

import itertools
import json
import math
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from linkage.comparators import Date, Exact, JaroWinkler, Levenshtein
from linkage.errors import InputError, LinkageWarning, NotFittedError, RulesError
from linkage.scoring import ComparisonMatrix, FellegiSunter, Scorer
from linkage.scoring._fellegi_sunter import _Data

# A known model: four comparisons with 4, 2, 3 and 3 levels, lambda = 0.2.
COMPARISONS = [
    JaroWinkler("a"),  # else, >=0.8, >=0.92, exact
    Exact("b"),  # else, exact
    Date("c", within_days=[30], swapped=False, typo=False),  # else, within_30_days, exact
    Levenshtein("d", thresholds=[0.8]),  # else, >=0.8, exact
]
M_TRUE = [[0.05, 0.10, 0.25, 0.60], [0.10, 0.90], [0.05, 0.15, 0.80], [0.10, 0.20, 0.70]]
U_TRUE = [[0.70, 0.15, 0.10, 0.05], [0.80, 0.20], [0.85, 0.10, 0.05], [0.80, 0.15, 0.05]]
LAMBDA = 0.2
N_PAIRS = 200_000


def matrix(levels: np.ndarray, comparisons=COMPARISONS, **tf) -> ComparisonMatrix:
    levels = np.asarray(levels, dtype=np.int8)
    return ComparisonMatrix(
        list(comparisons), levels, np.zeros(levels.shape, np.float32), term_frequencies=tf
    )


def draw(rng: np.random.Generator, probs: list[list[float]], n: int) -> np.ndarray:
    return np.column_stack([rng.choice(len(p), n, p=p) for p in probs])


@pytest.fixture(scope="module")
def known() -> tuple[ComparisonMatrix, ComparisonMatrix]:
    """Candidate pairs drawn from the known model (5% nulls), and random pairs drawn from u."""
    rng = np.random.default_rng(20261202)
    is_match = rng.random(N_PAIRS) < LAMBDA
    levels = np.where(
        is_match[:, None], draw(rng, M_TRUE, N_PAIRS), draw(rng, U_TRUE, N_PAIRS)
    )
    levels[rng.random(levels.shape) < 0.05] = -1
    random = draw(rng, U_TRUE, N_PAIRS)
    return matrix(levels), matrix(random)


@pytest.fixture(scope="module")
def fitted(known) -> FellegiSunter:
    X, random = known
    return FellegiSunter(u_estimation="random").fit(X, random=random)


def assert_recovers(scorer: FellegiSunter) -> None:
    assert abs(scorer.prior_ - LAMBDA) <= 0.02
    for k, comparison in enumerate(COMPARISONS):
        name = comparison.output_name
        labels = comparison.level_labels
        assert list(scorer.m_probabilities_[name]) == labels
        assert list(scorer.u_probabilities_[name]) == labels
        for level, label in enumerate(labels):
            assert abs(scorer.m_probabilities_[name][label] - M_TRUE[k][level]) <= 0.02, (
                name, label)
            assert abs(scorer.u_probabilities_[name][label] - U_TRUE[k][level]) <= 0.02, (
                name, label)
        assert sum(scorer.m_probabilities_[name].values()) == pytest.approx(1.0)
        assert sum(scorer.u_probabilities_[name].values()) == pytest.approx(1.0)


# ---------------------------------------------------------------------- EM


def test_em_recovers_known_m_u_and_prior_without_random_pairs(known):
    X, _ = known
    with warnings.catch_warnings():
        warnings.simplefilter("error", LinkageWarning)
        scorer = FellegiSunter().fit(X)
    assert scorer.converged_
    assert 1 <= scorer.n_iterations_ <= 50
    assert_recovers(scorer)


def test_em_recovers_known_m_and_prior_with_u_from_random_pairs(known, fitted):
    assert fitted.converged_
    assert_recovers(fitted)
    # u comes straight from the random pairs' level shares.
    _, random = known
    share_b = np.mean(random.levels[:, 1] == 1)
    assert fitted.u_probabilities_["b"]["exact"] == pytest.approx(share_b, abs=1e-9)


def test_em_mode_starts_from_random_u_and_still_recovers(known):
    X, random = known
    scorer = FellegiSunter().fit(X, random=random)
    assert scorer.u_estimation == "em"
    assert_recovers(scorer)


def test_blocked_candidates_do_not_fool_em_into_all_matches():
    """Non-matches that blocking lets through agree on the key far more than random pairs.

    With u fixed from random pairs, EM explains them as matches (prior near 1) and warns;
    with u re-estimated by EM the prior stays near the true share of matches.
    """
    rng = np.random.default_rng(11)
    n_match, n_non = 3_000, 7_000
    # Comparison "a" is the blocking key: every candidate agrees on it (level 3 = exact).
    a = np.full(n_match + n_non, 3)
    b = np.concatenate([rng.choice(2, n_match, p=[0.1, 0.9]), rng.choice(2, n_non, p=[0.95, 0.05])])
    c = np.concatenate([rng.choice(3, n_match, p=[0.1, 0.1, 0.8]),
                        rng.choice(3, n_non, p=[0.9, 0.08, 0.02])])
    d = np.concatenate([rng.choice(3, n_match, p=[0.05, 0.15, 0.8]),
                        rng.choice(3, n_non, p=[0.85, 0.1, 0.05])])
    X = matrix(np.column_stack([a, b, c, d]).astype(np.int8))
    random = matrix(np.column_stack([
        rng.choice(4, 20_000, p=[0.97, 0.02, 0.007, 0.003]), rng.choice(2, 20_000, p=[0.99, 0.01]),
        rng.choice(3, 20_000, p=[0.95, 0.04, 0.01]), rng.choice(3, 20_000, p=[0.9, 0.08, 0.02]),
    ]).astype(np.int8))
    with pytest.warns(LinkageWarning, match="u_estimation: em"):
        fixed = FellegiSunter(u_estimation="random").fit(X, random=random)
    assert fixed.prior_ > 0.99
    adaptive = FellegiSunter().fit(X, random=random)
    assert abs(adaptive.prior_ - 0.3) < 0.03


def test_em_cost_depends_on_distinct_patterns_not_pairs(known):
    X, random = known
    # The same patterns repeated 3 times fit to the same parameters.
    tripled = matrix(np.tile(X.levels, (3, 1)))
    a = FellegiSunter().fit(X, random=random)
    b = FellegiSunter().fit(tripled, random=random)
    assert a.prior_ == pytest.approx(b.prior_, abs=1e-9)
    assert a.m_probabilities_["a"]["exact"] == pytest.approx(
        b.m_probabilities_["a"]["exact"], abs=1e-9)


def test_a_level_never_seen_in_the_random_pairs_gets_the_floor(known):
    X, _ = known
    random = np.zeros((1000, 4), dtype=np.int8)  # every random pair at "else"
    scorer = FellegiSunter(u_estimation="random").fit(X, random=matrix(random))
    u_exact = scorer.u_probabilities_["b"]["exact"]
    assert 0 < u_exact <= 1 / 2000 * 1.001
    assert np.isfinite(scorer.parameter_table()["match_weight"]).all()


def test_prior_given_is_kept(known):
    X, random = known
    scorer = FellegiSunter(prior=0.05).fit(X, random=random)
    assert scorer.prior_ == 0.05
    assert scorer.bias() == pytest.approx(math.log2(0.05 / 0.95))


def test_fixed_m_and_u_stay_exactly_as_given(known):
    X, _ = known
    scorer = FellegiSunter(
        fixed_m={"b": {"exact": 0.93, "else": 0.07}, "a": {"exact": 0.55}},
        fixed_u={"c": {"exact": 0.0423}},
    ).fit(X)
    assert scorer.m_probabilities_["b"] == {"else": 0.07, "exact": 0.93}
    assert scorer.m_probabilities_["a"]["exact"] == 0.55
    assert scorer.u_probabilities_["c"]["exact"] == 0.0423
    # The free levels share what the fixed ones leave.
    assert sum(scorer.m_probabilities_["a"].values()) == pytest.approx(1.0)
    assert sum(scorer.u_probabilities_["c"].values()) == pytest.approx(1.0)


def test_not_converging_warns_naming_the_comparisons(known):
    X, _ = known
    with pytest.warns(LinkageWarning, match=r"did not converge in 1 iterations.*`a`") as rec:
        scorer = FellegiSunter(max_iterations=1).fit(X)
    assert scorer.converged_ is False
    assert scorer.n_iterations_ == 1
    message = str(rec[0].message)
    assert any(f"`{c.output_name}`" in message for c in COMPARISONS)


def test_fit_on_no_pairs_is_an_input_error():
    with pytest.raises(InputError, match="no candidate pairs"):
        FellegiSunter().fit(matrix(np.zeros((0, 4))))


def test_levels_out_of_range_are_an_input_error():
    with pytest.raises(InputError, match="comparison `b`"):
        FellegiSunter().fit(matrix([[0, 2, 0, 0]]))


# ---------------------------------------------------------------------- weights


def test_contributions_plus_bias_is_the_match_weight(known, fitted):
    X, _ = known
    sub = matrix(X.levels[:5000])
    contrib = fitted.contributions(sub)
    assert list(contrib.columns) == ["a", "b", "c", "d"]
    weights = fitted.match_weight(sub)
    np.testing.assert_allclose(contrib.to_numpy().sum(axis=1) + fitted.bias(), weights)
    # Each contribution is log2(m / u) of the level; 0 where null.
    levels_b = sub.levels[:, 1]
    m, u = fitted.m_probabilities_["b"], fitted.u_probabilities_["b"]
    exact = math.log2(m["exact"] / u["exact"])
    assert contrib["b"][levels_b == 1].to_numpy() == pytest.approx(exact)
    assert (contrib["b"][levels_b == -1] == 0).all()
    assert contrib["a"][sub.levels[:, 0] == 3].min() > 0 > contrib["a"][sub.levels[:, 0] == 0].max()


def test_probability_is_monotone_in_weight_and_one_half_at_zero(known, fitted):
    X, _ = known
    sub = matrix(np.unique(X.levels, axis=0))
    w = fitted.match_weight(sub)
    p = fitted.match_probability(sub)
    order = np.argsort(w)
    assert np.all(np.diff(p[order]) >= 0)
    assert ((p > 0) & (p < 1)).all()
    np.testing.assert_allclose(p, 2.0**w / (1 + 2.0**w), rtol=1e-12)
    # At weight 0 the probability is one half: an all-null pair with the prior at 0.5.
    half = FellegiSunter(prior=0.5).fit(X)
    nulls = matrix(np.full((2, 4), -1))
    assert half.match_weight(nulls) == pytest.approx([0.0, 0.0])
    assert half.match_probability(nulls) == pytest.approx([0.5, 0.5])
    # threshold 0.0 <=> probability >= 0.5
    np.testing.assert_array_equal(fitted.predict(sub), p >= 0.5)


def test_probability_does_not_overflow():
    comps = [Exact("b"), Exact("e")]
    scorer = FellegiSunter(prior=0.5)
    table = {"else": 1e-300, "exact": 1.0}
    scorer._set_learned(
        {"b": table, "e": table},
        {"b": {"else": 1.0, "exact": 1e-300}, "e": {"else": 1.0, "exact": 1e-300}},
        0.5, 1, True,
    )
    X = matrix([[1, 1], [0, 0]], comps)
    with np.errstate(over="raise", invalid="raise"):
        w = scorer.match_weight(X)
        p = scorer.match_probability(X)
    assert w[0] > 1990 and w[1] < -1990
    assert p[0] == 1.0 and p[1] == 0.0


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(-1, 3), st.integers(-1, 1), st.integers(-1, 2),
                          st.integers(-1, 2)), min_size=1, max_size=30))
def test_weights_add_up_for_any_levels(fitted, rows):
    X = matrix(np.array(rows))
    contrib = fitted.contributions(X)
    np.testing.assert_allclose(
        contrib.to_numpy().sum(axis=1) + fitted.bias(), fitted.match_weight(X))
    p = fitted.match_probability(X)
    assert ((p >= 0) & (p <= 1)).all()


# ---------------------------------------------------------------------- term frequencies


def test_tf_rare_agreement_outweighs_common_and_leaves_other_levels_alone(known):
    X, random = known
    scorer = FellegiSunter(tf_adjust=["b"]).fit(X, random=random)
    assert scorer.tf_columns == ["b"]
    levels = np.array([[3, 1, 2, 2], [3, 1, 2, 2], [3, 0, 2, 2], [3, -1, 2, 2]])
    freqs = np.array([0.3, 0.001, np.nan, np.nan])
    tf = scorer.contributions(matrix(levels, b=freqs))["b"].to_numpy()
    plain = scorer.contributions(matrix(levels, b=np.full(4, np.nan)))["b"].to_numpy()
    m_exact = scorer.m_probabilities_["b"]["exact"]
    u_exact = scorer.u_probabilities_["b"]["exact"]
    # Measured against the frequency the candidates typically agree on (no frequencies were
    # seen in fit, so that is the learned u itself).
    ref = scorer.tf_u_["b"]
    assert ref == u_exact
    assert tf[0] == pytest.approx(math.log2(m_exact / u_exact) + math.log2(ref / 0.3))
    assert tf[1] == pytest.approx(math.log2(m_exact / u_exact) + math.log2(ref / 0.001))
    assert tf[1] > tf[0]
    # Non-exact and null pairs are unaffected; a NaN frequency falls back to the plain u.
    assert tf[2] == plain[2] and tf[3] == plain[3] == 0.0
    assert plain[0] == plain[1] == pytest.approx(
        math.log2(m_exact / scorer.u_probabilities_["b"]["exact"]))
    # Other comparisons are untouched.
    assert scorer.contributions(matrix(levels, b=freqs))["a"].nunique() == 1


def test_tf_frequency_is_floored_at_tf_minimum_u(known):
    X, random = known
    scorer = FellegiSunter(tf_adjust=["b"], tf_minimum_u=1e-3).fit(X, random=random)
    levels = np.array([[0, 1, 0, 0], [0, 1, 0, 0]])
    tf = scorer.contributions(matrix(levels, b=np.array([0.0, 1e-3])))["b"].to_numpy()
    assert tf[0] == tf[1]
    assert np.isfinite(tf).all()


def test_tf_without_frequencies_warns_and_uses_plain_u(fitted, known):
    X, random = known
    scorer = FellegiSunter(tf_adjust=["b"], u_estimation="random").fit(X, random=random)
    sub = matrix(X.levels[:100])
    with pytest.warns(LinkageWarning, match="no term frequencies"):
        got = scorer.match_weight(sub)
    np.testing.assert_allclose(got, fitted.match_weight(sub))


# ---------------------------------------------------------------------- persistence


def test_save_load_round_trip_gives_identical_weights(tmp_path, known):
    X, random = known
    scorer = FellegiSunter(threshold=1.5, tf_adjust=["b"],
                           fixed_u={"c": {"exact": 0.05}}).fit(X, random=random)
    path = tmp_path / "model.json"
    scorer.save(path)
    loaded = FellegiSunter.load(path)
    assert loaded == scorer  # same settings
    assert loaded.prior_ == scorer.prior_
    assert loaded.m_probabilities_ == scorer.m_probabilities_
    assert loaded.u_probabilities_ == scorer.u_probabilities_
    assert loaded.tf_u_ == scorer.tf_u_
    assert loaded.converged_ == scorer.converged_
    assert loaded.n_iterations_ == scorer.n_iterations_
    freqs = np.where(X.levels[:, 1] == 1, 0.01, np.nan)
    Xtf = matrix(X.levels, b=freqs)
    np.testing.assert_array_equal(loaded.match_weight(Xtf), scorer.match_weight(Xtf))
    np.testing.assert_array_equal(loaded.predict(Xtf), scorer.predict(Xtf))
    pd.testing.assert_frame_equal(loaded.parameter_table(), scorer.parameter_table())
    doc = json.loads(path.read_text(encoding="utf-8"))
    assert doc["params"]["type"] == "fellegi_sunter"
    assert doc["comparisons"][0]["levels"] == COMPARISONS[0].level_labels


def test_load_rejects_other_files(tmp_path):
    path = tmp_path / "x.json"
    path.write_text('{"hello": 1}', encoding="utf-8")
    with pytest.raises(InputError, match="not a saved FellegiSunter model"):
        FellegiSunter.load(path)


def test_unfitted_use_raises_not_fitted(tmp_path, known):
    X, _ = known
    scorer = FellegiSunter()
    expected = "not fitted yet. Call `fit` first."
    for call in (
        lambda: scorer.contributions(X),
        lambda: scorer.match_weight(X),
        lambda: scorer.match_probability(X),
        scorer.parameter_table,
        lambda: scorer.save(tmp_path / "m.json"),
    ):
        with pytest.raises(NotFittedError, match=expected.replace(".", r"\.")):
            call()


def test_scoring_other_comparisons_is_an_input_error(fitted):
    other = matrix(np.zeros((2, 1)), [Exact("zzz")])
    with pytest.raises(InputError, match="zzz"):
        fitted.contributions(other)


def test_parameter_table(fitted):
    table = fitted.parameter_table()
    assert list(table.columns) == ["comparison", "level", "m", "u", "match_weight"]
    assert len(table) == sum(len(c.level_labels) for c in COMPARISONS)
    row = table[(table.comparison == "c") & (table.level == "exact")].iloc[0]
    assert row.match_weight == pytest.approx(math.log2(row.m / row.u))


# ---------------------------------------------------------------------- schema


def test_yaml_builds_and_round_trips():
    scorer = Scorer.from_dict({"type": "fellegi_sunter", "threshold": 1.5, "tf_adjust": ["b"]})
    assert isinstance(scorer, FellegiSunter)
    assert scorer.threshold == 1.5 and scorer.tf_adjust == ["b"] and scorer.tf_columns == ["b"]
    assert scorer.needs_random_pairs is True
    assert scorer.to_dict() == {"type": "fellegi_sunter", "threshold": 1.5, "tf_adjust": ["b"]}
    assert Scorer.from_dict(scorer.to_dict()) == scorer
    full = FellegiSunter(prior=0.01, u_sample_size=1000, seed=7, max_iterations=20,
                         tolerance=1e-3, fixed_m={"b": {"exact": 0.9}},
                         fixed_u={"b": {"exact": 0.1}}, tf_minimum_u=1e-4)
    assert Scorer.from_dict(full.to_dict()) == full
    assert FellegiSunter().to_dict() == {"type": "fellegi_sunter"}


@pytest.mark.parametrize(
    ("settings_", "field"),
    [
        ({"prior": 1.5}, "prior"),
        ({"prior": 0}, "prior"),
        ({"tolerance": -1}, "tolerance"),
        ({"max_iterations": 0}, "max_iterations"),
        ({"u_sample_size": 0}, "u_sample_size"),
        ({"fixed_m": {"b": {"exact": 1.5}}}, "fixed_m.b.exact"),
        ({"fixed_u": {"b": {"exact": 0.7, "else": 0.6}}}, "fixed_u.b"),
        ({"tf_adjust": "b"}, "tf_adjust"),
        ({"tf_minimum_u": 0}, "tf_minimum_u"),
    ],
)
def test_bad_settings_name_the_key(settings_, field):
    with pytest.raises(RulesError, match=field.replace(".", r"\.")):
        Scorer.from_dict({"type": "fellegi_sunter", **settings_})


def test_bad_prior_message():
    with pytest.raises(RulesError, match="prior") as err:
        Scorer.from_dict({"type": "fellegi_sunter", "prior": 1.5})
    assert "1.5" in str(err.value)


@pytest.mark.parametrize(
    ("kwargs", "path"),
    [
        ({"fixed_m": {"bb": {"exact": 0.9}}}, "fixed_m.bb"),
        ({"fixed_u": {"b": {"exakt": 0.1}}}, "fixed_u.b.exakt"),
        ({"fixed_m": {"b": {"exact": 0.5, "else": 0.4}}}, "fixed_m.b"),
        ({"tf_adjust": ["a", "surname"]}, "tf_adjust[1]"),
    ],
)
def test_validate_against_names_the_path(kwargs, path):
    scorer = FellegiSunter(**kwargs)
    with pytest.raises(RulesError, match=path.replace(".", r"\.").replace("[", r"\[")):
        scorer.validate_against(COMPARISONS)
    with pytest.raises(RulesError):
        scorer.fit(matrix(np.zeros((3, 4))))


def test_did_you_mean_for_a_misspelt_level():
    with pytest.raises(RulesError, match="Did you mean 'exact'"):
        FellegiSunter(fixed_u={"b": {"exakt": 0.1}}).validate_against(COMPARISONS)


def _two_kinds_of_non_match():
    """Matches agree on everything; one kind of non-match shares `a` (one blocking key), the
    other shares `c` (another key) — what a union of blockers lets through."""
    from linkage.comparators import Exact

    rng = np.random.default_rng(5)
    comps = [Exact("a"), Exact("b"), Exact("c"), Exact("d")]

    def draw(n, p):
        return np.column_stack([(rng.random(n) < q).astype(np.int8) for q in p])

    levels = np.vstack([draw(5000, [0.95, 0.9, 0.9, 0.85]), draw(30000, [0.98, 0.05, 0.03, 0.05]),
                        draw(15000, [0.02, 0.04, 0.97, 0.06])])
    truth = np.r_[np.ones(5000), np.zeros(45000)]
    return ComparisonMatrix(comps, levels, levels.astype(np.float32)), truth


def test_non_match_mixture_ranks_pairs_better():
    from sklearn.metrics import roc_auc_score

    X, truth = _two_kinds_of_non_match()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LinkageWarning)
        single = FellegiSunter(non_match_components=1).fit(X)
        mixture = FellegiSunter(non_match_components=3).fit(X)
    assert mixture.prior_ != single.prior_  # the mixture was chosen over the plain fit
    assert roc_auc_score(truth, mixture.match_weight(X)) > roc_auc_score(
        truth, single.match_weight(X))
    # Contributions and prior add up to the weight, with the pair's pattern set against the
    # kinds of non-match as a whole; a plain fit has no such term.
    total = (mixture.contributions(X).to_numpy().sum(axis=1) + mixture.bias()
             + mixture.non_match_term(X))
    np.testing.assert_allclose(total, mixture.match_weight(X))
    assert np.any(mixture.non_match_term(X) != 0.0)
    assert not np.any(single.non_match_term(X))


def test_swapped_classes_are_swapped_back():
    scorer = FellegiSunter()
    agree_rarely = [np.array([0.9, 0.1])] * 3
    agree_often = [np.array([0.2, 0.8])] * 3
    with pytest.warns(LinkageWarning, match="swapped back"):
        m, u, lam = scorer._check_labels(["a", "b", "c"], agree_rarely, agree_often, 0.8,
                                         [True, True, True])
    assert m is agree_often and u is agree_rarely and lam == pytest.approx(0.2)
    with warnings.catch_warnings():
        warnings.simplefilter("error", LinkageWarning)
        m, _, _ = scorer._check_labels(["a", "b", "c"], agree_often, agree_rarely, 0.2,
                                       [True, True, True])
    assert m is agree_often


def test_non_match_mixture_recovers_the_prior():
    """Two kinds of non-match (one per blocking key): the mixture's prior is the true share.

    Each non-match component is re-estimated from the non-match part of the pairs only; when
    the matches leaked into them the prior came out far too low.
    """
    X, truth = _two_kinds_of_non_match()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LinkageWarning)
        scorer = FellegiSunter(non_match_components=3).fit(X)
    assert abs(scorer.prior_ - truth.mean()) <= 0.02


def test_mixture_em_never_lowers_the_likelihood():
    X, _ = _two_kinds_of_non_match()
    scorer = FellegiSunter()
    patterns, counts = np.unique(X.levels.astype(np.int64), axis=0, return_counts=True)
    counts = counts.astype(np.float64)
    sizes = [2, 2, 2, 2]
    free = [(np.zeros(2, bool), np.zeros(2))] * 4
    u = [np.array([0.5, 0.5])] * 4
    data = _Data(patterns=patterns, counts=counts, sizes=sizes, names=X.names,
                 labels=[c.level_labels for c in X.comparisons], u_learned=[True] * 4,
                 fixed_m=free, fixed_u=free, monotone=[True] * 4, identifying=[False] * 4,
                 random_u=[None] * 4)
    logliks = [scorer._em(data, u, 3, it)["loglik"] for it in (1, 2, 5, 20, 60)]
    assert all(b >= a - 1e-6 for a, b in itertools.pairwise(logliks))


def test_tf_is_relative_to_the_candidates_exact_agreements():
    """With u learned on the candidates, a value as common as those the candidates agree on
    weighs the plain exact weight; rarer values weigh more, commoner ones less."""
    X, _ = _two_kinds_of_non_match()
    rng = np.random.default_rng(3)
    freqs = np.where(X.levels[:, 0] == 1, rng.choice([0.001, 0.01, 0.05], len(X)), np.nan)
    Xtf = ComparisonMatrix(X.comparisons, X.levels, X.similarities, term_frequencies={"a": freqs})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LinkageWarning)
        scorer = FellegiSunter(tf_adjust=["a"]).fit(Xtf)
    assert scorer.tf_u_["a"] == pytest.approx(np.nanmean(freqs))
    levels = np.array([[1, 1, 1, 1]] * 3)
    probe = ComparisonMatrix(X.comparisons, levels, levels.astype(np.float32),
                             term_frequencies={"a": np.array([scorer.tf_u_["a"], 0.001, 0.05])})
    got = scorer.contributions(probe)["a"].to_numpy()
    plain = math.log2(scorer.m_probabilities_["a"]["exact"] / scorer.u_probabilities_["a"]["exact"])
    assert got[0] == pytest.approx(plain)
    assert got[1] > plain > got[2]


def test_a_moved_threshold_decides_while_the_rules_keep_theirs():
    """The one-to-one move is learned state: the scorer decides at the moved threshold, its
    rules (to_dict, repr, equality) keep the given one, and reading them never changes it."""
    scorer = FellegiSunter(threshold=3.0)
    scorer.move_threshold(1.5)
    assert scorer.threshold == 1.5
    assert scorer.to_dict()["threshold"] == 3.0
    assert "threshold=3.0" in repr(scorer)
    assert scorer.threshold == 1.5  # writing the rules did not swap it
    assert scorer == FellegiSunter(threshold=3.0)
    scorer.move_threshold(0.5)  # moved again: still computed from the rules' value
    assert scorer.to_dict()["threshold"] == 3.0 and scorer.threshold == 0.5


def test_blocks_weighed_side_by_side_give_the_weights_of_one_pass(known, fitted, monkeypatch):
    """Issue 18: the score stage weighs its blocks of `SCORE_ROWS` pairs on the pool's threads,
    each into its own rows; the weights are those of one pass over every pair, whether one
    thread or two do the blocks."""
    from linkage.run.compare import SCORE_ROWS, weights_in_blocks, weights_of

    X, _ = known
    reps = -(-(3 * SCORE_ROWS + 123) // len(X.levels))  # more than three blocks, the last short
    levels = np.tile(X.levels, (reps, 1))[: 3 * SCORE_ROWS + 123]
    big = matrix(levels)

    def rows(start: int, stop: int) -> ComparisonMatrix:
        return ComparisonMatrix(big.comparisons, big.levels[start:stop],
                                big.similarities[start:stop], {})

    whole = weights_of(fitted, big)
    for threads in ("1", "2"):
        monkeypatch.setenv("LINKAGE_THREADS", threads)
        weight, probability = weights_in_blocks(fitted, len(levels), rows)
        assert np.array_equal(weight, whole[0]) and np.array_equal(probability, whole[1])
