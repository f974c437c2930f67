"""Scale-invariant blocking: over-budget keys are refined, oversized blocks sub-blocked, keys
chosen on a sample whose pair counts are scaled to the whole table (issue 14, item 3)."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pandas as pd
import pytest

import linkage as lk
from linkage import synth
from linkage.blocking import BlockingInput, KeyBlocker, block
from linkage.blocking.choose import SAMPLE_ROWS, _Measure, sample_table
from linkage.errors import LinkageWarning
from linkage.measure.evaluate import score_clusters
from linkage.suggest import _normalized, suggest_rules
from linkage.synth import persons


def _true_pairs(entity: np.ndarray) -> set[tuple[int, int]]:
    out = set()
    for rows in pd.Series(np.arange(len(entity))).groupby(entity).groups.values():
        rows = sorted(rows)
        out |= {(a, b) for i, a in enumerate(rows) for b in rows[i + 1:]}
    return out


def test_over_budget_key_is_refined_not_dropped():
    records, _ = persons(20_000, seed=3)
    suggestion = suggest_rules([records], max_pairs=100_000)
    budget = suggestion.budget_per_key
    assert budget == 10_000
    keys = suggestion.rules["blocking"][0]["keys"]
    trials = {tuple(t.key): t for t in suggestion.measured}
    # The birth date alone collides across people (a few pairs per record at 20,000): over
    # the budget, it comes back with a second part, and that refined key is in the rules.
    dob = trials[("dob",)]
    assert dob.pairs > budget and dob.outcome.startswith("refined to [dob, ")
    assert dob.chosen in keys and 0 < dob.chosen_pairs <= budget
    over = [t for t in suggestion.measured if t.pairs > budget]
    # Over the budget: refined, a window, or dropped only when a chosen key already proposes
    # every pair the refined key would, or another key the very same pairs (a text's start
    # where no value is longer than the start).
    assert over and all(t.outcome.startswith(("refined", "sorted", "dropped: the same pairs"))
                        or "are all proposed by" in t.outcome for t in over)
    # Every key in the rules fits the budget.
    assert all(t.chosen_pairs <= budget for t in suggestion.measured if t.kept)
    # The commented YAML says what happened to each key.
    assert "refined to [dob, " in suggestion.to_yaml()


def _names(tails: str) -> pd.DataFrame:
    rng = np.random.default_rng(2)
    pool = [f"{a}{c} {b}" for a in ("ann", "bob", "cyd", "dia", "eda", "fay", "gus", "hal")
            for c in "xyzw" for b in tails]
    return pd.DataFrame({"name": rng.choice(pool, 5_000)})


def test_key_that_no_part_refines_becomes_a_sorted_neighbourhood():
    # One name column, 384 names over 5,000 records: [name] has about 32,600 pairs, no other
    # column can refine it, so it becomes a window sized to the budget of 20,000 pairs (5),
    # then widened with the total budget no other key took (`MAX_WINDOW`, 10: 45,000 pairs of
    # the 160,000 that 80% of `max_pairs` allows). (With fifty values the column would be a
    # category, never a key on its own.)
    frame = _names("fghijklmnopq")
    suggestion = suggest_rules([frame], max_pairs=200_000)
    trial = next(t for t in suggestion.measured if t.key == ["name"])
    assert trial.pairs > suggestion.budget_per_key == 20_000
    assert trial.outcome == "sorted neighbourhood on [name], window 10"
    window = [b for b in suggestion.rules["blocking"] if b.get("type") == "sorted_neighbourhood"]
    assert window and window[0]["sort_key"] == ["name"] and window[0]["window"] == 10
    rules = lk.Rules.from_dict(suggestion.rules)  # valid rules, and the window runs
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LinkageWarning)
        run = lk.dedupe(frame, rules, progress=False)
    assert 0 < run.summary_data["stages"]["block"]["candidate_pairs"] <= 200_000


def test_no_window_in_a_link_where_runs_of_equal_sort_keys_outgrow_it():
    # 96 names over 5,000 records: about 52 records share each name, far more pairs than
    # even a window of 10 proposes. Split into two tables to link, the records of one name
    # take turns between the tables in row order, so a window would pair them at random and
    # hardly ever reach the next name: no window, and the trial says why.
    frame = _names("fgh")
    suggestion = suggest_rules([frame.iloc[:2500], frame.iloc[2500:]], max_pairs=100_000)
    trial = next(t for t in suggestion.measured if t.key == ["name"])
    assert trial.outcome.startswith("dropped: ") and trial.outcome.endswith(
        " pairs share [name] whole, more than a window of 10 proposes: it would pair records "
        "of equal values at random"), trial.outcome
    assert not trial.kept
    assert not [b for b in suggestion.rules["blocking"] if b.get("type") == "sorted_neighbourhood"]
    # A dedupe keeps such a window (see `choose_keys`: its random pairs steady EM's u).
    suggestion = suggest_rules([frame], max_pairs=200_000)
    trial = next(t for t in suggestion.measured if t.key == ["name"])
    assert trial.outcome == "sorted neighbourhood on [name], window 10"


def _trials(suggestion) -> dict[tuple[str, ...], object]:
    return {tuple(t.key): t for t in suggestion.measured}


def test_short_text_gets_its_start_as_a_key_where_matches_are_reworded_at_its_end():
    # A ledger and a bank statement (linkage.synth's payments trap): the memo is re-keyed at
    # its end on one side, so its whole value misses most links and its start finds them.
    _, frames, _ = synth.traps(20_000, seed=1, trap="payments")
    trial = _trials(suggest_rules(frames))[("first(memo, 8)",)]
    assert trial.kept, trial.outcome
    shares = [int(x) for x in re.findall(r"(\d+)%", trial.outcome)]
    assert len(shares) == 2 and shares[0] >= 2 * shares[1], trial.outcome  # start, whole
    # The same from the values alone: columns renamed c1, c2, ... and put in another order.
    neutral = [f.set_axis([f"c{k}" for k in range(1, 5)], axis=1)[["c4", "c2", "c1", "c3"]]
               for f in frames]
    assert _trials(suggest_rules(neutral))[("first(c2, 8)",)].kept


def test_short_text_start_is_no_key_where_matches_agree_on_the_whole_value(datasets):
    # Real person records (historical_50k): a birth place is the same in two records of a
    # person or differs anywhere, so its start finds no more likely matches than the whole
    # place: no extra key.
    records = pd.read_parquet(datasets / "splink" / "historical_figures_with_errors_50k.parquet")
    trials = _trials(suggest_rules([records.drop(columns=["cluster"])]))
    trial = trials[("first(birth_place, 8)",)]
    assert not trial.kept
    assert trial.outcome.startswith("dropped: likely matches that share its start share the "
                                    "whole value too"), trial.outcome
    # Values no longer than the start (a generated person's town): the same pairs as the
    # whole value, and said so.
    records, _ = persons(20_000, seed=3)
    trial = _trials(suggest_rules([records]))[("first(city, 8)",)]
    assert trial.outcome.startswith("dropped: the same pairs as [city]"), trial.outcome


def test_a_key_no_part_refines_is_ranged_on_the_date_its_comparison_credits():
    # The payments trap at 100k: the memo's start is over the budget and no part refines it
    # (every payment is of one year). A window sorted by the start and then by the date
    # reached a tenth of the days at ten times the payments; it is ranged instead: the start
    # with the date within the 31 days the date comparison credits, the range's pairs fitting
    # the total budget the keys left. No key holds a year.
    _, frames, _ = synth.traps(100_000, seed=1, trap="payments")
    suggestion = suggest_rules(frames)
    trial = _trials(suggestion)[("first(memo, 8)",)]
    assert trial.outcome.startswith("ranged: [first(memo, 8)] with date within 31 days"), \
        trial.outcome
    ranged = [b for b in suggestion.rules["blocking"] if b.get("type") == "range"]
    assert ranged == [{"name": "suggested_range_1", "type": "range", "key": ["first(memo, 8)"],
                       "column": "date", "within_days": 31}]
    assert not any(b.get("type") == "sorted_neighbourhood" for b in suggestion.rules["blocking"])
    kept = [t for t in suggestion.measured if t.kept]
    assert sum(t.chosen_pairs for t in kept) <= 0.8 * suggestion.rules["max_pairs"]
    assert not any(part.startswith("year(") for t in kept for part in t.chosen)


def test_windows_sort_a_year_as_its_date_and_share_the_budget_the_keys_left():
    # The payments trap with the budget of a table 130 times its size (`max_pairs` 150,000
    # for 20,000 rows: 15,000 pairs a key): the date, its year and the memo's start are over
    # the budget. A window by year alone paired each payment with random ones of its year;
    # it sorts as the date whole, and no window on the date is made: about 80 payments a
    # day on each side, so a window would pair payments of one day at random. The memo's
    # start is a window: sized to the per-key budget it would be 1 wide; the total budget the
    # keys left widens it. Its range (the date within 31 days, 143,420 pairs) does not fit
    # what the keys left, so the window stays; with `max_pairs` 400,000 the range does fit,
    # takes the window's place, and proposes what the suggestion counted.
    _, (ledger, statement), truth = synth.traps(20_000, seed=1, trap="payments")
    roomy = suggest_rules([ledger, statement], max_pairs=400_000)
    ranged = [b for b in roomy.rules["blocking"] if b.get("type") == "range"]
    assert [b["key"] for b in ranged] == [["first(memo, 8)"]], roomy.rules["blocking"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LinkageWarning)
        run = lk.link(ledger, statement, lk.Rules.from_dict(roomy.rules), progress=False)
    trial = _trials(roomy)[("first(memo, 8)",)]
    # the sample is the whole table: the count is the run's, exactly
    assert trial.chosen_pairs == run.summary_data["stages"]["block"]["blockers"][
        ranged[0]["name"]]["proposed_pairs"]
    suggestion = suggest_rules([ledger, statement], max_pairs=150_000)
    trials = _trials(suggestion)
    for key in (("date",), ("year(date)",)):
        assert trials[key].outcome.startswith("dropped: ") and trials[key].outcome.endswith(
            " pairs share [date] whole, more than a window of 10 proposes: it would pair "
            "records of equal values at random"), trials[key].outcome
    windows = [b for b in suggestion.rules["blocking"] if b.get("type") == "sorted_neighbourhood"]
    assert not any(part.startswith("year(") for b in windows for part in b["sort_key"])
    assert ["first(memo, 8)", "date"] in [b["sort_key"] for b in windows]
    widths = [b["window"] for b in windows]
    assert all(w > 3 for w in widths), widths
    kept = [t for t in suggestion.measured if t.kept]
    assert sum(t.chosen_pairs for t in kept) <= 0.8 * 150_000
    for trial in kept:  # the outcome says the final width
        if trial.outcome.startswith("sorted"):
            assert trial.outcome.endswith(f"window {widths.pop(0)}")
    actual = set(zip(truth["id_l"], truth["id_r"], strict=True))

    blocked = {}

    def found(rules: dict) -> tuple[float, float]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", LinkageWarning)
            run = lk.link(ledger, statement, lk.Rules.from_dict(rules), progress=False)
        blocked.update(run.summary_data["stages"]["block"]["blockers"])
        pairs = set(zip(run.pairs["id_l"].astype(str), run.pairs["id_r"].astype(str),
                        strict=True))
        links = set(zip(run.links["id_l"].astype(str), run.links["id_r"].astype(str),
                        strict=True))
        tp = len(links & actual)
        return len(pairs & actual) / len(actual), 2 * tp / (len(links) + len(actual))

    narrow = {**suggestion.rules, "blocking": [
        {**b, "window": 3} if b.get("type") == "sorted_neighbourhood" else b
        for b in suggestion.rules["blocking"]]}
    recall_narrow, _ = found(narrow)
    recall, f1 = found(suggestion.rules)
    assert recall > recall_narrow, (recall, recall_narrow)  # 0.96 against 0.84
    assert f1 >= 0.85, f1  # the payments trap's goal (bench/generalization.py)
    # A link's window is budgeted as the pairs across tables it proposes (about half its
    # neighbours), not every neighbour: the suggestion's count is the run's (the sample is
    # the whole table here), within 1%.
    for b in windows:
        trial = next(t for t in suggestion.measured if t.chosen == b["sort_key"])
        run_pairs = blocked[b["name"]]["proposed_pairs"]
        assert abs(trial.chosen_pairs - run_pairs) <= 0.01 * run_pairs, (trial, run_pairs)


def _crowded(n_people: int = 400) -> tuple[pd.DataFrame, np.ndarray]:
    """One city for everyone; each person twice, the copy with a typo at the end."""
    rng = np.random.default_rng(5)
    stems = ["".join(rng.choice(list("abcdefghijklmnopqrstuvwxyz"), 7)) for _ in range(n_people)]
    names = [s + "a" for s in stems] + [s + "e" for s in stems]
    entity = np.concatenate([np.arange(n_people), np.arange(n_people)])
    order = rng.permutation(len(names))
    frame = pd.DataFrame({"city": "seoul", "name": np.array(names)[order]})
    return frame, entity[order]


def test_oversized_block_is_sub_blocked_and_its_true_pairs_found():
    frame, entity = _crowded()
    data = BlockingInput({c: frame[c].to_numpy(dtype=object) for c in frame.columns})
    with pytest.warns(LinkageWarning, match="sub-blocked a block of 800 records") as record:
        pairs = block([KeyBlocker(["city"], name="by_city")], data, max_pairs=10**9,
                      max_block_size=100)
    assert "sorted neighbourhood on name" in str(record[0].message)
    found = set(zip(pairs.left.tolist(), pairs.right.tolist(), strict=True))
    truth = _true_pairs(entity)
    assert truth <= found  # every copy sorts next to its original
    assert len(found) < 800 * 9  # a window, not the 319,600 pairs of the whole block
    assert pairs.skipped[0].how == "sorted neighbourhood on name, window 9"
    assert pairs.estimated["by_city"] >= pairs.proposed["by_city"]


def test_oversized_block_is_sub_blocked_in_a_link_and_end_to_end():
    frame, entity = _crowded(200)
    first = np.unique(entity, return_index=True)[1]
    left = frame.iloc[np.sort(first)].reset_index(drop=True)
    right = frame.drop(index=frame.index[first]).reset_index(drop=True)
    source = np.repeat(np.array([0, 1], dtype=np.int8), [len(left), len(right)])
    both = pd.concat([left, right], ignore_index=True)
    data = BlockingInput({c: both[c].to_numpy(dtype=object) for c in both.columns}, source)
    with pytest.warns(LinkageWarning, match="sub-blocked"):
        pairs = block([KeyBlocker(["city"])], data, max_pairs=10**9, max_block_size=50)
    stems = both["name"].str[:-1].to_numpy()
    assert (source[pairs.left] != source[pairs.right]).all()
    found = {(stems[a], stems[b]) for a, b in zip(pairs.left, pairs.right, strict=True)
             if stems[a] == stems[b]}
    assert len(found) == 200  # each person's left and right records meet
    # A whole run: the crowded block is compared through its neighbours, and the copies
    # cluster (before, the block was skipped and nothing was found).
    rules = {"blocking": [{"keys": ["city"]}], "max_block_size": 100,
             "comparisons": [{"type": "jaro_winkler", "column": "name", "thresholds": [0.9]}],
             "scoring": {"type": "rule_sum", "threshold": 1.0}}
    truth = pd.Series(entity, index=[f"r{i}" for i in range(len(frame))])
    for chunk_rows in (None, 150):  # in memory, and in chunks (out of core)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", LinkageWarning)
            run = lk.dedupe(frame.assign(id=truth.index), {**rules, "id_column": "id"},
                            progress=False, chunk_rows=chunk_rows)
        assert run.summary_data["stages"]["block"]["skipped_blocks"][0]["how"]
        assert any("sub-blocked" in w for w in run.summary_data["warnings"])
        predicted = run.clusters.set_index("id")["cluster_id"]
        assert score_clusters(predicted, truth).recall == 1.0, chunk_rows


def test_suggest_reads_a_sample_and_scales_pair_counts():
    records, _ = persons(SAMPLE_ROWS + 30_000, seed=11)
    suggestion = suggest_rules([records])
    assert suggestion.sample_rows == SAMPLE_ROWS < len(records)
    # Pair counts estimated on the sample match the whole table's within a few per cent: a
    # key whose pairs are duplicates (e-mail) and one whose pairs are collisions (birth date).
    normalize = suggestion.rules["normalize"]
    full = _normalized(records, normalize)
    exact = _Measure(full, None, [len(records)])
    sample, source, sizes = sample_table([records])
    estimated = _Measure(_normalized(sample, normalize), source, sizes)
    assert len(sample) == SAMPLE_ROWS and sizes == [len(records)]
    for key in (["email"], ["dob"], ["surname"], ["first_name", "surname"]):
        truth, guess = exact.pairs(key), estimated.pairs(key)
        assert abs(guess - truth) <= 0.05 * truth, (key, guess, truth)
        trial = next(t for t in suggestion.measured if t.key == key)
        assert trial.pairs == guess


def _f1(n: int, seed: int) -> float:
    records, truth = persons(n, seed=seed)
    rules = lk.Rules.from_dict(suggest_rules([records]).rules)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LinkageWarning)
        run = lk.dedupe(records, rules, progress=False)
    predicted = run.clusters.set_index("rec_id")["cluster_id"]
    return score_clusters(predicted, truth.set_index("rec_id")["entity_id"]).f1


def test_same_generator_scores_alike_at_10k_and_100k():
    small, large = _f1(10_000, 42), _f1(100_000, 42)
    assert abs(small - large) <= 0.01, (small, large)


def test_incremental_blocking_sub_blocks_as_a_full_run():
    from linkage.update import block_new

    frame, _ = _crowded(150)
    work = {c: frame[c].to_numpy(dtype=object) for c in frame.columns}
    rules = lk.Rules.from_dict({
        "blocking": [{"name": "by_city", "keys": ["city"]}], "max_block_size": 50,
        "comparisons": [{"type": "exact", "column": "name"}]})
    n_old = 200  # the last 100 records are new
    with pytest.warns(LinkageWarning, match="sub-blocked"):
        full = block(rules.blocking, BlockingInput(work), max_pairs=10**9, max_block_size=50)
    with pytest.warns(LinkageWarning, match="sub-blocked"):
        new = block_new(rules, work, n_old)
    touching = {(a, b) for a, b in zip(full.left.tolist(), full.right.tolist(), strict=True)
                if b >= n_old}
    assert touching and set(zip(new.left.tolist(), new.right.tolist(), strict=True)) == touching
    assert new.skipped[0].how == full.skipped[0].how == "sorted neighbourhood on name, window 9"


def test_sorted_groups_are_the_blockers_groups():
    """Likely matches group the sample's rows by one sort (`choose._sorted_groups`): the same
    rows in the same order and the same group sizes as `blocking.groups`, for small, large
    and missing codes."""
    from linkage.blocking._blockers import groups
    from linkage.blocking.choose import _sorted_groups

    rng = np.random.default_rng(8)
    for n, high in ((0, 5), (1, 5), (1_000, 3), (50_000, 40_000), (50_000, 1 << 61)):
        codes = rng.integers(-1, high, n).astype(np.int64)
        rows, _, sizes = groups(codes)
        mine_rows, mine_sizes = _sorted_groups(codes)
        assert mine_rows.tolist() == rows.tolist() and mine_sizes.tolist() == sizes.tolist()
