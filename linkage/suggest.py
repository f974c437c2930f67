"""Suggested rules for a table never seen before.

Profile each column (ids, person names, Hangul names, dates, e-mails, phones, postcodes,
addresses, companies, numbers, categories, free text), pick its normalizer and comparison,
choose blocking keys by their measured pair counts under the budget, and score with
Fellegi-Sunter. The result is written as commented YAML that a person can edit.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from linkage import profiling as _profiling
from linkage.blocking.choose import KeyTrial, choose_keys, sample_table
from linkage.io import as_text
from linkage.ordering import is_unique
from linkage.profiling import ColumnProfile, pair_columns, profile_table, word_sets

_SAMPLE = 20_000
# The suggested Fellegi-Sunter thresholds, as match weights (0: even odds). A link's output is
# its pairs, each judged on its own: a pair is linked where a match is more likely than not,
# which makes the fewest expected errors (a false link costs one pair, as a missed one does).
# A dedupe's output is its clusters, the connected components of the links: one false link
# joins two whole clusters (|A| x |B| false pairs) while a missed link of a cluster that other
# links hold together costs nothing, so a dedupe links at odds of 64 to 1 and above.
LINK_THRESHOLD = 0.0
DEDUPE_THRESHOLD = 6.0
KINDS = _profiling.KINDS


def profile_column(column: str, values: pd.Series) -> ColumnProfile:
    """A column's role from its values (see `linkage.profiling`)."""
    return _profiling.profile_column(column, values)


_NAMES = ("given_name", "surname", "full_name", "name")
_NORMALIZER = {"email": "email", "phone": "phone", "date": "date", "postcode": "postcode",
               "hangul_name": "name", "given_name": "name", "surname": "name",
               "full_name": "name", "name": "text", "company": "company", "address": "text",
               "text": "text", "other": "text", "category": "text", "id": "text"}


def _comparison(p: ColumnProfile) -> dict | None:
    c = p.column
    if p.kind in ("category", "year", "month", "day"):
        # sex, state, status flags: weak evidence, and an edit between two codes is no near
        # match
        return {"type": "exact", "column": c}
    if p.kind == "other" and p.code:  # integer codes: a typo is an edit, not a nearby amount
        return {"type": "levenshtein", "column": c, "thresholds": [0.8]}
    if p.kind in ("given_name", "surname", "full_name"):
        return {"type": "jaro_winkler", "column": c, "thresholds": [0.92, 0.8]}
    return {
        "hangul_name": {"type": "jaro_winkler", "column": c, "thresholds": [0.92, 0.85]},
        "date": {"type": "date", "column": c, "within_days": [31]},
        "email": {"type": "levenshtein", "column": c, "thresholds": [0.85]},
        "phone": {"type": "levenshtein", "column": c, "thresholds": [0.85]},
        "postcode": {"type": "levenshtein", "column": c, "thresholds": [0.8]},
        "id": {"type": "levenshtein", "column": c, "thresholds": [0.8]},
        "company": {"type": "token_sort", "column": c, "thresholds": [0.9]},
        "address": {"type": "token_sort", "column": c, "thresholds": [0.9, 0.7]},
        "text": {"type": "token_sort", "column": c, "thresholds": [0.9, 0.7]},
        "other": {"type": "jaro_winkler", "column": c, "thresholds": [0.9]},
        # short words whose part of a person's name (if any) the values leave open: a name,
        # a place or a trade
        "name": {"type": "jaro_winkler", "column": c, "thresholds": [0.9]},
        "numeric": {"type": "numeric", "column": c, "rel_tolerance": [0.05]},
    }.get(p.kind)


def _ranges(profiles: list[ColumnProfile]) -> dict[str, dict]:
    """The date and number columns a blocking key may be ranged on, each with the widest
    tolerance its suggested comparison credits (`choose_keys`'s `ranges`): a pair farther
    apart than that disagrees on the column whatever blocking proposes."""
    out = {}
    for p in profiles:
        comparison = _comparison(p) or {}
        if comparison.get("type") == "date" and comparison.get("within_days"):
            out[p.column] = {"within_days": max(comparison["within_days"])}
        elif comparison.get("type") == "numeric" and comparison.get("rel_tolerance"):
            out[p.column] = {"rel_tolerance": max(comparison["rel_tolerance"])}
    return out


