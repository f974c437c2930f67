"""SimHash: fingerprints, exact Hamming distance, the permuted tables, the blocker and the
comparison, measured against MinHash on the sample documents' truth."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from linkage.blocking import Blocker, BlockingInput, MinHashBlocker, SimHashBlocker
from linkage.errors import RulesError
from linkage.settings import Rules
from linkage.text.shingles import Shingles, shingle
from linkage.text.simhash import (
    fingerprints,
    hamming,
    near_pairs,
    popcount_bytes,
    table_masks,
)
from tests.conftest import ROOT
from tests.hostile.conftest import assert_unchanged_outside, run_cli, snapshot


def _pairs(left, right) -> set:
    return set(zip(np.asarray(left).tolist(), np.asarray(right).tolist(), strict=True))


def _reference_fingerprint(hashes: list[int]) -> int:
    """SimHash written out bit by bit: +1 for each shingle occurrence with the bit set, -1
    without; the bit is set when the sum is positive."""
    out = 0
    for bit in range(64):
        total = sum(1 if h >> bit & 1 else -1 for h in hashes)
        out |= (total > 0) << bit
    return out


def test_fingerprints_match_the_definition_with_repeats_weighing_more():
    rng = np.random.default_rng(1)
    sizes = [0, 1, 2, 7, 300, 20_000]  # the last is longer than one chunk
    texts = [rng.integers(0, 2**64, size=s, dtype=np.uint64) for s in sizes]
    texts.append(np.repeat(texts[3][:2], [5, 1]))  # one shingle five times outweighs another
    hashes = np.concatenate(texts)
    offsets = np.concatenate([[0], np.cumsum([len(t) for t in texts])]).astype(np.int64)
    sh = Shingles(hashes, offsets, np.zeros(len(texts), bool), np.zeros(len(texts), np.int64))
    fp = fingerprints(sh, chunk_size=512)
    assert [int(f) for f in fp] == [_reference_fingerprint([int(h) for h in t]) for t in texts]
    assert int(fp[-1]) == int(texts[3][0])  # the majority shingle's own bits
    assert int(fp[0]) == 0


def test_fingerprints_are_the_same_on_every_machine_and_run():
    texts = ["the quick brown fox jumps over the lazy dog", "다람쥐 헌 쳇바퀴에 타고파", ""]
    assert [hex(int(f)) for f in fingerprints(shingle(texts))] == [
        "0xfa95ed59532735da", "0xeaf008d7513e1a3e", "0x0"]


def test_hamming_distance_is_exact():
    rng = np.random.default_rng(2)
    a = rng.integers(0, 2**64, size=2000, dtype=np.uint64)
    b = rng.integers(0, 2**64, size=2000, dtype=np.uint64)
    a[:3] = [0, 2**64 - 1, 12345]
    b[:3] = [2**64 - 1, 0, 12345]
    assert hamming(a, b).tolist() == [bin(int(x) ^ int(y)).count("1")
                                      for x, y in zip(a, b, strict=True)]
    assert hamming(a, b)[:3].tolist() == [64, 64, 0]
    assert (popcount_bytes(a ^ b) == hamming(a, b)).all()  # the path numpy < 2 takes


@pytest.mark.parametrize(("k", "blocks"), [(0, None), (3, None), (3, 5), (6, None), (4, 8)])
def test_tables_cover_the_bits_as_the_pigeonhole_needs(k, blocks):
    masks = table_masks(k, blocks)
    m = blocks or k + 1
    assert len(masks) == math.comb(m, m - k)
    assert int(np.bitwise_or.reduce(np.array(masks, np.uint64))) == 2**64 - 1
    widths = {hamming(np.array([mask]), np.zeros(1, np.uint64))[0] for mask in masks}
    assert max(widths) - min(widths) <= m - k  # blocks of near equal width


@pytest.mark.parametrize(("k", "blocks", "seed"), [(0, None, 0), (1, None, 1), (3, None, 2),
                                                   (3, 6, 3), (5, None, 4), (8, 10, 5)])
def test_the_tables_find_every_pair_within_k_and_nothing_else(k, blocks, seed):
    rng = np.random.default_rng(seed)
    base = rng.integers(0, 2**64, size=150, dtype=np.uint64)
    copies = []
    for f in base:  # neighbours at every distance from 0 to k + 2, bits flipped at random
        for d in range(k + 3):
            flip = sum(1 << int(b) for b in rng.choice(64, size=d, replace=False))
            copies.append(np.uint64(int(f) ^ flip))
    fp = np.concatenate([base, np.array(copies, np.uint64)])
    left, right, distance, candidates, _ = near_pairs(fp, k, blocks=blocks)
    i, j = np.triu_indices(len(fp), 1)
    within = hamming(fp[i], fp[j]) <= k
    assert _pairs(left, right) == _pairs(i[within], j[within])
    assert (distance == hamming(fp[left], fp[right])).all() and (distance <= k).all()
    assert candidates >= len(left) and (left < right).all()


def test_oversized_buckets_are_skipped_and_listed():
    fp = np.zeros(10, np.uint64)  # ten identical fingerprints fill one bucket of every table
    left, _, _, _, skipped = near_pairs(fp, 1, max_bucket=5)
    assert len(left) == 0 and len(skipped) == 2 and all(size == 10 for _, size, _ in skipped)


def test_link_mode_pairs_only_cross_sources_and_the_estimate_bounds_them():
    fp = np.array([0, 0, 1, 1], np.uint64)
    source = np.array([0, 0, 1, 1], np.int8)
    left, right, *_ = near_pairs(fp, 1, source=source)
    assert _pairs(left, right) == {(0, 2), (0, 3), (1, 2), (1, 3)}
    texts = np.array(["one two three four five six"] * 4, dtype=object)
    blocker = SimHashBlocker("text", max_distance=1)
    data = BlockingInput({"text": texts}, source)
    assert blocker.estimate(data, 100) == 2 * 4  # two tables, each 2 x 2 across sources
    assert len(blocker.propose(data, 100).left) == 4


@pytest.fixture(scope="module")
def documents():
    docs = pd.read_csv(ROOT / "sample_data" / "labelled_text.csv", dtype=str,
                       keep_default_na=False)
    truth = pd.read_csv(ROOT / "sample_data" / "labelled_text_truth.csv", dtype=str)
    group = docs["doc_id"].map(dict(zip(truth["doc_id"], truth["text_group"], strict=True)))
    texts = docs["text"].to_numpy(dtype=object)
    same = group.to_numpy()
    i, j = np.triu_indices(len(texts), 1)
    true = _pairs(i[same[i] == same[j]], j[same[i] == same[j]])
    folded = [t.strip().lower() for t in texts]
    near = {(a, b) for a, b in true if folded[a] != folded[b]}  # not copies: the hard ones
    return BlockingInput({"text": texts}), true, near


def _proposed(blocker: Blocker, data: BlockingInput) -> set:
    found = blocker.propose(data, 5_000)
    return _pairs(found.left, found.right)


def test_simhash_finds_the_near_duplicates_minhash_finds_on_the_sample(documents):
    data, true, near = documents
    minhash = _proposed(MinHashBlocker("text", threshold=0.8, min_tokens=4), data)
    simhash = _proposed(SimHashBlocker("text", max_distance=3, min_tokens=4), data)
    assert len(near) > 100 and len(minhash & near) > 100
    # Within 3 of 64 bits: nearly every near copy MinHash verifies, and nothing false.
    assert len(simhash & minhash & near) >= 0.95 * len(minhash & near)
    assert len(simhash & true) >= 0.99 * len(simhash)
    assert len(simhash & true) >= 0.99 * len(minhash & true)
    # Within 6 bits: every one of them, at a price of a few false candidates.
    wider = _proposed(SimHashBlocker("text", max_distance=6, min_tokens=4), data)
    assert minhash & near <= wider
    assert len(wider & true) >= 0.98 * len(wider)
    # The same pairs whatever the table layout: the search is exact, not probabilistic.
    assert _proposed(SimHashBlocker("text", max_distance=6, blocks=9, min_tokens=4),
                     data) == wider


def test_simhash_rules_validate_and_bad_keys_name_the_fix(tmp_path):
    rules = Rules.from_dict({"blocking": [{"type": "simhash", "column": "text"}],
                             "comparisons": [{"type": "simhash", "column": "text"}],
                             "scoring": {"type": "rule_sum", "threshold": 1,
                                         "weights": {"text": {"exact": 2, ">=0.95": 1.5,
                                                              ">=0.9": 0, "else": -2}}}})
    assert rules.blocking[0].describe().startswith("SimHash on text: 64-bit fingerprints")
    with pytest.raises(RulesError, match="max_distance"):
        Rules.from_dict({"blocking": [{"type": "simhash", "column": "text",
                                       "max_distance": 40}]})
    path = tmp_path / "bad.yaml"
    path.write_text("blocking:\n  - {type: simhash, column: text, max_distance: 3, blocks: 2}\n",
                    encoding="utf-8")
    done = run_cli("validate", path)
    assert done.returncode == 2 and "bad.yaml" in done.stderr and "blocks" in done.stderr
    assert "more than `max_distance`" in done.stderr


RULES = """\
id_column: doc_id
exact:
  columns: [text]
