"""Suggested rules for tables of text (products, citations): word-based blocking, comparisons
and one-to-one links, and the token comparators and blocker behind them.

The end-to-end tests link real benchmark tables through the CLI without rules, as a new user
would, and score links.parquet against gt.csv; only the test reads gt.csv.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
import yaml

import linkage as lk
from linkage.blocking import BlockingInput, TokenNeighbours
from linkage.comparators import CodeMatch, TokenCosine
from linkage.comparators._tokens import codes_of, tokens_of
from linkage.normalize._encoded import encode_series
from linkage.suggest import suggest_rules
from linkage.suggest_text import looks_like_codes, looks_like_text
from tests.conftest import f1_score, run_cli

_BRANDS = ["Sony", "Samsung", "Canon", "Nikon", "Philips", "Panasonic", "Bose", "Logitech"]
_THINGS = ["LCD HDTV", "Digital Camera", "Wireless Mouse", "Speaker System", "Camcorder",
           "Blu-ray Player", "Headphones", "Keyboard"]
_COLOURS = ["Black", "Silver", "White", "Red"]


def _catalogues(n: int = 120) -> tuple[pd.DataFrame, pd.DataFrame, set[tuple[str, str]]]:
    """Two shops listing the same n products under other words: the model number is the one
    thing they always share; brand, kind and colour words repeat across many products."""
    rng = np.random.default_rng(7)
    left, right, truth = [], [], set()
    for i in range(n):
        brand, thing = _BRANDS[i % len(_BRANDS)], _THINGS[(i // 3) % len(_THINGS)]
        code = f"{brand[:2].upper()}-{1000 + 37 * i}{'ABCDEFGH'[i % 8]}"
        colour = _COLOURS[rng.integers(len(_COLOURS))]
        left.append({"id": f"a{i}", "title": f"{brand} {code} {thing} {colour}",
                     "price": f"{50 + i * 3}.99"})
        right.append({"id": f"b{i}",
                      "title": f"{thing} by {brand} - {colour} ({code.replace('-', '')})",
                      "price": f"{50 + i * 3 + int(rng.integers(0, 3))}.49"})
        truth.add((f"a{i}", f"b{i}"))
    order = rng.permutation(n)
    return pd.DataFrame(left), pd.DataFrame(right).iloc[order].reset_index(drop=True), truth


def test_titles_are_text_and_person_names_are_not():
    titles = pd.Series(["Sony Bravia KDL-40V4100 40in LCD HDTV", "Canon EOS 450D Digital SLR",
                        "Logitech MX518 Gaming Mouse Black", "Bose SoundDock II Speaker"] * 10)
    names = pd.Series(["Anna Schmidt", "John Smith", "Maria de la Cruz", "Lee Min-ho",
                       "Peter O'Neil", "Sarah Connor"] * 10)
    models = pd.Series(["KDL-40V4100", "EOS450D", "MX518", "PSLX350H", "DSC-W120"] * 10)
    assert looks_like_text(titles)
    assert not looks_like_text(names)
    assert looks_like_codes(models)
    assert not looks_like_codes(names)
    codes = codes_of("Sony KDL-40V4100 (2008) 40 in $1,299.99")
    assert "kdl40v4100" in codes
    assert not codes & {"2008", "40", "129999"}  # years, sizes and prices are not codes
    assert "ktcd3201g" in tokens_of("Kingston KTC-D320/1G")


def test_token_cosine_weighs_rare_words_over_common_ones():
    # 40 records: "black" in 38 of them, "pslx350h" in two; "sony" and "turntable" in two each.
    values = ["black widget " + str(i) for i in range(36)] + [
        "pslx350h sony", "pslx350h turntable", "black sony", "black turntable"]
    column = encode_series(pd.Series(values))
    cmp = TokenCosine("t", thresholds=[0.5, 0.2])
    _, sims = cmp.compare_codes(column, np.array([36, 38]), np.array([37, 39]))
    # the same word overlap (Jaccard 1/3 for both pairs), but a rare shared word counts more
    assert sims[0] > 0.3 > 0.1 > sims[1]
    # equal text is the exact level, a missing value is null
    lv, sv = cmp.compare(np.array(["a b", None], dtype=object), np.array(["a b", "a"],
                                                                          dtype=object))
    assert lv.tolist() == [len(cmp.level_labels) - 1, -1]
    assert sv[0] == pytest.approx(1.0)


def test_codes_compare_model_numbers_only():
    cmp = CodeMatch("t")
    levels, _ = cmp.compare(
        np.array(["Sony KDL-40V4100 LCD", "Sony KDL-40V4100", "Sony LCD TV", "Nikon D3000"],
                 dtype=object),
        np.array(["kdl40v4100 black", "Sony KDL-46V4100", "Sony KDL-40V4100", "Nikon D5000X"],
                 dtype=object))
    labels = [cmp.label_of(int(v)) for v in levels]
    assert labels == ["shared", "similar", "null", "else"]


def test_token_neighbours_finds_each_records_nearest_in_the_other_source():
    left, right, truth = _catalogues(60)
    columns = {"title": np.concatenate([left["title"], right["title"]]).astype(object)}
    source = np.repeat(np.array([0, 1], dtype=np.int8), [len(left), len(right)])
    blocker = TokenNeighbours("title", k=2, threshold=0.1)
    prop = blocker.propose(BlockingInput(columns, source), 1000)
    ids = np.concatenate([left["id"], right["id"]])
    found = {(ids[a], ids[b]) for a, b in zip(prop.left, prop.right, strict=True)}
    assert truth <= found  # every true pair is among the two nearest
    assert np.all(source[prop.left] != source[prop.right])  # links cross sources only
    assert len(found) <= 2 * 2 * len(left)
    again = blocker.propose(BlockingInput(columns, source), 1000)
    assert np.array_equal(prop.left, again.left) and np.array_equal(prop.right, again.right)
    # searching by each record's rarest word only (its model number) still finds every pair
    rare = TokenNeighbours("title", k=2, threshold=0.1, search_words=1).propose(
        BlockingInput(columns, source), 1000)
    assert truth <= {(ids[a], ids[b]) for a, b in zip(rare.left, rare.right, strict=True)}


def test_suggested_rules_for_a_product_link_use_words_codes_and_one_to_one():
    left, right, truth = _catalogues()
    rules = suggest_rules([left, right]).rules
    assert rules["blocking"][0]["type"] == "token_neighbours"
    assert rules["blocking"][0]["columns"] == ["title"]
    kinds = {(c["type"], c["column"]) for c in rules["comparisons"]}
    assert ("token_cosine", "title") in kinds
    assert ("codes", "title") in kinds
    assert "id" not in {c["column"] for c in rules["comparisons"]}
    assert rules.get("one_to_one") is True
    result = lk.link(left, right, lk.Rules.from_dict(rules), progress=False)
    links = set(zip(result.links["id_l"].astype(str), result.links["id_r"].astype(str),
                    strict=True))
    precision, recall, f1 = f1_score(links, truth)
    assert f1 >= 0.95, (precision, recall, f1)


def test_a_column_only_one_side_has_is_not_compared():
    left, right, truth = _catalogues(80)
    right["review"] = ["Great value, works as described, would buy again"] * len(right)
    rules = suggest_rules([left, right]).rules
    named = {c["column"] for c in rules["comparisons"]} | {
        s["column"] for s in rules["normalize"]} | {
        c for b in rules["blocking"] for c in b.get("columns", [])}
    assert "review" not in named
    result = lk.link(left, right, lk.Rules.from_dict(rules), progress=False)
    links = set(zip(result.links["id_l"].astype(str), result.links["id_r"].astype(str),
                    strict=True))
    assert f1_score(links, truth)[2] >= 0.95


def test_a_maker_column_next_to_titles_does_not_make_a_person_table():
    """A column of short capitalised words with many values reads as a name; next to titles it
    is a maker or brand, and the table still gets word rules, its title named as identifying
    (EM may not take "same kind of product" for the match class)."""
    left, right, _ = _catalogues(120)
    rng = np.random.default_rng(3)
    syllables = ["ka", "lo", "mi", "ter", "van", "dro", "sel", "nu", "bri", "op", "zen", "ga"]
    makers = ["".join(rng.choice(syllables, 3)).capitalize() for _ in range(len(left))]
    left["maker"] = makers
    right["maker"] = [makers[int(i[1:])] for i in right["id"]]
    profiles = {p.column: p.kind for p in suggest_rules([left, right]).profiles}
    assert profiles["maker"] == "name"
    rules = suggest_rules([left, right]).rules
    assert rules["blocking"][0]["type"] == "token_neighbours"
    assert "title" in rules["scoring"]["identifying"]
    assert "maker" in {c["column"] for c in rules["comparisons"]}


def test_person_tables_keep_the_general_suggestion():
    people = pd.DataFrame({
        "first_name": ["anna", "john", "maria", "peter", "sarah", "lee"] * 20,
        "surname": ["schmidt", "smith", "cruz", "oneil", "connor", "kim"] * 20,
        "dob": ["1980-01-02", "1975-03-04", "1990-05-06", "1985-07-08", "1970-09-10",
                "1995-11-12"] * 20,
    })
    rules = suggest_rules([people]).rules
    assert all(b.get("type") != "token_neighbours" for b in rules["blocking"])
    assert all(c["type"] != "token_cosine" for c in rules["comparisons"])


def _cli_link_f1(tmp_path, folder, left, right, sep):
    out = tmp_path / "out"
    done = run_cli("link", folder / left, folder / right, "--out", out, "--sep", sep,
                   "--no-progress")
    assert done.returncode == 0, done.stderr
    links = pd.read_parquet(out / "links.parquet")
    predicted = set(zip(links["id_l"].astype(str), links["id_r"].astype(str), strict=True))
    gt = pd.read_csv(folder / "gt.csv", sep=sep, dtype=str)
    return f1_score(predicted, set(zip(gt["D1"], gt["D2"], strict=True)))


def test_abt_buy_without_rules_reaches_the_target(tmp_path, datasets):
    """Issue 14 target: Abt-Buy >= 0.70 with suggested rules (measured 0.907, in-sample).
    DBLP-ACM's target (0.97) is asserted in tests/test_accuracy_suggested.py."""
    precision, recall, f1 = _cli_link_f1(tmp_path, datasets / "magellan" / "abt_buy",
                                         "abt.csv", "buy.csv", "|")
    assert f1 >= 0.70, (precision, recall, f1)


