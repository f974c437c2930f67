"""Splink model for the synthetic person tables, as the Splink 4 tutorial configures person data.

Imported ONLY by bench/splink_run.py inside bench/.venv-splink (it imports splink); the project
venv never imports this file. Blocking mirrors bench/persons.yaml (same five keys), and the
comparisons cover the same columns as its `comparisons:` section.
"""

from __future__ import annotations

import splink.comparison_library as cl
from splink import SettingsCreator, block_on

ID_COLUMN = "rec_id"
SEED = 42  # for the random sampling of u probabilities
PREDICT_THRESHOLD = 0.9  # linker.inference.predict(threshold_match_probability=...)
CLUSTER_THRESHOLD = 0.95  # cluster_pairwise_predictions_at_threshold(..., threshold)


def settings() -> SettingsCreator:
    return SettingsCreator(
        link_type="dedupe_only",
        unique_id_column_name=ID_COLUMN,
        comparisons=[
            cl.NameComparison("first_name"),
            cl.NameComparison("surname"),
            cl.DateOfBirthComparison("dob", input_is_string=True),
            cl.ExactMatch("city").configure(term_frequency_adjustments=True),
            cl.ExactMatch("postcode"),
            cl.EmailComparison("email"),
            cl.ExactMatch("phone"),
        ],
        # bench/persons.yaml: person = [surname, dob] | [first_name, dob] | [first_name, surname];
        # contact = [email] | [phone]. Splink drops nulls in block keys, like linkage.
        blocking_rules_to_generate_predictions=[
            block_on("first_name", "surname"),
            block_on("surname", "dob"),
            block_on("first_name", "dob"),
            block_on("email"),
            block_on("phone"),
        ],
        retain_intermediate_calculation_columns=False,
    )


def train(linker) -> None:
    """The tutorial's training sequence (Splink 4 docs, "Estimating model parameters").

    The tutorial's deterministic rules join on first_name or surname alone ("l.first_name =
    r.first_name and levenshtein(r.dob, l.dob) <= 1"), which at 1M rows makes 4.6e9 comparisons
    and Splink refuses (max_rows_limit 1e9). Same rules here, each joined on one persons.yaml
    blocking key and fuzzy on the third column.
    """
    fit(linker,
        "l.first_name = r.first_name and l.surname = r.surname and levenshtein(r.dob, l.dob) <= 1",
        [block_on("first_name", "surname"), block_on("dob")])


def fit(linker, name_rule: str, em_blocks: list) -> None:
    """The tutorial's sequence: the chance that two random records match from deterministic
    rules (`name_rule` first, then the two name-and-dob rules and email), u by random
    sampling, then one EM pass per block of `em_blocks`."""
    deterministic_rules = [
        name_rule,
        "l.surname = r.surname and l.dob = r.dob and levenshtein(r.first_name, l.first_name) <= 2",
        "l.first_name = r.first_name and l.dob = r.dob and levenshtein(r.surname, l.surname) <= 2",
        block_on("email"),
    ]
    linker.training.estimate_probability_two_random_records_match(deterministic_rules, recall=0.7)
    linker.training.estimate_u_using_random_sampling(max_pairs=1e6, seed=SEED)
    for block in em_blocks:
        linker.training.estimate_parameters_using_expectation_maximisation(block)
