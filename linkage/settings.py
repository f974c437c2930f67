"""The rules of a run: what to normalize, how to block, compare, score and keep.

`Rules` is the one schema for Python and YAML: its constructor arguments are the YAML keys,
so `Rules.from_yaml(path).to_yaml()` round-trips and one validation path serves both.
"""

from __future__ import annotations

import contextlib
import hashlib
import inspect
import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import yaml

from linkage._schema import (
    EXPLICIT,
    Configurable,
    SchemaViolation,
    check,
    did_you_mean,
    explicit_defaults,
    is_default,
)
from linkage.blocking import Blocker
from linkage.comparators import Comparison
from linkage.errors import RulesError
from linkage.golden import GoldenRecord
from linkage.guards import Guard
from linkage.keep import KeepPolicy
from linkage.options import KeepPolicyName
from linkage.scoring import RuleSum, Scorer

# The text comparisons register their `type:` names when imported: cosine and jaccard; simhash.
# (The text blockers register with `linkage.blocking`.)
from linkage.text import embeddings as _embeddings  # noqa: F401
from linkage.text import simhash as _simhash  # noqa: F401


class _RepeatedKey(Exception):
    def __init__(self, key: object, line: int, first: int):
        self.key, self.line, self.first = key, line, first


class _UniqueKeyLoader(yaml.SafeLoader):
    """`yaml.safe_load`, but a key written twice in one mapping is an error, not the last
    one winning (a second `scoring:` block would replace the first without a word)."""

    def construct_mapping(self, node, deep=False):
        seen: dict[object, int] = {}
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":  # `<<:` merges are meant to repeat
                continue
            key = self.construct_object(key_node, deep=True)
            line = key_node.start_mark.line + 1
            try:
                if key in seen:
                    raise _RepeatedKey(key, line, seen[key])
            except TypeError:  # an unhashable key: let the base class say so
                continue
            seen[key] = line
        return super().construct_mapping(node, deep=deep)


def _normalizers() -> dict[str, Any]:
    from linkage.normalize import NORMALIZERS

    return NORMALIZERS


class Normalize(Configurable):
    """Normalize one column with a named normalizer and its options.

    YAML: `{column: phone, type: phone, country: KR}` (or `{column: phone, type: phone,
    country: GB, region_column: country}`: each record's national number read in its own
    country). The result replaces the column for
    blocking and comparison (or goes to `output`, a new column); input values are never
    changed in the outputs.
    """

    open_options = True

    def __init__(self, column: str, type: str, *, output: str | None = None, **options: Any):
        check(isinstance(column, str) and column != "", self, "column", "must be a column name",
              column)
        known = _normalizers()
        check(type in known, self, "type",
              f"must be one of {', '.join(repr(k) for k in sorted(known))}"
              + did_you_mean(str(type), sorted(known)), type)
        self.column = column
        self.type = type
        self.output = output
        self.options = dict(options)
        function = known[type]
        accepted = {
            n for n, p in inspect.signature(function).parameters.items()
            if p.kind is inspect.Parameter.KEYWORD_ONLY
        }
        for name in self.options:
            if name not in accepted:
                choices = ", ".join(sorted(accepted)) or "none"
                raise SchemaViolation(
                    name,
                    f"is not an option of the `{type}` normalizer; its options are: {choices}."
                    + did_you_mean(name, sorted(accepted)),
                    name,
                    "Normalize",
                )
        optional = getattr(function, "optional_inputs", ())
        for name in getattr(function, "input_options", ()):
            if name in optional and self.options.get(name) is None:
                continue
            check(isinstance(self.options.get(name), str) and self.options[name] != "", self,
                  name, f"must name the input column that holds the {name} (the `{type}` "
                  "step joins several columns)", self.options.get(name))
        try:  # a dry run on no data checks option values (an unknown `order`, say)
            function(pd.Series([], dtype=object, name=column), **self.options)
        except (ValueError, TypeError) as err:
            raise SchemaViolation("type", f"has invalid options: {err}", self.options,
                                  "Normalize") from None

    @staticmethod
    def has_on_error(type: str) -> bool:
        """Whether normalizer `type` takes `on_error` (can be told to stop on bad values)."""
        return "on_error" in inspect.signature(_normalizers()[type]).parameters

    @property
    def target(self) -> str:
        return self.output or self.column

    @property
    def inputs(self) -> list[str]:
        """The input columns the step reads: `column`, and for a step of several columns
        (`date_parts`: `month`, `day`) the columns its options name."""
        extra = getattr(_normalizers()[self.type], "input_options", ())
        return [self.column, *(self.options[o] for o in extra if self.options.get(o))]

    def joined(self, columns: dict[str, Any]) -> Any:
        """The values the step normalizes, from the input columns by name (arrays of one
        length): `column`'s values, or for a step of several columns each record's values
        joined in one (missing where any is missing)."""
        if len(self.inputs) == 1:
            return columns[self.column]
        from linkage.normalize import PARTS_SEPARATOR

        parts = [pd.Series(columns[c], dtype=object) for c in self.inputs]
        # An optional input (a phone step's column of regions) missing leaves the value.
        function = _normalizers()[self.type]
        optional = {self.options.get(o) for o in getattr(function, "optional_inputs", ())}
        missing = np.zeros(len(parts[0]), dtype=bool)
        for name, part in zip(self.inputs, parts, strict=True):
            if name == self.column or name not in optional:
                missing |= part.isna().to_numpy()
        text = parts[0].fillna("").astype(str)
        for part in parts[1:]:
            text = text + PARTS_SEPARATOR + part.fillna("").astype(str)
        return np.where(missing, None, text.to_numpy(dtype=object)).astype(object)

    def apply(self, values: pd.Series) -> pd.Series:
        return _normalizers()[self.type](values, **self.options)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"column": self.column, "type": self.type}
        if self.output:
            out["output"] = self.output
        # The normalizer's own defaults, like every default: written only when explicit.
        options = inspect.signature(_normalizers()[self.type]).parameters
        out.update({n: self.options.get(n, q.default) for n, q in options.items()
                    if q.kind is inspect.Parameter.KEYWORD_ONLY
                    and not is_default(q, self.options.get(n, q.default))})
        return out


