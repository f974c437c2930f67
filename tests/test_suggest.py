"""`linkage suggest`: readable rules for an unseen table, and runs without --rules."""

from __future__ import annotations

import pandas as pd
import yaml

import linkage as lk
from linkage.suggest import profile_column, suggest_rules
from tests.conftest import ROOT, f1_score, pairs_of_clusters, run_cli
from tests.test_febrl import _opaque, _read_febrl


def test_profiles_recognise_common_columns():
    kinds = {
        "email": ["a@b.com", "kim@naver.com", "x.y@z.co.kr"] * 10,
        "phone": ["010-1234-5678", "+82 10 9999 0000", "02-123-4567"] * 10,
        "birth_date": ["1990-03-05", "1985-12-01", "1990년 3월 5일"] * 10,
        "postcode": ["06236", "13529", "04524"] * 10,
    }
    for column, values in kinds.items():
        assert profile_column(column, pd.Series(values)).kind in (column, "date"), column
    korean = profile_column("name", pd.Series(["김민수", "이영희", "박지훈"] * 10))
    assert korean.kind == "hangul_name"


def test_suggested_yaml_is_commented_and_valid(tmp_path):
    done = run_cli("suggest", ROOT / "sample_data" / "customers.csv")
    assert done.returncode == 0, done.stderr
    text = done.stdout
    assert text.startswith("# Suggested by `linkage suggest`")
    assert "# Column profiles" in text and "(kept)" in text
    rules = lk.Rules.from_dict(yaml.safe_load(text))
    assert rules.scoring.kind == "fellegi_sunter"
    assert rules.id_column == "customer_id"
    assert any("chosung(name)" in str(k) for b in rules.blocking for k in b.keys)


def test_febrl3_with_suggested_rules_and_fellegi_sunter(tmp_path, datasets):
    frame, entity = _opaque(_read_febrl(datasets / "febrl" / "dataset3.csv"), "sg")
    frame.to_csv(tmp_path / "in.csv", index=False)
    done = run_cli("dedupe", tmp_path / "in.csv", "--out", tmp_path / "out")
    assert done.returncode == 0, done.stderr
    assert "suggested rules" in done.stderr
    clusters = pd.read_parquet(tmp_path / "out" / "clusters.parquet")
    predicted = pairs_of_clusters(clusters, "rec_id", "cluster_id")
    truth = pairs_of_clusters(
        pd.DataFrame({"rec_id": list(entity), "e": list(entity.values())}), "rec_id", "e"
    )
    precision, recall, f1 = f1_score(predicted, truth)
    assert f1 >= 0.99, (precision, recall, f1)
    assert (tmp_path / "out" / "model.json").exists()
    rules = lk.Rules.from_yaml(tmp_path / "out" / "rules.yaml")
    assert rules.scoring.kind == "fellegi_sunter"


def test_suggestion_keeps_keys_under_budget(datasets):
    frame = _read_febrl(datasets / "febrl" / "dataset1.csv")
    suggestion = suggest_rules([frame], max_pairs=20_000)
    assert suggestion.budget_per_key == 2_000
    chosen = [t for t in suggestion.measured if t.kept]
    assert chosen and all(0 < t.chosen_pairs <= 2_000 for t in chosen)
    keys = [t.chosen for t in chosen if not t.outcome.startswith("sorted")]
    assert suggestion.rules["blocking"][0]["keys"] == keys
    # A key over the budget is refined (a part added), not dropped.
    refined = [t for t in suggestion.measured if t.outcome.startswith("refined")]
    assert refined and all(t.pairs > 2_000 and t.chosen[:len(t.key)] == t.key for t in refined)


def test_trained_model_reused_with_identical_scores(tmp_path, datasets):
    """`--model out/model.json` scores a new run with the trained weights: no refit."""
    source = datasets / "febrl" / "dataset1.csv"
    first = run_cli("dedupe", source, "--out", tmp_path / "one")
    assert first.returncode == 0, first.stderr
    again = run_cli("dedupe", source, "--rules", tmp_path / "one" / "rules.yaml",
                    "--model", tmp_path / "one" / "model.json", "--out", tmp_path / "two")
    assert again.returncode == 0, again.stderr
    one = pd.read_parquet(tmp_path / "one" / "pairs.parquet")
    two = pd.read_parquet(tmp_path / "two" / "pairs.parquet")
    pd.testing.assert_series_equal(one["match_weight"], two["match_weight"])
    assert (tmp_path / "one" / "model.json").read_bytes() == (
        tmp_path / "two" / "model.json").read_bytes()
    wrong = run_cli("dedupe", source, "--rules", tmp_path / "one" / "rules.yaml",
                    "--model", tmp_path / "one" / "summary.json", "--out", tmp_path / "three")
    assert wrong.returncode == 2, wrong.stderr
    assert "summary.json" in wrong.stderr and not (tmp_path / "three").exists()


