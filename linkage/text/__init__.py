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

__all__ = [
    "Cosine",
    "EmbeddingBlocker",
    "Encoder",
    "Jaccard",
    "MinHashBlocker",
    "SemDeDupResult",
    "Shingles",
    "candidate_pairs",
    "format_lsh_params",
    "jaccard",
    "load_signatures",
    "lsh_params",
    "s_curve",
    "save_signatures",
    "semdedup",
    "shingle",
    "signatures",
    "similar_pairs",
]