def test_amazon_google_without_rules_reaches_the_target(tmp_path, datasets):
    """Issue 14 target: Amazon-Google >= 0.55 with suggested rules (measured 0.645, in-sample;
    0.0 before the text rules named their identifying comparisons)."""
    precision, recall, f1 = _cli_link_f1(tmp_path, datasets / "magellan" / "amazon_google",
                                         "amazon.csv", "gp.csv", "#")
    assert f1 >= 0.55, (precision, recall, f1)


def test_walmart_amazon_without_rules_reaches_the_target(tmp_path, datasets):
    """Issue 14 target: Walmart-Amazon >= 0.70 with suggested rules (in-sample: 0.707; 0.662
    with the one-to-one threshold at -log2(k) = -3.3). A record of the small side (Walmart,
    2,554 records, about a third with a match among 22,074 Amazon products) is held to the
    even odds of its best candidate against the record having no match at all (`record_prior`).
    The move is the model's: rules.yaml keeps the rules' threshold, model.json the move, and a
    rerun with that model (`--model`) links the same pairs."""
    folder = datasets / "jedai" / "walmart_amazon"
    done = run_cli("link", folder / "walmart.csv", folder / "amazon.csv", "--sep", "|",
                   "--out", tmp_path / "out", "--no-progress")
    assert done.returncode == 0, done.stderr
    links = pd.read_parquet(tmp_path / "out" / "links.parquet")
    predicted = set(zip(links["id_l"].astype(str), links["id_r"].astype(str), strict=True))
    gt = pd.read_csv(folder / "gt.csv", sep="|", dtype=str)
    precision, recall, f1 = f1_score(predicted, set(zip(gt["D1"], gt["D2"], strict=True)))
    assert f1 >= 0.70, (precision, recall, f1)

    rules = yaml.safe_load((tmp_path / "out" / "rules.yaml").read_text(encoding="utf-8"))
    assert rules["one_to_one_threshold"] == "record_prior" and rules["scoring"]["threshold"] == 0
    model = json.loads((tmp_path / "out" / "model.json").read_text(encoding="utf-8"))
    moved = model["diagnostics"]["one_to_one_threshold"]
    assert 0 < moved["shift"] <= np.log2(moved["candidates_per_record"]) + 1e-9
    summary = json.loads((tmp_path / "out" / "summary.json").read_text(encoding="utf-8"))
    assert summary["stages"]["score"]["threshold"] == pytest.approx(moved["threshold"])
    again = run_cli("link", folder / "walmart.csv", folder / "amazon.csv", "--sep", "|",
                    "--rules", tmp_path / "out" / "rules.yaml", "--model",
                    tmp_path / "out" / "model.json", "--out", tmp_path / "again",
                    "--no-progress")
    assert again.returncode == 0, again.stderr
    pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / "again" / "links.parquet"), links)


