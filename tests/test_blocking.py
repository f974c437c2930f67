"""Tests for linkage.blocking: key parts, blockers against brute force, the union, the budget."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from linkage.blocking import (
    KEY_FUNCTIONS,
    Blocker,
    BlockingInput,
    KeyBlocker,
    KeyPart,
    SortedNeighbourhood,
    block,
    estimate,
)
from linkage.errors import BudgetError, LinkageWarning, RulesError

BIG = 10**9


def table(**columns) -> BlockingInput:
    return BlockingInput({k: np.array(v, dtype=object) for k, v in columns.items()})


def pair_set(pairs) -> set[tuple[int, int]]:
    return set(zip(pairs.left.tolist(), pairs.right.tolist(), strict=True))


def run(blockers, data, *, max_pairs=BIG, max_block_size=BIG):
    return block(blockers, data, max_pairs=max_pairs, max_block_size=max_block_size)


# --- key parts ------------------------------------------------------------------------------

SAMPLES = {
    "first": ("Alexander", 3, "Ale"),
    "last": ("010-1234-5678", 4, "5678"),
    "soundex": ("Smith", None, "S530"),
    "metaphone": ("Knight", None, "NT"),
    "nysiis": ("Smith", None, "SNAT"),
    "chosung": ("김민수", None, "ㄱㅁㅅ"),
    "year": ("born 1990-03-05", None, "1990"),
    "local_part": ("kim.minsu@example.com", None, "kim.minsu"),
    "domain": ("kim.minsu@example.com", None, "example.com"),
    "digits": ("+82 (10) 1234-5678", None, "821012345678"),
}


def test_samples_cover_every_key_function():
    assert set(SAMPLES) == set(KEY_FUNCTIONS)


@pytest.mark.parametrize("function", sorted(KEY_FUNCTIONS))
def test_key_part_parse_and_compute(function):
    value, argument, expected = SAMPLES[function]
    needs_argument = KEY_FUNCTIONS[function][1]
    assert needs_argument == (argument is not None)
    text = f"{function}(col, {argument})" if needs_argument else f"{function}(col)"
    part = KeyPart.parse(text)
    assert part == KeyPart("col", function, argument)
    assert str(part) == text
    assert KeyPart.parse(str(part)) == part
    out = part.compute(np.array([value, None, ""], dtype=object))
    assert out.tolist() == [expected, None, None]
    # Spaces are allowed around the pieces.
    spaced = f" {function} ( col , {argument} ) " if needs_argument else f"{function}( col )"
    assert KeyPart.parse(spaced) == part
    if needs_argument:
        with pytest.raises(ValueError, match="must give a length"):
            KeyPart.parse(f"{function}(col)")
    else:
        with pytest.raises(ValueError, match="must not take an argument"):
            KeyPart.parse(f"{function}(col, 2)")


def test_key_part_bare_column():
    part = KeyPart.parse("postcode")
    assert part == KeyPart("postcode") and part.function is None and str(part) == "postcode"
    assert KeyPart.parse("  street number ") == KeyPart("street number")
    assert part.compute(np.array(["06236", None, "", 4000], dtype=object)).tolist() == [
        "06236", None, None, "4000",
    ]


def test_key_function_with_empty_result_is_missing():
    part = KeyPart.parse("domain(email)")
    assert part.compute(np.array(["no-at-sign", "a@b.kr"], dtype=object)).tolist() == [
        None, "b.kr",
    ]
    assert KeyPart.parse("year(dob)").compute(np.array(["unknown"], dtype=object)).tolist() == [
        None
    ]


def test_key_part_unknown_function():
    with pytest.raises(ValueError, match="unknown key function 'frist'") as info:
        KeyPart.parse("frist(given_name, 3)")
    for name in KEY_FUNCTIONS:
        assert name in str(info.value)


@pytest.mark.parametrize("text", ["first(given_name)", "last(phone)"])
def test_key_part_missing_argument(text):
    with pytest.raises(ValueError, match="must give a length"):
        KeyPart.parse(text)


@pytest.mark.parametrize("text", ["first(given_name", "3)", "soundex(surname"])
def test_key_part_yaml_flow_list_comma_hint(text):
    with pytest.raises(ValueError, match="quote it") as info:
        KeyPart.parse(text)
    assert '"first(given_name, 3)"' in str(info.value)


@pytest.mark.parametrize("text", ["", "f(a)(b)", "first(a, b)", "first(a, 3, 4)"])
def test_key_part_malformed(text):
    with pytest.raises(ValueError, match=r"fn\(column\[, n\]\)"):
        KeyPart.parse(text)


def test_key_part_balanced_parentheses_get_no_comma_hint():
    with pytest.raises(ValueError) as info:
        KeyPart.parse("first(a, b)")
    assert "quote it" not in str(info.value)


def test_yaml_flow_list_split_is_reported_with_the_hint():
    data = yaml.safe_load("keys:\n  - [soundex(surname), first(given_name, 1)]\n")
    assert data["keys"][0] == ["soundex(surname)", "first(given_name", "1)"]
    with pytest.raises(RulesError, match="quote it") as info:
        Blocker.from_dict(data, source="rules.yaml")
    assert "keys[0][1]" in str(info.value)
    quoted = yaml.safe_load('keys:\n  - [soundex(surname), "first(given_name, 1)"]\n')
    blocker = Blocker.from_dict(quoted)
    assert isinstance(blocker, KeyBlocker)
    assert blocker.describe() == "[soundex(surname), first(given_name, 1)]"


def test_key_part_rejects_zero_length():
    with pytest.raises(ValueError):
        KeyPart.parse("last(phone, 0)")


# --- single key functions in blocking ------------------------------------------------------


def test_chosung_key_blocks_similar_korean_names():
    data = table(name=["김민수", "김민슈", "이영희", "김민지", "김 민 수", None])
    pairs = run([KeyBlocker(["chosung(name)"])], data)
    # 김민수, 김민슈 and "김 민 수" share ㄱㅁㅅ; 김민지 is ㄱㅁㅈ.
    assert pair_set(pairs) == {(0, 1), (0, 4), (1, 4)}


def test_last_year_local_part_keys():
    data = table(
        phone=["010-1234-5678", "02-555-5678", "010-1234-0000", None],
        dob=["1990-03-05", "05/07/1990", "1991-03-05", "1990"],
        email=["minsu@a.kr", "Minsu@b.kr", "minsu@c.kr", "yh@a.kr"],
    )
    assert pair_set(run([KeyBlocker(["last(phone, 4)"])], data)) == {(0, 1)}
    assert pair_set(run([KeyBlocker(["year(dob)"])], data)) == {(0, 1), (0, 3), (1, 3)}
    assert pair_set(run([KeyBlocker(["local_part(email)"])], data)) == {(0, 2)}
    assert pair_set(run([KeyBlocker(["domain(email)"])], data)) == {(0, 3)}


def test_compound_key_needs_every_part():
    data = table(
        surname=["smith", "smyth", "smith", "jones", None],
        dob=["1990-01-01", "1990-06-01", "1991-01-01", "1990-01-01", "1990-01-01"],
    )
    blocker = KeyBlocker([["soundex(surname)", "year(dob)"]])
    assert pair_set(run([blocker], data)) == {(0, 1)}


# --- block(): the union ---------------------------------------------------------------------


def test_union_counts_a_pair_once_with_every_bit():
    data = table(a=["x", "x", "y", "y", "z"], b=["p", "p", "p", "q", "q"])
    blockers = [KeyBlocker(["a"], name="by_a"), KeyBlocker(["b"], name="by_b")]
    pairs = run(blockers, data)
    got = dict(zip(zip(pairs.left.tolist(), pairs.right.tolist(), strict=True),
                   pairs.mask.tolist(), strict=True))
    assert got == {(0, 1): 0b11, (2, 3): 0b01, (0, 2): 0b10, (1, 2): 0b10, (3, 4): 0b10}
    assert len(pairs) == 5
    assert pairs.proposed == {"by_a": 2, "by_b": 4}
    assert pairs.estimated == {"by_a": 2, "by_b": 4}


def test_unnamed_blockers_get_positional_names():
    data = table(a=["x", "x"], b=["p", "p"])
    pairs = run([KeyBlocker(["a"]), KeyBlocker(["b"])], data)
    assert set(pairs.proposed) == {"blocker_0", "blocker_1"}
    assert pairs.mask.tolist() == [0b11]


def test_no_pairs():
    blockers = [KeyBlocker(["a"]), SortedNeighbourhood("a", window=2)]
    pairs = run(blockers, table(a=[None, ""]))
    assert len(pairs) == 0 and pairs.left.shape == pairs.mask.shape == (0,)
    assert len(run([KeyBlocker(["a"])], table(a=["x", "y", None]))) == 0
    assert len(run(blockers, table(a=[]))) == 0


def check_shape(pairs) -> None:
    left, right = pairs.left, pairs.right
    assert np.all(left < right)  # i < j, so also no self pairs
    codes = list(zip(left.tolist(), right.tolist(), strict=True))
    assert codes == sorted(codes)
    assert len(set(codes)) == len(codes)
    assert pairs.mask.shape == left.shape and np.all(pairs.mask > 0)


_cell = st.one_of(st.none(), st.just(""), st.sampled_from(["a", "b", "c", "김민수", "김민슈"]))


@st.composite
def small_tables(draw):
    n = draw(st.integers(0, 14))
    a = draw(st.lists(_cell, min_size=n, max_size=n))
    b = draw(st.lists(_cell, min_size=n, max_size=n))
    link = draw(st.booleans())
    source = np.array(draw(st.lists(st.integers(0, 1), min_size=n, max_size=n)), dtype=np.int8)
    return a, b, (source if link else None)


def present(v) -> bool:
    return v is not None and v != ""


def chosung_of(v):
    from linkage.normalize.hangul import chosung

    return chosung(v) or None if present(v) else None


def key_reference(rows, key_of, source):
    """All pairs i < j whose keys are present and equal (and cross-source in link mode)."""
    out = set()
    for i, j in itertools.combinations(range(len(rows)), 2):
        ki, kj = key_of(rows[i]), key_of(rows[j])
        if ki is None or kj is None or ki != kj:
            continue
        if source is not None and source[i] == source[j]:
            continue
        out.add((i, j))
    return out


def window_reference(rows, key_of, window, source):
    """Rows with a sort key, sorted by (key, row), in a link equal keys taking turns between
    the tables (left, right, left, ...); pairs fewer than `window` places apart."""
    keyed = sorted((key_of(r), i) for i, r in enumerate(rows) if key_of(r) is not None)
    if source is not None:
        turns: dict = {}
        for key, i in keyed:
            turns[(key, int(source[i]))] = turns.get((key, int(source[i])), -1) + 1
            turns[i] = turns[(key, int(source[i]))]
        keyed = sorted((key, turns[i], int(source[i]), i) for key, i in keyed)
        keyed = [(key, i) for key, _, _, i in keyed]
    order = [i for _, i in keyed]
    out = set()
    for p, q in itertools.combinations(range(len(order)), 2):
        if q - p < window:
            i, j = sorted((order[p], order[q]))
            if source is None or source[i] != source[j]:
                out.add((i, j))
    return out


@settings(max_examples=120, deadline=None)
@given(data=small_tables(), window=st.integers(2, 4))
def test_block_equals_brute_force(data, window):
    a, b, source = data
    rows = list(zip(a, b, strict=True))
    n = len(rows)
    columns = {"a": np.array(a, dtype=object), "b": np.array(b, dtype=object)}
    inp = BlockingInput(columns, source)

    def key_a(r):
        return r[0] if present(r[0]) else None

    def key_ab(r):
        return (r[0], chosung_of(r[1])) if present(r[0]) and chosung_of(r[1]) else None

    def sort_b(r):
        return r[1] if present(r[1]) else None

    blockers = [
        KeyBlocker([["a"], ["b"]], name="keys_ab"),
        KeyBlocker([["a", "chosung(b)"]], name="compound"),
        SortedNeighbourhood("b", window=window, name="snb"),
    ]
    references = [
        key_reference(rows, key_a, source) | key_reference(rows, sort_b, source),
        key_reference(rows, key_ab, source),
        window_reference(rows, sort_b, window, source),
    ]
    pairs = run(blockers, inp)
    check_shape(pairs)
    assert pair_set(pairs) == set().union(*references)
    for (i, j), mask in zip(pair_set_list(pairs), pairs.mask.tolist(), strict=True):
        expected = sum(1 << k for k, ref in enumerate(references) if (i, j) in ref)
        assert mask == expected
        if source is not None:
            assert source[i] != source[j]
        assert 0 <= i < j < max(n, 1)
    for name, ref in zip(["keys_ab", "compound", "snb"], references, strict=True):
        assert pairs.proposed[name] == len(ref)
    # Single-key blockers and windows: the estimate is exact.
    assert pairs.estimated["compound"] == len(references[1])
    assert pairs.estimated["snb"] == len(references[2])
    single = KeyBlocker(["a"], name="only")
    only = run([single], inp)
    assert only.estimated == {"only": len(key_reference(rows, key_a, source))}
    assert only.proposed == only.estimated


def pair_set_list(pairs):
    return list(zip(pairs.left.tolist(), pairs.right.tolist(), strict=True))


def test_sorted_neighbourhood_window():
    data = table(name=["d", "a", "c", "b", None, "e"])
    pairs = run([SortedNeighbourhood("name", window=2)], data)
    # Sorted: a(1) b(3) c(2) d(0) e(5); neighbours only.
    assert pair_set(pairs) == {(1, 3), (2, 3), (0, 2), (0, 5)}
    pairs3 = run([SortedNeighbourhood("name", window=3)], data)
    assert pair_set(pairs3) == pair_set(pairs) | {(1, 2), (0, 3), (2, 5)}


def test_link_mode_only_cross_source_pairs():
    source = np.array([0, 0, 1, 1, 0, 1], dtype=np.int8)
    data = BlockingInput(
        {"city": np.array(["seoul", "seoul", "seoul", "busan", "busan", "busan"], dtype=object)},
        source,
    )
    pairs = run([KeyBlocker(["city"]), SortedNeighbourhood("city", window=2)], data)
    got = dict(zip(pair_set_list(pairs), pairs.mask.tolist(), strict=True))
    # Keys: seoul 0, 1 (left) with 2 (right); busan 4 (left) with 3, 5 (right).
    # Sorted, equal keys taking turns between the tables: busan 4 3 5, seoul 0 2 1;
    # neighbours across sources: 4-3, 5-0, 0-2, 2-1 (3-5 are both right).
    assert got == {(0, 2): 0b11, (1, 2): 0b11, (3, 4): 0b11, (4, 5): 0b01, (0, 5): 0b10}
    assert all(source[i] != source[j] for i, j in got)
    key_only = run([KeyBlocker(["city"])], data)
    assert pair_set(key_only) == {(0, 2), (1, 2), (3, 4), (4, 5)}
    assert key_only.estimated == {"blocker_0": 4}


# --- budget and oversized blocks -----------------------------------------------------------


def budget_table() -> BlockingInput:
    n = 60
    return table(
        id=[f"id{i // 2}" for i in range(n)],  # 30 pairs
        city=["seoul" if i % 3 else "busan" for i in range(n)],  # 40 and 20 records
        phone=[f"{i % 7}" for i in range(n)],
    )


def test_estimate_equals_proposed_for_one_key():
    data = budget_table()
    for key in ["id", "city", "phone"]:
        pairs = run([KeyBlocker([key], name=key)], data)
        assert pairs.estimated[key] == pairs.proposed[key] == len(pairs)
    assert estimate([KeyBlocker(["city"])], data, BIG) == {"blocker_0": 40 * 39 // 2 + 190}
    # A block above max_block_size is sub-blocked: seoul's 40 records are sorted by each other
    # column (id, phone) and paired within a window of 5: 2 * (39 + 38 + 37 + 36) pairs.
    assert estimate([KeyBlocker(["city"])], data, 30) == {"blocker_0": 190 + 2 * 150}
    with pytest.warns(LinkageWarning, match="sub-blocked a block of 40"):
        pairs = run([KeyBlocker(["city"])], data, max_block_size=30)
    assert pairs.proposed["blocker_0"] <= 190 + 2 * 150


def test_budget_error_names_blocker_and_key_path():
    data = budget_table()
    blockers = [
        KeyBlocker(["id"], name="ids"),
        KeyBlocker([["id"], ["city"], ["phone"]], name="wide"),
    ]
    total = 30 + (30 + 970 + sum(k * (k - 1) // 2 for k in [9, 9, 9, 9, 8, 8, 8]))
    assert sum(estimate(blockers, data, BIG).values()) == total
    with pytest.raises(BudgetError) as info:
        run(blockers, data, max_pairs=500)
    message = str(info.value)
    assert "`wide`" in message
    assert "blocking[1].keys[1]" in message  # city is the biggest key of blocker 1
    assert f"{total:,}" in message
    assert "max_pairs" in message and "500" in message
    # Exactly at the budget is allowed.
    assert len(run(blockers, data, max_pairs=total)) > 0


def test_link_window_over_equal_keys_pairs_across_and_counts_only_those():
    """A link sorted by a key that many records share on both sides (a surname, a date): the
    tables take turns inside each run of equal keys, so a window pairs across them all the
    way through the run, not only where the left records end; and the budget counts the
    pairs across, not every neighbour (which a link never proposes)."""
    n = 200  # 100 left then 100 right, all the same key, and one record of another key
    source = np.array([0] * (n // 2) + [1] * (n // 2) + [1], dtype=np.int8)
    data = BlockingInput({"d": np.array(["2024-03-01"] * n + ["2024-03-02"], dtype=object)},
                         source)
    sn = SortedNeighbourhood("d", window=3, name="sn")
    pairs = run([sn], data)
    got = pair_set(pairs)
    assert all(source[i] != source[j] for i, j in got)
    # left k with right k and right k with left k + 1 (distance 1): 199 pairs, and the last
    # left with the other key's record (distance 2). By row order only the records either
    # side of the boundary would pair (3 pairs), and the other key's record with none.
    assert len(got) == n
    assert {(k, n // 2 + k) for k in range(n // 2)} | {(n // 2 - 1, n)} <= got
    assert pairs.estimated == {"sn": n} == pairs.proposed
    # every neighbour would be 200 + 199 = 399 pairs: a budget of 250 is enough
    assert len(run([sn], data, max_pairs=250)) == n
    with pytest.raises(BudgetError, match="`sn`"):
        run([sn], data, max_pairs=n - 1)


def test_link_sub_blocks_take_turns_inside_equal_values():
    """An oversized block of a link, sub-blocked by a column whose values repeat: inside
    each run of equal values the tables take turns, so the window pairs across."""
    n = 60
    source = np.array([0] * (n // 2) + [1] * (n // 2), dtype=np.int8)
    data = BlockingInput({"city": np.array(["seoul"] * n, dtype=object),
                          "year": np.array(["1980"] * n, dtype=object)}, source)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LinkageWarning)
        pairs = run([KeyBlocker([["city"], ["year"]], name="k")], data, max_block_size=10)
    got = pair_set(pairs)
    assert got and all(source[i] != source[j] for i, j in got)
    # the sub window reaches the next records: each left record meets its turn's right one
    assert {(k, n // 2 + k) for k in range(n // 2)} <= got
    # The budget counts the pairs across that each key's pass proposes (both keys' blocks
    # are sorted by the other column, equal everywhere: the same pairs twice), not every
    # neighbour (2 x 444 here).
    assert pairs.estimated["k"] == 2 * len(got) < 2 * sum(n - k for k in range(1, 9))


def test_budget_error_for_sorted_neighbourhood():
    """A window over the budget is told to narrow its window (a key blocker's advice, a part
    more for its keys or a lower `max_block_size`, means nothing to it)."""
    data = budget_table()
    with pytest.raises(BudgetError, match="`sn`") as caught:
        run([SortedNeighbourhood("city", window=10, name="sn")], data, max_pairs=100)
    message = str(caught.value)
    assert "adding a part to its keys" not in message and "max_block_size" not in message
    assert "Narrow its `window` (10 now; each step less spares up to one pair per record" \
        in message
    # a key blocker keeps its own advice
    with pytest.raises(BudgetError, match="adding a part to its keys"):
        run([KeyBlocker(["city"], name="k")], data, max_pairs=100)


def test_oversized_block_is_sub_blocked_with_warning():
    data = table(
        city=["seoul"] * 5 + ["busan"] * 2 + [None],
        phone=["1", "2", "3", "4", "1", "5", "5", "1"],
    )
    blockers = [KeyBlocker(["city"], name="by_city"), KeyBlocker(["phone"], name="by_phone")]
    with pytest.warns(LinkageWarning, match="'seoul'") as record:
        pairs = run(blockers, data, max_block_size=4)
    messages = [str(w.message) for w in record if issubclass(w.category, LinkageWarning)]
    assert len(messages) == 1
    assert "by_city" in messages[0] and "5" in messages[0] and "max_block_size" in messages[0]
    assert "sub-blocked" in messages[0] and "sorted neighbourhood on phone" in messages[0]
    assert len(pairs.skipped) == 1
    block = pairs.skipped[0]
    assert (block.blocker, block.key, block.value, block.size) == ("by_city", "[city]", "seoul", 5)
    assert block.how == "sorted neighbourhood on phone, window 9"
    # Seoul is sorted by phone (rows 0 4 1 2 3) and paired within the window: all ten pairs
    # (the block is small), by_city's bit; (0, 4) shares phone "1" as well.
    seoul = {(i, j) for i in range(5) for j in range(i + 1, 5)}
    assert pair_set(pairs) == seoul | {(5, 6), (0, 7), (4, 7)}
    assert pairs.estimated == {"by_city": 11, "by_phone": 4}


def test_a_run_s_warnings_point_at_the_users_line():
    """A warning raised deep in a run (a sub-blocked block, from the pipeline's blocking)
    names the user's call as its place, not a line inside linkage (`user_stacklevel`)."""
    import linkage as lk
    from linkage.synth import persons

    records, _ = persons(1_000, seed=1, dup_rate=0.2)
    rules = lk.Rules.from_dict({
        "blocking": [{"keys": [["city"]]}], "max_block_size": 10,
        "comparisons": [{"type": "exact", "column": "surname"}],
        "scoring": {"type": "rule_sum", "threshold": 1,
                    "weights": {"surname": {"exact": 1.0, "else": 0.0}}}})
    with pytest.warns(LinkageWarning, match="sub-blocked") as record:
        lk.dedupe(records, rules, progress=False)
    places = {(w.filename, w.lineno) for w in record if issubclass(w.category, LinkageWarning)}
    assert {f for f, _ in places} == {__file__}


def test_oversized_block_without_another_column_is_skipped():
    data = table(city=["seoul"] * 5 + ["busan"] * 2)
    with pytest.warns(LinkageWarning, match="skipped a block of 5"):
        pairs = run([KeyBlocker(["city"], name="by_city")], data, max_block_size=4)
    assert pair_set(pairs) == {(5, 6)} and pairs.skipped[0].how == ""


def test_no_warning_when_blocks_fit():
    data = table(city=["seoul"] * 4)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        pairs = run([KeyBlocker(["city"])], data, max_block_size=4)
    assert len(pairs) == 6 and pairs.skipped == []


def test_oversized_compound_block_names_every_part():
    data = table(surname=["kim"] * 3, dob=["1990-01-01", "1990-02-02", "1990-03-03"])
    with pytest.warns(LinkageWarning, match=r"kim\|1990"):
        pairs = run([KeyBlocker([["surname", "year(dob)"]])], data, max_block_size=2)
    assert pairs.skipped[0].key == "[surname, year(dob)]"
    assert len(pairs) == 0


# --- schema ---------------------------------------------------------------------------------


def test_blocker_round_trip():
    for blocker in [
        KeyBlocker([["soundex(surname)", "first(given_name, 1)"], "postcode"], name="n"),
        SortedNeighbourhood(["surname", "given_name"], window=4),
    ]:
        assert Blocker.from_dict(blocker.to_dict()) == blocker
    assert KeyBlocker(["a"]).to_dict() == {"type": "keys", "keys": ["a"]}
    assert Blocker.from_dict({"keys": ["a"]}) == KeyBlocker(["a"])  # type defaults to keys


def test_blocker_validation():
    with pytest.raises(RulesError, match="window"):
        SortedNeighbourhood("a", window=1)
    with pytest.raises(RulesError, match="keys"):
        KeyBlocker([])
    with pytest.raises(RulesError, match=r"keys\[1\]"):
        KeyBlocker(["a", "nope(b)"])
    assert KeyBlocker([["a", "soundex(b)"]]).columns == ["a", "b"]


def test_soundex_key_does_not_lump_korean_names():
    data = table(name=["김민수", "강호동", "김민수"])
    assert pair_set(run([KeyBlocker(["soundex(name)"])], data)) == {(0, 2)}


def test_keyed_codes_over_arrow_are_the_key_functions_codes():
    """Key functions with an Arrow form (first, last, year, local_part) give many ASCII values
    their keys at once: the codes of `pd.factorize` of each value's key (empty: -1), on odd
    text (empty, "@" first, last or twice, digit runs of 3 to 9, white space, control
    characters); text that is not all ASCII goes value by value."""
    import pandas as pd

    from linkage.blocking._keys import _ARROW_FROM, KEY_FUNCTIONS, keyed_codes

    rng = np.random.default_rng(3)
    alphabet = list("ab9@ 0.-\t\n\x0bZ12345678")
    for trial in range(6):
        size = int(rng.integers(_ARROW_FROM, 3 * _ARROW_FROM))
        values = ["".join(rng.choice(alphabet, int(rng.integers(0, 12)))) for _ in range(size)]
        values += ["", "@", "@x", "x@", "a@@b", "1990", "123", "12345678", " 2001-3-4 "]
        if trial % 3 == 2:
            values.append("é1990@ü")  # not ASCII: every value by its function
        values = list(dict.fromkeys(values))
        for function, argument in (("first", 1), ("first", 3), ("last", 2), ("year", 0),
                                   ("local_part", 0), ("soundex", 0)):
            fn = KEY_FUNCTIONS[function][0]
            expected, _ = pd.factorize(np.array([fn(v, argument) or None for v in values],
                                                dtype=object), use_na_sentinel=True)
            got = keyed_codes(function, argument, values)
            assert got.tolist() == expected.tolist(), (trial, function, argument)
