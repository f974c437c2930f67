"""The stages that match pairs by themselves (exact, url, semantic; copies in Spark): their
bits in a pair's blocker mask, and what they tell the summary and the reasons."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from linkage.settings import Rules


STAGE_BITS = ("exact", "semantic", "url", "copies")  # after the blockers' bits, in this order


MATCHING_STAGES = ("exact", "semantic", "url")  # their pairs are duplicates by the stage


def stage_bit(rules: Rules, stage: str) -> int:
    """The `blockers` mask bit of pairs proposed by a stage rather than a blocker."""
    return 1 << (len(rules.blocking) + STAGE_BITS.index(stage))


# What links a pair a person labelled a match that the clusters had kept apart (told after the
# stages' reasons: `linkage.run.finish.labelled_links`, `linkage.explain`).
LABELLED_JOIN = "labelled a match (--labels)"


def stage_reasons(rules: Rules) -> list[tuple[str, str]]:
    """(name, what it means) of each stage in the rules, in the order a pair proposed by
    several is told by: the plainest evidence first."""
    out = []
    if rules.exact is not None:
        what = ", ".join(rules.exact.columns or []) or "records"
        how = "normalized " if rules.exact.normalize else ""
        out.append(("exact", f"identical {how}{what} (exact stage)"))
    if rules.url is not None:
        out.append(("url", "same URL (url stage)"))
    if rules.semantic is not None:
        cosine = 1 - rules.semantic.epsilon
        out.append(("semantic", f"semantic: cosine >= {cosine:g} (semantic stage)"))
    return out


def pair_stage(rules: Rules, mask) -> np.ndarray:
    """Per pair, the index in `stage_reasons(rules)` of the stage that matched it; -1 for a
    pair no stage proposed (its match weight decides). One byte a pair."""
    mask = np.asarray(mask, dtype=np.int64)
    code = np.full(len(mask), -1, dtype=np.int8)
    for k, (name, _) in reversed(list(enumerate(stage_reasons(rules)))):
        code[(mask & stage_bit(rules, name)) > 0] = k
    return code


def stage_matches(rules: Rules, mask, weight: np.ndarray, threshold: float):
    """(pairs at or above the threshold, each pair's stage (`pair_stage`), pairs matched): a
    pair an exact, url or semantic stage proposed is a duplicate by that stage whatever its
    weight; guards may still change that."""
    above = weight >= threshold
    staged = pair_stage(rules, mask)
    return above, staged, above | (staged >= 0)


def matched_by_stage(rules: Rules, above: np.ndarray, staged: np.ndarray,
                     matched: np.ndarray) -> dict[str, dict[str, int]]:
    """summary.json's count, per stage, of the matched pairs below the threshold (with those
    above it, the pairs marked `is_match`); nothing for rules without stages."""
    if not stage_reasons(rules):
        return {}
    below = matched & ~above
    return {"matched_by_stage": {name: int((below & (staged == k)).sum())
                                 for k, (name, _) in enumerate(stage_reasons(rules))}}