def test_labels_judge_a_record_prior_link_as_it_decides(tmp_path, datasets):
    """With labels, the model the guard keeps or beats is the one the run without labels
    uses: its threshold moved by the record prior (before, the labelled runs were judged at
    the rules' threshold and Abt-Buy fell from 0.84 to 0.81 with 25 labels). The truth plays
    the person answering the 25 pairs `sample --active` picks."""
    folder = datasets / "magellan" / "abt_buy"
    files = [folder / "abt.csv", folder / "buy.csv"]
    assert run_cli("link", *files, "--sep", "|", "--out", tmp_path / "run0",
                   "--no-progress").returncode == 0
    todo = tmp_path / "todo.csv"
    assert run_cli("sample", tmp_path / "run0", "--active", "--n", "25",
                   "--out", todo).returncode == 0
    gt = pd.read_csv(folder / "gt.csv", sep="|", dtype=str)
    truth = set(zip(gt["D1"], gt["D2"], strict=True))
    asked = pd.read_csv(todo, dtype=str)
    asked["label"] = [int((a, b) in truth) for a, b in zip(asked["id_l"], asked["id_r"],
                                                           strict=True)]
    asked.to_csv(todo, index=False)
    done = run_cli("link", *files, "--sep", "|", "--labels", todo, "--out", tmp_path / "run1",
                   "--no-progress")
    assert done.returncode == 0, done.stderr
    summary = json.loads((tmp_path / "run1" / "summary.json").read_text(encoding="utf-8"))
    used = summary["labels"]
    assert "one_to_one_threshold" in used
    unlabelled = json.loads((tmp_path / "run0" / "model.json").read_text(encoding="utf-8"))
    moved = unlabelled["diagnostics"]["one_to_one_threshold"]["threshold"]
    if used["mode"] == "unlabelled":  # the labels kept the model the run without them had
        assert used["threshold"] == pytest.approx(moved)
    f1s = []
    for run in ("run0", "run1"):
        links = pd.read_parquet(tmp_path / run / "links.parquet")
        f1s.append(f1_score(set(zip(links["id_l"].astype(str), links["id_r"].astype(str),
                                    strict=True)), truth)[2])
    assert f1s[1] >= f1s[0] - 0.005, f1s  # 25 labels do not make it worse


