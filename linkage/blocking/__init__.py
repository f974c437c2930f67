"""Blocking: a union of blockers, each proposing candidate pairs."""

# What other packages use of the blocking modules; bound before the blockers of `linkage.text`
# below are imported, since they import these names from here.
from linkage.blocking._blockers import (
    Blocker,
    BlockingInput,
    KeyBlocker,
    KeyGroups,
    KeyJoin,
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
    "KeyGroups",
    "KeyJoin",
    "KeyPart",
    "Proposal",
    "SkippedBlock",
    "SortedNeighbourhood",
    "WindowJoin",
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

# Registers `type: token_neighbours` (TF-IDF word neighbours; scipy only when it runs). The
# text blockers (`minhash`, `simhash`, `embedding`) register when `linkage.settings` imports
# them: they import this package, so it must not import them.
from linkage.blocking._tokens import TokenNeighbours

__all__ += ["TokenNeighbours"]