def _key_view(profiles: list[ColumnProfile]) -> list[ColumnProfile]:
    """The compared profiles as the blocking-key choice reads them: a `name` whose part is
    unclear (a place, a trade) is short text there, and the most selective columns of a kind
    come first (where only the first few of a kind give keys, they are the ones)."""
    out = []
    for p in profiles:
        if p.kind in ("year", "month", "day", "row_number", "constant") or not p.compare:
            continue
        out.append(ColumnProfile(**{**p.__dict__, "kind": "other" if p.kind == "name"
                                    else p.kind}))
    return sorted(out, key=lambda q: -q.distinct)


@dataclass
class Suggestion:
    """Suggested rules, and the evidence behind them."""

    rules: dict
    profiles: list[ColumnProfile]
    measured: list[KeyTrial]  # every candidate key, its estimated pairs and what became of it
    budget_per_key: int
    sample_rows: int = 0  # rows profiled and measured (a sample of a large table)
    # A link's one-to-one evidence (`linkage.suggest_sources.repeats_within_sources`)
    sources: dict | None = None

    def to_yaml(self) -> str:
        """The rules as commented YAML, ready for a person to edit."""
        import yaml

        body = yaml.safe_dump(self.rules, sort_keys=False, allow_unicode=True, width=100,
                              default_flow_style=None)
        return self.comments() + "\n" + body

    def as_rules(self):
        """The suggested rules as `Rules`, carrying `comments()`: a run writes them above its
        rules.yaml, so the folder says why each column, key and choice is there."""
        from linkage.settings import Rules

        rules = Rules.from_dict(self.rules, source="suggested rules")
        rules.comments = self.comments()
        return rules

    def comments(self) -> str:
        """The evidence behind the rules as YAML comment lines: each column's profile, each
        key tried and its fate, a link's one-to-one verdict, how to read the threshold."""
        lines = [
            "# Suggested by `linkage suggest`. Edit freely; `linkage validate` checks the file.",
            "#",
            "# Column profiles (kind: why; share filled; share distinct):",
        ]
        for p in self.profiles:
            notes = (" (identifying)" if p.identifying else "") + \
                (f"; not compared: {p.skip}" if p.skip else "")
            lines.append(f"#   {p.column}: {p.kind}: {p.why}; {p.filled:.0%} filled, "
                         f"{p.distinct:.0%} distinct{notes}")
        lines += ["#", "# Blocking keys tried, with their candidate pairs on the whole table, "
                  f"measured on {self.sample_rows:,} records", f"# (a sample of a larger "
                  f"table, scaled to its size); a key fits at most {self.budget_per_key:,} "
                  "pairs, one above is refined:"]
        for trial in self.measured:
            lines.append(f"#   [{', '.join(trial.key)}]: {trial.pairs:,} ({trial.outcome})")
        if self.sources is not None:
            verdict = "one-to-one" if self.sources["one_to_one"] else "not one-to-one"
            lines += ["#", f"# Link: {verdict}: {self.sources['why']}."]
        lines += ["#", "# Scoring: Fellegi-Sunter learns its weights from the data (m by EM, u "
                  "from random pairs);", "# threshold is a match weight: 0 is probability 0.5, "
                  "each +1 doubles the odds."]
        return "".join(f"{line}\n" for line in lines)


def _profiles(frames: list[pd.DataFrame]) -> tuple[list[ColumnProfile], dict[str, str]]:
    """The profiles of the columns a link's rules may read, and the right table's columns
    that hold a left column's values under another name (right name: left name).

    A link compares a field only where both tables have it: a column one side lacks is
    profiled and listed, never read.
    """
    left, right = frames
    lp, rp = profile_table(left), profile_table(right)
    pairs = pair_columns(left, right, lp, rp)
    both = [a for a, b, _ in pairs if a == b]
    paired = {b: a for a, b, _ in pairs if a != b}
    scores = {(a, b): s for a, b, s in pairs}
    paired.update(_record_ids(left, right, lp, rp, both, paired))
    # A right column under a left name that holds another field (numbered columns, c1, c2
    # ..., each table in its own order) is set apart under a name of its own.
    names = set(map(str, left.columns)) | set(map(str, right.columns))
    apart = {}
    for c in map(str, right.columns):
        if c in set(map(str, left.columns)) and c not in both and c not in paired:
            name, k = f"{c} (right)", 2
            while name in names:
                name, k = f"{c} (right {k})", k + 1
            apart[c] = name
    common = profile_table(pd.concat([left[both], right[both]], ignore_index=True)) \
        if both else []
    profiles = list(common)
    for p in lp:
        if p.column in both:
            continue
        match = next((b for b, a in paired.items() if a == p.column), None)
        if match is not None and (p.column, match) not in scores:
            p.why += f"; the record id, as the right table's `{match}` is there"
        elif match is not None:
            p.why += f"; holds the values of the right table's `{match}` " \
                f"({scores[(p.column, match)]:.0%} overlap)"
        else:
            p.exclude("only in the left table")
        profiles.append(p)
    for p in rp:
        if p.column not in both and p.column not in paired:
            if p.column in apart:
                p.why += f" (another field than the left table's `{p.column}`)"
                p.column = apart[p.column]
            profiles.append(p.exclude("only in the right table"))
    return profiles, {**paired, **apart}


