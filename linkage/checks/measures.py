"""What the data-quality gates measure, in plain pandas: no Great Expectations here.

Each function takes a table and returns a JSON-ready dict (str, int, float, bool, None, lists
and dicts of those), so that a Great Expectations metric can hand it over unchanged and a result
can be stored or printed as it is. `linkage.checks.gx` wraps them as expectations.

- `duplicate_rate`: linkage's own dedupe with a set of rules; the share of records marked
  duplicate, as `linkage check` measures it.
- `normalized_duplicates`: groups of rows that are identical once the chosen columns are
  normalized (the exact stage's 128-bit row hash).
- `train_eval_leakage`: eval items that share an n-gram passage (or their whole normalized
  text) with a training record, as `linkage decontaminate` finds them.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from linkage.errors import InputError, LinkageWarning, RulesError

MAX_EXAMPLES = 5


def plain(value: Any) -> Any:
    """A numpy or pandas scalar as the Python value JSON can hold (a missing value as None)."""
    if value is None:
        return None
    if isinstance(value, np.generic):
        value = value.item()
    try:
        if pd.isna(value):
            return None
    except (TypeError, ValueError):  # a list or another non-scalar: leave it be
        pass
    return value


def plain_list(values: Any) -> list:
    return [plain(v) for v in values]


def require_columns(frame: pd.DataFrame, columns: Sequence[str], *, owner: str, table: str,
                    parameter: str) -> None:
    """Raise `InputError` naming the missing columns, the columns there are, and the parameter
    to change."""
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        available = ", ".join(repr(str(c)) for c in frame.columns) or "none"
        msg = (
            f"{owner}: {table} has no column {', '.join(repr(c) for c in missing)} "
            f"(columns: {available}). Name a column that exists in `{parameter}`."
        )
        raise InputError(msg)


# --- duplicate rate --------------------------------------------------------------------------


def load_rules(rules: Any, *, owner: str):
    """`Rules` from a path to a YAML file, a mapping or a `Rules`; errors name the file or key."""
    from linkage.settings import Rules

    if isinstance(rules, Rules):
        return rules
    if isinstance(rules, Mapping):
        return Rules.from_dict(dict(rules), source=f"{owner}(rules=...)")
    if isinstance(rules, str | Path):
        return Rules.from_yaml(rules)
    msg = (
        f"{owner}: `rules` must be the path of a rules YAML file (such as "
        f"'rules/customers.yaml'), a mapping of rules keys, or a `linkage.Rules`. "
        f"Got {type(rules).__name__} instead."
    )
    raise RulesError(msg)


def duplicate_rate(frame: pd.DataFrame, rules: Any, *, id_column: str | None = None,
                   max_examples: int = MAX_EXAMPLES) -> dict[str, Any]:
    """Run linkage's dedupe on `frame` and measure the duplicate rate: records marked
    `duplicate` / records, the number `linkage check` compares with `--max-duplicate-rate`.

    `examples` lists the first `max_examples` clusters that hold duplicates (by cluster id):
    the kept record's id and every member's id, enough to look them up with `linkage explain`,
    and `records`: each member's values in the columns the rules read, so a reader of the
    result (or of Data Docs) sees the rows themselves.
    """
    from linkage.api import dedupe

    owner = "ExpectDuplicateRateToBeBelow"
    if id_column is not None:
        require_columns(frame, [id_column], owner=owner, table="the batch", parameter="id_column")
    loaded = load_rules(rules, owner=owner)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", LinkageWarning)
        result = dedupe(frame, loaded, id_column=id_column, progress=False)
    notes = sorted({str(w.message) for w in caught if issubclass(w.category, LinkageWarning)})
    for other in caught:  # not ours to keep: let them reach the caller's own filters
        if not issubclass(other.category, LinkageWarning):
            warnings.warn_explicit(other.message, other.category, other.filename, other.lineno)
    summary = result.summary()
    clusters = result.clusters
    id_name = clusters.columns[0]
    is_duplicate = clusters["action"].eq("duplicate")
    records = len(clusters)
    duplicates = int(is_duplicate.sum())
    with_duplicates = np.sort(pd.unique(clusters.loc[is_duplicate, "cluster_id"].to_numpy()))
    shown = [c for c in loaded.columns() if c in frame.columns and c != id_name]
    if id_name in frame.columns:  # the rows by id (ids are unique: dedupe checked them)
        rows = frame.set_index(id_name)[shown]
    else:  # no id column: the run named the rows by position
        rows = frame[shown].reset_index(drop=True)
    examples = []
    for cluster_id in with_duplicates[:max_examples]:
        members = clusters[clusters["cluster_id"] == cluster_id]
        ids = plain_list(members[id_name])
        values = rows.loc[members[id_name].to_numpy()]
        examples.append({
            "cluster_id": plain(cluster_id),
            "representative_id": plain(members["representative_id"].iloc[0]),
            "ids": ids,
            "actions": plain_list(members["action"]),
            "records": [{c: plain(v) for c, v in zip(shown, row, strict=True)}
                        for row in values.itertuples(index=False, name=None)],
        })
    return {
        "records": records,
        "duplicates": duplicates,
        "duplicate_rate": summary["removal_rate"],
        "clusters_with_duplicates": len(with_duplicates),
        "id_column": str(id_name),
        "examples": examples,
        "rules_hash": summary["rules"]["config_hash"],
        "warnings": notes,
    }


# --- exact duplicates after normalization ----------------------------------------------------


def normalize_steps(normalize: Sequence[Mapping[str, Any]] | None, columns: Sequence[str], *,
                    owner: str) -> list:
    """The `normalize` list, in the rules' own schema ({column, type, options}), as checked
    `Normalize` steps; each must act on one of `columns`, in place."""
    from linkage.settings import Normalize

    if normalize is None:
        return []
    if isinstance(normalize, Mapping | str):
        msg = (f"{owner}: `normalize` must be a list of {{column, type}} mappings, as in the "
               f"rules' normalize section. Got {normalize!r} instead; wrap it in a list.")
        raise RulesError(msg)
    steps = []
    for k, spec in enumerate(normalize):
        step = Normalize.from_dict(spec, source=f"{owner}: normalize[{k}]")
        if step.column not in columns:
            msg = (f"{owner}: normalize[{k}].column {step.column!r} is not one of `columns` "
                   f"{list(columns)!r}. Add it to `columns`, or remove the step.")
            raise RulesError(msg)
        if step.output:
            msg = (f"{owner}: normalize[{k}] has `output: {step.output}`; here a normalizer "
                   "replaces its column's values. Remove `output`.")
            raise RulesError(msg)
        steps.append(step)
    return steps


def normalized_values(frame: pd.DataFrame, columns: Sequence[str], steps: Sequence) -> pd.DataFrame:
    """The chosen columns as they are compared: each through its own normalize steps (in
    order), or through the `text` normalizer (NFKC, case, punctuation, white space) without."""
    from linkage.io import as_text
    from linkage.normalize import normalize_text

    out = {}
    for column in columns:
        values = pd.Series(as_text(frame[column]), dtype=object, name=column)
        own = [step for step in steps if step.column == column and len(step.inputs) == 1]
        for step in own:
            values = step.apply(values)
        if not own:
            values = normalize_text(values)
        out[column] = values.to_numpy(dtype=object)
    return pd.DataFrame(out)


def normalized_duplicates(frame: pd.DataFrame, columns: Sequence[str],
                          normalize: Sequence[Mapping[str, Any]] | None = None, *,
                          id_column: str | None = None,
                          max_examples: int = MAX_EXAMPLES) -> dict[str, Any]:
    """Groups of rows whose `columns` are identical after normalization.

    The rows are hashed as the exact stage hashes them (`linkage.text.exact.row_hashes`,
    128-bit blake2b); a row with nothing in any of the columns is no one's copy. Each example
    group gives the rows' positions in the table (0-based), their ids when `id_column` is set,
    and the normalized values they share.
    """
    from linkage.pipeline import stage_star

    owner = "ExpectNoExactDuplicatesAfterNormalization"
    columns = list(columns)
    require_columns(frame, columns, owner=owner, table="the batch", parameter="columns")
    if id_column is not None:
        require_columns(frame, [id_column], owner=owner, table="the batch",
                        parameter="id_column")
    steps = normalize_steps(normalize, columns, owner=owner)
    values = normalized_values(frame, columns, steps)
    first, copies = stage_star(values, normalize=False)
    edges = pd.DataFrame({"first": first, "row": copies}).sort_values(["first", "row"])
    groups = edges.groupby("first", sort=True)["row"].apply(list)
    ids = frame[id_column].to_numpy() if id_column is not None else None
    examples = []
    for head, rows in groups.iloc[:max_examples].items():
        members = [int(head), *map(int, rows)]
        example: dict[str, Any] = {"rows": members}
        if ids is not None:
            example["ids"] = plain_list(ids[members])
        example["normalized"] = {c: plain(values[c].iat[int(head)]) for c in columns}
        examples.append(example)
    return {
        "records": len(frame),
        "duplicate_rows": len(copies),
        "groups": len(groups),
        "rows_in_groups": len(copies) + len(groups),
        "columns": columns,
        "examples": examples,
    }


# --- train/eval leakage ----------------------------------------------------------------------


def read_eval(eval_data: Any, *, owner: str) -> pd.DataFrame:
    """The eval set: a DataFrame, a mapping of column -> values, or a CSV/Parquet path."""
    from linkage.io import read

    if isinstance(eval_data, pd.DataFrame):
        return eval_data
    if isinstance(eval_data, Mapping):
        return pd.DataFrame(dict(eval_data))
    if isinstance(eval_data, str | Path):
        return read(eval_data)
    msg = (f"{owner}: `eval_data` must be a DataFrame or the path of a CSV or Parquet file. "
           f"Got {type(eval_data).__name__} instead.")
    raise InputError(msg)


def train_eval_leakage(train: pd.DataFrame, eval_data: Any, *, text_column: str = "text",
                       ngram: int = 13, char_ngram: int | None = None,
                       train_id: str | None = None, eval_id: str | None = None,
                       max_examples: int = MAX_EXAMPLES) -> dict[str, Any]:
    """Which eval items leaked into `train`: an eval item has leaked when it shares an
    `ngram`-word passage (`char_ngram` characters for Hangul/CJK), or its whole normalized
    text, with a training record. `linkage.text.contamination.decontaminate` does the finding,
    once from each side: eval items that leaked, and train records that hold them.

    Each example names a leaked eval item, the first train record it is found in, whether the
    texts are identical after normalization, and one shared passage.
    """
    from linkage.text.contamination import decontaminate

    owner = "ExpectNoTrainEvalLeakage"
    evaluation = read_eval(eval_data, owner=owner)
    require_columns(train, [text_column], owner=owner, table="the batch (the training set)",
                    parameter="text_column")
    require_columns(evaluation, [text_column], owner=owner, table="eval_data",
                    parameter="text_column")
    if train_id is not None:
        require_columns(train, [train_id], owner=owner, table="the batch (the training set)",
                        parameter="train_id")
    if eval_id is not None:
        require_columns(evaluation, [eval_id], owner=owner, table="eval_data",
                        parameter="eval_id")
    options = {"text_column": text_column, "ngram": ngram, "char_ngram": char_ngram}
    by_train = decontaminate(train, evaluation, train_id=train_id, eval_id=eval_id, **options)
    by_eval = decontaminate(evaluation, train, train_id=eval_id, eval_id=train_id, **options)
    leaked = by_eval[by_eval["contaminated"].to_numpy(dtype=bool)]
    own_id = by_eval.columns[0]
    examples = [
        {
            "eval_id": plain(row[own_id]),
            "train_id": plain(row["eval_id"]),  # the other side's id, from the swapped run
            "exact_match": bool(row["exact_match"]),
            "example_ngram": plain(row["example_ngram"]),
        }
        for _, row in leaked.head(max_examples).iterrows()
    ]
    eval_records = len(by_eval)
    return {
        "eval_records": eval_records,
        "leaked_eval_items": len(leaked),
        "leak_rate": round(len(leaked) / eval_records, 6) if eval_records else 0.0,
        "exact_matches": int(leaked["exact_match"].sum()),
        "train_records": len(by_train),
        "contaminated_train_records": int(by_train["contaminated"].sum()),
        "ngram": by_train.attrs["contamination"]["ngram"],
        "char_ngram": by_train.attrs["contamination"]["char_ngram"],
        "examples": examples,
    }
