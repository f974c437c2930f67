"""Seeded synthetic data: a small bilingual CRM table, a large benchmark person table, stress
tables for zero-configuration linkage, and two samples for the guards around deduplication.

One module per generator, and one for what they share:

- `customers()`, `customer_updates()` (`_customers.py`): a Korean/English customer table with
  labelled duplicates (typos, nicknames, format variants, blanks, moves) and lookalikes that are
  *not* duplicates (relatives, namesakes, twins), so that a dedupe tool is tested on both recall
  and precision; and the later loads that follow it, for `linkage update`.
- `persons()` (`_persons.py`): an English-style person table of any size built with numpy array
  operations only, so that a million rows take seconds; meant for benchmarks, not for realism in
  every detail.
- `traps()` (`_traps.py`): tables that each hold one trap for zero-configuration linkage (persons,
  and two ledgers of payments for `payments`).
- `transactions()` (`_transactions.py`): purchase rows with no transaction id, where rows
  identical on the business columns are either real repeat purchases or ingestion double loads.
- `labelled_texts()` (`_texts.py`): a labelled Korean/English text set with exact and near
  duplicates, conflicting labels and statute quotes that are meant to repeat.
- `perturb.py`: the typos and format variants, shared with recall injection
  (`linkage.measure.recall`); `_vocab.py`: the word lists; `_draw.py`: seeded draws;
  `_files.py`: the sample files and the command line.

All draw every random number from `numpy.random.default_rng(seed)`, so one seed gives one table.
All name lists were written for this package; none comes from an external package.

Regenerate the committed samples with ``python -m linkage.synth --out sample_data``.
"""

from __future__ import annotations

from linkage.synth._customers import CUSTOMER_COLUMNS, customer_updates, customers
from linkage.synth._files import (
    DATASETS,
    answer,
    csv_text,
    main,
    summary,
    write_customer_updates,
    write_customers,
    write_households,
    write_labelled_texts,
    write_link,
    write_transactions,
)
from linkage.synth._persons import PERSON_COLUMNS, persons
from linkage.synth._texts import (
    PROTECTED_QUOTES,
    TEXT_COLUMNS,
    TEXT_LABELS,
    labelled_texts,
    normalize_text,
)
from linkage.synth._transactions import TRANSACTION_COLUMNS, TRANSACTION_KEY, transactions
from linkage.synth._traps import TRAPS, traps

__all__ = [
    "CUSTOMER_COLUMNS",
    "DATASETS",
    "PERSON_COLUMNS",
    "PROTECTED_QUOTES",
    "TEXT_COLUMNS",
    "TEXT_LABELS",
    "TRANSACTION_COLUMNS",
    "TRANSACTION_KEY",
    "TRAPS",
    "answer",
    "csv_text",
    "customer_updates",
    "customers",
    "labelled_texts",
    "main",
    "normalize_text",
    "persons",
    "summary",
    "transactions",
    "traps",
    "write_customer_updates",
    "write_customers",
    "write_households",
    "write_labelled_texts",
    "write_link",
    "write_transactions",
]
