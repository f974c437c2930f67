"""Golden records: one surviving record per cluster, built field by field, with provenance.

Each field takes its value by a survivorship rule, from one record of the cluster, and says
which: the column `<field>__from` holds that record's id. Missing and blank values never
survive; a cluster with no value in a field gets a null and a null provenance.
"""

from __future__ import annotations

from typing import get_args

import numpy as np
import pandas as pd

from linkage._schema import Configurable, SchemaViolation, did_you_mean
from linkage.errors import InputError, ParameterError
from linkage.keep import date_key, id_rank, is_blank, source_key, text_length
from linkage.options import Survivorship  # the rules, each described there
from linkage.ordering import lexsort

RULES: tuple[str, ...] = get_args(Survivorship)
PROVENANCE_SUFFIX = "__from"


class GoldenRecord(Configurable):
    """Which value of each field survives into a cluster's golden record.

    YAML::

        golden:
          fields: {name: longest, phone: most_recent, email: most_frequent, tier: source_priority}
          recency_column: updated_at
          source_column: system
          source_order: [crm, billing]

    Python: `GoldenRecord({"name": "longest", "phone": "most_recent"},
    recency_column="updated_at")`.
    """

    def __init__(
        self,
        fields: dict[str, Survivorship],
        *,
        recency_column: str | None = None,
        source_column: str | None = None,
        source_order: list[str] = (),
    ):
        if not isinstance(fields, dict) or not fields:
            raise SchemaViolation("fields", "must map at least one column to a rule, e.g. "
                                  "`fields: {name: longest}`", fields, "golden")
        for field, rule in fields.items():
            if not isinstance(field, str) or not field:
                raise SchemaViolation("fields", "must have column names as keys", field,
                                      "golden")
            if field == "cluster_id" or field.endswith(PROVENANCE_SUFFIX):
                raise SchemaViolation(f"fields.{field}", "is a name the golden table uses "
                                      "itself: rename the column", field, "golden")
            if rule not in RULES:
                raise SchemaViolation(
                    f"fields.{field}",
                    "must be one of " + ", ".join(repr(r) for r in RULES)
                    + did_you_mean(str(rule), RULES),
                    rule,
                    "golden",
                )
        self.fields = dict(fields)
        self.recency_column = recency_column
        self.source_column = source_column
        self.source_order = [str(s) for s in source_order]
        rules = set(self.fields.values())
        if "most_recent" in rules and not recency_column:
            needing = [f for f, r in self.fields.items() if r == "most_recent"]
            raise SchemaViolation(
                "recency_column",
                f"is required by rule 'most_recent' (fields {', '.join(needing)}; it is "
                "missing): name the date column, e.g. `recency_column: updated_at`",
                None,
                "golden",
            )
        if "source_priority" in rules:
            needing = ", ".join(f for f, r in self.fields.items() if r == "source_priority")
            if not source_column:
                raise SchemaViolation(
                    "source_column",
                    f"is required by rule 'source_priority' (fields {needing}; it is missing): "
                    "name the source column, e.g. `source_column: system`",
                    None,
                    "golden",
                )
            if not self.source_order:
                raise SchemaViolation(
                    "source_order",
                    f"is required by rule 'source_priority' (fields {needing}; it is missing): "
                    "list the sources best first, e.g. `source_order: [crm, billing]`",
                    None,
                    "golden",
                )
        if len(set(self.source_order)) != len(self.source_order):
            raise SchemaViolation("source_order", "must list each source once",
                                  self.source_order, "golden")

    @property
    def columns(self) -> list[str]:
        """Every input column the spec reads."""
        extra = [c for c in (self.recency_column, self.source_column) if c]
        return list(dict.fromkeys([*self.fields, *extra]))


