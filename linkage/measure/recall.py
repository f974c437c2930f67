"""Recall by injection: copy clean records with one controlled perturbation each, run the rules on
the table with the copies, and count how many copies end in their source's cluster.

Without truth, recall cannot be measured on the records themselves; it can on copies whose true
match is known because we made them. A source is a "clean" record: one the rules leave alone in
a cluster of one, so its copy's only true match is the source. Each copy carries one kind of
perturbation, applied to one field that the rules compare:

- `exact`: an unchanged copy, the control (a miss here is a blocking or scoring bug);
- `spaces`: a space removed, doubled, or put inside a word (`김민수` → `김 민수`);
- `punctuation`: a mark removed or added (`Apt. 21D` → `Apt 21D`, `john.kim@` → `johnkim@`);
- `word`: two words swapped, a word dropped or abbreviated (`Street` → `St`, `서울특별시` → `서울`,
  `John Smith` → `J. Smith`);
- `typo`: one character edit, jamo-level for Hangul (`김민수` → `김민슈`), one digit in a date or
  phone;
- `format`: the same value written another way: dates (`1982-09-12` → `1982년 9월 12일`), phones
  (`010-1234-5678` ↔ `01012345678` ↔ `+82 10 1234 5678`), company legal forms (`(주)` ↔
  `주식회사`, `Inc.` ↔ `Incorporated`), letter case.

The perturbations themselves live in `linkage.synth.perturb`, shared with the generators.
Everything is drawn from `numpy.random.default_rng` seeded per record, so the same seed gives
the same copies byte for byte.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from linkage._schema import did_you_mean
from linkage.errors import InputError
from linkage.synth.perturb import KIND_ROLES, KINDS, perturb

if TYPE_CHECKING:
    from linkage.result import Result
    from linkage.settings import Rules

# The role a field plays, read from its normalizer's type: what each kind may do to it.
_ROLE_OF_NORMALIZER = {
    "name": "name", "date": "date", "phone": "phone", "email": "email", "company": "company",
    "text": "text", "postcode": "postcode", "url": "other",
}


# ------------------------------------------------------------------------------------------
# Choosing sources and making copies
# ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Field:
    """An input column the rules compare, with the role its normalizer gives it."""

    column: str
    role: str
    date_order: str = "DMY"


def compared_fields(rules: Rules) -> list[Field]:
    """The input columns behind the rules' comparisons, in the rules' order, each with its role
    (name, date, phone, email, company, postcode, text, other) read from its normalizer."""
    by_target = {step.target: step for step in rules.normalize}
    fields: dict[str, Field] = {}
    for comparison in rules.comparisons:
        step = by_target.get(comparison.column)
        column = step.column if step is not None else comparison.column
        if step is not None:
            role = _ROLE_OF_NORMALIZER.get(step.type, "text")
            order = step.options.get("order", "DMY") if step.type == "date" else "DMY"
        else:
            role = "date" if comparison.kind == "date" else "text"
            order = "DMY"
        fields.setdefault(column, Field(column, role, order))
    return list(fields.values())


def parse_kinds(kinds: str | list[str] | tuple[str, ...] | None) -> list[str]:
    """Kinds from `--kinds a,b,c` (or a list), checked; all kinds when None."""
    if kinds is None:
        return list(KINDS)
    if isinstance(kinds, str):
        kinds = [k.strip() for k in kinds.split(",") if k.strip()]
    chosen = list(dict.fromkeys(kinds))
    if not chosen:
        raise InputError(f"--kinds names no kind. Choose from {', '.join(KINDS)}.")
    for kind in chosen:
        if kind not in KINDS:
            raise InputError(f"--kinds: {kind!r} is not a kind of perturbation. The kinds are "
                             f"{', '.join(KINDS)}.{did_you_mean(kind, KINDS)}")
    return chosen


@dataclass
class Injection:
    """The copies made from clean records and what was changed in each.

    `copies`: the injected records, with the input's columns. `log`: one row per copy,
    `injected_id`, `source_id`, `kind`, `field`, `before`, `after`.
    """

    copies: pd.DataFrame
    log: pd.DataFrame
    id_name: str  # the id column; `row_id` (row numbers) when the table has none
    clean: int  # clean records that could be sources


def _present(value: Any) -> bool:
    return isinstance(value, str) and value.strip() != ""


def clean_positions(frame: pd.DataFrame, ids: pd.Series, baseline: Result,
                    fields: list[Field], id_name: str) -> np.ndarray:
    """Row positions of the records the baseline run leaves alone in a cluster of one, with at
    least one compared field filled (a copy with nothing to compare can never be found).
    `ids`: the record ids in row order (row numbers when the table has no id column)."""
    clusters = baseline.clusters
    single = clusters.loc[clusters["cluster_size"] == 1, id_name]
    alone = ids.isin(set(single.tolist())).to_numpy()
    filled = np.zeros(len(frame), dtype=bool)
    for f in fields:
        filled |= frame[f.column].map(_present).to_numpy(dtype=bool)
    return np.flatnonzero(alone & filled)


def _new_ids(ids: pd.Series, count: int, row_numbers: bool) -> list[Any]:
    """Ids for the copies that no existing id can equal: the next row numbers, the next whole
    numbers for a numeric id column, or `inj-000001`... with a prefix no id starts with."""
    if row_numbers:
        return list(range(len(ids), len(ids) + count))
    if pd.api.types.is_integer_dtype(ids.dtype):
        start = int(ids.max()) + 1
        return list(range(start, start + count))
    if not (pd.api.types.is_object_dtype(ids.dtype) or pd.api.types.is_string_dtype(ids.dtype)):
        raise InputError(f"id column `{ids.name}` holds {ids.dtype} values; recall by injection "
                         "needs text or whole-number ids. Pass --id-column with such a column.")
    existing = set(ids.astype(str))
    width = max(6, len(str(count)))
    prefix = "inj-"
    while any(i.startswith(prefix) for i in existing):
        prefix = "_" + prefix
    return [f"{prefix}{k:0{width}d}" for k in range(1, count + 1)]


def _make_copy(row: pd.Series, kind: str, position: int, fields: list[Field], seed: int,
               per_copy: int = 1) -> list[tuple[str, str, str]] | None:
    """[(field, before, after)] of a perturbation of `kind` on up to `per_copy` compared fields
    of this record, or None when none of them can take it. Seeded by record and kind, so a
    record's copy does not depend on which other records were drawn."""
    rng = np.random.default_rng([seed, position, KINDS.index(kind)])
    if kind == "exact":
        return []
    options = []
    for f in fields:
        value = row[f.column]
        if not _present(value):
            continue
        after = perturb(kind, value, f.role, rng, date_order=f.date_order)
        if after is not None:
            options.append((f.column, value, after))
    if not options:
        return None
    picked = np.sort(rng.permutation(len(options))[:per_copy])
    return [options[i] for i in picked]


