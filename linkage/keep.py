"""Keeper policies: which record(s) of each cluster stay. Ties are always broken by id.

`keeper_rank` gives every record its position within its cluster under a `KeepPolicy`
(0 = kept first); a policy with `k` keeps the records ranked below `k`.
`choose_representatives` is the one-keeper view the pipeline uses: the rank-0 record.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, get_args

import numpy as np
import pandas as pd

from linkage._schema import Configurable, SchemaViolation, did_you_mean
from linkage.errors import InputError, ParameterError
from linkage.options import KeepPolicyName  # the policies, each described there
from linkage.ordering import lexsort

CENTROID_DISTANCE = "__centroid_distance"  # filled by the pipeline's semantic stage

POLICIES: tuple[str, ...] = get_args(KeepPolicyName)

# What `column` means for each policy that needs one: (the meaning, an example value).
_COLUMN_NEEDS = {
    "oldest": ("the date column", "created_at"),
    "newest": ("the date column", "updated_at"),
    "longest": ("the text column (or a list of them)", "address"),
    "highest": ("the score column", "quality_score"),
    "source_priority": ("the source column", "system"),
    "diverse": ("the source column", "system"),
}


class KeepPolicy(Configurable):
    """How the records of a cluster are ranked, and how many are kept.

    YAML, under `keep:` (a bare policy name, e.g. `keep: first`, is the same as `{policy: first}`)::

        keep: {policy: first}                                   # smallest id
        keep: {policy: oldest, column: created_at}              # earliest date
        keep: {policy: newest, column: updated_at}              # latest date; missing last
        keep: {policy: most_complete}                           # most filled-in values
        keep: {policy: longest, column: [name, address]}        # most text in these columns
        keep: {policy: highest, column: quality_score}          # largest score; missing last
        keep: {policy: source_priority, column: system, order: [crm, billing, web]}
        keep: {policy: diverse, column: system, k: 3}           # up to 3 records, 3 sources

    Python: `KeepPolicy("newest", column="updated_at")`. `k` is how many records per cluster
    are kept: those whose `keeper_rank` is below `k` (`k: 1` keeps one representative).
    """

    def __init__(
        self,
        policy: KeepPolicyName,
        *,
        column: str | list[str] | None = None,
        order: list[str] = (),
        k: int = 1,
    ):
        if policy not in POLICIES:
            raise SchemaViolation(
                "policy",
                "must be one of " + ", ".join(repr(p) for p in POLICIES)
                + did_you_mean(str(policy), POLICIES),
                policy,
                "keep",
            )
        self.policy = policy
        self.column = list(column) if isinstance(column, list | tuple) else column
        self.order = [str(o) for o in order] if not isinstance(order, str) else order
        self.k = k
        if policy in _COLUMN_NEEDS:
            meaning, example = _COLUMN_NEEDS[policy]
            if self.column is None or self.column == [] or self.column == "":
                raise SchemaViolation(
                    "column",
                    f"is required for policy {policy!r} (it is missing): name {meaning}, e.g. "
                    f"`column: {example}`",
                    self.column,
                    "keep",
                )
            if isinstance(self.column, list) and policy != "longest":
                raise SchemaViolation(
                    "column", f"must be one column name for policy {policy!r}: {meaning}, e.g. "
                    f"`column: {example}`", self.column, "keep")
            names = self.column if isinstance(self.column, list) else [self.column]
            if not all(isinstance(c, str) and c for c in names):
                raise SchemaViolation("column", "must be a column name (or a list of them)",
                                      self.column, "keep")
        elif self.column is not None:
            raise SchemaViolation(
                "column", f"is not used by policy {policy!r}: remove it, or choose a policy "
                "that reads a column (oldest, newest, longest, highest, source_priority, "
                "diverse)", self.column, "keep")
        if isinstance(self.order, str):
            raise SchemaViolation("order", "must be a list of sources, best first, e.g. "
                                  "`order: [crm, billing]`", self.order, "keep")
        if policy == "source_priority" and not self.order:
            raise SchemaViolation(
                "order",
                "is required for policy 'source_priority' (it is missing): list the sources "
                "best first, e.g. `order: [crm, billing]`",
                None,
                "keep",
            )
        if policy != "source_priority" and self.order:
            raise SchemaViolation("order", f"is only used by policy 'source_priority', not "
                                  f"{policy!r}: remove it", self.order, "keep")
        if len(set(self.order)) != len(self.order):
            raise SchemaViolation("order", "must list each source once", self.order, "keep")
        if not (isinstance(k, int) and not isinstance(k, bool) and k >= 1):
            raise SchemaViolation("k", "must be a whole number of at least 1 (records kept "
                                  "per cluster)", k, "keep")

    @classmethod
    def coerce(cls, value: str | KeepPolicy | Mapping[str, Any]) -> KeepPolicy:
        """A policy from its name (`"first"`), a mapping of its settings, or a `KeepPolicy`."""
        if isinstance(value, KeepPolicy):
            return value
        if isinstance(value, str):
            return cls(value)  # type: ignore[arg-type]
        if isinstance(value, Mapping):
            return cls.from_dict(value, source="keep")  # type: ignore[return-value]
        raise SchemaViolation(
            "policy", "must be a policy name (e.g. 'first') or a KeepPolicy", value, "keep"
        )

    @property
    def columns(self) -> list[str]:
        """The input columns this policy reads (none for `first`; all for `most_complete`)."""
        if self.column is None:
            return []
        return list(self.column) if isinstance(self.column, list) else [self.column]

    def __eq__(self, other: object) -> bool:
        # `rules.keep == "newest"` reads naturally; a bare name means the policy's defaults.
        if isinstance(other, str):
            return self.to_dict() == {"policy": other}
        return super().__eq__(other)

    def __hash__(self) -> int:
        return hash(repr(self))

    def kept(self, ranks: np.ndarray) -> np.ndarray:
        """Whether each record is kept, given its `keeper_rank`: rank below `k`."""
        return np.asarray(ranks) < self.k


def id_rank(ids: pd.Series) -> np.ndarray:
    """The position of each id in sorted order (numbers numerically, otherwise as text)."""
    values = ids.reset_index(drop=True)
    order = _arrow_order(values)
    if order is None:
        try:
            order = np.argsort(values.to_numpy(), kind="stable")
        except TypeError:  # mixed types: compare as text
            order = np.argsort(values.astype(str).to_numpy(), kind="stable")
    rank = np.empty(len(values), dtype=np.int64)
    rank[order] = np.arange(len(values))
    return rank


def _arrow_order(values: pd.Series) -> np.ndarray | None:
    """A stable sort of Arrow-backed strings without one Python object per id (UTF-8 byte
    order is code point order, as Python compares str); None for other columns."""
    if values.dtype == object or not pd.api.types.is_string_dtype(values.dtype):
        return None
    import pyarrow as pa
    import pyarrow.compute as pc

    try:
        array = pa.array(values)
    except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError):
        return None
    if array.null_count or not (pa.types.is_string(array.type)
                                or pa.types.is_large_string(array.type)):
        return None
    return pc.sort_indices(array).to_numpy()


def is_blank(values: pd.Series) -> np.ndarray:
    """Missing, or text that is empty after stripping."""
    missing = values.isna().to_numpy()
    if values.dtype == object or pd.api.types.is_string_dtype(values):
        missing = missing | values.astype(str).str.strip().eq("").to_numpy()
    return missing


def completeness(frame: pd.DataFrame) -> np.ndarray:
    """Non-missing, non-blank values per record."""
    present = frame.notna()
    for column in frame.columns:
        if frame[column].dtype == object or pd.api.types.is_string_dtype(frame[column]):
            present[column] &= frame[column].astype(str).str.strip().ne("")
    return present.sum(axis=1).to_numpy()


def text_length(values: pd.Series) -> np.ndarray:
    """Characters of each value's stripped text; missing is 0."""
    lengths = values.astype(str).str.strip().str.len().to_numpy(dtype=np.int64, na_value=0)
    return np.where(values.isna().to_numpy(), 0, lengths)