def _first_per_cluster(clusters: np.ndarray, rows: np.ndarray, keys: list[np.ndarray],
                       tiebreak: np.ndarray) -> pd.Series:
    """The row (among `rows`) that sorts first in each cluster by `keys` then `tiebreak`."""
    c = clusters[rows]
    order = lexsort((tiebreak[rows], *(k[rows] for k in reversed(keys)), c))
    first = np.ones(len(order), dtype=bool)
    first[1:] = c[order][1:] != c[order][:-1]
    return pd.Series(rows[order][first], index=c[order][first])


def _most_frequent(clusters: np.ndarray, rows: np.ndarray, values: pd.Series,
                   tiebreak: np.ndarray) -> pd.Series:
    codes, _ = pd.factorize(values.iloc[rows])
    frame = pd.DataFrame({"c": clusters[rows], "v": codes, "r": tiebreak[rows], "row": rows})
    frame = frame.sort_values(["c", "r"], kind="stable")
    counts = frame.groupby(["c", "v"], sort=False).agg(
        n=("r", "size"), r=("r", "first"), row=("row", "first")
    ).reset_index()
    best = counts.sort_values(["c", "n", "r"], ascending=[True, False, True], kind="stable")
    best = best.drop_duplicates("c")
    return pd.Series(best["row"].to_numpy(), index=best["c"].to_numpy())


def build_golden(
    spec: GoldenRecord,
    records: pd.DataFrame,
    ids: pd.Series,
    clusters: np.ndarray,
    id_name: str,
) -> pd.DataFrame:
    """One golden row per cluster (singletons too), sorted by `cluster_id`.

    Columns: `cluster_id`, each field of `spec.fields` in its order, then `<field>__from` for
    each, the id (from `ids`, named `id_name` in the input) of the record the value came from.
    """
    clusters = np.asarray(clusters)
    if not (len(records) == len(ids) == len(clusters)):
        raise ParameterError(
            f"`records` ({len(records)}), `ids` ({len(ids)}) and `clusters` ({len(clusters)}) "
            "must have one entry per record. Pass the three of one run, row-aligned."
        )
    columns = [str(c) for c in records.columns]
    for column in spec.columns:
        if column not in records.columns:
            msg = (
                f"column `{column}` (named in the golden record settings) is not in the input. "
                f"Its columns are: {', '.join(columns)}.{did_you_mean(column, columns)} Fix "
                "the `golden` settings, or add the column to the input."
            )
            raise InputError(msg)
    records = records.reset_index(drop=True)
    ids = ids.reset_index(drop=True)
    tiebreak = id_rank(ids)
    labels = np.unique(clusters)
    shared: dict[str, list[np.ndarray]] = {}
    if spec.recency_column:
        missing, key = date_key(records[spec.recency_column])
        shared["most_recent"] = [missing, -key]
    if spec.source_column:
        shared["source_priority"] = [source_key(records[spec.source_column], spec.source_order)]
    shared["first"] = []

    out: dict[str, pd.Series] = {"cluster_id": pd.Series(labels, dtype=np.int64)}
    provenance: dict[str, pd.Series] = {}
    for field, rule in spec.fields.items():
        values = records[field]
        rows = np.flatnonzero(~is_blank(values))
        if rule == "most_frequent":
            chosen = _most_frequent(clusters, rows, values, tiebreak)
        else:
            keys = [-text_length(values)] if rule == "longest" else shared[rule]
            chosen = _first_per_cluster(clusters, rows, keys, tiebreak)
        picked = chosen.reindex(labels).to_numpy(dtype=np.float64, na_value=np.nan)
        found = ~np.isnan(picked)
        take = np.where(found, picked, 0).astype(np.int64)
        out[field] = _take(values, take, found)
        provenance[f"{field}{PROVENANCE_SUFFIX}"] = _take(ids, take, found)
    golden = pd.DataFrame({**out, **provenance})
    golden.attrs["id_name"] = id_name
    return golden


def _take(values: pd.Series, rows: np.ndarray, found: np.ndarray) -> pd.Series:
    """values[rows], null where not `found`; the dtype is kept when every row is found."""
    taken = values.iloc[rows].reset_index(drop=True)
    return taken if found.all() else taken.where(pd.Series(found))
