"""The data-quality gate, `linkage check` from Python: `linkage.check(table, rules,
max_duplicate_rate=0.01)` runs the dedupe and says pass, fail or unreliable, with the exit code
the command would end with and the report `--json` prints."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from linkage.errors import RulesError
from linkage.result import Result

# What a finished gate's exit code means (bad input raises instead: exit 2 on the command line).
PASSED, FAILED, UNRELIABLE = 0, 1, 3


@dataclass
class Gate:
    """A gate's verdict: `code` (0 passed, 1 above the limit, 3 an unreliable model), the
    report `linkage check --json` prints, and the run it judged."""

    code: int
    report: dict[str, Any]
    result: Result

    @property
    def passed(self) -> bool:
        return self.code == PASSED

    def format(self) -> str:
        """The lines `linkage check` prints: the verdict, then the diagnostics."""
        from linkage.diagnostics import format_diagnostics

        r = self.report
        verdict = {PASSED: "PASS", FAILED: "FAIL", UNRELIABLE: "UNRELIABLE"}[self.code]
        lines = [f"{verdict}: {r['duplicates']:,} of {r['records']:,} records are duplicates "
                 f"({r['duplicate_rate']:.2%}; limit {r['max_duplicate_rate']:.2%})"]
        lines += format_diagnostics(self.result.summary())
        return "\n".join(lines)

    def __repr__(self) -> str:
        return self.format()


def check_rate(max_duplicate_rate: float) -> None:
    """A limit is a share in [0, 1]; else a `RulesError` saying so (before any work)."""
    if not isinstance(max_duplicate_rate, int | float) or not 0 <= max_duplicate_rate <= 1:
        raise RulesError(f"--max-duplicate-rate must be a share in [0, 1]. Got "
                         f"{max_duplicate_rate!r} instead (1% is 0.01).")


def check(table, rules=None, *, max_duplicate_rate: float, id_column: str | None = None,
          sep: str | None = None, encoding: str = "utf-8") -> Gate:
    """Deduplicate `table` (a path or any DataFrame) with `rules` (None: suggested from the
    table, as `linkage check` without `--rules`; pin them for a gate whose verdict should not
    move with the data) and judge its duplicate rate against `max_duplicate_rate` (a share:
    0.01 is 1%). Bad input or rules raise a `LinkageError` that says what to fix."""
    from linkage.api import dedupe

    check_rate(max_duplicate_rate)
    if rules is None:
        from linkage.io import read
        from linkage.suggest import suggest_rules

        rules = suggest_rules([read(table, sep=sep, encoding=encoding)]).as_rules()
    result = dedupe(table, rules, id_column=id_column, sep=sep, encoding=encoding,
                    progress=False)
    summary = result.summary()
    rate = summary["removal_rate"]
    passed = rate <= max_duplicate_rate
    reliable = summary.get("model_reliable", True) is not False
    code = UNRELIABLE if not reliable else PASSED if passed else FAILED
    report = {
        "input": summary["inputs"][0]["name"],
        "passed": passed,
        "duplicate_rate": rate,
        "max_duplicate_rate": max_duplicate_rate,
        "records": summary["stages"]["read"]["records"],
        "duplicates": summary["actions"]["duplicate"],
        "clusters_with_duplicates": summary["stages"]["cluster"]["clusters_with_several_records"],
        "rules_hash": summary["rules"]["config_hash"],
        "input_checksum": summary["inputs"][0]["checksum"],
        "model_reliable": reliable,
        "diagnostics": summary.get("diagnostics", []),
    }
    return Gate(code, report, result)
