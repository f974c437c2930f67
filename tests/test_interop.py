"""linkage.interop in the main (pandas 3) environment: datasketch MinHash signatures banded by
linkage's LSH, and recordlinkage-shaped pairs and features built by hand (recordlinkage itself,
which caps pandas below 3, is tested in `tests_pandas2/`)."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pandas as pd
import pytest
from datasketch import LeanMinHash, MinHash

import linkage as lk
from linkage import interop
from linkage.blocking import MinHashBlocker
from linkage.errors import InputError, LinkageWarning
from linkage.text.lsh import jaccard
from linkage.text.minhash import signatures
from linkage.text.shingles import shingle


def words(text: str) -> list[bytes]:
    return [w.encode() for w in sorted(set(re.findall(r"\w+", text.lower())))]


def sketch(text: str, seed: int = 1, num_perm: int = 128) -> MinHash:
    m = MinHash(num_perm=num_perm, seed=seed)
    m.update_batch(words(text))
    return m


@pytest.fixture(scope="module")
def texts() -> pd.DataFrame:
    from tests.conftest import ROOT

    return pd.read_csv(ROOT / "sample_data" / "labelled_text.csv")


def test_datasketch_signatures_find_the_near_duplicates(texts):
    docs = texts["text"].tolist()
    minhashes = [sketch(t) for t in docs]
    minhashes[::2] = [LeanMinHash(m) for m in minhashes[::2]]  # both kinds, one index
    found = interop.minhash_pairs(minhashes, ids=texts["doc_id"], texts=docs, threshold=0.7,
                                  shingle="word", k=1)
    # every pair of the 1,500 texts, by exact Jaccard of the same word sets
    i, j = np.triu_indices(len(docs), 1)
    exact = jaccard(shingle(np.array(docs, dtype=object), mode="word", k=1), i, j)
    ids = texts["doc_id"].to_numpy()
    truth = set(zip(ids[i[exact >= 0.7]], ids[j[exact >= 0.7]], strict=True))
    got = set(zip(found["id_l"], found["id_r"], strict=True))
    assert len(truth) > 1000
    assert got <= truth  # verified: nothing below the threshold
    assert len(got & truth) / len(truth) >= 0.97  # LSH misses few (measured 0.987)
    assert (found["jaccard"] >= 0.7).all()
    # the MinHash blocker's settings, read from the blocker
    blocker = MinHashBlocker("text", threshold=0.7, num_perm=128, shingle="word", k=1)
    same = interop.minhash_pairs(minhashes, ids=texts["doc_id"], texts=docs, blocker=blocker)
    assert same.equals(found)
    with pytest.raises(InputError, match="permutations"):
        interop.minhash_pairs(minhashes, blocker=MinHashBlocker("text", num_perm=64))
    # without the texts: the candidates, with the signatures' own estimate
    unverified = interop.minhash_pairs(minhashes, threshold=0.7)
    assert len(unverified) > len(found)
    est = unverified["estimated_jaccard"].to_numpy()
    true_j = jaccard(shingle(np.array(docs, dtype=object), mode="word", k=1),
                     unverified["id_l"].to_numpy(), unverified["id_r"].to_numpy())
    assert np.abs(est - true_j).mean() < 0.05


def test_the_two_hash_schemes_are_refused_together(texts):
    docs = texts["text"].head(50).tolist()
    theirs = np.stack([sketch(t).hashvalues for t in docs]).astype(np.uint32)
    ours = signatures(shingle(np.array(docs, dtype=object), mode="word", k=1), 128, seed=1)
    # the reason: the same texts' rows never agree between the two families
    assert (theirs == ours).mean() < 0.01
    mixed = [sketch(t) for t in docs[:-1]] + [ours[-1]]
    with pytest.raises(InputError, match="SHA-1"):
        interop.minhash_pairs(mixed)
    with pytest.raises(InputError, match="seeds"):
        interop.minhash_pairs([sketch(docs[0], seed=1), sketch(docs[1], seed=2)])
    with pytest.raises(InputError, match="num_perm"):
        interop.minhash_pairs([sketch(docs[0]), sketch(docs[1], num_perm=64)])
    assert issubclass(InputError, lk.LinkageError)  # exit 2 at the command line


def febrl1(datasets) -> pd.DataFrame:
    return pd.read_csv(datasets / "febrl" / "dataset1.csv", skipinitialspace=True, dtype=str,
                       index_col="rec_id")


def test_pairs_in_and_out_with_pandas_3(datasets):
    records = febrl1(datasets)
    # recordlinkage's shape: a MultiIndex of index labels (here, records sharing a postcode)
    frame = records.reset_index()
    both = frame.merge(frame, on="postcode")
    both = both[both["rec_id_x"] < both["rec_id_y"]]
    pairs = pd.MultiIndex.from_arrays([both["rec_id_x"], both["rec_id_y"]],
                                      names=["rec_id_1", "rec_id_2"])
    linker = lk.Linker(candidates=pairs).fit(records)
    index, features = interop.to_recordlinkage(linker)
    assert {tuple(sorted(p)) for p in index} == {tuple(sorted(p)) for p in pairs}
    assert features.shape == (len(pairs), len(linker.rules_.comparisons))
    # another threshold: the same pairs, from the kept comparisons and model
    predicted = linker.predict()
    median = float(predicted.loc[predicted["is_match"], "match_weight"].median())
    strict = linker.cluster(threshold=median)
    assert strict.summary_data["stages"]["block"]["candidate_pairs"] == len(pairs)
    assert (strict.summary_data["stages"]["score"]["matched_pairs"]
            < linker.cluster().summary_data["stages"]["score"]["matched_pairs"])
    # the exported levels, scored again as recordlinkage features, keep their levels and
    # find the matches linkage found (at its threshold)
    scored = interop.score_features(features, threshold=float(linker.scorer_.threshold))
    assert all(3 <= len(scored.levels[c.output_name].cat.categories) <= len(c.level_labels) + 1
               for c in linker.rules_.comparisons)
    same = {tuple(sorted(p)) for p in scored.predict()}
    own = {tuple(sorted(p)) for p in index[linker.predict()["is_match"].to_numpy()]}
    assert len(same ^ own) <= 0.02 * len(own), (len(same - own), len(own - same), len(own))
    clusters = scored.cluster()
    person = clusters.index.str.split("-").str[1]
    dup = pd.Series(person).duplicated(keep=False).to_numpy()
    # records of one person that the postcode paired share a cluster
    assert clusters[dup].groupby(person[dup]).nunique().eq(1).mean() >= 0.8
    with pytest.raises(InputError, match="MultiIndex"):
        lk.Linker(candidates=list(pairs)).fit(records)


def test_features_outside_0_1_are_bad_input():
    index = pd.MultiIndex.from_tuples([("a", "b"), ("a", "c")])
    with pytest.raises(InputError, match="outside"):
        interop.score_features(pd.DataFrame({"age": [3.0, 40.0]}, index=index))


def test_explain_of_scored_features_adds_up_to_the_match_weight():
    """`FeatureScores.explain` lists the prior and each feature's weight, and, where EM found
    several kinds of non-match (a feature table whose non-matches each agree on the one field
    that let them in, as blocking on several keys leaves them), the term that scores the
    pattern against those kinds: the lines add up to the pair's match weight."""
    rng = np.random.default_rng(0)
    n = 6000
    kind = rng.choice(4, size=n, p=[0.1, 0.3, 0.3, 0.3])  # 0: a match; k: let in by field k
    columns = {}
    for j, name in enumerate(["given", "surname", "dob", "city"]):
        agree = np.where(kind == 0, rng.random(n) < 0.9,
                         np.where(kind == j % 3 + 1, True, rng.random(n) < 0.05))
        columns[name] = agree.astype(float)
    features = pd.DataFrame(columns, index=pd.MultiIndex.from_arrays(
        [np.arange(n), np.arange(n) + n]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LinkageWarning)
        scores = interop.score_features(features, threshold=0.0)
    assert scores.scorer.diagnostics["non_match_components"] > 1
    term = scores.scorer.non_match_term(scores._matrix)
    row = int(np.flatnonzero(term != 0)[0])
    pair = scores.features.index[row]
    text = str(scores.explain(*pair))
    assert "(kinds of non-match)" in text
    numbers = [float(x) for x in re.findall(r"([+-]\d+\.\d\d)$", text, flags=re.M)]
    assert sum(numbers) == pytest.approx(float(scores.match_weight.iloc[row]), abs=0.01 * len(
        numbers))