class ExactStage(Configurable):
    """Group records whose (normalized) values are identical before blocking.

    `columns`: the columns to hash (all input columns but the id when left out); `normalize`:
    hash the `text`-normalized values (case, width, punctuation, spaces) instead of the raw
    ones. A 128-bit hash: for n records the chance of any collision is about n² / 2^129.
    """

    def __init__(self, *, columns: list[str] | None = None, normalize: bool = True):
        check(columns is None or len(columns) > 0, self, "columns",
              "must name at least one column, or be left out for all", columns)
        self.columns = None if columns is None else list(columns)
        self.normalize = normalize


class UrlStage(Configurable):
    """Group records whose URL is the same once normalized (scheme and host case, `www.`,
    default ports, fragments, tracking parameters such as utm_* and fbclid, parameter order,
    a trailing slash): a page crawled twice is one document. Runs before `exact`."""

    def __init__(self, column: str):
        check(isinstance(column, str) and column != "", self, "column",
              "must name the URL column", column)
        self.column = column


class SemanticStage(Configurable):
    """SemDeDup on a text column: k-means over sentence embeddings; inside each k-means
    cluster, pairs with cosine similarity above 1 - `epsilon` are duplicates.

    `model` and `epsilon` belong together (a threshold belongs to its model). `where` limits
    the stage to records whose column holds one of the listed values
    (`where: {source: [qa, synthetic]}`). `n_clusters` defaults to the square root of the
    records embedded. Pair it with `keep: farthest_from_centroid` to keep, as SemDeDup does,
    the least typical record of each group.
    """

    def __init__(
        self,
        column: str,
        *,
        model: str = "all-MiniLM-L6-v2",
        epsilon: float = 0.05,
        n_clusters: int | None = None,
        where: dict[str, list[str]] | None = None,
        seed: int = 0,
    ):
        check(isinstance(epsilon, int | float) and 0 < epsilon < 1, self, "epsilon",
              "must be in (0, 1): pairs above cosine 1 - epsilon are duplicates", epsilon)
        check(n_clusters is None or n_clusters >= 1, self, "n_clusters",
              "must be a positive whole number, or left out", n_clusters)
        self.column = column
        self.model = model
        self.epsilon = float(epsilon)
        self.n_clusters = n_clusters
        self.where = where
        self.seed = seed

    def to_dict(self) -> dict[str, Any]:
        out = super().to_dict()
        out.setdefault("model", self.model)  # always written beside its epsilon
        out.setdefault("epsilon", self.epsilon)
        return out


