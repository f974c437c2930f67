"""Free text: shingles, MinHash signatures and LSH, SimHash fingerprints, embeddings, and the
comparisons over them. The blockers built on them live in `linkage.blocking`."""

from linkage._moved import moved_names
from linkage.text.embeddings import Cosine, Encoder, Jaccard
from linkage.text.lsh import (
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
from linkage.text.simhash import SimHash, fingerprints, hamming, near_pairs

# The text blockers moved to `linkage.blocking` (issue 15); older scripts import them from here.
__getattr__ = moved_names(__name__, "linkage.blocking",
                          ("EmbeddingBlocker", "MinHashBlocker", "SimHashBlocker"))

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
