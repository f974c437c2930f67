"""MinHash-LSH: shingles, signatures, band parameters, verified pairs, the blocker."""

from __future__ import annotations

import numpy as np
import pytest

from linkage.blocking import Blocker, BlockingInput, MinHashBlocker
from linkage.text.lsh import (
    candidate_pairs,
    format_lsh_params,
    jaccard,
    lsh_params,
    resolve_params,
    s_curve,
    similar_pairs,
)
from linkage.text.minhash import (
    EMPTY,
    estimate_jaccard,
    load_signatures,
    save_signatures,
    signatures,
)
from linkage.text.shingles import Shingles, shingle, unique_sets


def _corpus(n_pairs: int, size: int = 200, seed: int = 0):
    """Pairs of shingle sets with a known Jaccard: A and B share `m` of their `size` hashes,
    so J = m / (2 * size - m). Returns the CSR shingles and the true J of pair (2i, 2i+1)."""
    rng = np.random.default_rng(seed)
    js = rng.uniform(0.3, 1.0, n_pairs)
    hashes, offsets, truth = [], [0], []
    for j in js:
        m = round(2 * size * j / (1 + j))
        pool = rng.integers(0, 2**64, size=2 * size - m, dtype=np.uint64)
        a = pool[:size]
        b = np.concatenate([pool[:m], pool[size:]])
        hashes += [a, b]
        offsets += [offsets[-1] + size, offsets[-1] + 2 * size]
        truth.append(m / (2 * size - m))
    n = 2 * n_pairs
    sh = Shingles(
        np.concatenate(hashes),
        np.array(offsets, dtype=np.int64),
        np.zeros(n, bool),
        np.full(n, size, dtype=np.int64),
    )
    return sh, np.array(truth)


@pytest.fixture(scope="module")
def corpus():
    sh, truth = _corpus(600)
    return sh, truth, signatures(sh, 128, seed=0)


def test_verified_pairs_have_high_recall_and_no_false_positives(corpus):
    sh, truth, sig = corpus
    b, r = resolve_params(0.8, 128)
    left, right, j, cand = similar_pairs(sh, sig, 0.8, b, r)
    assert (j >= 0.8).all()
    true_j = jaccard(sh, left, right)
    np.testing.assert_allclose(j, true_j)
    found = {(int(a), int(c)) for a, c in zip(left, right, strict=True)}
    wanted = [(2 * i, 2 * i + 1) for i in np.flatnonzero(truth >= 0.8)]
    recall = np.mean([p in found for p in wanted])
    assert len(wanted) > 100
    assert recall >= 0.95
    # nothing below the threshold survives, though the buckets proposed some
    below = {(2 * i, 2 * i + 1) for i in np.flatnonzero(truth < 0.8)}
    assert not (found & below)
    assert len(cand.left) >= len(left)


def test_exact_jaccard_matches_construction(corpus):
    sh, truth, _ = corpus
    pairs = np.arange(len(truth)) * 2
    np.testing.assert_allclose(jaccard(sh, pairs, pairs + 1), truth)


def test_signature_estimates_are_close_and_unbiased(corpus):
    _sh, truth, sig = corpus
    est = estimate_jaccard(sig[0::2], sig[1::2])
    err = est - truth
    assert np.abs(err).mean() < 0.05
    assert abs(err.mean()) < 0.01  # no bias from the mod-2^32 family
    # spread close to the binomial sd sqrt(J(1-J)/128)
    ratio = err.std() / np.sqrt((truth * (1 - truth) / 128).mean())
    assert 0.8 < ratio < 1.2


def test_signatures_are_deterministic_and_chunk_independent(corpus):
    sh, _, sig = corpus
    np.testing.assert_array_equal(signatures(sh, 128, seed=0), sig)
    np.testing.assert_array_equal(signatures(sh, 128, seed=0, chunk_size=64), sig)
    assert (signatures(sh, 128, seed=1) != sig).mean() > 0.9
    texts = ["the quick brown fox jumps over the lazy dog again and again"] * 2
    assert (signatures(shingle(texts)) == signatures(shingle(texts[:1]))[0]).all()