def exact_stage_fields(rules: Rules, frame: pd.DataFrame, id_name: str,
                       fields: list[Field]) -> list[Field]:
    """The columns the exact stage hashes, as fields (a compared column keeps its role; any
    other is text); none without an exact stage."""
    if rules.exact is None:
        return []
    roles = {f.column: f for f in fields}
    columns = rules.exact.columns or [c for c in frame.columns if c != id_name]
    return [roles.get(c, Field(c, "text")) for c in columns]


def _past_the_exact_stage(row: pd.Series, kind: str, position: int, seed: int,
                          changes: list[tuple[str, str, str]], stage: list[Field]
                          ) -> list[tuple[str, str, str]] | None:
    """`changes`, with one more in a column the exact stage hashes when none of them is there
    (a copy equal to its source where that stage looks would be found by it for free): of the
    same kind, else a typo, which any value can take. None when no such column can."""
    if not stage or any(c in {f.column for f in stage} for c, _, _ in changes):
        return changes
    for extra in dict.fromkeys((kind, "typo")):
        more = _make_copy(row, extra, position, stage, seed + 1)
        if more is not None:
            return changes + more
    return None


def _another_page(url: Any, new_id: Any) -> Any:
    """Another page of the same site as `url` (its path extended by the copy's id, without
    query or fragment), so a `url:` stage does not find the copy for free; a missing URL stays
    missing."""
    if not _present(url):
        return url
    page = re.split(r"[?#]", url.strip(), maxsplit=1)[0].rstrip("/")
    return f"{page}/{new_id}"


def _joined(changes: list[tuple[str, str, str]], part: int) -> str:
    """One log cell for the changed fields: their names, old or new values, joined by " | "."""
    return " | ".join(change[part] for change in changes)


