"""Whether the two tables of a link repeat their own records: the evidence for one-to-one.

A link is one-to-one when neither table holds one thing twice: then each record has at most
one match on the other side, and of a record's candidates that score as matches only the best
can be right (a recurring payment of the same payer, a neighbour's near-identical record). A
table that repeats its records (a CRM loaded twice into one system) has records with two right
matches, and one-to-one would drop one of them. No column name says which it is, and exact
repeats do not either (a repeated customer is retyped, not copied), so the values are asked:
the suggested keys run over a sample of both tables as one (`EVIDENCE_ROWS` of each; a window
by its sort key less the last part, whose pairs, unlike a window's, are a property of the two
records and not of the sample's density; a range as it is, for the same reason), proposing
pairs within each table as well as across, and the suggested comparisons judge each pair. A
pair is a *near repeat* where at least two fields are compared, none disagrees outright (each
is missing on one side or above its comparison's lowest level) and at least half of them agree
at their top level (exact). Chance pairs rarely are (two payments of one payer share the memo,
not the amount or the day); records of one thing often are, whichever tables they lie in.

Per possible pair (m_l * m_r across, m(m - 1) / 2 within a table of the sample), near repeats
within a table that repeats its records are about as common as across (more, where it holds
several copies of one thing); within a table that does not, only chance makes them. So a
table repeats its records where its rate is more than `REPEAT_SHARE` of the rate across (the
share of its records that repeat is then more than that share of the records the link
matches), and the link is one-to-one where neither does and the pairs across hold at least
`MIN_NEAR` near repeats (else the values say nothing either way, and pairs are kept as
scored). Rates per possible pair do not depend on the sample's size: a uniform sample of each
table keeps them.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

REPEAT_SHARE = 0.1  # within-table near repeats, per pair, above this share of the rate across
MIN_NEAR = 20  # near repeats across the tables needed before the rates count
EVIDENCE_ROWS = 20_000  # rows of each table read (a seeded sample; the rates keep)
MAX_JUDGED = 400_000  # pairs compared at most (a seeded sample of them; the rates keep)


def repeats_within_sources(sample: pd.DataFrame, source: np.ndarray, rules: dict) -> dict | None:
    """The one-to-one evidence of a link: near repeats across the tables and within each,
    their rates per possible pair, and the verdict (`one_to_one`, `why`). `sample`: rows of
    both tables (the right one under the left's names), `source` 0 or 1 per row, `rules` the
    suggested rules (a dict). Where the values cannot tell (no key of equal values, the
    rules cannot run on the sample), the verdict is not one-to-one, and `why` says so."""
    from linkage.blocking import BlockingInput, block
    from linkage.errors import LinkageError
    from linkage.pipeline import normalize_columns
    from linkage.run.compare import compare_pairs
    from linkage.settings import Rules

    source = np.asarray(source)
    rows = _rows(source, EVIDENCE_ROWS)
    sample, source = sample.iloc[rows], source[rows]
    sizes = [int((source == k).sum()) for k in (0, 1)]
    if min(sizes) < 2 or not rules.get("comparisons"):
        return _untold("a table has fewer than two records, or nothing is compared")
    keys = _exact_keys(rules.get("blocking") or [])
    # a range's pairs are a property of the two records too (a key, and values within a
    # tolerance): it runs on the sample as it is
    ranges = [dict(b) for b in rules.get("blocking") or [] if b.get("type") == "range"]
    if not keys and not ranges:
        return _untold("the suggested blocking has no key of equal values to find near "
                       "repeats with (only windows on one column)")
    try:
        evidence = ([{"type": "keys", "keys": keys}] if keys else []) + ranges
        parsed = Rules.from_dict({**{k: v for k, v in rules.items() if k != "id_column"},
                                  "blocking": evidence}, source="suggested rules")
        frame = sample.reset_index(drop=True)
        work, _ = normalize_columns(parsed, frame, pd.Series(np.arange(len(frame))))
        pairs = block(parsed.blocking, BlockingInput.encoded(work, None, None),
                      max_pairs=parsed.max_pairs, max_block_size=parsed.max_block_size)
    except (LinkageError, KeyError, ValueError) as err:
        return _untold(f"the suggested rules could not run on the sample ({err})")
    left, right = np.asarray(pairs.left, np.int64), np.asarray(pairs.right, np.int64)
    if len(left) > MAX_JUDGED:
        keep = np.sort(np.random.default_rng(0).choice(len(left), MAX_JUDGED, replace=False))
        left, right = left[keep], right[keep]
    judged = len(left)
    levels = compare_pairs(parsed.comparisons, work, left, right).levels
    present = levels >= 0
    top = np.array([len(c.level_labels) - 1 for c in parsed.comparisons])
    exact = (levels == top).sum(axis=1)
    near = ((present.sum(axis=1) >= 2) & np.all(levels != 0, axis=1)
            & (2 * exact >= present.sum(axis=1)))
    across = source[left] != source[right]
    count = {"across": int((near & across).sum())}
    possible = {"across": sizes[0] * sizes[1]}
    for k, side in enumerate(("left", "right")):
        inside = (source[left] == k) & (source[right] == k)
        count[side] = int((near & inside).sum())
        possible[side] = sizes[k] * (sizes[k] - 1) // 2
    rate = {key: count[key] / max(possible[key], 1) for key in count}
    ratio = {side: rate[side] / rate["across"] if rate["across"] > 0 else None
             for side in ("left", "right")}
    if count["across"] < MIN_NEAR:
        verdict, why = False, (f"only {count['across']} near repeats across the tables: too "
                               "few to tell whether a table repeats its records")
    else:
        repeating = [side for side in ("left", "right") if ratio[side] > REPEAT_SHARE]
        verdict = not repeating
        shown = ", ".join(f"{side} {ratio[side]:.3g}" for side in ("left", "right"))
        why = (f"near repeats within each table, per pair, against across: {shown} "
               + (f"(above {REPEAT_SHARE:g}: the {' and '.join(repeating)} table repeats "
                  "its records)" if repeating else f"(both at most {REPEAT_SHARE:g}: neither "
                                                    "table repeats its records)"))
    return {"one_to_one": verdict, "why": why, "pairs_judged": judged,
            "near_repeats": count, "rate_ratio": ratio}


def _untold(why: str) -> dict:
    """The evidence where the values cannot tell: pairs are kept as scored."""
    return {"one_to_one": False, "why": f"{why}: pairs are kept as scored",
            "pairs_judged": 0, "near_repeats": None, "rate_ratio": None}


def _rows(source: np.ndarray, each: int) -> np.ndarray:
    """Up to `each` rows of each table, a seeded uniform sample, in their order."""
    rng = np.random.default_rng(0)
    parts = []
    for k in (0, 1):
        rows = np.flatnonzero(source == k)
        if len(rows) > each:
            rows = np.sort(rng.choice(rows, each, replace=False))
        parts.append(rows)
    return np.concatenate(parts)


def _exact_keys(blocking: list[dict]) -> list[list[str]]:
    """The suggested blocking as keys of equal values, whose pairs are a property of the two
    records (a sorted neighbourhood's are not: a sample's neighbours lie further apart than
    the table's): the keys as they are, and a window's sort key without its last part (the
    one that orders the records sharing the rest; a window of one part, a date, a year, is
    left out: as a key it would propose what the window was there to avoid)."""
    keys: list[list[str]] = []
    for blocker in blocking:
        if blocker.get("type", "keys") == "keys" and "keys" in blocker:
            keys += [list(k) for k in blocker.get("keys", [])]
        elif blocker.get("type") == "sorted_neighbourhood":
            sort_key = list(blocker.get("sort_key", []))
            if len(sort_key) > 1:
                keys.append(sort_key[:-1])
    out: list[list[str]] = []
    for key in keys:
        if key not in out:
            out.append(key)
    return out


__all__ = ["EVIDENCE_ROWS", "MAX_JUDGED", "MIN_NEAR", "REPEAT_SHARE", "repeats_within_sources"]