def test_signatures_of_long_and_empty_texts():
    rng = np.random.default_rng(1)
    h = rng.integers(0, 2**64, size=5000, dtype=np.uint64)
    sh = Shingles(h, np.array([0, 0, 5000, 5000]), np.zeros(3, bool), np.zeros(3, np.int64))
    sig = signatures(sh, 64, chunk_size=100)  # the long text is split into pieces
    assert (sig[0] == EMPTY).all() and (sig[2] == EMPTY).all()
    one = Shingles(h, np.array([0, 5000]), np.zeros(1, bool), np.zeros(1, np.int64))
    np.testing.assert_array_equal(sig[1], signatures(one, 64)[0])


def test_shingles_are_deterministic_and_normalized():
    a = shingle(["Ｔｈｅ Quick, brown fox jumps over the lazy dog!"], mode="word")
    b = shingle(["the quick brown fox   jumps over the LAZY dog"], mode="word")
    np.testing.assert_array_equal(a.hashes, b.hashes)
    assert len(a.hashes) == 7  # 9 words, 3-grams
    # a text hashes the same whatever batch it sits in (ASCII and non-ASCII batches alike)
    mixed = shingle(["café au lait", "the quick brown fox jumps over the lazy dog"], mode="word")
    np.testing.assert_array_equal(mixed.doc(1), b.hashes)
    assert shingle([None, ""]).counts.tolist() == [0, 0]


def test_auto_mode_uses_characters_for_short_and_korean_texts():
    texts = [
        "a long enough english sentence with more than eight words in it",
        "short text",
        "오늘 서울의 날씨는 맑고 따뜻합니다 내일은 비가 올 예정입니다 우산을 챙기세요",
    ]
    sh = shingle(texts)
    assert sh.char.tolist() == [False, True, True]
    # Korean spacing does not matter with character shingles
    spaced = shingle(["오늘서울의 날씨는맑고 따뜻합니다"], mode="char")
    unspaced = shingle(["오늘 서울의 날씨는 맑고 따뜻 합니다"], mode="char")
    np.testing.assert_array_equal(spaced.hashes, unspaced.hashes)


def test_korean_near_duplicates_are_found():
    texts = np.array(
        [
            "오늘 서울의 날씨는 맑고 따뜻하며 오후에는 구름이 조금 끼겠습니다",
            "오늘 서울의 날씨는 맑고 따뜻하며 오후에는 구름이 조금 끼겠습니다!",
            "오늘 서울의 날씨는 맑고 따뜻하며, 오후에는 구름이 조금 끼겠 습니다",
            "내일 부산에는 강한 바람과 함께 많은 비가 내릴 것으로 예상됩니다",
            "주식 시장은 외국인 투자자의 매수세에 힘입어 상승 마감했습니다",
        ],
        dtype=object,
    )
    blocker = MinHashBlocker("text", threshold=0.7)
    prop = blocker.propose(BlockingInput({"text": texts}), max_block_size=1000)
    pairs = set(zip(prop.left.tolist(), prop.right.tolist(), strict=True))
    assert pairs == {(0, 1), (0, 2), (1, 2)}
    assert (prop.jaccard >= 0.7).all()


def test_lsh_params_threshold_and_overrides():
    for t in (0.5, 0.7, 0.8, 0.9):
        b, r = lsh_params(t, 128)
        assert b * r <= 128
        assert abs((1 / b) ** (1 / r) - t) < 0.06
    assert resolve_params(0.8, 128, bands=14, rows=8) == (14, 8)
    assert resolve_params(0.8, 128, bands=16) == (16, 8)
    with pytest.raises(ValueError, match="at most `num_perm`"):
        resolve_params(0.8, 128, bands=20, rows=8)
    text = format_lsh_params(0.8, 128, bands=14, rows=8)
    assert "b = 14, rows r = 8 (as given)" in text
    assert f"{(1 / 14) ** (1 / 8):.3f}" in text
    assert "0.95" in text and "0.50" in text
    assert s_curve(14, 8, 1.0) == pytest.approx(1.0)
    assert s_curve(14, 8, 0.0) == pytest.approx(0.0)


