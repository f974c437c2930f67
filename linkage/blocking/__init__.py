"""Blocking: a union of blockers, each proposing candidate pairs."""

# What other packages use of the blocking modules.
from linkage.blocking._blockers import (
    BandJoin,
    Blocker,
    BlockingInput,
    KeyBlocker,
    KeyGroups,
    KeyJoin,
    NeighbourJoin,
    Proposal,
    SkippedBlock,
    SortedNeighbourhood,
    WindowJoin,
    groups,
    neighbours,
    pairs_within,
    sort_ranks,
    sub_window,
)
from linkage.blocking._keys import KEY_FUNCTIONS, KeyPart
from linkage.blocking._range import RangeBlocker, RangeJoin
from linkage.blocking._union import (
    CandidatePairs,
    block,
    blocker_names,
    budget_message,
    estimate,
    oversized_message,
)

__all__ = [
    "KEY_FUNCTIONS",
    "BandJoin",
    "Blocker",
    "BlockingInput",
    "CandidatePairs",
    "KeyBlocker",
    "KeyGroups",
    "KeyJoin",
    "KeyPart",
    "NeighbourJoin",
    "Proposal",
    "RangeBlocker",
    "RangeJoin",
    "SkippedBlock",
    "SortedNeighbourhood",
    "WindowJoin",
    "block",
    "blocker_names",
    "budget_message",
    "estimate",
    "groups",
    "neighbours",
    "oversized_message",
    "pairs_within",
    "sort_ranks",
    "sub_window",
]

# The blockers for free text register their `type:` here: `token_neighbours` (TF-IDF word
# neighbours; scipy only when it runs), `minhash`, `simhash` and `embedding` (torch and the
# model only when one proposes). They use the algorithms of `linkage.text`, which never
# imports this package.
from linkage.blocking._embedding import EmbeddingBlocker
from linkage.blocking._minhash import MinHashBlocker, MinHashProposal
from linkage.blocking._simhash import SimHashBlocker
from linkage.blocking._tokens import TokenNeighbours

__all__ += ["EmbeddingBlocker", "MinHashBlocker", "MinHashProposal", "SimHashBlocker",
            "TokenNeighbours"]
