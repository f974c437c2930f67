"""Free text: shingles, MinHash signatures, LSH and the MinHash blocker."""

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
from linkage.text.shingles import Shingles, shingle

__all__ = [
    "MinHashBlocker",
    "Shingles",
    "candidate_pairs",
    "format_lsh_params",
    "jaccard",
    "load_signatures",
    "lsh_params",
    "s_curve",
    "save_signatures",
    "shingle",
    "signatures",
    "similar_pairs",
]
