"""Great Expectations (1.x) expectations built on linkage's own checks, for pandas and Spark
batches.

    import great_expectations as gx
    from linkage.checks.gx import (ExpectDuplicateRateToBeBelow, ephemeral_context,
                                   ExpectNoExactDuplicatesAfterNormalization,
                                   ExpectNoTrainEvalLeakage)

    context = ephemeral_context()                     # in memory, offline, quiet
    batch = (context.data_sources.add_pandas("etl").add_dataframe_asset("customers")
             .add_batch_definition_whole_dataframe("all"))
    suite = context.suites.add(gx.ExpectationSuite(name="customers"))
    suite.add_expectation(ExpectDuplicateRateToBeBelow(rules="rules/customers.yaml",
                                                       max_rate=0.01))
    validation = context.validation_definitions.add(
        gx.ValidationDefinition(name="gate", data=batch, suite=suite))
    validation.run(batch_parameters={"dataframe": frame}).success

The three expectations:

- `ExpectDuplicateRateToBeBelow`: linkage's dedupe with the given rules; succeeds when the
  share of records marked duplicate is at most `max_rate` (the test `linkage check` makes).
- `ExpectNoExactDuplicatesAfterNormalization`: fails when two rows are identical once the
  chosen columns are normalized (case, width, spaces, punctuation; or a named normalizer).
- `ExpectNoTrainEvalLeakage`: the batch is a training set; fails when an item of `eval_data`
  shares an n-gram passage, or its whole normalized text, with a training record.

Each is a `BatchExpectation` whose measurement is a table metric registered for the pandas
and the Spark execution engines (`linkage.duplicate_rate`, `linkage.normalized_duplicates`,
`linkage.train_eval_leakage`), so it mixes with stock expectations in any suite, validation
definition or checkpoint. On Spark the metric collects the batch to the driver (`toPandas`)
and measures it with linkage's local engine: the same numbers as on pandas, for batches that
fit in the driver's memory (`linkage check --engine spark` is the gate for larger tables).

Results follow `result_format` as GX's own expectations do: BOOLEAN_ONLY (success only),
BASIC (the observed value and the counts), SUMMARY (plus up to `partial_unexpected_count`
example clusters or rows), COMPLETE (every measured field). In Data Docs each expectation reads
as a sentence ("Linkage's dedupe with rules rules/customers.yaml must mark at most 1% of the
records as duplicates."), its observed value as a sentence, and its examples as a table, through
both the atomic and the legacy renderers.

`gate_suite(rules)` builds a ready suite for a rules file (columns exist, ids unique and not
null, no normalized copies, the duplicate rate), and `gate_checkpoint(context, suite)` a
checkpoint on a pandas data source that updates Data Docs; docs/ETL.md shows them run.

Parameters are checked when an expectation is made: a bad value raises `linkage.errors`'
`RulesError` or `InputError` (not a pydantic error), naming the parameter, file or key and the
fix. Problems only the data can show (a column missing from the batch) fail the expectation,
with the message in the result's `exception_info`.

Importing this module imports Great Expectations, with `GX_ANALYTICS_ENABLED=False` set
beforehand unless the environment already says otherwise; `import linkage` never imports it.
It also imports in a `python -c` script, where GX's import of pyspark would otherwise end the
process with exit code 0 (`_not_taken_for_doctests`): a gate that exits 0 without checking.
"""

from __future__ import annotations

import os
import sys
import warnings
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any, ClassVar

import pandas as pd

from linkage.checks import measures
from linkage.errors import InputError, RulesError

os.environ.setdefault("GX_ANALYTICS_ENABLED", "False")  # set before GX loads: no network


@contextmanager
def _not_taken_for_doctests() -> Iterator[None]:
    """Where pyspark is installed, GX imports `pyspark.sql.connect`, which takes a `__main__`
    module with neither `__spec__` nor `__file__` (`python -c "..."`, a heredoc on standard
    input) for pyspark's own doctest run and, when Spark Connect's extra packages (grpcio) are
    missing, calls `sys.exit(0)` on import: the caller's gate would end with success without
    checking anything. While GX loads, such a process is marked interactive (`sys.ps1`, the
    one thing pyspark checks besides), and unmarked after."""
    main = sys.modules.get("__main__")
    mark = (main is not None and getattr(main, "__spec__", None) is None
            and not hasattr(main, "__file__") and not hasattr(sys, "ps1"))
    if mark:
        sys.ps1 = ""
    try:
        yield
    finally:
        if mark:
            del sys.ps1