def test_lsh_params_agree_with_datasketch():
    lsh = pytest.importorskip("datasketch.lsh")
    for t in (0.5, 0.8, 0.9):
        assert lsh_params(t, 128) == lsh._optimal_param(t, 128, 0.5, 0.5)


def test_signatures_round_trip_through_parquet(tmp_path, corpus):
    _, _, sig = corpus
    ids = [f"doc-{i}" for i in range(len(sig))]
    params = {"seed": 0, "shingle": "auto", "k": None}
    save_signatures(tmp_path / "sig.parquet", sig, ids, params)
    back, back_ids, back_params = load_signatures(tmp_path / "sig.parquet")
    np.testing.assert_array_equal(back, sig)
    assert back.dtype == np.uint32
    assert list(back_ids) == ids
    assert back_params["num_perm"] == 128 and back_params["seed"] == 0
    # a new band layout reuses them: same candidates as from the fresh signatures
    fresh = candidate_pairs(sig, 10, 12)
    again = candidate_pairs(back, 10, 12)
    np.testing.assert_array_equal(fresh.left, again.left)


def _docs(n: int, seed: int) -> list[str]:
    rng = np.random.default_rng(seed)
    vocab = np.array([f"w{i}" for i in range(3000)])
    return [" ".join(rng.choice(vocab, 60)) for _ in range(n)]


def _edit(text: str, rng, changes: int = 2) -> str:
    words = text.split()
    for pos in rng.choice(len(words), changes, replace=False):
        words[pos] = "zz"
    return " ".join(words)


def test_blocker_link_mode_proposes_only_cross_pairs():
    rng = np.random.default_rng(3)
    base = _docs(40, 4)
    left = base + base[:5]  # duplicates inside the left source too
    right = [_edit(t, rng) for t in base[:20]]
    texts = np.array(left + right, dtype=object)
    source = np.array([0] * len(left) + [1] * len(right), dtype=np.int8)
    blocker = Blocker.from_dict({"type": "minhash", "column": "text"})
    assert isinstance(blocker, MinHashBlocker)
    data = BlockingInput({"text": texts}, source)
    assert blocker.estimate(data, 1000) > 0
    prop = blocker.propose(data, max_block_size=1000)
    assert len(prop.left) > 0
    assert (source[prop.left] != source[prop.right]).all()
    assert (prop.left < prop.right).all()
    assert (prop.jaccard >= 0.8).all()
    found = set(zip(prop.left.tolist(), prop.right.tolist(), strict=True))
    hits = sum((i, len(left) + i) in found for i in range(20))
    assert hits >= 19
    dedupe = blocker.propose(BlockingInput({"text": texts}), 1000)
    assert (0, 40) in set(zip(dedupe.left.tolist(), dedupe.right.tolist(), strict=True))


def test_blocker_skips_short_texts_and_round_trips_settings():
    texts = np.array(
        [
            "hello there",
            "hello there",
            None,
            "one two three four five six seven eight",
            "one two three four five six seven eight",
        ],
        dtype=object,
    )
    blocker = MinHashBlocker("text", min_tokens=5)
    prop = blocker.propose(BlockingInput({"text": texts}), 1000)
    assert list(zip(prop.left.tolist(), prop.right.tolist(), strict=True)) == [(3, 4)]
    same = Blocker.from_dict(MinHashBlocker("t", bands=14, rows=8, shingle="word").to_dict())
    assert same == MinHashBlocker("t", bands=14, rows=8, shingle="word")
    assert blocker.columns == ["text"] and "MinHash" in blocker.describe()


