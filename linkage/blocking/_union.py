"""The union of blockers: estimate first, then propose, then merge into unique pairs."""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np

from linkage.blocking._blockers import (
    Blocker,
    BlockingInput,
    KeyBlocker,
    SkippedBlock,
    SortedNeighbourhood,
)
from linkage.blocking._range import RangeBlocker
from linkage.errors import BudgetError, LinkageWarning, user_stacklevel


@dataclass
class CandidatePairs:
    """Unique candidate pairs (i < j, sorted) and the bit mask of blockers that proposed each."""

    left: np.ndarray
    right: np.ndarray
    mask: np.ndarray
    estimated: dict[str, int] = field(default_factory=dict)
    proposed: dict[str, int] = field(default_factory=dict)
    skipped: list[SkippedBlock] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.left)


def oversized_message(s: SkippedBlock, max_block_size: int) -> str:
    """What happened to one block above `max_block_size`: sub-blocked, or skipped."""
    where = (f"a block of {s.size:,} records where {s.key} = {s.value!r} (above "
             f"`max_block_size` = {max_block_size:,})")
    if s.how:
        return (f"blocker `{s.blocker}` sub-blocked {where} by {s.how}: its records are paired "
                "with their neighbours in that order, not with every other record of the block")
    return (f"blocker `{s.blocker}` skipped {where}; those records are still paired by other "
            "blockers if any key of theirs matches")


def blocker_names(blockers: list[Blocker]) -> list[str]:
    return [b.name or f"blocker_{k}" for k, b in enumerate(blockers)]


def estimate(blockers: list[Blocker], data: BlockingInput, max_block_size: int) -> dict[str, int]:
    """Pairs each blocker would propose (an upper bound: keys of one blocker may overlap)."""
    data.prepare_keys([parts for b in blockers if isinstance(b, KeyBlocker)
                       for parts in b.key_parts])
    return {
        name: b.estimate(data, max_block_size)
        for name, b in zip(blocker_names(blockers), blockers, strict=True)
    }


def budget_message(blockers: list[Blocker], estimated: dict[str, int], total: int,
                   max_pairs: int, per_key: list[int] | None = None) -> str:
    """What `max_pairs` refused, the blocker with the largest share and how to tighten it:
    a key blocker by its largest key (`per_key`: each key's pairs) or `max_block_size`, a
    sorted neighbourhood by its window. Every engine raises it word for word."""
    names = blocker_names(blockers)
    worst = max(estimated, key=lambda k: estimated[k])
    index = names.index(worst)
    blocker = blockers[index]
    detail = ""
    if per_key:
        k = int(np.argmax(per_key))
        detail = f" (its key `blocking[{index}].keys[{k}]` alone: {per_key[k]:,})"
    if isinstance(blocker, SortedNeighbourhood):  # each step of its window: a pair a record
        how = (f"Narrow its `window` ({blocker.window} now; each step less spares up to one "
               "pair per record it sorts), or raise `max_pairs` in the rules.")
    elif isinstance(blocker, RangeBlocker):  # its pairs grow with the records in each range
        how = (f"Narrow its tolerance ({blocker.tolerance()} now) or add a part to its `key`, "
               "or raise `max_pairs` in the rules.")
    else:
        how = ("Tighten it by adding a part to its keys (for example [surname, "
               "year(birth_date)] instead of [surname]), lower `max_block_size`, or raise "
               "`max_pairs` in the rules.")
    return (f"blocking would propose about {total:,} candidate pairs, above `max_pairs` = "
            f"{max_pairs:,}. The largest share comes from blocker `{worst}` with "
            f"{estimated[worst]:,}{detail}. {how}")


def block(
    blockers: list[Blocker],
    data: BlockingInput,
    *,
    max_pairs: int,
    max_block_size: int,
    progress=None,
) -> CandidatePairs:
    """Run every blocker and merge their pairs; stop early if the estimate exceeds `max_pairs`."""
    names = blocker_names(blockers)
    estimated = estimate(blockers, data, max_block_size)
    total = sum(estimated.values())
    if total > max_pairs:
        worst = max(estimated, key=lambda k: estimated[k])
        index = names.index(worst)
        per_key = None
        if isinstance(blockers[index], KeyBlocker):
            per_key = blockers[index].estimate_per_key(data, max_block_size)
        msg = budget_message(blockers, estimated, total, max_pairs, per_key)
        raise BudgetError(msg)
    n = max(data.n, 1)
    # Each proposal becomes one int64: the pair's code (left * n + right), shifted left by a
    # few bits that hold the proposing blocker's number, when that fits; else code and mask
    # arrays side by side. One in-place sort then groups each pair's proposals.
    bits = max(len(blockers) - 1, 1).bit_length()
    packed = n * n < (1 << (62 - bits))
    parts, mask_parts, skipped, proposed = [], [], [], {}
    for bit, (name, blocker) in enumerate(zip(names, blockers, strict=True)):
        prop = blocker.propose(data, max_block_size)
        same = data.same_group(prop.left, prop.right)
        if same is not None:  # MinHash, embeddings and windows may pair across groups
            prop.left, prop.right = prop.left[same], prop.right[same]
        for s in prop.skipped:
            s.blocker = name
            warnings.warn(oversized_message(s, max_block_size), LinkageWarning,
                          stacklevel=user_stacklevel())
        skipped.extend(prop.skipped)
        code = prop.left.astype(np.int64)
        code *= n
        code += prop.right
        distinct = prop.left != prop.right
        if not distinct.all():
            code = code[distinct]
        del prop, distinct
        if packed:
            code <<= bits
            code |= bit
        else:
            mask_parts.append(np.full(len(code), 1 << bit, dtype=np.int64))
        parts.append(code)
        if progress is not None:
            progress.update(1)
    codes = np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)
    del parts
    if packed:
        codes.sort()
        pair = codes >> bits
        masks = np.left_shift(np.int64(1), codes & ((1 << bits) - 1))
        codes = pair
    else:
        masks = np.concatenate(mask_parts) if mask_parts else np.zeros(0, dtype=np.int64)
        order = np.argsort(codes, kind="stable")
        codes, masks = codes[order], masks[order]
    if len(codes):
        starts = np.flatnonzero(np.concatenate([[True], codes[1:] != codes[:-1]]))
        unique = codes[starts]
        mask = np.bitwise_or.reduceat(masks, starts)
    else:
        unique, mask = codes, masks
    del codes, masks
    for bit, name in enumerate(names):
        # The distinct pairs a blocker proposed: those whose mask holds its bit.
        proposed[name] = int(np.count_nonzero(mask & (1 << bit)))
    return CandidatePairs(
        left=unique // n,
        right=unique % n,
        mask=mask,
        estimated=estimated,
        proposed=proposed,
        skipped=skipped,
    )