def test_a_mostly_numeric_column_with_units_is_not_compared_as_numbers():
    values = pd.Series([str(v) for v in range(100)] + ["151.27 gbp"])
    assert profile_column("price", values).kind != "numeric"
    assert profile_column("price", pd.Series([f"{v}.5" for v in range(100)])).kind == "numeric"
    # 0, 1, ..., 99 is a row number (issue 14), not an amount
    assert profile_column("price", pd.Series([str(v) for v in range(100)])).kind == "row_number"


def test_normalized_distinct_values_give_every_row_its_normalized_value():
    """Suggesting normalizes each column's distinct values once (`suggest._coded`): every
    row gets what normalizing the rows gives it, and key pair counts group the same codes,
    for text, numbers read as text, mixed cells, missing and empty values, and steps that
    join several columns."""
    import numpy as np

    from linkage.blocking.choose import _Measure
    from linkage.io import as_text
    from linkage.settings import Normalize
    from linkage.suggest import _coded

    rng = np.random.default_rng(5)
    n = 3_000
    frame = pd.DataFrame({
        "name": pd.Series(rng.choice(["Bill Smith", "william smith", "ÉMILE", "", None, "김 민수"],
                                     n), dtype="str"),
        "dob": pd.Series(rng.choice(["1990-03-05", "05/03/1990", "19900305", "bad", None], n),
                         dtype=object),
        "mixed": pd.Series(rng.choice(np.array([1, "1", 1.0, 2.5, None, "x", True], dtype=object),
                                      n), dtype=object),
        "code": rng.choice([2119.0, 6236.0, np.nan, 1.5], n),
        "phone": rng.choice(["07700 900123", "+44 7700 900124", "n/a"], n),
        "country": rng.choice(["GB", "Germany", None], n),
        "year": rng.choice(["1990", "1985", None], n), "month": rng.choice(["3", "12"], n),
        "day": rng.choice(["5", "31"], n),
        # ASCII strings, read by the normalizers as Arrow holds them (`distinct_arrow`)
        "mail": pd.Series(rng.choice([" Ann@X.com", "bob@y.org\t", "ann@x.com", "", None], n),
                          dtype="str"),
        "post": pd.Series(rng.choice(["sw1a 1aa", "SW1A1AA", " ec1 ", "", None], n), dtype="str"),
    })
    normalize = [
        {"column": "name", "type": "name"}, {"column": "dob", "type": "date", "order": "DMY",
                                              "on_error": "null"},
        {"column": "mixed", "type": "text"}, {"column": "code", "type": "postcode"},
        {"column": "phone", "type": "phone", "country": "GB", "region_column": "country"},
        {"column": "year", "type": "date_parts", "month": "month", "day": "day",
         "output": "born"},
        {"column": "mail", "type": "email"}, {"column": "post", "type": "postcode"},
        {"column": "post", "type": "text", "output": "post_text"},
    ]
    rows = {str(c): as_text(frame[c]) for c in frame.columns}
    for spec in normalize:
        step = Normalize(**spec)
        series = pd.Series(step.joined(rows), name=step.column, dtype=object)
        rows[step.target] = step.apply(series).to_numpy(dtype=object)
    work, coded = _coded(frame, normalize)
    assert work.keys() == rows.keys()
    for column, values in rows.items():
        assert work[column].tolist() == values.tolist(), column
        by_rows = _Measure(rows, None, [n])._column(column)
        by_codes = _Measure(work, None, [n], coded)._column(column)
        assert by_rows[0].tolist() == by_codes[0].tolist() and by_rows[1] == by_codes[1]


def _pairs_of_all_rows(measure, key: list[str]) -> int:
    """A key's estimated pairs counted over every row of the sample (the code of each row,
    grouped): what `_Measure.pairs` counts on the rows of shared blocks only."""
    import numpy as np

    codes = measure.codes(key)
    valid = codes >= 0
    dense = pd.factorize(codes[valid])[0]
    if measure.source is None:
        sizes = np.bincount(dense)
        found = float((sizes.astype(np.float64) * (sizes - 1) / 2).sum())
    else:
        side = measure.source[valid]
        width = int(dense.max(initial=-1)) + 1
        left = np.bincount(dense[side == 0], minlength=width)
        right = np.bincount(dense[side == 1], minlength=width)
        found = float((left.astype(np.float64) * right).sum())
    return round(found * measure.scale)


def _likely_of_all_rows(measure, keys: list[list[str]], per_block: int = 20):
    """Every pair of rows sharing one of `keys` in a block of at most `per_block` rows (across
    the tables in a link), as (left rows, right rows) in order: `likely_matches` by hand."""
    found = set()
    for key in keys:
        blocks: dict[int, list[int]] = {}
        for row, code in enumerate(measure.codes(key).tolist()):
            if code >= 0:
                blocks.setdefault(code, []).append(row)
        for rows in blocks.values():
            if 2 <= len(rows) <= per_block:
                found |= {(a, b) for i, a in enumerate(rows) for b in rows[i + 1:]
                          if measure.source is None or measure.source[a] != measure.source[b]}
    pairs = sorted(found)
    return [a for a, _ in pairs], [b for _, b in pairs]