def test_token_neighbours_are_not_crowded_out_by_copies_of_one_text():
    # One paper cited 15 times in one style and 4 times in others, among 40 other papers: with
    # k = 5 and neighbours counted by record, every record's five places go to copies of the
    # common style (cosine 1 or nearly), and the other styles are never proposed with each
    # other. Counted by distinct text, each style has the others among its nearest.
    same = "kearns valiant cryptographic limitations boolean formulae finite automata"
    texts = [f"{same} journal acm"] * 15 + [
        f"{same} journal association computing machinery",
        f"{same} j acm 1994",
        f"m kearns l valiant {same}",
        f"{same} proc stoc",
    ]
    texts += [f"author{i} paper{i} words{i} venue{i % 7} topic{i % 5}" for i in range(40)]
    columns = {"title": np.array(texts, dtype=object)}
    blocker = TokenNeighbours("title", k=5, threshold=0.1, max_df=0.5)
    prop = blocker.propose(BlockingInput(columns), 10_000)
    found = {(int(a), int(b)) for a, b in zip(prop.left, prop.right, strict=True)}
    # every other style of the paper is proposed with the common style and with each other
    for variant in range(15, 19):
        assert {(copy, variant) for copy in range(15)} & found
    assert {(a, b) for a in range(15, 19) for b in range(a + 1, 19)} <= found
    # and the copies with each other, without a pair across to an unrelated paper
    assert {(a, b) for a in range(15) for b in range(a + 1, 15)} <= found
    assert all(b < 19 for a, b in found if a < 19)
    again = blocker.propose(BlockingInput(columns), 10_000)
    assert np.array_equal(prop.left, again.left) and np.array_equal(prop.right, again.right)



def test_citations_cited_by_the_dozen_are_no_implausible_prior(datasets):
    """cora: 1,295 citations of 112 papers, most cited dozens of times in other styles, so
    most of a citation's nearest citations are the same paper. The prior estimated without EM
    (pairs whose identifying texts agree) sees that majority when a word cosine of 0.9 counts
    as agreement; counting identical texts only, it put the share at 0.25-0.35 and the run was
    called unreliable for its majority of matches. Only the test reads gt.csv."""
    path = datasets / "jedai" / "cora"
    frame = pd.read_csv(path / "cora.csv", sep="|", dtype=str)
    frame = frame.loc[:, ~frame.columns.str.startswith("Unnamed")]
    result = lk.dedupe(frame, lk.Rules.from_dict(suggest_rules([frame]).rules),
                       progress=False)
    gt = pd.read_csv(path / "gt.csv", sep="|", header=None, dtype=str)
    truth = {frozenset(p) for p in zip(gt[0], gt[1], strict=True)}
    pairs = result.pairs
    share = float(np.mean([frozenset((str(a), str(b))) in truth for a, b in
                           zip(pairs["id_l"], pairs["id_r"], strict=True)]))
    assert share > 0.5  # the premise: most candidate pairs are one paper
    low, high = result.scorer.diagnostics["prior_independent_range"]
    assert 0.5 < low <= share <= high
    summary = result.summary()
    assert "implausible_prior" not in {d["code"] for d in summary["diagnostics"]}