def _id_column(frames: list[pd.DataFrame], profiles: list[ColumnProfile]) -> str | None:
    """A column unique in every table: the record's id (an identifier before a row number;
    the name breaks a tie)."""
    def unique(c: str) -> bool:
        return all(c in f.columns and f[c].notna().all() and is_unique(f[c]) for f in frames)

    def shared(c: str) -> float:
        """In a link, the share of one table's values the other holds: the same person's
        number in both tables is evidence, the record ids of two sources differ."""
        if len(frames) < 2:
            return 0.0
        a, b = (set(pd.Series(f[c]).astype(str)) for f in frames)
        return len(a & b) / max(min(len(a), len(b)), 1)

    candidates = [p for p in profiles if p.kind in ("id", "row_number") and unique(p.column)]
    candidates.sort(key=lambda p: (round(shared(p.column), 1), p.kind != "id",
                                   not _hint(p.column, "id", "key")))
    return candidates[0].column if candidates else None


def _record_ids(left: pd.DataFrame, right: pd.DataFrame, lp: list[ColumnProfile],
                rp: list[ColumnProfile], both: list[str], paired: dict[str, str]
                ) -> dict[str, str]:
    """In a link, each table's own record id under two names ({right: left}): two sources
    number their records apart, so the ids' values never overlap and `pair_columns` cannot
    pair them; their role pairs them. Only where neither table shares an id column with the
    other and each has exactly one column that is an identifier by its values and unique and
    complete in it (with several, which one keys the records is not a question the values
    answer)."""
    def ids(frame: pd.DataFrame, profiles: list[ColumnProfile], taken) -> list[str]:
        return [p.column for p in profiles if p.kind == "id" and p.column not in taken
                and frame[p.column].notna().all() and frame[p.column].is_unique]

    if ids(left, lp, ()) and set(ids(left, lp, ())) & set(both):
        return {}
    own_l = ids(left, lp, {*both, *paired.values()})
    own_r = ids(right, rp, {*both, *paired})
    if len(own_l) != 1 or len(own_r) != 1 or own_r[0] in map(str, left.columns):
        return {}
    return {own_r[0]: own_l[0]}


def _hint(column: str, *words: str) -> bool:
    name = column.lower()
    return any(w in name for w in words)


def _dates_from_parts(profiles: list[ColumnProfile], columns: set[str]) -> tuple[list, list]:
    """Normalize steps that join year, month and day columns into one date, and the date
    profiles standing for them."""
    steps, dates = [], []
    for p in profiles:
        if p.kind != "year" or len(p.parts) != 3 or not p.compare:
            continue
        y, m, d = p.parts
        output, k = "date_from_parts", 2
        while output in columns:
            output, k = f"date_from_parts_{k}", k + 1
        columns.add(output)
        steps.append({"column": y, "type": "date_parts", "month": m, "day": d,
                      "output": output})
        dates.append(ColumnProfile(output, "date", p.filled, p.distinct,
                                   f"{y}, {m} and {d} together", p.values, parts=[y, m, d]))
    return steps, dates


def _scoring(comparisons: list[dict], profiles: list[ColumnProfile], tf: list[str],
             link: bool = False) -> dict:
    """Fellegi-Sunter, with the comparisons of identifying fields named when the scorer takes
    them (`identifying`: fields that tell one entity from another of its group, a constraint
    on EM; see `_identifying`), and the threshold of the output's kind (`LINK_THRESHOLD`,
    `DEDUPE_THRESHOLD`)."""
    import inspect

    from linkage.scoring import FellegiSunter

    threshold = LINK_THRESHOLD if link else DEDUPE_THRESHOLD
    scoring = {"type": "fellegi_sunter", "threshold": threshold, "tf_adjust": tf}
    if "identifying" in inspect.signature(FellegiSunter.__init__).parameters:
        scoring["identifying"] = _identifying(comparisons, profiles)
    return scoring


