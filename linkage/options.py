"""The names an option takes, as `Literal` types, in one place.

Each alias is what a keyword argument, a YAML key and a CLI choice accept, described where it
is declared; the rules schema (`linkage._schema`) refuses any other value with the list of
these. `typing.get_args(KeepPolicyName)` lists the names. Typing only: nothing is imported.
"""

from __future__ import annotations

from typing import Literal

__all__ = [
    "AutoScoreScale",
    "KeepPolicyName",
    "OversizedAction",
    "PhoneticAlgorithm",
    "RedactMode",
    "ScoreScale",
    "ShingleMode",
    "SupervisedModel",
    "SupervisedTarget",
    "Survivorship",
    "UEstimation",
]

# --- scores -------------------------------------------------------------------------------------

ScoreScale = Literal["probability", "weight"]
"""What score bands are cut on: `probability`, the match probability in [0, 1]; `weight`, the
match weight (log2 odds, the scale of the threshold)."""

AutoScoreScale = Literal["auto", "probability", "weight"]
"""A `ScoreScale`, or `auto`: probabilities when the run's scorer gives them, else weights."""

# --- normalize and compare ----------------------------------------------------------------------

PhoneticAlgorithm = Literal["soundex", "metaphone", "nysiis", "match_rating"]
"""The phonetic code of a `Phonetic` comparison and of the `soundex(col)`-style key parts."""

ShingleMode = Literal["auto", "word", "char"]
"""`word`: word k-grams; `char`: character n-grams; `auto`: characters for texts with Hangul or
with fewer than `linkage.text.shingles.AUTO_MIN_WORDS` words, words otherwise."""

# --- score --------------------------------------------------------------------------------------

UEstimation = Literal["em", "random"]
"""How Fellegi-Sunter learns its u probabilities: `em` starts them from random pairs of records
and lets EM re-estimate them on the candidate pairs; `random` keeps them as measured on the
random pairs (as Splink does)."""

SupervisedModel = Literal["logistic_regression", "gradient_boosting", "random_forest"]
"""The scikit-learn model a `Supervised` scorer fits on labelled pairs."""

SupervisedTarget = Literal["f1", "precision"]
"""What a `Supervised` scorer's threshold is chosen for: the best F1, or the lowest threshold
whose cross-validated precision reaches `min_precision`."""

# --- guard, keep, golden ------------------------------------------------------------------------

OversizedAction = Literal["split", "review"]
"""What `max_cluster_size` does with a cluster above its size: `split` it into pieces that
fit, cutting its weakest links, or send its members to `review`."""

KeepPolicyName = Literal[
    "first", "oldest", "newest", "most_complete", "longest", "highest", "source_priority",
    "diverse", "farthest_from_centroid",
]
"""Which record of a cluster is kept first (every tie goes to the smallest id):

- `first`: the smallest id (row number when there is no id column). No `column`.
- `oldest`: the earliest date in `column` (`column: created_at`). Dates are read leniently
  (ISO with or without a time, "05/03/2020", "5 March 2020", "2020년 3월 5일"); a missing or
  unreadable date ranks last.
- `newest`: the latest date in `column` (`column: updated_at`); missing dates rank last.
- `most_complete`: the most non-missing, non-blank input values.
- `longest`: the longest text in `column`, or summed over a list of columns
  (`column: [name, address]`); missing text counts as length 0.
- `highest`: the largest number in `column` (`column: quality_score`); missing or non-numeric
  scores rank last.
- `source_priority`: the best source in `column` by `order`, best first
  (`column: system, order: [crm, billing]`); an unlisted or missing source ranks after listed ones.
- `diverse`: spread the first positions over distinct sources in `column` (`column: system`):
  each source's longest record (all values' text length) comes before any source's second
  record; within a round, longer records first. With `k: 3`, three sources survive when a
  cluster has them.
- `farthest_from_centroid`: with a `semantic:` stage (SemDeDup), the record farthest from its
  k-means centroid, the least typical one, as SemDeDup keeps; records the stage did not
  embed rank last.
"""

Survivorship = Literal["most_recent", "most_frequent", "source_priority", "longest", "first"]
"""How a golden record's field is chosen among a cluster's non-missing, non-blank values (ties
go to the smallest id):

- `most_recent`: from the record with the newest `recency_column` date (undated records last).
- `most_frequent`: the most common value; a tie goes to the value held by the smallest id,
  and the provenance is the smallest id holding the chosen value.
- `source_priority`: from the record whose `source_column` comes first in `source_order`
  (unlisted and missing sources after listed ones).
- `longest`: the longest text.
- `first`: from the smallest id that has a value.
"""

# --- report -------------------------------------------------------------------------------------

RedactMode = Literal["hash", "mask"]
"""How the report hides a redacted column: `hash` (equal values stay equal) or `mask` (only
the value's shape stays)."""