def test_oversized_buckets_are_skipped_and_reported():
    texts = np.array(["the same boilerplate text repeated many many times here"] * 30, dtype=object)
    blocker = MinHashBlocker("text")
    prop = blocker.propose(BlockingInput({"text": texts}), max_block_size=10)
    assert len(prop.left) == 0
    assert len(prop.skipped) == 1 and prop.skipped[0].size == 30


def test_unique_sets_removes_duplicates():
    sh = shingle(["a b a b a b a b a b"], mode="word")
    assert len(sh.hashes) == 8 and len(unique_sets(sh).hashes) == 2


def test_lsh_params_cli_prints_bands_rows_and_s_curve():
    from tests.conftest import run_clis

    done, fixed, bad = run_clis(
        ("lsh-params", "--threshold", "0.8", "--num-perm", "128"),
        ("lsh-params", "--threshold", "0.8", "--num-perm", "128", "--bands", "16", "--rows", "8"),
        ("lsh-params", "--threshold", "1.5"),
    )
    assert done.returncode == 0, done.stderr
    assert "bands" in done.stdout.lower() and "rows" in done.stdout.lower()
    assert "0.95" in done.stdout and "0.50" in done.stdout
    assert fixed.returncode == 0 and "16" in fixed.stdout
    assert bad.returncode == 2


def test_minhash_blocker_from_yaml_in_a_run():
    import pandas as pd

    import linkage as lk

    texts = [
        "the cat sat on the mat and looked at the garden for a long while today",
        "the cat sat on the mat and looked at the garden for a long while",
        "a completely different sentence about trains leaving the station early",
    ]
    frame = pd.DataFrame({"id": ["a", "b", "c"], "text": texts})
    rules = lk.Rules.from_dict(
        {
            "id_column": "id",
            "blocking": [{"type": "minhash", "column": "text", "threshold": 0.6}],
            "comparisons": [{"type": "levenshtein", "column": "text", "thresholds": [0.9]}],
            "scoring": {"threshold": 1.0},
        }
    )
    result = lk.dedupe(frame, rules, progress=False)
    c = result.clusters.set_index("id")["cluster_id"]
    assert c["a"] == c["b"] != c["c"]


def test_signatures_persist_so_a_new_threshold_does_not_recompute(tmp_path):
    import numpy as np

    from linkage.blocking import BlockingInput, MinHashBlocker

    words = [
        "alpha",
        "beta",
        "gamma",
        "delta",
        "epsilon",
        "zeta",
        "eta",
        "theta",
        "iota",
        "kappa",
        "lambda",
        "mu",
    ]
    texts = np.array([" ".join(words[i:] + words[:i]) for i in range(12)], dtype=object)
    data = BlockingInput({"text": texts})
    first = MinHashBlocker("text", threshold=0.8, signatures_dir=str(tmp_path))
    a = first.propose(data, 1000)
    assert first.signatures_loaded_ is False and len(list(tmp_path.glob("*.parquet"))) == 1
    second = MinHashBlocker("text", threshold=0.5, signatures_dir=str(tmp_path))
    b = second.propose(data, 1000)
    assert second.signatures_loaded_ is True  # read back, not recomputed
    assert len(b.left) >= len(a.left)
    changed = MinHashBlocker("text", threshold=0.5, seed=1, signatures_dir=str(tmp_path))
    changed.propose(data, 1000)
    assert changed.signatures_loaded_ is False  # other settings, other signatures


