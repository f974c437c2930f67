"""Blocking: a union of blockers, each proposing candidate pairs."""

# What other packages use of the blocking modules; bound before the blockers of `linkage.text`
# below are imported, since they import these names from here.
from linkage.blocking._blockers import (
    Blocker,
    BlockingInput,
    KeyBlocker,
    Proposal,
    SkippedBlock,
    SortedNeighbourhood,
    groups,
    neighbours,
    pairs_within,
    sort_ranks,
    sub_window,
)
from linkage.blocking._keys import KEY_FUNCTIONS, KeyPart
from linkage.blocking._union import (
    CandidatePairs,
    block,
    blocker_names,
    estimate,
    oversized_message,
)

__all__ = [
    "KEY_FUNCTIONS",
    "Blocker",
    "BlockingInput",
    "CandidatePairs",
    "KeyBlocker",
    "KeyPart",
    "Proposal",
    "SkippedBlock",
    "SortedNeighbourhood",
    "block",
    "blocker_names",
    "estimate",
    "groups",
    "neighbours",
    "oversized_message",
    "pairs_within",
    "sort_ranks",
    "sub_window",
]

# Registers `type: minhash` in the Blocker family (numpy only; nothing heavy is imported).
# Registers `type: token_neighbours` (TF-IDF word neighbours; scipy only when it runs).
from linkage.blocking._tokens import TokenNeighbours
from linkage.text.lsh import MinHashBlocker

# Registers `type: simhash` (the blocker and the comparison), numpy only as well.
from linkage.text.simhash import SimHashBlocker

__all__ += ["MinHashBlocker", "SimHashBlocker", "TokenNeighbours"]
