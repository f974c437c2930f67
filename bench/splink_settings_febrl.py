"""Splink model for FEBRL dataset3 (bench/compare.py's FEBRL row), in the tutorial's style.

Imported ONLY by bench/splink_run.py inside bench/.venv-splink. Blocking follows
rules/febrl.yaml as far as Splink's SQL allows (DuckDB has no soundex, so the name keys use
the names themselves): [surname, first letter of given_name], [given_name, birth year],
soc_sec_id, date_of_birth, [postcode, street_number]. Comparisons cover the same columns.
"""

from __future__ import annotations

import splink.comparison_library as cl
from splink import SettingsCreator, block_on

ID_COLUMN = "rec_id"
SEED = 42
PREDICT_THRESHOLD = 0.9
CLUSTER_THRESHOLD = 0.95


def settings() -> SettingsCreator:
    return SettingsCreator(
        link_type="dedupe_only",
        unique_id_column_name=ID_COLUMN,
        comparisons=[
            cl.NameComparison("given_name"),
            cl.NameComparison("surname"),
            cl.DateOfBirthComparison("date_of_birth", input_is_string=True,
                                     datetime_format="%Y%m%d"),
            cl.LevenshteinAtThresholds("soc_sec_id", [1, 2]),
            cl.ExactMatch("street_number"),
            cl.JaroWinklerAtThresholds("address_1", [0.9, 0.75]),
            cl.JaroWinklerAtThresholds("suburb", [0.9]),
            cl.LevenshteinAtThresholds("postcode", [1]),
            cl.ExactMatch("state"),
        ],
        blocking_rules_to_generate_predictions=[
            block_on("surname", "substr(given_name, 1, 1)"),
            block_on("given_name", "substr(date_of_birth, 1, 4)"),
            block_on("soc_sec_id"),
            block_on("date_of_birth"),
            block_on("postcode", "street_number"),
        ],
        retain_intermediate_calculation_columns=False,
    )


def train(linker) -> None:
    deterministic_rules = [
        "l.soc_sec_id = r.soc_sec_id",
        "l.given_name = r.given_name and l.surname = r.surname "
        "and l.date_of_birth = r.date_of_birth",
    ]
    linker.training.estimate_probability_two_random_records_match(deterministic_rules, recall=0.7)
    linker.training.estimate_u_using_random_sampling(max_pairs=1e6, seed=SEED)
    linker.training.estimate_parameters_using_expectation_maximisation(block_on("date_of_birth"))
    linker.training.estimate_parameters_using_expectation_maximisation(block_on("surname"))