def _pinned_texts() -> list[str]:
    """Real-ish texts for the bit-identity pins: product descriptions with punctuation, a
    docstring, non-ASCII (™, é, full-width forms, Korean), texts of 0-2 words and a long one,
    ASCII and non-ASCII mixed in one list as a batch would mix them."""
    long = " ".join(f"Port{i % 97} 10/100 switch-{i % 13}" for i in range(700))
    return [
        "Sony Turntable - PSLX350H/ Belt Drive System/ 33-1/3 and 45 RPM Speeds/ Pitch Control",
        "Linksys EtherFast 8-Port 10/100 Switch (New/Workgroup)",
        "Return a new sorted list from the items in iterable.\n\nA custom key function can be "
        "supplied to customize the sort order, and the reverse flag can be set.",
        "Bose® Acoustimass™ 5 Series III Speaker System — AM53BK, café noir",
        "Ｔｈｅ Quick, brown fox jumps over the lazy dog!",
        "오늘 서울의 날씨는 맑고 따뜻하며 오후에는 구름이 조금 끼겠습니다",
        "",
        "USB",
        "hp ink",
        long,
        "peachtree by sage premium accounting for nonprofits 2007 is the affordable easy to use",
    ]


# sha256 (first 16 hex digits) of the shingle CSR (hashes, offsets) and of the 128-permutation
# signatures of `_pinned_texts()`, per mode: hash scheme affine-mod-2^32/v1. A speed-up must
# leave these unchanged, or saved signatures stop matching new ones.
_PINS = {
    "word": ("eccb5ff4fea099c0", "d4615140ff45b6a7"),
    "char": ("81a8d5e5195a6a7a", "14aba2c85e608f71"),
    "auto": ("bedec4791972a918", "7cb4932a00d36a7e"),
}


@pytest.mark.parametrize("mode", sorted(_PINS))
def test_shingles_and_signatures_are_pinned_bit_for_bit(mode):
    import hashlib

    texts = _pinned_texts()
    sh = shingle(texts, mode=mode)
    sig = signatures(sh, 128)
    got = (hashlib.sha256(sh.hashes.tobytes() + sh.offsets.tobytes()).hexdigest()[:16],
           hashlib.sha256(sig.tobytes()).hexdigest()[:16])
    assert got == _PINS[mode]
    # each text alone, and in batches of one, gives the same rows as the whole list
    for i, text in enumerate(texts):
        np.testing.assert_array_equal(signatures(shingle([text], mode=mode), 128)[0], sig[i])
    np.testing.assert_array_equal(signatures(shingle(texts, mode=mode, batch_size=1), 128), sig)


@pytest.mark.parametrize("first", ["linkage.blocking._minhash", "linkage.text",
                                   "linkage.text.lsh", "linkage.blocking"])
def test_the_text_blockers_keep_their_old_import_paths(first):
    """The text blockers live in `linkage.blocking`; `linkage.text` and its modules still give
    them to older scripts, as the same classes, whichever module a fresh interpreter imports
    first (an eager re-export in `linkage.text` would meet a half-loaded module)."""
    import subprocess
    import sys

    script = f"""
import importlib
importlib.import_module({first!r})
import linkage.blocking as b, linkage.text as t
from linkage.text.embeddings import EmbeddingBlocker
from linkage.text.lsh import MinHashBlocker, MinHashProposal, check_shingling
from linkage.text.simhash import SimHashBlocker
assert (MinHashBlocker, MinHashProposal) == (b.MinHashBlocker, b.MinHashProposal)
assert (SimHashBlocker, EmbeddingBlocker) == (b.SimHashBlocker, b.EmbeddingBlocker)
assert (t.MinHashBlocker, t.SimHashBlocker, t.EmbeddingBlocker) == (
    b.MinHashBlocker, b.SimHashBlocker, b.EmbeddingBlocker)
assert not hasattr(t, "KeyBlocker")
from linkage.settings import Rules
rules = Rules.from_dict({{"blocking": [{{"type": "minhash", "column": "x"}},
    {{"type": "simhash", "column": "x"}}, {{"type": "embedding", "column": "x"}}],
    "comparisons": [{{"type": "jaccard", "column": "x"}}]}})
assert [type(x) for x in rules.blocking] == [
    b.MinHashBlocker, b.SimHashBlocker, b.EmbeddingBlocker]
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