class Rules(Configurable):
    """Everything a run needs besides its data.

    Example::

        rules = Rules(
            id_column="customer_id",
            normalize=[Normalize("phone", "phone")],
            blocking=[KeyBlocker([["last(phone, 4)"], ["chosung(name)", "year(birth_date)"]])],
            comparisons=[JaroWinkler("name"), Exact("phone")],
            scoring=RuleSum(threshold=3.0),
        )
    """

    def __init__(
        self,
        *,
        id_column: str | None = None,
        normalize: list[Normalize] = (),
        blocking: list[Blocker] = (),
        comparisons: list[Comparison] = (),
        scoring: Scorer | None = None,
        keep: KeepPolicy | KeepPolicyName = "first",
        one_to_one: bool = False,
        one_to_one_threshold: str = "rules",
        max_pairs: int = 20_000_000,
        max_block_size: int = 5_000,
        source_column: str | None = None,
        report_columns: list[str] = (),
        text_columns: list[str] = (),
        max_removal_rate: float = 0.2,
        golden: GoldenRecord | None = None,
        guards: list[Guard] = (),
        exact: ExactStage | None = None,
        semantic: SemanticStage | None = None,
        url: UrlStage | None = None,
        group_by: str | list[str] | None = None,
        rename_right: dict[str, str] | None = None,
        split_weak_links: bool = True,
        split_non_matches: bool = True,
        join_labelled: bool = True,
    ):
        self.id_column = id_column
        check(rename_right is None or (isinstance(rename_right, dict) and all(
            isinstance(k, str) and k and isinstance(v, str) and v
            for k, v in rename_right.items())), self, "rename_right",
            "must map column names of the right table to the left table's names of the same "
            "field, e.g. `rename_right: {surname: last_name}`", rename_right)
        check(rename_right is None or len(set(rename_right.values())) == len(rename_right),
              self, "rename_right", "must give each left name once", rename_right)
        # A link of tables that name a field differently: the right table's columns are read
        # under the left names.
        self.rename_right = dict(rename_right) if rename_right else None
        check(isinstance(split_weak_links, bool), self, "split_weak_links",
              "must be true (split a cluster that only weak links hold together, see "
              "`linkage.clustering.split_weak_links`) or false (keep every connected "
              "component whole)", split_weak_links)
        self.split_weak_links = split_weak_links
        check(isinstance(split_non_matches, bool), self, "split_non_matches",
              "must be true (a cluster whose members were compared and scored as non-matches "
              "joins two of its groups only where the pairs compared between them sum to a "
              "positive weight, see `linkage.clustering.split_non_matches`) or false (keep it "
              "as its matched pairs connect it)", split_non_matches)
        self.split_non_matches = split_non_matches
        check(isinstance(join_labelled, bool), self, "join_labelled",
              "must be true (with --labels, a dedupe's clusters agree with them: a labelled "
              "match the clusters keep apart joins their clusters, see "
              "`linkage.clustering.labelled_joins`) or false (the labels only fit the model)",
              join_labelled)
        self.join_labelled = join_labelled
        columns = [group_by] if isinstance(group_by, str) else list(group_by or [])
        check(group_by is None or (len(columns) > 0 and all(
            isinstance(c, str) and c.strip() for c in columns)), self, "group_by",
            "must be a column name or a non-empty list of column names, e.g. `group_by: "
            "source` (leave it out to look for duplicates across the whole table)", group_by)
        check(len(set(columns)) == len(columns), self, "group_by",
              "must name each column once", group_by)
        self.group_by = group_by
        self.source_column = source_column
        self.report_columns = list(report_columns)
        # Measured before and after in summary.json; left out: the text columns compared.
        self.text_columns = list(text_columns)
        check(isinstance(max_removal_rate, int | float) and 0 <= max_removal_rate <= 1, self,
              "max_removal_rate", "must be a share in [0, 1]", max_removal_rate)
        self.max_removal_rate = float(max_removal_rate)
        self.normalize = list(normalize)
        self.blocking = list(blocking)
        self.comparisons = list(comparisons)
        self.scoring = scoring if scoring is not None else RuleSum()
        self.keep = KeepPolicy.coerce(keep)
        self.golden = golden
        self.guards = list(guards)
        self.exact = exact
        self.semantic = semantic
        self.url = url
        self.one_to_one = one_to_one
        check(one_to_one_threshold in ("rules", "record_prior"), self, "one_to_one_threshold",
              "must be `rules` (the scorer's threshold as written) or `record_prior` (with "
              "one_to_one and Fellegi-Sunter: lowered by what a record's own chance of having "
              "a match adds to its best candidate's odds, estimated from the fitted model; see "
              "`linkage.clustering.record_prior_shift`)", one_to_one_threshold)
        self.one_to_one_threshold = one_to_one_threshold
        if one_to_one_threshold == "record_prior":
            check(one_to_one is True and getattr(self.scoring, "kind", None) == "fellegi_sunter",
                  self, "one_to_one_threshold",
                  "must be `rules` unless the rules link one to one (`one_to_one: true`) with "
                  "a Fellegi-Sunter scorer: `record_prior` moves the threshold by the record's "
                  "own prior of having a match, which only a one-to-one link has and only a "
                  "fitted prior estimates. Add `one_to_one: true` and `scoring: {type: "
                  "fellegi_sunter}`, or leave `one_to_one_threshold` out",
                  one_to_one_threshold)
        self.max_pairs = max_pairs
        self.max_block_size = max_block_size
        check(len(self.blocking) > 0, self, "blocking",
              "must list at least one blocker (comparing every pair of records does not scale)",
              self.blocking)
        check(len(self.blocking) <= 62, self, "blocking", "must list at most 62 blockers",
              len(self.blocking))
        check(len(self.comparisons) > 0, self, "comparisons",
              "must list at least one comparison", self.comparisons)
        check(isinstance(max_pairs, int) and max_pairs > 0, self, "max_pairs",
              "must be a positive whole number", max_pairs)
        check(isinstance(max_block_size, int) and max_block_size >= 2, self, "max_block_size",
              "must be a whole number of at least 2", max_block_size)
        seen: dict[str, int] = {}
        for k, comparison in enumerate(self.comparisons):
            name = comparison.output_name
            if name in seen:
                raise SchemaViolation(
                    f"comparisons[{k}].name",
                    f"must be unique; `{name}` is also the name of comparisons[{seen[name]}]. "
                    "Give one of them a `name:`",
                    name,
                    "Rules",
                )
            seen[name] = k
        names = [b.name for b in self.blocking if b.name]
        check(len(set(names)) == len(names), self, "blocking", "must have unique names", names)
        if isinstance(self.scoring, RuleSum):
            try:
                self.scoring.validate_against(self.comparisons)
            except SchemaViolation as err:
                raise SchemaViolation(f"scoring.{err.field}", err.expected, err.got, "Rules")\
                    from None

    # -- reading and writing ------------------------------------------------------------------

    @classmethod
    def from_dict(cls, data: Any, *, source: str = "rules") -> Rules:  # type: ignore[override]
        if not isinstance(data, dict):
            msg = (
                f"{source}: the rules must be a mapping of keys such as `blocking:` and "
                f"`comparisons:`. Got {type(data).__name__} instead."
            )
            raise RulesError(msg)
        rules = super().from_dict(data, source=source)
        assert isinstance(rules, Rules)
        rules.source = source
        return rules

    @classmethod
    def from_yaml(cls, path: str | Path) -> Rules:
        """Read and validate a rules file; errors name the file and the key path inside it."""
        path = Path(path)
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise RulesError(f"{path}: no such rules file. Check the path.") from None
        except UnicodeDecodeError as err:
            raise RulesError(f"{path}: not UTF-8 text ({err.reason}). Save it as UTF-8.") from None
        try:
            data = yaml.load(text, Loader=_UniqueKeyLoader)
        except _RepeatedKey as err:
            msg = (
                f"{path}: line {err.line}: key `{err.key}` is written twice in one mapping "
                f"(first at line {err.first}); YAML would keep only the last silently. Merge "
                "the two, or delete the one you do not mean."
            )
            raise RulesError(msg) from None
        except yaml.YAMLError as err:
            mark = getattr(err, "problem_mark", None)
            where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
            problem = getattr(err, "problem", None) or str(err)
            msg = (
                f"{path}: not valid YAML{where}: {problem}. Check the indentation and that "
                "lists use `- ` and mappings use `key: value`."
            )
            raise RulesError(msg) from None
        if data is None:
            raise RulesError(f"{path}: the rules file is empty. See rules/customers.yaml.")
        return cls.from_dict(data, source=str(path))

    def to_dict(self) -> dict[str, Any]:
        out = super().to_dict()
        # A policy with nothing but its name reads best as the name: `keep: first`.
        if "keep" in out and self.keep.to_dict() == {"policy": self.keep.policy}:
            out["keep"] = self.keep.policy
            if out["keep"] == "first" and not EXPLICIT.get():  # a default, left out
                del out["keep"]
        return out

    def to_yaml(self, path: str | Path | None = None, *, explicit: bool = False) -> str:
        """The rules as YAML (written to `path` when given). `explicit`: every default written
        out too, as a run's `rules.yaml` is, so it means the same to any version."""
        with explicit_defaults() if explicit else contextlib.nullcontext():
            data = self.to_dict()
        text = self.comments + yaml.safe_dump(data, sort_keys=False, allow_unicode=True,
                                              width=100)
        if path is not None:
            Path(path).write_text(text, encoding="utf-8")
        return text

    def config_hash(self) -> str:
        """sha256 of the canonical rules, recorded in every run's summary."""
        canonical = json.dumps(self.to_dict(), sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(canonical.encode("utf-8")).hexdigest()

    @property
    def group_columns(self) -> list[str]:
        """The `group_by` columns as a list (empty without groups)."""
        return [self.group_by] if isinstance(self.group_by, str) else list(self.group_by or [])

    @property
    def source(self) -> str:
        return getattr(self, "_source", "rules")

    @source.setter
    def source(self, value: str) -> None:
        self._source = value

    @property
    def comments(self) -> str:
        """YAML comment lines written above the rules by `to_yaml` (a run's rules.yaml): for
        suggested rules, why each column, key and choice is there (`Suggestion.as_rules`)."""
        return getattr(self, "_comments", "")

    @comments.setter
    def comments(self, value: str) -> None:
        lines = value.splitlines()
        if any(line and not line.startswith("#") for line in lines):
            raise ValueError("comments must be YAML comment lines, each starting with '#'")
        self._comments = "".join(f"{line}\n" for line in lines)

    def columns(self) -> dict[str, str]:
        """Input columns the rules read, each with the first rules key that reads it."""
        produced = {n.output for n in self.normalize if n.output}
        needed: dict[str, str] = {}
        for k, n in enumerate(self.normalize):
            for c in n.inputs:
                needed.setdefault(c, f"normalize[{k}].column")
        for k, b in enumerate(self.blocking):
            for c in b.columns:
                needed.setdefault(c, f"blocking[{k}]")
        for k, c in enumerate(self.comparisons):
            needed.setdefault(c.column, f"comparisons[{k}].column")
            for other in c.columns[1:]:
                needed.setdefault(other, f"comparisons[{k}].swapped_with")
        if self.source_column:
            needed.setdefault(self.source_column, "source_column")
        for c in self.keep.columns:
            needed.setdefault(c, "keep.column")
        for c in (self.golden.columns if self.golden else []):
            needed.setdefault(c, "golden")
        if self.url is not None:
            needed.setdefault(self.url.column, "url.column")
        if self.semantic is not None:
            needed.setdefault(self.semantic.column, "semantic.column")
            for c in self.semantic.where or {}:
                needed.setdefault(c, "semantic.where")
        for k, c in enumerate((self.exact.columns or []) if self.exact else []):
            needed.setdefault(c, f"exact.columns[{k}]")
        for k, guard in enumerate(self.guards):
            for key, columns in guard.input_columns().items():
                for c in columns:
                    needed.setdefault(c, f"guards[{k}].{key}")
        for k, c in enumerate(self.report_columns):
            needed.setdefault(c, f"report_columns[{k}]")
        for k, c in enumerate(self.text_columns):
            needed.setdefault(c, f"text_columns[{k}]")
        for k, c in enumerate(self.group_columns):
            needed.setdefault(c, "group_by" if isinstance(self.group_by, str)
                              else f"group_by[{k}]")
        return {c: where for c, where in needed.items() if c not in produced}