blocking:
  - {name: near, type: simhash, column: text, max_distance: 3, min_tokens: 4}
comparisons:
  - {type: simhash, column: text, thresholds: [0.95, 0.9]}
scoring:
  type: rule_sum
  threshold: 1.0
  weights:
    text: {exact: 2.0, ">=0.95": 1.5, ">=0.9": 0.0, else: -2.0}
"""


def test_a_run_with_the_simhash_blocker_and_comparison(tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    (work / "docs.csv").write_bytes((ROOT / "sample_data" / "labelled_text.csv").read_bytes())
    (work / "rules.yaml").write_text(RULES, encoding="utf-8")
    before = snapshot(work)
    done = run_cli("dedupe", work / "docs.csv", "--rules", work / "rules.yaml",
                   "--out", work / "out")
    assert done.returncode == 0, done.stderr
    assert_unchanged_outside(before, snapshot(work), "out")
    pairs = pd.read_parquet(work / "out" / "pairs.parquet")
    assert len(pairs) > 100 and pairs["is_match"].mean() > 0.9
    assert (pairs["text_similarity"] >= 1 - 3 / 64 - 1e-6).all()  # the blocker's verification
    truth = pd.read_csv(ROOT / "sample_data" / "labelled_text_truth.csv", dtype=str)
    group = dict(zip(truth["doc_id"], truth["text_group"], strict=True))
    matched = pairs[pairs["is_match"]]
    right = sum(group[a] == group[b] for a, b in zip(matched["id_l"], matched["id_r"],
                                                        strict=True))
    assert right >= 0.99 * len(matched)