with warnings.catch_warnings(), _not_taken_for_doctests():
    # GX imports pyspark when it is installed, and pyspark warns about pandas 3 at import.
    warnings.filterwarnings("ignore", message="PySpark does not yet", category=FutureWarning)
    try:
        import great_expectations as gx
        from great_expectations.compatibility import pydantic
        from great_expectations.core.metric_domain_types import MetricDomainTypes
        from great_expectations.core.result_format import ResultFormat
        from great_expectations.execution_engine import (
            PandasExecutionEngine,
            SparkDFExecutionEngine,
        )
        from great_expectations.expectations.expectation import (
            BatchExpectation,
            render_suite_parameter_string,
        )
        from great_expectations.expectations.expectation_configuration import parse_result_format
        from great_expectations.expectations.metrics.metric_provider import metric_value
        from great_expectations.expectations.metrics.table_metric_provider import (
            TableMetricProvider,
        )
        from great_expectations.render import (
            AtomicDiagnosticRendererType,
            LegacyDiagnosticRendererType,
            LegacyRendererType,
            RenderedAtomicContent,
            RenderedStringTemplateContent,
            RenderedTableContent,
            renderedAtomicValueSchema,
        )
        from great_expectations.render.renderer.renderer import renderer
        from great_expectations.render.renderer_configuration import (
            RendererConfiguration,
            RendererValueType,
        )
    except ImportError as err:
        raise ImportError(
            "linkage.checks.gx needs Great Expectations 1.x: pip install \"linkage[gx]\""
        ) from err

__all__ = [
    "ExpectDuplicateRateToBeBelow",
    "ExpectNoExactDuplicatesAfterNormalization",
    "ExpectNoTrainEvalLeakage",
    "ephemeral_context",
    "gate_checkpoint",
    "gate_suite",
    "results_table",
]


def _batch(execution_engine, metric_domain_kwargs) -> pd.DataFrame:
    frame, _, _ = execution_engine.get_compute_domain(
        metric_domain_kwargs, domain_type=MetricDomainTypes.TABLE
    )
    return frame


def _spark_batch(execution_engine, metric_domain_kwargs) -> pd.DataFrame:
    """A Spark batch as pandas, on the driver (`toPandas`, through Arrow when enabled).

    The measurements are linkage's local engine's, so a Spark batch is brought to the driver
    whole: its rows must fit in the driver's memory (and `spark.driver.maxResultSize`). For
    tables past that, run `linkage check --engine spark` instead, which dedupes on the cluster.
    Values come back as Spark holds them: strings as str, nulls as None."""
    from linkage.engines.spark.session import quiet_pyspark

    frame = _batch(execution_engine, metric_domain_kwargs)
    with quiet_pyspark():
        return frame.toPandas()


# --- metrics: the measurements of linkage.checks.measures, for the pandas and Spark engines ---


def _providers(measure):
    """The engine methods of a metric provider: the batch of either engine (a Spark one
    brought to the driver, `_spark_batch`) measured by `measure(frame, value_kwargs)`."""

    @metric_value(engine=PandasExecutionEngine)
    def _pandas(cls, execution_engine, metric_domain_kwargs, metric_value_kwargs, metrics,
                runtime_configuration):
        return measure(_batch(execution_engine, metric_domain_kwargs), metric_value_kwargs)

    @metric_value(engine=SparkDFExecutionEngine)
    def _spark(cls, execution_engine, metric_domain_kwargs, metric_value_kwargs, metrics,
               runtime_configuration):
        return measure(_spark_batch(execution_engine, metric_domain_kwargs),
                       metric_value_kwargs)

    return _pandas, _spark


def _duplicate_rate(frame: pd.DataFrame, kwargs: dict) -> dict:
    return measures.duplicate_rate(frame, kwargs["rules"], id_column=kwargs.get("id_column"),
                                   max_examples=kwargs["max_examples"])


def _normalized_duplicates(frame: pd.DataFrame, kwargs: dict) -> dict:
    return measures.normalized_duplicates(frame, kwargs["columns"], kwargs.get("normalize"),
                                          id_column=kwargs.get("id_column"),
                                          max_examples=kwargs["max_examples"])


def _train_eval_leakage(frame: pd.DataFrame, kwargs: dict) -> dict:
    kwargs = dict(kwargs)
    eval_data = kwargs.pop("eval_data")
    return measures.train_eval_leakage(frame, eval_data, **kwargs)


class DuplicateRate(TableMetricProvider):
    """Linkage's dedupe on the batch: records, duplicates, their rate, example clusters."""

    metric_name = "linkage.duplicate_rate"
    value_keys = ("rules", "id_column", "max_examples")
    _pandas, _spark = _providers(_duplicate_rate)