def test_key_pairs_counted_on_shared_blocks_equal_those_of_every_row():
    """`_Measure` counts a key of several parts on the rows its shorter key and its last part
    leave in blocks of two or more: the same pairs and likely matches as grouping every row,
    with missing and empty values, values shared by no other row, key functions, sparse and
    dense codes, one table and two."""
    import numpy as np

    from linkage.blocking.choose import _Measure

    rng = np.random.default_rng(7)
    for trial in range(12):
        n = int(rng.integers(50, 3_000))

        def column(distinct: int, n: int = n):
            pool = np.array([f"v{k}x{k * 7 % 13}" for k in range(distinct)] + ["", None],
                            dtype=object)
            return pool[rng.integers(0, len(pool), n)]

        work = {"a": column(int(rng.integers(1, 40))), "b": column(int(rng.integers(2, 400))),
                "c": column(int(rng.integers(n // 2, 2 * n))),
                "d": column(int(rng.integers(1, 5)))}
        source = None if trial % 3 == 0 else np.sort(rng.integers(0, 2, n)).astype(np.int8)
        sizes = [n * 4] if source is None else [int((source == 0).sum()) * 3,
                                                  int((source == 1).sum()) * 5]
        keys = [["a"], ["b"], ["c"], ["a", "b"], ["b", "a"], ["a", "c"], ["c", "b"],
                ["a", "b", "c"], ["a", "b", "d"], ["first(b, 2)", "a"], ["d", "first(c, 3)"],
                ["a", "b", "c", "d"], ["d", "d"], ["soundex(b)", "last(c, 2)", "a"]]
        measure = _Measure(work, source, sizes)
        reference = _Measure(work, source, sizes)
        for key in rng.permutation(np.array(keys, dtype=object)):
            assert measure.pairs(key) == _pairs_of_all_rows(reference, key), (trial, key)
        small = [k for k in keys if 0 < measure.pairs(k) <= 2 * n]
        a, b = measure.likely_matches(small, per_block=6)
        assert (a.tolist(), b.tolist()) == _likely_of_all_rows(reference, small, 6), trial


def test_the_suggested_threshold_is_even_odds_in_a_link_and_stricter_in_a_dedupe():
    """A link's pairs are its output one by one (even odds, weight 0, makes the fewest expected
    errors); a dedupe's clusters chain a false link into two whole clusters, so it asks more
    (with even odds, historical_50k fell from 0.914 to 0.762)."""
    from linkage import synth
    from linkage.suggest import DEDUPE_THRESHOLD, LINK_THRESHOLD

    _, (records,), _ = synth.traps(2000, seed=1, trap="persons")
    _, (left, right), _ = synth.traps(2000, seed=1, trap="link_columns")
    assert LINK_THRESHOLD == 0.0 < DEDUPE_THRESHOLD
    assert suggest_rules([records]).rules["scoring"]["threshold"] == DEDUPE_THRESHOLD
    assert suggest_rules([left, right]).rules["scoring"]["threshold"] == LINK_THRESHOLD


def test_a_large_dedupe_is_profiled_on_the_rows_its_keys_are_measured_on():
    """Above the profiler's sample size the suggestion takes one sample of the table: the
    rows its keys are measured on are the rows the profiler would take itself (the profiles
    are exactly those of profiling the whole table), and the text statistics read them too
    (the same rules as reading the whole table)."""
    from linkage import synth
    from linkage.blocking.choose import SAMPLE_ROWS, sample_table
    from linkage.profiling import profile_table
    from linkage.suggest_text import text_rules

    _, (records,), _ = synth.traps(SAMPLE_ROWS + 7_000, seed=4, trap="persons")
    suggestion = suggest_rules([records])
    whole = profile_table(records)
    assert [p.column for p in suggestion.profiles] == [p.column for p in whole]
    for got, want in zip(suggestion.profiles, whole, strict=True):
        assert (got.kind, got.why, got.filled, got.distinct, got.unique) == \
            (want.kind, want.why, want.filled, want.distinct, want.unique), got.column
    sample, _, sizes = sample_table([records])
    assert len(sample) == SAMPLE_ROWS and sizes == [len(records)]
    # a table of text: the statistics of its sample and of the whole table give one rule
    text = pd.read_csv(ROOT / "sample_data" / "labelled_text.csv", dtype=str)
    big = pd.concat([text] * (SAMPLE_ROWS // len(text) + 2), ignore_index=True)
    big = big.sample(frac=1.0, random_state=1).reset_index(drop=True)
    profiles = profile_table(big)
    rules = suggest_rules([big]).rules
    sample, _, _ = sample_table([big])
    expected = text_rules([big], profiles, rules)
    assert expected is not None  # word rules: the statistics decided them
    assert text_rules([big], profiles, rules, sample=sample) == expected