def date_key(values: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """(missing, key): a sortable int64 per value, and where the value is missing/unreadable.

    Datetimes and numbers (years, epochs) sort as they are; text is read as an ISO timestamp
    (the time counts; zones are converted to UTC) and otherwise by `normalize.parse_dates`
    (day first for "05/03/2020"; a time part is then ignored).
    """
    values = values.reset_index(drop=True)
    if pd.api.types.is_datetime64_any_dtype(values):
        stamps = pd.to_datetime(values, utc=True)
    elif pd.api.types.is_numeric_dtype(values):
        numbers = pd.to_numeric(values, errors="coerce").to_numpy(dtype="float64",
                                                                  na_value=np.nan)
        missing = np.isnan(numbers)
        # Rank order of the numbers, as int64, so the key never loses precision.
        return missing, _dense(np.where(missing, 0.0, numbers))
    else:
        text = values.astype("string").str.strip()
        stamps = pd.to_datetime(text, errors="coerce", format="ISO8601", utc=True)
        retry = stamps.isna().to_numpy() & ~is_blank(values)
        if retry.any():
            from linkage.normalize import parse_dates

            iso = parse_dates(text[retry].astype(object))["iso"]
            parsed = pd.to_datetime(iso, errors="coerce", format="ISO8601", utc=True)
            stamps = stamps.where(~retry, parsed.reindex(stamps.index))
    missing = stamps.isna().to_numpy()
    # Microseconds reach far enough back (and ahead) for any record date.
    key = stamps.dt.tz_convert("UTC").dt.tz_localize(None).astype("datetime64[us]")
    return missing, np.where(missing, 0, key.to_numpy().view(np.int64))


def _dense(values: np.ndarray) -> np.ndarray:
    """Each value's position among the sorted distinct values (int64, order-preserving)."""
    _, inverse = np.unique(values, return_inverse=True)
    return inverse.astype(np.int64).reshape(-1)


def source_key(values: pd.Series, order: Sequence[str]) -> np.ndarray:
    """Position of each source in `order`; unlisted sources after, missing ones last."""
    values = values.reset_index(drop=True)
    text = values.astype("string")
    key = pd.Index(list(order), dtype="string").get_indexer(text)
    key = np.where(key < 0, len(order), key)
    return np.where(text.isna().to_numpy(), len(order) + 1, key).astype(np.int64)


def require_columns(records: pd.DataFrame, policy: KeepPolicy) -> None:
    columns = [str(c) for c in records.columns]
    for column in policy.columns:
        if column not in records.columns:
            msg = (
                f"column `{column}` (named in the keep setting: `keep.column` of policy "
                f"{policy.policy!r}) is not in the input. Its columns are: "
                f"{', '.join(columns)}.{did_you_mean(column, columns)} Fix `keep.column`, or "
                "add the column to the input."
            )
            raise InputError(msg)


def policy_keys(policy: KeepPolicy, records: pd.DataFrame, clusters: np.ndarray,
                tiebreak: np.ndarray) -> list[np.ndarray]:
    """Sort keys, most significant first, ascending (before the id tie-break)."""
    name = policy.policy
    if name == "first":
        return []
    if name == "most_complete":
        return [-completeness(records)]
    if name in ("oldest", "newest"):
        missing, key = date_key(records[policy.column])
        return [missing, key if name == "oldest" else -key]
    if name == "longest":
        total = np.zeros(len(records), dtype=np.int64)
        for column in policy.columns:
            total += text_length(records[column])
        return [-total]
    if name == "highest":
        scores = pd.to_numeric(records[policy.column], errors="coerce")
        scores = scores.astype("float64").to_numpy(na_value=np.nan)
        missing = np.isnan(scores)
        return [missing, -np.where(missing, 0.0, scores)]
    if name == "source_priority":
        return [source_key(records[policy.column], policy.order)]
    if name == "farthest_from_centroid":
        if CENTROID_DISTANCE not in records:
            raise InputError(
                "keep policy 'farthest_from_centroid' needs the distances of a `semantic:` "
                "stage (SemDeDup). Add one to the rules, or choose another keep policy."
            )
        distance = records[CENTROID_DISTANCE].to_numpy(dtype=float)
        missing = np.isnan(distance)
        return [missing, -np.where(missing, 0.0, distance)]
    if name == "diverse":
        sources = records[policy.column].reset_index(drop=True)
        codes, _ = pd.factorize(sources, use_na_sentinel=False)
        no_source = sources.isna().to_numpy()
        length = np.zeros(len(records), dtype=np.int64)
        for column in records.columns:
            if column != policy.column:
                length += text_length(records[column])
        # A record's round: its position within its (cluster, source) group, longest first.
        round_ = _positions(lexsort((tiebreak, -length, codes, clusters)),
                            clusters, codes)
        return [round_, no_source, -length]
    raise ValueError(f"unknown keeper policy {name!r}")  # KeepPolicy allows no other value


def _positions(order: np.ndarray, *groups: np.ndarray) -> np.ndarray:
    """Given `order` sorting rows by `groups` (then anything), each row's position in its group."""
    n = len(order)
    new = np.zeros(n, dtype=bool)
    if n:
        new[0] = True
        for g in groups:
            s = g[order]
            new[1:] |= s[1:] != s[:-1]
    idx = np.arange(n)
    start = np.maximum.accumulate(np.where(new, idx, 0))
    position = np.empty(n, dtype=np.int64)
    position[order] = idx - start
    return position


def keeper_rank(
    policy: KeepPolicy | str,
    records: pd.DataFrame,
    clusters: np.ndarray,
    id_rank: np.ndarray,
) -> np.ndarray:
    """Each record's position within its cluster under `policy` (0 = kept first).

    `records` are row-aligned with `clusters` (any integer labels) and `id_rank` (smaller
    wins ties; `id_rank(ids)` or the pipeline's rank). Positions in each cluster are
    0..size-1; records ranked below `policy.k` are kept.
    """
    policy = KeepPolicy.coerce(policy)
    clusters = np.asarray(clusters)
    tiebreak = np.asarray(id_rank)
    if not (len(records) == len(clusters) == len(tiebreak)):
        raise ParameterError(
            f"`records` ({len(records)}), `clusters` ({len(clusters)}) and `id_rank` "
            f"({len(tiebreak)}) must have one entry per record. Pass the three of one run, "
            "row-aligned."
        )
    require_columns(records, policy)
    records = records.reset_index(drop=True)
    keys = policy_keys(policy, records, clusters, tiebreak)
    order = lexsort((tiebreak, *reversed(keys), clusters))
    return _positions(order, clusters)


def choose_representatives(
    clusters: np.ndarray, rank: np.ndarray, policy: KeepPolicy | str, records: pd.DataFrame
) -> np.ndarray:
    """For each record, the row number of its cluster's kept (rank-0) record."""
    clusters = np.asarray(clusters)
    positions = keeper_rank(policy, records, clusters, rank)
    labels, inverse = np.unique(clusters, return_inverse=True)
    inverse = inverse.reshape(-1)
    keeper_of_cluster = np.empty(len(labels), dtype=np.int64)
    rows = np.flatnonzero(positions == 0)
    keeper_of_cluster[inverse[rows]] = rows
    return keeper_of_cluster[inverse]