class NormalizedDuplicates(TableMetricProvider):
    """Groups of batch rows identical after normalizing the chosen columns."""

    metric_name = "linkage.normalized_duplicates"
    value_keys = ("columns", "normalize", "id_column", "max_examples")
    _pandas, _spark = _providers(_normalized_duplicates)


class TrainEvalLeakage(TableMetricProvider):
    """Eval items sharing a passage with the batch (the training set)."""

    metric_name = "linkage.train_eval_leakage"
    value_keys = ("eval_data", "text_column", "ngram", "char_ngram", "train_id", "eval_id",
                  "max_examples")
    _pandas, _spark = _providers(_train_eval_leakage)


# --- parameter checks, shared ---------------------------------------------------------------


def _check_max_examples(owner: str, value: Any) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise RulesError(f"{owner}: `max_examples` must be a whole number ≥ 0. Got {value!r} "
                         "instead.")


def _check_name(owner: str, parameter: str, value: Any) -> None:
    if value is not None and (not isinstance(value, str) or not value):
        raise RulesError(f"{owner}: `{parameter}` must be a column name. Got {value!r} instead.")


# --- rendering and result_format, shared ----------------------------------------------------


def _count(value: Any) -> str:
    return f"{value:,}" if isinstance(value, int) and not isinstance(value, bool) else str(value)


def _percent(share: Any) -> str:
    """0.01 -> '1%', 0.0125 -> '1.25%' (up to 4 significant digits, no trailing zeros)."""
    if isinstance(share, bool) or not isinstance(share, int | float):
        return str(share)
    return f"{float(share) * 100:.4g}%"


def _cell(value: Any) -> str:
    if isinstance(value, list | tuple):
        return ", ".join(_cell(v) for v in value)
    if isinstance(value, dict):
        return "; ".join(f"{k}: {_cell(v)}" for k, v in value.items())
    return "null" if value is None else str(value)


class _LinkageExpectation(BatchExpectation):
    """What linkage's expectations share: Data Docs renderers (a sentence for the expectation,
    a sentence for what was observed, the example clusters/rows as a table, atomic and legacy)
    and results shaped by `result_format` as GX's own expectations shape theirs:

    - BOOLEAN_ONLY: `success` alone (GX empties the result);
    - BASIC: `observed_value` and the counts;
    - SUMMARY: BASIC plus `examples`, at most `partial_unexpected_count` of them (default 20)
      and at most `max_examples`;
    - COMPLETE: everything measured, every example the metric listed (`max_examples`), the
      parameters echoed, and any warnings the run gave.

    Subclasses give `_sentence`, `_observed`, `_sample` and `_BASIC_KEYS`; `_validate` stays
    abstract here, so GX registers only the subclasses.
    """

    _BASIC_KEYS: ClassVar[tuple[str, ...]] = ()

    # --- what each expectation says -------------------------------------------------------

    @classmethod
    def _sentence(cls, kwargs: dict) -> tuple[str, dict[str, str]]:  # pragma: no cover
        raise NotImplementedError

    @classmethod
    def _observed(cls, result: dict) -> str | None:  # pragma: no cover
        raise NotImplementedError

    @classmethod
    def _sample(cls, result: dict) -> tuple[list[str], list[list[str]]] | None:
        raise NotImplementedError  # pragma: no cover

    # --- result_format --------------------------------------------------------------------

    def _shaped(self, result: dict, runtime_configuration: dict | None) -> dict:
        chosen = parse_result_format((runtime_configuration or {}).get("result_format")
                                     or ResultFormat.BASIC)
        level = str(getattr(chosen["result_format"], "value", chosen["result_format"]))
        if level == ResultFormat.COMPLETE.value:
            return result
        if level == ResultFormat.BOOLEAN_ONLY.value:
            return {}
        shaped = {key: result[key] for key in ("observed_value", *self._BASIC_KEYS)
                  if key in result}
        if level == ResultFormat.SUMMARY.value:
            shaped["examples"] = result.get("examples", [])[:chosen["partial_unexpected_count"]]
        return shaped

    # --- renderers ------------------------------------------------------------------------

    @classmethod
    def _kwargs(cls, configuration, result) -> dict:
        if configuration is None and result is not None:
            configuration = result.expectation_config
        return dict(configuration.kwargs) if configuration is not None else {}

    @classmethod
    def _prescriptive_template(cls, renderer_configuration: RendererConfiguration):
        template, params = cls._sentence(dict(renderer_configuration.kwargs))
        for name, value in params.items():
            renderer_configuration.add_param(name=name, param_type=RendererValueType.STRING,
                                             value=value)
        renderer_configuration.template_str = template
        return renderer_configuration

    @classmethod
    @renderer(renderer_type=LegacyRendererType.PRESCRIPTIVE)
    @render_suite_parameter_string
    def _prescriptive_renderer(cls, configuration=None, result=None,
                               runtime_configuration=None):
        template, params = cls._sentence(cls._kwargs(configuration, result))
        styling = (runtime_configuration or {}).get("styling", {})
        return [RenderedStringTemplateContent(
            content_block_type="string_template",
            string_template={"template": template, "params": params, "styling": styling},
        )]

    @classmethod
    def _observed_text(cls, result) -> str:
        measured = (result.result if result is not None else None) or {}
        if result is not None and result.exception_info and not measured:
            info = result.exception_info
            if "exception_message" not in info:
                info = next(iter(info.values()), {}) if info else {}
            if info.get("raised_exception"):
                return f"Could not run: {info.get('exception_message')}"
        return (cls._observed(measured) if measured else None) or "--"

    @classmethod
    @renderer(renderer_type=AtomicDiagnosticRendererType.OBSERVED_VALUE)
    def _atomic_diagnostic_observed_value(cls, configuration=None, result=None,
                                          runtime_configuration=None):
        renderer_configuration = RendererConfiguration(
            configuration=configuration or (result.expectation_config if result else None),
            result=result, runtime_configuration=runtime_configuration)
        renderer_configuration.add_param(name="observed_value",
                                         param_type=RendererValueType.STRING,
                                         value=cls._observed_text(result))
        value = renderedAtomicValueSchema.load({
            "template": "$observed_value",
            "params": renderer_configuration.params.dict(),
            "schema": {"type": "com.superconductive.rendered.string"},
        })
        return RenderedAtomicContent(name=AtomicDiagnosticRendererType.OBSERVED_VALUE,
                                     value=value, value_type="StringValueType")

    @classmethod
    @renderer(renderer_type=LegacyDiagnosticRendererType.OBSERVED_VALUE)
    def _diagnostic_observed_value_renderer(cls, configuration=None, result=None,
                                            runtime_configuration=None):
        return cls._observed_text(result)

    @classmethod
    @renderer(renderer_type=LegacyDiagnosticRendererType.UNEXPECTED_TABLE)
    def _diagnostic_unexpected_table_renderer(cls, configuration=None, result=None,
                                              runtime_configuration=None):
        measured = (result.result if result is not None else None) or {}
        sample = cls._sample(measured) if measured.get("examples") else None
        if not sample:
            return None
        header, rows = sample
        return [RenderedTableContent(
            content_block_type="table",
            header_row=header,
            table=rows,
            styling={"body": {"classes": ["table-bordered", "table-sm", "mt-3"]}},
        )]


