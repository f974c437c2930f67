"""Free text: shingles, MinHash signatures, LSH and the MinHash blocker."""

from linkage.text.embeddings import Cosine, EmbeddingBlocker, Encoder, Jaccard
from linkage.text.lsh import (
    MinHashBlocker,
    candidate_pairs,
    format_lsh_params,
    jaccard,
    lsh_params,
    s_curve,
    similar_pairs,
)
from linkage.text.minhash import load_signatures, save_signatures, signatures
from linkage.text.semdedup import SemDeDupResult, semdedup
from linkage.text.shingles import Shingles, shingle
from linkage.text.simhash import SimHash, SimHashBlocker, fingerprints, hamming, near_pairs

__all__ = [
    "Cosine",
    "EmbeddingBlocker",
    "Encoder",
    "Jaccard",
    "MinHashBlocker",
    "SemDeDupResult",
    "Shingles",
    "SimHash",
    "SimHashBlocker",
    "candidate_pairs",
    "fingerprints",
    "format_lsh_params",
    "hamming",
    "jaccard",
    "load_signatures",
    "lsh_params",
    "near_pairs",
    "s_curve",
    "save_signatures",
    "semdedup",
    "shingle",
    "signatures",
    "similar_pairs",
]
