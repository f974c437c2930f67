"""bench/splink_settings.py for tables of any size (bench/compare.py uses it above 1M records).

Imported ONLY by bench/splink_run.py inside bench/.venv-splink. The same model, with the
blocking of bench/persons_scale.yaml: [first_name, surname] also requires the same birth year
(alone it grows with the square of the table: ~280M pairs at 10M records), and the EM pass
that was blocked on first_name + surname is blocked on it with the year too. The second EM
pass is blocked on postcode instead of dob: 26,000 birth dates make dob blocks quadratic
(about 2 billion pairs at 10M records; the first 10M run filled 70 GB of disk with DuckDB's
spill there), while a postcode block holds a few records and still leaves names, dob, e-mail
and phone free to estimate.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from splink import block_on

_spec = importlib.util.spec_from_file_location(
    "splink_settings_base", Path(__file__).with_name("splink_settings.py"))
_base = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_base)

ID_COLUMN = _base.ID_COLUMN
SEED = _base.SEED
PREDICT_THRESHOLD = _base.PREDICT_THRESHOLD
CLUSTER_THRESHOLD = _base.CLUSTER_THRESHOLD
_YEAR = "substr(dob, 1, 4)"


def settings():
    creator = _base.settings()
    creator.blocking_rules_to_generate_predictions = [
        block_on("first_name", "surname", _YEAR),
        block_on("surname", "dob"),
        block_on("first_name", "dob"),
        block_on("email"),
        block_on("phone"),
    ]
    return creator


def train(linker) -> None:
    """The tutorial's sequence, as bench/splink_settings.py, with scalable EM blocking."""
    _base.fit(linker,
              "l.first_name = r.first_name and l.surname = r.surname and l.dob = r.dob",
              [block_on("first_name", "surname", _YEAR), block_on("postcode")])