# --- the expectations ------------------------------------------------------------------------


class ExpectDuplicateRateToBeBelow(_LinkageExpectation):
    """Expect linkage's dedupe, with `rules`, to mark at most `max_rate` of the records as
    duplicates: the same test as `linkage check --max-duplicate-rate`, inside a GX suite.

    Args:
        rules: the path of a rules YAML file, a mapping of rules keys, or a `linkage.Rules`
            (kept as its mapping, so the suite can be saved).
        max_rate: the largest acceptable share of duplicate records, in [0, 1] (0.01 is 1%).
        id_column: the record id column, overriding the rules' `id_column`.
        max_examples: how many clusters with duplicates to list in the result.

    Result: `observed_value` (the rate), `duplicate_rate`, `max_rate`, `records`,
    `duplicates`, `clusters_with_duplicates`, `examples` (cluster id, kept id, member ids),
    `rules_hash`, `warnings` (what the run warned about).
    """

    rules: str | dict
    max_rate: float = 0.01
    id_column: str | None = None
    max_examples: int = measures.MAX_EXAMPLES

    metric_dependencies: ClassVar[tuple[str, ...]] = ("linkage.duplicate_rate",)
    success_keys: ClassVar[tuple[str, ...]] = ("rules", "max_rate", "id_column", "max_examples")

    class Config:
        title = "Expect duplicate rate to be below"

    @pydantic.root_validator(pre=True)
    def _check_parameters(cls, values: dict) -> dict:
        owner = "ExpectDuplicateRateToBeBelow"
        if values.get("rules") is None:
            raise RulesError(f"{owner}: `rules` is required: the path of a rules YAML file "
                             "(e.g. rules='rules/customers.yaml') or a mapping of rules keys.")
        rules = values["rules"]
        loaded = measures.load_rules(rules, owner=owner)  # fails early, naming file and key
        if isinstance(rules, Path):
            values["rules"] = str(rules)
        elif not isinstance(rules, str | Mapping):  # a Rules object: keep its plain mapping
            values["rules"] = loaded.to_dict()
        elif isinstance(rules, Mapping):
            values["rules"] = dict(rules)
        rate = values.get("max_rate", 0.01)
        if isinstance(rate, bool) or not isinstance(rate, int | float) or not 0 <= rate <= 1:
            raise RulesError(f"{owner}: `max_rate` must be a share in [0, 1]. Got {rate!r} "
                             "instead (1% is 0.01).")
        _check_name(owner, "id_column", values.get("id_column"))
        _check_max_examples(owner, values.get("max_examples", measures.MAX_EXAMPLES))
        return values

    def _validate(self, metrics: dict, runtime_configuration: dict | None = None,
                  execution_engine=None) -> dict:
        measured = metrics["linkage.duplicate_rate"]
        rate = measured["duplicate_rate"]
        result = {"observed_value": rate, "max_rate": self.max_rate, **measured}
        return {"success": rate <= self.max_rate,
                "result": self._shaped(result, runtime_configuration)}

    _BASIC_KEYS: ClassVar[tuple[str, ...]] = ("max_rate", "duplicate_rate", "records",
                                              "duplicates", "clusters_with_duplicates")

    @classmethod
    def _sentence(cls, kwargs: dict) -> tuple[str, dict[str, str]]:
        rules = kwargs.get("rules")
        named = (f"rules {rules}" if isinstance(rules, str)
                 else "the rules given inline" if rules is not None else "its rules")
        template = ("Linkage's dedupe with $rules must mark at most $max_rate of the records "
                    "as duplicates.")
        params = {"rules": named, "max_rate": _percent(kwargs.get("max_rate", 0.01))}
        if kwargs.get("id_column"):
            template += " Records are named by $id_column."
            params["id_column"] = str(kwargs["id_column"])
        return template, params

    @classmethod
    def _observed(cls, result: dict) -> str | None:
        if "duplicates" not in result:
            return None
        clusters = result.get("clusters_with_duplicates")
        text = (f"{_count(result['duplicates'])} of {_count(result['records'])} records "
                f"({_percent(result['duplicate_rate'])}) marked as duplicates")
        if clusters is not None:
            text += f", in {_count(clusters)} clusters"
        return text + "."

    @classmethod
    def _sample(cls, result: dict):
        """One row per record of each example cluster: the cluster, the record's id, whether
        it is kept or marked duplicate, and its values (results from before the values were
        listed show the ids alone)."""
        examples = result["examples"]
        columns = list(dict.fromkeys(c for e in examples for r in e.get("records") or []
                                     for c in r))
        rows = []
        for e in examples:
            records = e.get("records") or [{} for _ in e.get("ids", [])]
            actions = e.get("actions") or ["" for _ in e.get("ids", [])]
            for record_id, action, record in zip(e.get("ids", []), actions, records,
                                                 strict=False):
                rows.append([_cell(e.get("cluster_id")), _cell(record_id), _cell(action),
                             *(_cell(record.get(c)) for c in columns)])
        return ["Cluster", "Record", "Action", *columns], rows