def inject(frame: pd.DataFrame, rules: Rules, n: int, *, baseline: Result,
           kinds: list[str] | None = None, seed: int = 0, id_column: str | None = None,
           fields_per_copy: int = 1) -> Injection:
    """Copy `n` clean records of `frame`, each with one kind of perturbation applied to
    `fields_per_copy` compared fields (fewer where the record has fewer that can take it), the
    kinds taking turns.

    `baseline` is the run of `rules` on `frame` alone; it says which records are clean.
    Sources are drawn in a seeded random order; a record that cannot take its turn's kind (a
    Hangul name has no case to change) is left for another kind.
    """
    kinds = parse_kinds(kinds)
    if not isinstance(n, int) or n < 1:
        raise InputError(f"--inject must be a whole number of copies, at least 1. Got {n!r}.")
    if not isinstance(fields_per_copy, int) or fields_per_copy < 1:
        raise InputError("--fields must be a whole number of fields to change per copy, at "
                         f"least 1. Got {fields_per_copy!r}.")
    from linkage.pipeline import ROW_ID

    fields = compared_fields(rules)
    id_name = id_column or rules.id_column or ROW_ID
    row_numbers = (id_column or rules.id_column) is None
    ids = pd.Series(np.arange(len(frame)), name=id_name) if row_numbers else frame[id_name]
    clean = clean_positions(frame, ids, baseline, fields, id_name)
    exact_fields = exact_stage_fields(rules, frame, id_name, fields)
    if rules.url is not None and rules.url.column in {f.column for f in exact_fields}:
        exact_fields = []  # every copy's new URL takes it past the exact stage already
    source_name = frame.attrs.get("linkage_source", "the input")
    if n > len(clean):
        raise InputError(
            f"--inject {n} is more than the {len(clean)} clean records of {source_name} (records "
            "the rules leave alone in a cluster of one, with a compared field filled). Inject at "
            f"most {len(clean)}: --inject {len(clean)}.")
    order = np.random.default_rng(seed).permutation(clean)
    quota = {k: n // len(kinds) + (i < n % len(kinds)) for i, k in enumerate(kinds)}
    pointer = dict.fromkeys(kinds, 0)
    used: set[int] = set()
    chosen: list[tuple[int, str, list[tuple[str, str, str]]]] = []
    while len(chosen) < n:
        for kind in kinds:
            if quota[kind] == 0:
                continue
            while pointer[kind] < len(order):
                position = int(order[pointer[kind]])
                pointer[kind] += 1
                if position in used:
                    continue
                row = frame.iloc[position]
                change = _make_copy(row, kind, position, fields, seed, fields_per_copy)
                if change is not None and kind != "exact":  # the control stays exact
                    change = _past_the_exact_stage(row, kind, position, seed, change,
                                                   exact_fields)
                if change is not None:
                    used.add(position)
                    chosen.append((position, kind, change))
                    quota[kind] -= 1
                    break
            else:
                roles = KIND_ROLES[kind]
                usable = [f.column for f in fields if f.role in roles]
                raise InputError(
                    f"too few clean records of {source_name} can take a `{kind}` perturbation "
                    f"({len(chosen)} copies made of {n}): it changes {', '.join(sorted(roles))} "
                    "fields, and the rules compare "
                    f"{', '.join(f'`{c}`' for c in usable) or 'none of those'}. Inject fewer "
                    "copies (--inject), or leave the kind out "
                    f"(--kinds {','.join(k for k in kinds if k != kind)}).")
    chosen.sort(key=lambda c: (KINDS.index(c[1]), c[0]))
    positions = [c[0] for c in chosen]
    new_ids = _new_ids(ids, n, row_numbers)
    copies = frame.iloc[positions].copy().reset_index(drop=True)
    for k, (_, kind, changes) in enumerate(chosen):
        for column, _, after in changes:
            copies.at[k, column] = after
        if rules.url is not None and kind != "exact":
            copies.at[k, rules.url.column] = _another_page(copies.at[k, rules.url.column],
                                                           new_ids[k])
    if not row_numbers:
        copies[id_name] = pd.Series(new_ids, dtype=frame[id_name].dtype)
    log = pd.DataFrame({
        "injected_id": new_ids,
        "source_id": [ids.iloc[p] for p in positions],
        "kind": [c[1] for c in chosen],
        "field": [_joined(c[2], 0) for c in chosen],
        "before": [_joined(c[2], 1) for c in chosen],
        "after": [_joined(c[2], 2) for c in chosen],
    })
    return Injection(copies=copies, log=log, id_name=id_name, clean=len(clean))


# ------------------------------------------------------------------------------------------
# Measuring
# ------------------------------------------------------------------------------------------


def _recall_row(name: str, found: np.ndarray, false_merge: np.ndarray,
                compared: np.ndarray) -> dict[str, Any]:
    from linkage.measure.calibrate import wilson

    injected, hits = len(found), int(found.sum())
    low, high = wilson(hits, injected)
    return {"kind": name, "injected": injected, "found": hits, "missed": injected - hits,
            "recall": hits / injected if injected else math.nan, "ci_low": low, "ci_high": high,
            "false_merges": int(false_merge.sum()), "never_compared": int((~compared).sum())}


def outcomes(log: pd.DataFrame, result: Result, id_name: str) -> pd.DataFrame:
    """Per copy: its cluster, its source's cluster, whether it was found (same cluster), a
    false merge (in a cluster without its source), and the copy-source pair's match weight
    (empty when no blocker proposed the pair: a blocking miss)."""
    clusters = result.clusters
    key = clusters[id_name].astype(str)
    cluster_of = pd.Series(clusters["cluster_id"].to_numpy(), index=key)
    size_of = pd.Series(clusters["cluster_size"].to_numpy(), index=key)
    copy_key, source_key = log["injected_id"].astype(str), log["source_id"].astype(str)
    out = log.copy()
    out["cluster_id"] = copy_key.map(cluster_of).to_numpy()
    out["source_cluster_id"] = source_key.map(cluster_of).to_numpy()
    out["cluster_size"] = copy_key.map(size_of).to_numpy()
    out["found"] = (out["cluster_id"] == out["source_cluster_id"]).to_numpy()
    out["false_merge"] = (~out["found"] & (out["cluster_size"] > 1)).to_numpy()
    pairs = result.pairs
    left, right = pairs["id_l"].astype(str).to_numpy(), pairs["id_r"].astype(str).to_numpy()
    weights = pd.concat([
        pd.Series(pairs["match_weight"].to_numpy(), index=pd.MultiIndex.from_arrays([left, right])),
        pd.Series(pairs["match_weight"].to_numpy(), index=pd.MultiIndex.from_arrays([right, left])),
    ])
    weights = weights[~weights.index.duplicated()]
    wanted = pd.MultiIndex.from_arrays([copy_key.to_numpy(), source_key.to_numpy()])
    out["match_weight"] = weights.reindex(wanted).to_numpy(dtype=float)
    out["compared"] = ~np.isnan(out["match_weight"].to_numpy())
    return out


@dataclass
class RecallReport:
    """What `measure_recall` found: per kind and overall, the copies found and recall with its
    95% Wilson interval; per copy, what happened to it; and the run itself."""

    by_kind: pd.DataFrame
    by_field: pd.DataFrame
    outcomes: pd.DataFrame
    injection: Injection
    result: Result
    records: int
    seed: int
    fields_per_copy: int = 1
    source: str = ""
    input_suffix: str = ".csv"
    kinds: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        def rows(frame: pd.DataFrame) -> list[dict[str, Any]]:
            return [{k: (round(v, 6) if isinstance(v, float) else v) for k, v in r.items()}
                    for r in frame.to_dict(orient="records")]

        table = rows(self.by_kind)
        return {"input": self.source, "records": self.records,
                "clean_records": self.injection.clean, "injected": len(self.outcomes),
                "seed": self.seed, "fields_per_copy": self.fields_per_copy,
                "kinds": table[:-1], "overall": table[-1],
                "by_field": rows(self.by_field)}

    def format(self) -> str:
        """The table a person reads in a terminal."""
        lines = [
            f"recall by injection: {len(self.outcomes):,} copies of clean records "
            f"({self.injection.clean:,} clean of {self.records:,}), {self.fields_per_copy} "
            f"field(s) changed per copy, seed {self.seed}",
            f"  {'kind':<12} {'injected':>8} {'found':>6} {'recall':>7}  {'95% CI':<13} "
            f"{'false merges':>12} {'never compared':>14}",
        ]
        for _, r in self.by_kind.iterrows():
            if r["kind"] == "overall":
                lines.append("  " + "-" * 78)
            lines.append(
                f"  {r['kind']:<12} {r['injected']:>8,} {r['found']:>6,} {r['recall']:>7.3f}  "
                f"{r['ci_low']:.3f}-{r['ci_high']:.3f}   {r['false_merges']:>12,} "
                f"{r['never_compared']:>14,}")
        return "\n".join(lines)

    def write(self, out: str | Path) -> Path:
        """Write, atomically, into `out`: `injected.csv` (or `.parquet`, like the input) with
        the copies, `outcomes.csv` (one row per copy: what changed, found or not, the pair's
        weight), `recall.json`, and `run/`, the run on the input with the copies, for
        `linkage explain out/run INJECTED_ID SOURCE_ID`."""
        from linkage.io import write_atomically, write_json, write_parquet

        def fill(folder: Path) -> None:
            if self.input_suffix in (".parquet", ".pq"):
                write_parquet(self.injection.copies, folder / "injected.parquet")
            else:
                self.injection.copies.to_csv(folder / "injected.csv", index=False)
            self.outcomes.to_csv(folder / "outcomes.csv", index=False)
            write_json(self.as_dict(), folder / "recall.json")
            self.result.write(folder / "run")

        return write_atomically(out, fill, what="recall")


def measure_recall(table: Any, rules: Rules | str | Path | dict, n: int = 500, *,
                   kinds: str | list[str] | None = None, seed: int = 0,
                   id_column: str | None = None, fields_per_copy: int = 1,
                   sep: str | None = None, encoding: str = "utf-8") -> RecallReport:
    """Recall by injection: run `rules` on `table`, copy `n` of the records it leaves alone
    with one perturbation each, run again with the copies, and count per kind the copies found
    in their source's cluster.

    `table`: a CSV/Parquet path or a DataFrame. `kinds`: a subset of `KINDS` (all by default),
    taking turns so each gets about n / len(kinds) copies. `fields_per_copy`: how many compared
    fields each copy has changed (one by default; more makes a harder test).
    """
    from linkage.api import as_rules, dedupe
    from linkage.io import read
    from linkage.pipeline import Table, validate_tables

    kinds = parse_kinds(kinds)
    rules = as_rules(rules)
    frame = read(table, sep=sep, encoding=encoding)
    source = frame.attrs.get("linkage_source", "DataFrame")
    # Checked here, under the file's name: the runs below see DataFrames.
    validate_tables([Table(frame, str(source), "", 0.0)], rules, id_column or rules.id_column)
    baseline = dedupe(frame, rules, id_column=id_column, progress=False)
    injection = inject(frame, rules, n, baseline=baseline, kinds=kinds, seed=seed,
                       id_column=id_column, fields_per_copy=fields_per_copy)
    combined = pd.concat([frame, injection.copies], ignore_index=True)
    result = dedupe(combined, rules, id_column=id_column, progress=False)
    per_copy = outcomes(injection.log, result, injection.id_name)
    rows = []
    for kind in kinds:
        part = per_copy[per_copy["kind"] == kind]
        rows.append(_recall_row(kind, part["found"].to_numpy(), part["false_merge"].to_numpy(),
                                part["compared"].to_numpy()))
    rows.append(_recall_row("overall", per_copy["found"].to_numpy(),
                            per_copy["false_merge"].to_numpy(), per_copy["compared"].to_numpy()))
    by_field = []
    for (kind, column), part in per_copy.groupby(["kind", "field"], sort=False):
        row = _recall_row(kind, part["found"].to_numpy(), part["false_merge"].to_numpy(),
                          part["compared"].to_numpy())
        by_field.append({"kind": kind, "field": column or "(none)", **{
            k: row[k] for k in ("injected", "found", "recall", "false_merges")}})
    suffix = "" if isinstance(table, pd.DataFrame) else Path(table).suffix.lower()
    return RecallReport(by_kind=pd.DataFrame(rows), by_field=pd.DataFrame(by_field),
                        outcomes=per_copy, injection=injection, result=result,
                        records=len(frame), seed=seed, fields_per_copy=fields_per_copy,
                        source=str(source),
                        input_suffix=suffix or ".csv", kinds=kinds)
