"""Which rules the Spark engine runs, checked before Spark starts.

Anything the Spark engine would run differently from the local engine is refused with an
error that names the rules key and says to use `--engine local`: never a silent difference.
"""

from __future__ import annotations

from linkage.engines.spark._guards import GUARDS
from linkage.errors import EngineError
from linkage.scoring import FellegiSunter, RuleSum, Supervised
from linkage.settings import Rules

SCORERS = (RuleSum, FellegiSunter, Supervised)


def _refuse(rules: Rules, key: str, what: str) -> EngineError:
    return EngineError(
        f"{rules.source}: {key} ({what}) is not supported by --engine spark. Run these rules "
        "with --engine local, or remove it from the rules to run on Spark."
    )


def check_supported(rules: Rules) -> None:
    """Raise `EngineError` naming the first rules key the Spark engine cannot run."""
    if rules.group_by:
        raise _refuse(rules, "`group_by`", "deduplication per group")
    for k, blocker in enumerate(rules.blocking):
        # A blocker runs on Spark when it says how to make its pairs by joins.
        if blocker.join_plan() is None:
            raise _refuse(rules, f"`blocking[{k}].type`", f"a {blocker.kind!r} blocker; "
                          "blockers whose pairs are joins (keys, sorted_neighbourhood, "
                          "range, minhash) run on Spark")
    for k, comparison in enumerate(rules.comparisons):
        # `per_pair`: its `compare` reads only the two values of each pair, so partitions of
        # the pairs can be compared apart (`cosine` too: each text's vector is its own).
        if not comparison.per_pair:
            raise _refuse(rules, f"`comparisons[{k}].type`",
                          f"a {comparison.kind!r} comparison")
    if type(rules.scoring) not in SCORERS:
        raise _refuse(rules, "`scoring.type`", f"the {rules.scoring.kind!r} scorer; rule_sum, "
                      "fellegi_sunter and supervised run on Spark")
    for k, guard in enumerate(rules.guards):
        # A guard kind added to `linkage.guards` is refused until `_guards` runs it.
        if type(guard) not in GUARDS:
            raise _refuse(rules, f"`guards[{k}].type`", f"the {guard.kind!r} guard; "
                          + ", ".join(g.kind for g in GUARDS) + " run on Spark")