class ExpectNoExactDuplicatesAfterNormalization(_LinkageExpectation):
    """Expect no two rows to be identical in `columns` once those are normalized.

    Without a `normalize` step a column goes through the `text` normalizer (NFKC, case-fold,
    punctuation to spaces, white space collapsed), so "Kim  Min-su" and "kim min su" are equal.
    `normalize` takes steps as in the rules' normalize section, `{column, type, options}`,
    e.g. `{"column": "phone", "type": "phone", "country": "KR"}` makes "+82 10-1234-5678"
    and "010 1234 5678" equal; a step replaces the text normalizer for its column.
    Rows with nothing in any of the columns are never counted as copies.

    Args:
        columns: the columns to compare (at least one).
        normalize: optional normalize steps for some of `columns`.
        id_column: a column whose values name the rows in the result (positions otherwise).
        max_examples: how many groups of identical rows to list in the result.

    Result: `observed_value` (rows that copy an earlier row), `records`, `duplicate_rows`,
    `groups`, `rows_in_groups`, `examples` (row positions, ids, the shared normalized values).
    """

    columns: list[str]
    normalize: list[dict] | None = None
    id_column: str | None = None
    max_examples: int = measures.MAX_EXAMPLES

    metric_dependencies: ClassVar[tuple[str, ...]] = ("linkage.normalized_duplicates",)
    success_keys: ClassVar[tuple[str, ...]] = ("columns", "normalize", "id_column",
                                               "max_examples")

    class Config:
        title = "Expect no exact duplicates after normalization"

    @pydantic.root_validator(pre=True)
    def _check_parameters(cls, values: dict) -> dict:
        owner = "ExpectNoExactDuplicatesAfterNormalization"
        columns = values.get("columns")
        if isinstance(columns, str):
            columns = values["columns"] = [columns]
        if (not isinstance(columns, list | tuple) or not columns
                or not all(isinstance(c, str) and c for c in columns)):
            raise RulesError(f"{owner}: `columns` must list at least one column name, e.g. "
                             f"columns=['name', 'phone']. Got {columns!r} instead.")
        values["columns"] = list(columns)
        normalize = values.get("normalize")
        measures.normalize_steps(normalize, columns, owner=owner)
        if normalize is not None:
            values["normalize"] = [dict(step) for step in normalize]
        _check_name(owner, "id_column", values.get("id_column"))
        _check_max_examples(owner, values.get("max_examples", measures.MAX_EXAMPLES))
        return values

    def _validate(self, metrics: dict, runtime_configuration: dict | None = None,
                  execution_engine=None) -> dict:
        measured = metrics["linkage.normalized_duplicates"]
        result = {"observed_value": measured["duplicate_rows"], **measured}
        return {"success": measured["groups"] == 0,
                "result": self._shaped(result, runtime_configuration)}

    _BASIC_KEYS: ClassVar[tuple[str, ...]] = ("records", "duplicate_rows", "groups",
                                              "rows_in_groups")

    @classmethod
    def _sentence(cls, kwargs: dict) -> tuple[str, dict[str, str]]:
        columns = kwargs.get("columns") or []
        steps = {step.get("column"): step.get("type") for step in kwargs.get("normalize") or []}
        how = ", ".join(f"{c} as {steps[c]}" if c in steps else f"{c} as text" for c in columns)
        template = ("No two rows may be identical in $columns once normalized ($how).")
        return template, {"columns": ", ".join(map(str, columns)), "how": how}

    @classmethod
    def _observed(cls, result: dict) -> str | None:
        if "duplicate_rows" not in result:
            return None
        return (f"{_count(result['duplicate_rows'])} of {_count(result['records'])} rows copy "
                f"an earlier row, in {_count(result['groups'])} groups.")

    @classmethod
    def _sample(cls, result: dict):
        examples = result["examples"]
        columns = list(examples[0].get("normalized", {}))
        with_ids = any("ids" in e for e in examples)
        header = ["Rows", *(["Ids"] if with_ids else []), *columns]
        rows = [[_cell(e.get("rows")), *([_cell(e.get("ids"))] if with_ids else []),
                 *(_cell(e.get("normalized", {}).get(c)) for c in columns)] for e in examples]
        return header, rows


