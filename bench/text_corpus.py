"""A seeded text corpus with planted near-duplicates whose true pairs are known by construction.

Used by bench/text_dedup_bench.py (linkage against datatrove and text-dedup) and by
tests/test_bench.py. Nothing here imports linkage: the truth is built without the code it scores.

Recipe (`make_corpus(n, seed)`):

* Sentences: the real texts of bench/minhash_bench.py `real_docs()` (product names, titles and
  descriptions of the benchmark data sets, Python standard library docstrings) split at
  sentence ends and line breaks; sentences of 3 to 40 words, each kept once.
* Bases: each base document draws a length from a log-normal (median 60 words, clipped to 25 to
  400) and takes uniformly random sentences until it reaches it, and at least
  `MIN_SENTENCES` of them (so that two bases sharing one sentence are not near copies: one
  long sentence must not be a whole document); a text drawn twice is drawn again. Every base
  gets its own URL `https://site{k}.example/{path}/{i}`.
* Planted copies, each of a different base (no base has two copies, so every planted pair is
  one base and one copy and the truth is pairwise), in these shares of all documents:
  `exact` 2% (the same text under another URL), `near_high` 4% (reference Jaccard in
  [0.90, 0.98]), `near_low` 4% ([0.82, 0.90]), `far` 4% ([0.55, 0.75]: a rewrite, not a
  duplicate at threshold 0.8), `url` 2% (the same URL written another way - http, `www.`,
  a `utm_source` parameter, a trailing slash or a fragment - and text edited to [0.55, 0.75]:
  a page crawled twice that changed in between).
* Edits: words substituted by a random word of the corpus, deleted, or inserted, at random
  positions; half the `near_*`, `far` and `url` copies also get a new footer sentence. The edits
  are repeated or undone one at a time until the reference Jaccard lies in the band; a base
  that cannot reach it (too short) is skipped for another.
* Reference Jaccard: sets of word 3-grams of the lowercased text split at every
  non-alphanumeric character (what linkage's `shingle(mode="word", k=3)` does on ASCII text).
  The bands leave a gap of 0.75 to 0.82 around the threshold 0.8, so that the other tools'
  tokenizers (datatrove: its English word tokenizer; text-dedup: white space) do not move a
  planted pair across it.
* Order: all documents shuffled by a seeded permutation; ids `doc{position:07d}`.

Returns (documents: doc_id, url, text, source; truth: doc_a, doc_b, kind, jaccard). `source`
is `web` for every document except 1% marked `qa`, the records the bench's semantic stage
embeds (its `where`).
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

SHARES = {"exact": 0.02, "near_high": 0.04, "near_low": 0.04, "far": 0.04, "url": 0.02}
BANDS = {"exact": (1.0, 1.0), "near_high": (0.90, 0.98), "near_low": (0.82, 0.90),
         "far": (0.55, 0.75), "url": (0.55, 0.75)}
THRESHOLD = 0.8  # planted pairs of kinds in TRUE_KINDS lie above it, the others below
TRUE_KINDS = ("exact", "near_high", "near_low")
QA_SHARE = 0.01
MIN_SENTENCES = 4
MAX_SENTENCE_WORDS = 40
FOOTERS = (
    "All rights reserved.", "Posted in news; share this page with your friends.",
    "Subscribe to our newsletter for weekly updates.", "Last updated by the editors.",
    "Terms of use and privacy policy apply to this page.", "Comments are closed.",
)
_WORD = re.compile(r"[^\W_]+")
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")


def sentence_pool(texts: list[str]) -> list[str]:
    """The sentences of `texts` (3 to `MAX_SENTENCE_WORDS` white-space words, white space
    collapsed), each once,
    in order of first occurrence."""
    seen: dict[str, None] = {}
    for text in texts:
        for s in _SENTENCE.split(text):
            s = " ".join(s.split())
            if 3 <= s.count(" ") + 1 <= MAX_SENTENCE_WORDS:
                seen.setdefault(s, None)
    return list(seen)


def shingles(text: str, k: int = 3) -> set[str]:
    """The reference shingles: word k-grams of the lowercased alphanumeric words."""
    w = _WORD.findall(text.lower())
    if len(w) < k:
        return {" ".join(w)} if w else set()
    return {" ".join(w[i : i + k]) for i in range(len(w) - k + 1)}


def jaccard(a: str, b: str) -> float:
    sa, sb = shingles(a), shingles(b)
    if not sa and not sb:
        return 1.0
    return len(sa & sb) / len(sa | sb)


def _url_variant(url: str, rng: np.random.Generator) -> str:
    """The same page written another way (what a URL normalizer undoes)."""
    how = int(rng.integers(5))
    if how == 0:
        return url.replace("https://", "http://", 1)
    if how == 1:
        return url.replace("https://", "https://www.", 1)
    if how == 2:
        return url + "?utm_source=newsletter&utm_medium=email"
    if how == 3:
        return url + "/"
    return url + "#comments"


def _edit(words: list[str], m: int, vocab: list[str], rng: np.random.Generator) -> list[str]:
    out = list(words)
    for _ in range(m):
        op = int(rng.integers(3))
        if op == 0 and len(out) > 1:
            out[int(rng.integers(len(out)))] = vocab[int(rng.integers(len(vocab)))]
        elif op == 1 and len(out) > 5:
            del out[int(rng.integers(len(out)))]
        else:
            out.insert(int(rng.integers(len(out) + 1)), vocab[int(rng.integers(len(vocab)))])
    return out


def planted_copy(base: str, band: tuple[float, float], rng: np.random.Generator,
                 vocab: list[str]) -> tuple[str, float] | None:
    """An edited copy of `base` whose reference Jaccard with it lies in `band`, or None."""
    lo, hi = band
    words = base.split()
    footer = FOOTERS[int(rng.integers(len(FOOTERS)))] if rng.random() < 0.5 else None
    n = max(len(shingles(base)), 1)
    target = rng.uniform(lo, hi)
    # substituting one word changes up to 3 of n shingles on each side
    m = max(0, round(n * (1 - target) / (1 + target) / 3))
    for _ in range(24):
        text = " ".join(_edit(words, m, vocab, rng) + ([footer] if footer else []))
        j = jaccard(base, text)
        if lo <= j <= hi and text != base:
            return text, j
        m = m + 1 if j > hi or text == base else max(m - 1, 0)
    return None


def make_corpus(n: int, seed: int = 0, texts: list[str] | None = None,
                ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """`n` documents and the planted pairs (see the module docstring). `texts` defaults to
    bench/minhash_bench.py `real_docs()`."""
    if texts is None:
        from minhash_bench import real_docs  # bench/ is on sys.path when run from there

        texts = real_docs()[0]
    pool = sentence_pool(texts)
    vocab = sorted({w for s in pool[:20_000] for w in s.split() if w.isalpha()})
    rng = np.random.default_rng(seed)
    copies = {kind: round(n * share) for kind, share in SHARES.items()}
    n_bases = n - sum(copies.values())
    lengths = np.clip(rng.lognormal(np.log(60), 0.6, size=n_bases), 25, 400).astype(int)
    pool_arr = np.array(pool, dtype=object)
    pool_words = np.array([s.count(" ") + 1 for s in pool])
    bases: list[str] = []
    seen: set[str] = set()
    draws = rng.integers(len(pool), size=8 * n_bases + 1000)
    d = 0
    for target in lengths:
        while True:
            picked, words = [], 0
            while words < target or len(picked) < MIN_SENTENCES:
                if d == len(draws):
                    draws, d = rng.integers(len(pool), size=len(draws)), 0
                picked.append(draws[d])
                words += pool_words[draws[d]]
                d += 1
            text = " ".join(pool_arr[picked])
            if text not in seen:
                seen.add(text)
                bases.append(text)
                break
    hosts = rng.integers(2000, size=n_bases)
    paths = ("article", "docs", "product", "blog", "wiki", "forum")
    urls = [f"https://site{h}.example/{paths[h % len(paths)]}/{i}" for i, h in enumerate(hosts)]
    texts_out, urls_out = list(bases), list(urls)
    truth: list[tuple[int, int, str, float]] = []
    order = rng.permutation(n_bases)
    nxt = 0
    for kind, count in copies.items():
        made = 0
        while made < count:
            b = int(order[nxt])
            nxt += 1
            if kind == "exact":
                text, j = bases[b], 1.0
            else:
                got = planted_copy(bases[b], BANDS[kind], rng, vocab)
                if got is None:
                    continue
                text, j = got
            url = (_url_variant(urls[b], rng) if kind == "url"
                   else f"https://mirror{int(rng.integers(500))}.example/copy/{len(urls_out)}")
            truth.append((b, len(texts_out), kind, j))
            texts_out.append(text)
            urls_out.append(url)
            made += 1
    perm = rng.permutation(len(texts_out))  # position p holds document perm[p]
    where = np.empty(len(perm), dtype=np.int64)
    where[perm] = np.arange(len(perm))
    ids = np.array([f"doc{p:07d}" for p in range(len(perm))], dtype=object)
    qa = rng.random(len(perm)) < QA_SHARE
    documents = pd.DataFrame({
        "doc_id": ids,
        "url": np.array(urls_out, dtype=object)[perm],
        "text": np.array(texts_out, dtype=object)[perm],
        "source": np.where(qa, "qa", "web").astype(object),
    })
    a = where[[t[0] for t in truth]]
    b = where[[t[1] for t in truth]]
    truth_df = pd.DataFrame({
        "doc_a": ids[np.minimum(a, b)], "doc_b": ids[np.maximum(a, b)],
        "kind": [t[2] for t in truth], "jaccard": [t[3] for t in truth],
    })
    return documents, truth_df