_PERSONAL = ("given_name", "full_name", "hangul_name")


def _compared(comparisons: list[dict], profiles: list[ColumnProfile]) -> list[ColumnProfile]:
    by_column = {p.column: p for p in profiles}
    return [by_column[c["column"]] for c in comparisons if c["column"] in by_column]


def _group_fields(comparisons: list[dict], profiles: list[ColumnProfile]
                  ) -> list[ColumnProfile]:
    """The compared name fields that name a group of people where a person's own name is
    compared too: surnames and generic names (see `_identifying`); none without one."""
    compared = _compared(comparisons, profiles)
    if not any(p.kind in _PERSONAL and p.identifying for p in compared):
        return []
    return [p for p in compared if p.identifying and p.kind in ("surname", "name")]


def _identifying(comparisons: list[dict], profiles: list[ColumnProfile]) -> list[str]:
    """The compared columns that tell one entity from another of its group, and so from the
    group: the EM constraint on them keeps EM from learning the group as the match.

    Of the fields profiling marks identifying, two name a group where a person's own name is
    there as well: a surname (a family shares it, a marriage changes it: one household's
    records agree on it and disagree on the given names and birth dates), and a generic name
    (where people are named by their own given or full name, another short name is a place, an
    employer or an occupation, which many people share). Without a person's own name they stay:
    then they are the best the table has (a company's name, a surname alone)."""
    group = _group_fields(comparisons, profiles)
    kept = [p for p in _compared(comparisons, profiles) if p.identifying and p not in group]
    names = []
    for p in kept:
        if p.column not in names:
            names.append(p.column)
    return names


def suggest_rules(frames: list[pd.DataFrame], *, max_pairs: int = 20_000_000) -> Suggestion:
    """Profile the table(s) and suggest rules, keeping the evidence."""
    # Normalizing and key choice read a sample of the rows; key pair counts are scaled to
    # `sizes`, the whole tables' sizes. A dedupe's sample is also the rows profiled (the
    # profiler's own sample of a table that size: one pass over a large table, not two).
    if len(frames) == 1:
        frame, source, sizes = sample_table(frames)
        profiles, paired = profile_table(frame, rows=sizes[0]), {}
    else:
        profiles, paired = _profiles(frames)
        if paired:  # the right table's columns under the left names they pair with
            frames = [frames[0], frames[1].rename(columns=paired)]
        frame, source, sizes = sample_table(frames)
    id_column = _id_column(frames, profiles)
    for p in profiles:
        if p.column == id_column and p.compare:
            p.exclude("the id column")
    for p in profiles:
        if p.compare and p.filled <= 0.05:
            p.exclude("mostly empty")
    usable = [p for p in profiles if p.compare]
    part_steps, part_dates = _dates_from_parts(usable, set(map(str, frame.columns)))
    parts = {c for d in part_dates for c in d.parts}
    usable = [p for p in usable if p.column not in parts] + part_dates
    # In an order set by the values, not by the columns' places: a table with its columns
    # shuffled gets the same rules.
    usable.sort(key=lambda p: (KINDS.index(p.kind), -p.distinct, -p.filled, p.column))

    normalize = list(part_steps)
    for p in usable:
        if p.kind not in _NORMALIZER or p.parts:
            continue
        step = {"column": p.column, "type": _NORMALIZER[p.kind]}
        if p.kind == "date":
            step.update({"order": "DMY", "on_error": "null"})
        if p.kind == "phone":
            step.update(_phone_step(frame, p))
        normalize.append(step)

    work, coded = _coded(frame, normalize)
    blocking, measured, per_key_budget = choose_keys(_key_view(usable), work, source,
                                                     max_pairs, sizes, coded=coded,
                                                     ranges=_ranges(usable))
    derived = _derived_columns(work, usable)
    comparisons = [c for c in map(_comparison, usable) if c and c["column"] not in derived]
    _name_swaps(comparisons, usable)
    # Agreeing on a common value (Smith, 김, London) is weaker evidence than on a rare one.
    tf = [c["column"] for c in comparisons
          if next(p for p in usable if p.column == c["column"]).kind
          in (*_NAMES, "hangul_name", "other")]
    rules = {
        "id_column": id_column,
        "normalize": normalize,
        "blocking": blocking,
        "comparisons": comparisons,
        "scoring": _scoring(comparisons, usable, tf, link=len(frames) > 1),
        "max_pairs": max_pairs,
    }
    # Tables of text (products, citations): word-based rules (linkage/suggest_text.py).
    from linkage.suggest_text import text_rules

    text = text_rules(frames, profiles, rules, sample=frame if len(frames) == 1 else None)
    sources = None
    if text is not None:
        rules = text
    elif source is not None:
        # A link of tables that do not repeat their own records is one-to-one: of a record's
        # candidates that score as matches only the best can be right, weighed against the
        # record having no match (`one_to_one_threshold: record_prior`); the sample's values
        # say whether a table repeats its records (linkage/suggest_sources.py).
        from linkage.suggest_sources import repeats_within_sources

        sources = repeats_within_sources(frame, source, rules)
        if sources is not None and sources["one_to_one"]:
            rules["one_to_one"] = True
            rules["one_to_one_threshold"] = "record_prior"
    if paired:
        rules["rename_right"] = dict(paired)
    return Suggestion(rules, profiles, measured, per_key_budget, len(frame), sources)