class ExpectNoTrainEvalLeakage(_LinkageExpectation):
    """Expect no item of `eval_data` to appear in the batch, the training set: no shared
    `ngram`-word passage (`char_ngram` characters for Hangul/CJK text), and no identical
    normalized text. The finding is `linkage decontaminate`'s.

    Args:
        eval_data: the evaluation set: the path of a CSV or Parquet file (read when the suite
            runs), or a DataFrame (its `text_column` and `eval_id` columns are kept in the
            expectation, so the suite can be saved; use a path for a large eval set).
        text_column: the text column, in both tables.
        ngram: words in a shared passage that counts as a leak (13, as in the GPT-3 study).
        char_ngram: characters per n-gram for Hangul/CJK text (default 3 × ngram).
        train_id, eval_id: id columns of the batch and of `eval_data` (row numbers otherwise).
        max_examples: how many leaked eval items to list in the result.

    Result: `observed_value` (leaked eval items), `eval_records`, `leaked_eval_items`,
    `leak_rate`, `exact_matches`, `train_records`, `contaminated_train_records`, `ngram`,
    `char_ngram`, `examples` (eval id, train id, exact or not, a shared passage).
    """

    eval_data: str | dict
    text_column: str = "text"
    ngram: int = 13
    char_ngram: int | None = None
    train_id: str | None = None
    eval_id: str | None = None
    max_examples: int = measures.MAX_EXAMPLES

    metric_dependencies: ClassVar[tuple[str, ...]] = ("linkage.train_eval_leakage",)
    success_keys: ClassVar[tuple[str, ...]] = ("eval_data", "text_column", "ngram",
                                               "char_ngram", "train_id", "eval_id",
                                               "max_examples")

    class Config:
        title = "Expect no train/eval leakage"

    @pydantic.root_validator(pre=True)
    def _check_parameters(cls, values: dict) -> dict:
        owner = "ExpectNoTrainEvalLeakage"
        text_column = values.setdefault("text_column", "text")
        _check_name(owner, "text_column", text_column)
        _check_name(owner, "train_id", values.get("train_id"))
        _check_name(owner, "eval_id", values.get("eval_id"))
        for name, default in (("ngram", 13), ("char_ngram", None)):
            value = values.get(name, default)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int)
                                      or value < 1):
                raise RulesError(f"{owner}: `{name}` must be a whole number ≥ 1. Got "
                                 f"{value!r} instead.")
        _check_max_examples(owner, values.get("max_examples", measures.MAX_EXAMPLES))
        values["eval_data"] = _eval_parameter(owner, values.get("eval_data"), text_column,
                                              values.get("eval_id"))
        return values

    def _validate(self, metrics: dict, runtime_configuration: dict | None = None,
                  execution_engine=None) -> dict:
        measured = metrics["linkage.train_eval_leakage"]
        result = {"observed_value": measured["leaked_eval_items"], **measured}
        return {"success": measured["leaked_eval_items"] == 0,
                "result": self._shaped(result, runtime_configuration)}

    _BASIC_KEYS: ClassVar[tuple[str, ...]] = ("eval_records", "leaked_eval_items", "leak_rate",
                                              "exact_matches", "train_records",
                                              "contaminated_train_records")

    @classmethod
    def _sentence(cls, kwargs: dict) -> tuple[str, dict[str, str]]:
        eval_data = kwargs.get("eval_data")
        named = (eval_data if isinstance(eval_data, str)
                 else "the eval set given inline" if eval_data is not None else "the eval set")
        ngram = kwargs.get("ngram", 13)
        char_ngram = kwargs.get("char_ngram") or 3 * ngram
        template = ("No item of $eval_data may share a $ngram-word passage ($char_ngram "
                    "characters for Hangul/CJK), or its whole normalized text, with a record "
                    "of this training set, in column $text_column.")
        return template, {"eval_data": str(named), "ngram": str(ngram),
                          "char_ngram": str(char_ngram),
                          "text_column": str(kwargs.get("text_column", "text"))}

    @classmethod
    def _observed(cls, result: dict) -> str | None:
        if "leaked_eval_items" not in result:
            return None
        return (f"{_count(result['leaked_eval_items'])} of {_count(result['eval_records'])} "
                f"eval items leaked ({_percent(result['leak_rate'])}), "
                f"{_count(result['exact_matches'])} of them identical.")

    @classmethod
    def _sample(cls, result: dict):
        rows = [[_cell(e.get("eval_id")), _cell(e.get("train_id")),
                 "yes" if e.get("exact_match") else "no", _cell(e.get("example_ngram"))]
                for e in result["examples"]]
        return ["Eval item", "Training record", "Identical", "Shared passage"], rows


