"""Blocking: a union of blockers, each proposing candidate pairs."""

from linkage.blocking._blockers import Blocker, BlockingInput, KeyBlocker, SortedNeighbourhood
from linkage.blocking._keys import KEY_FUNCTIONS, KeyPart
from linkage.blocking._union import CandidatePairs, block, blocker_names, estimate

__all__ = [
    "KEY_FUNCTIONS",
    "Blocker",
    "BlockingInput",
    "CandidatePairs",
    "KeyBlocker",
    "KeyPart",
    "SortedNeighbourhood",
    "block",
    "blocker_names",
    "estimate",
]

# Registers `type: minhash` in the Blocker family (numpy only; nothing heavy is imported).
# Registers `type: token_neighbours` (TF-IDF word neighbours; scipy only when it runs).
from linkage.blocking._tokens import TokenNeighbours
from linkage.text.lsh import MinHashBlocker

# Registers `type: simhash` (the blocker and the comparison), numpy only as well.
from linkage.text.simhash import SimHashBlocker

__all__ += ["MinHashBlocker", "SimHashBlocker", "TokenNeighbours"]