def _name_swaps(comparisons: list[dict], profiles: list[ColumnProfile]) -> None:
    """Where a table has one given-name and one surname column, each one's comparison also
    reads the other, for records whose two names were entered the other way round (a level
    `swapped`; see `SimilarityComparison`). Only for exactly one of each: with several, which
    two were swapped is not a question the values answer."""
    compared = {c["column"]: c for c in comparisons}
    kinds = {p.column: p.kind for p in profiles if p.column in compared}
    given = [c for c, kind in kinds.items() if kind == "given_name"]
    surname = [c for c, kind in kinds.items() if kind == "surname"]
    if len(given) != 1 or len(surname) != 1:
        return
    compared[given[0]]["swapped_with"] = surname[0]
    compared[surname[0]]["swapped_with"] = given[0]


_WORDY = (*_NAMES, "text", "other", "address", "company")


def _derived_columns(work: dict[str, np.ndarray], profiles: list[ColumnProfile]) -> set[str]:
    """Columns whose words are mostly those of two other columns together (a full name that
    holds the first name and the surname, a "first and surname" column).

    Comparing them as well would count the same evidence two or three times, as if it were
    independent; they stay available to blocking.
    """
    columns = [p.column for p in profiles if p.kind in _WORDY]
    if len(columns) < 3:
        return set()
    n = len(next(iter(work.values())))
    rows = np.random.default_rng(0).choice(n, min(n, 5_000), replace=False)
    words = {c: word_sets(work[c][rows]) for c in columns}
    derived = set()
    for a in columns:
        for b in columns:
            for c in columns:
                if len({a, b, c}) < 3 or b > c or a in derived:
                    continue
                rows_abc = [(x, y, z) for x, y, z in zip(words[a], words[b], words[c],
                                                          strict=True) if x and y and z]
                if len(rows_abc) < 50:
                    continue
                covered = np.mean([y | z <= x for x, y, z in rows_abc])
                distinct = np.mean([not (y <= z or z <= y) for _, y, z in rows_abc])
                if covered > 0.6 and distinct > 0.6:
                    derived.add(a)
    return derived


def _phone_step(frame: pd.DataFrame, p: ColumnProfile) -> dict:
    """The phone step's options: Korean national form for a Korean column; E.164 where
    numbers written in international and national form mix (read in the region most are
    valid in, or in each record's own country where a column gives it); else digits only."""
    from linkage.profiling import phone_region_column

    values = frame[p.column]
    region = p.region
    column = phone_region_column(values, frame, region)
    if column is not None:
        return {"country": region, "region_column": column}
    if region == "KR" or _looks_korean(values):
        return {"country": "KR"}
    text = values.dropna().astype(str).str.strip().head(2000)
    international = float((text.str.startswith("+") | text.str.startswith("00")).mean()) \
        if len(text) else 0.0
    if region is not None and 0.02 < international < 0.98:
        return {"country": region}
    return {"country": None}