def _eval_parameter(owner: str, eval_data: Any, text_column: str, eval_id: str | None):
    """`eval_data` as the expectation keeps it: a path as text, a DataFrame as a mapping of
    the columns it needs (column -> list of JSON-ready values)."""
    if eval_data is None:
        raise InputError(f"{owner}: `eval_data` is required: the evaluation set, as a DataFrame "
                         "or the path of a CSV or Parquet file.")
    if isinstance(eval_data, str | Path):
        path = Path(eval_data)
        if not path.exists():
            raise InputError(f"{owner}: eval_data {str(path)!r}: no such file. Check the path "
                             "(relative paths start from the working directory).")
        return str(path)
    if isinstance(eval_data, Mapping):  # already kept, e.g. when GX rebuilds the expectation
        eval_data = pd.DataFrame(dict(eval_data))
    if not isinstance(eval_data, pd.DataFrame):
        raise InputError(f"{owner}: `eval_data` must be a DataFrame or the path of a CSV or "
                         f"Parquet file. Got {type(eval_data).__name__} instead.")
    needed = [text_column] + ([eval_id] if eval_id is not None else [])
    measures.require_columns(eval_data, needed, owner=owner, table="eval_data",
                             parameter="eval_id" if text_column in eval_data else "text_column")
    return {column: measures.plain_list(eval_data[column]) for column in needed}


# --- helpers ---------------------------------------------------------------------------------


def ephemeral_context():
    """A Great Expectations context that lives in memory: nothing written to disk, analytics
    off, no progress bars (they would clutter notebooks and logs)."""
    from great_expectations.data_context.types.base import (
        DataContextConfig,
        InMemoryStoreBackendDefaults,
        ProgressBarsConfig,
    )

    config = DataContextConfig(
        store_backend_defaults=InMemoryStoreBackendDefaults(init_temp_docs_sites=False),
        analytics_enabled=False,
        progress_bars=ProgressBarsConfig(globally=False, metric_calculations=False),
    )
    return gx.get_context(mode="ephemeral", project_config=config)