def _looks_korean(values: pd.Series) -> bool:
    text = values.dropna().astype(str).head(2000)
    return bool(len(text)) and float(text.str.contains(r"^(?:\+?82|0)1[016789]").mean()) > 0.2


def _normalized(frame: pd.DataFrame, normalize: list[dict]) -> Mapping[str, np.ndarray]:
    """Every column of `frame` as text (`as_text`), and each step's output."""
    return _coded(frame, normalize)[0]


def _coded(frame: pd.DataFrame, normalize: list[dict]
           ) -> tuple[Mapping[str, np.ndarray], Mapping[str, tuple[np.ndarray, np.ndarray]]]:
    """(work, coded): `_normalized`'s columns, and each of them as a code per row (-1 where
    missing) into a table of values, what key pair counts group (`choose_keys`).

    Each column is numbered once, and a step normalizes the distinct values of its input
    only: a normalizer maps each value alone, so every row gets what normalizing the rows
    gives it. A column no step and no key reads (the id column) is numbered, and any column
    written out row by row, only where something reads it (`_Lazy`)."""
    from linkage.normalize import distinct_arrow
    from linkage.settings import Normalize

    held: dict[str, object] = {}  # a column's distinct values as Arrow strings, where so read

    def distinct(column: str) -> tuple[np.ndarray, np.ndarray]:
        codes, table, arrow = _distinct_text(frame[column])
        if arrow is not None:
            held[column] = arrow
        return codes, table

    coded = _Lazy({str(column): column for column in frame.columns}, distinct)

    def rows(column: str) -> np.ndarray:
        codes, table = coded[column]
        return np.append(table, None)[codes]

    for spec in normalize:
        step = Normalize(**spec)
        if len(step.inputs) == 1:
            codes, values = coded[step.column]
        else:  # each record's values joined in one: numbered as they are
            codes, values = pd.factorize(np.asarray(step.joined(
                {c: rows(c) for c in step.inputs}), dtype=object), use_na_sentinel=True)
            values = np.asarray(values, dtype=object)
        series = pd.Series(values, name=step.column, dtype=object)
        arrow = held.get(step.column) if len(step.inputs) == 1 else None
        if arrow is None:
            result = step.apply(series)
        else:  # the normalizer reads the distinct values as Arrow holds them (the same text)
            with distinct_arrow(series, arrow):
                result = step.apply(series)
        held.pop(step.target, None)
        coded.put(step.target, (codes, result.to_numpy(dtype=object)))
    # The columns already numbered first: a caller's first column (for the number of rows)
    # is then one that costs nothing more.
    order = sorted(coded, key=lambda column: not coded.made(column))
    return _Lazy({column: column for column in order}, rows), coded


class _Lazy(Mapping):
    """A mapping whose values are made on first use: `make(source)` for a key's source."""

    def __init__(self, sources: dict, make) -> None:
        self._sources, self._make, self._made = dict(sources), make, {}

    def put(self, key: str, value) -> None:
        """Set a value made elsewhere (a key, new or not, then has it)."""
        self._sources[key] = None
        self._made[key] = value

    def made(self, key: str) -> bool:
        return key in self._made

    def __getitem__(self, key):
        if key not in self._made:
            self._made[key] = self._make(self._sources[key])
        return self._made[key]

    def __contains__(self, key) -> bool:
        return key in self._sources

    def __iter__(self):
        return iter(self._sources)

    def __len__(self) -> int:
        return len(self._sources)


def _distinct_text(values: pd.Series) -> tuple[np.ndarray, np.ndarray, object]:
    """(codes, texts, arrow): a code per row, -1 where missing, into the column's distinct
    values as `as_text` writes them; and those values as Arrow strings where the column holds
    them so (else None). A column of strings is numbered as it is (its text is itself)."""
    if pd.api.types.is_string_dtype(values.dtype) and (
            values.dtype != object or pd.api.types.infer_dtype(values, skipna=True) == "string"):
        codes, uniques = pd.factorize(values, use_na_sentinel=True)
    else:
        codes, uniques = pd.factorize(as_text(values), use_na_sentinel=True)
    arrow = None
    if isinstance(getattr(uniques, "array", None), pd.arrays.ArrowStringArray):
        import pyarrow as pa

        arrow = pa.array(uniques.array)
    return np.asarray(codes, dtype=np.int64), np.asarray(uniques, dtype=object), arrow