def results_table(validation_result) -> pd.DataFrame:
    """One row per expectation of a validation (or checkpoint) result: its type, the column
    it looked at, success, the observed value, and the error message when it could not run."""
    results = getattr(validation_result, "run_results", None)
    if results is not None:  # a CheckpointResult: every validation's results, in order
        items = [r for run in results.values() for r in run.results]
    else:
        items = list(validation_result.results)
    columns: dict[str, list] = {name: [] for name in
                                ("expectation", "column", "success", "observed_value", "error")}
    for item in items:
        config = item.expectation_config
        info = item.exception_info or {}
        if "exception_message" not in info:  # keyed by metric when a metric failed
            info = next(iter(info.values()), {}) if info else {}
        columns["expectation"].append(config.type)
        columns["column"].append(config.kwargs.get("column"))
        columns["success"].append(bool(item.success))
        columns["observed_value"].append((item.result or {}).get("observed_value"))
        columns["error"].append(
            info.get("exception_message") if info.get("raised_exception") else None
        )
    return pd.DataFrame({name: pd.Series(values, dtype=bool if name == "success" else object)
                         for name, values in columns.items()})


# --- a ready suite and checkpoint -----------------------------------------------------------


def gate_suite(rules: Any, *, max_rate: float = 0.01, name: str = "linkage-gate",
               exact_columns: list[str] | None = None,
               max_examples: int = measures.MAX_EXAMPLES) -> gx.ExpectationSuite:
    """The suite `linkage check` amounts to, for a rules file, ready to add to a context:

    - every column the rules read exists (GX's `ExpectColumnToExist`), so a renamed column
      fails by name rather than inside the dedupe;
    - the rules' `id_column`, when set, is unique and never null (GX's stock expectations);
    - no two rows are identical in `exact_columns` once normalized as the rules normalize
      them (default: the columns the rules compare);
    - linkage's dedupe marks at most `max_rate` of the records as duplicates.

    `rules` is a path (kept as a path in the suite, so it must be readable where the suite
    runs), a mapping or a `linkage.Rules`. Like any GX suite it is built with a context
    active (`gx.get_context(...)` or `ephemeral_context()` first).
    """
    owner = "gate_suite"
    loaded = measures.load_rules(rules, owner=owner)
    plain_rules = str(rules) if isinstance(rules, str | Path) else loaded.to_dict()
    suite = gx.ExpectationSuite(name=name)
    for column in loaded.columns():
        suite.add_expectation(gx.expectations.ExpectColumnToExist(column=column))
    if loaded.id_column:
        suite.add_expectation(gx.expectations.ExpectColumnValuesToBeUnique(
            column=loaded.id_column))
        suite.add_expectation(gx.expectations.ExpectColumnValuesToNotBeNull(
            column=loaded.id_column))
    if exact_columns is None:
        exact_columns = list(dict.fromkeys(c.column for c in loaded.comparisons))
    if exact_columns:
        steps = [dict(step) for step in loaded.to_dict().get("normalize") or []
                 if step.get("column") in exact_columns and not step.get("output")]
        suite.add_expectation(ExpectNoExactDuplicatesAfterNormalization(
            columns=list(exact_columns), normalize=steps or None, id_column=loaded.id_column,
            max_examples=max_examples))
    suite.add_expectation(ExpectDuplicateRateToBeBelow(rules=plain_rules, max_rate=max_rate,
                                                       max_examples=max_examples))
    return suite


def gate_checkpoint(context, suite: gx.ExpectationSuite, *, name: str = "linkage-gate",
                    data_docs: bool = True, result_format: str = "SUMMARY"):
    """A checkpoint that validates a pandas DataFrame against `suite` in `context`, and
    updates the context's Data Docs after each run when `data_docs` is set (a file context
    writes them under gx/uncommitted/data_docs/local_site/). Run it with
    `checkpoint.run(batch_parameters={"dataframe": frame})`."""
    batch = (context.data_sources.add_pandas(f"{name}-source").add_dataframe_asset("table")
             .add_batch_definition_whole_dataframe("whole"))
    suite = context.suites.add(suite)
    definition = context.validation_definitions.add(
        gx.ValidationDefinition(name=name, data=batch, suite=suite))
    actions = []
    if data_docs:
        from great_expectations.checkpoint import UpdateDataDocsAction

        actions.append(UpdateDataDocsAction(name="update_data_docs"))
    return context.checkpoints.add(gx.Checkpoint(
        name=name, validation_definitions=[definition], actions=actions,
        result_format={"result_format": result_format}))
