"""Redaction for reports that are shared: chosen columns hashed or masked before any of their
values reaches the page.

- `hash`: a value becomes `#` and 10 hex digits of its BLAKE2b hash: equal values stay equal,
  so a reviewer still sees which records agree. An unkeyed hash of a value from a small set (a
  phone number, a birth date) can be found by trying every value: use `mask` for those.
- `mask`: every character but spaces and the separators `@ . - _ / ,` becomes `•`: the shape
  and length stay, the content goes.

Values reach the page in the record tables, in the removals by source or category, in the
oversized blocks' key values and in free text (warnings, diagnostics, reasons). Record tables
and the per-value tables redact the column's values directly; free text has every value of a
redacted column that the page knows (from those tables) replaced.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable

from linkage.errors import InputError
from linkage.options import RedactMode

MODES = ("hash", "mask")
_KEEP = re.compile(r"[^\s@.\-_/,]")


class Redactor:
    """Redacts values of `columns` (none: redacts nothing)."""

    def __init__(self, columns: Iterable[str] = (), mode: RedactMode = "hash"):
        if mode not in MODES:
            raise InputError(f"redact mode must be one of {', '.join(MODES)}, not {mode!r}.")
        self.columns = list(dict.fromkeys(str(c) for c in columns))
        self.mode = mode
        self._known: dict[str, str] = {}

    def __bool__(self) -> bool:
        return bool(self.columns)

    def covers(self, column: object) -> bool:
        return str(column) in self.columns

    def hide(self, value: str) -> str:
        if self.mode == "hash":
            return "#" + hashlib.blake2b(value.encode("utf-8"), digest_size=5).hexdigest()
        return _KEEP.sub("•", value)

    def value(self, column: object, value: object) -> object:
        """`value` as the page may show it: redacted when `column` is redacted."""
        if value is None or not self.covers(column):
            return value
        text = str(value)
        hidden = self.hide(text)
        if len(text.strip()) >= 2:
            self._known[text] = hidden
        return hidden

    def learn(self, column: object, values: Iterable[object]) -> None:
        """Values of `column` that free text may quote, to be replaced there."""
        for v in values:
            self.value(column, v)

    def text(self, text: object) -> str:
        """Free text with every known value of a redacted column replaced, longest first."""
        text = str(text)
        if not self._known:
            return text
        for raw in sorted(self._known, key=lambda v: (-len(v), v)):
            if raw in text:
                text = text.replace(raw, self._known[raw])
        return text


def check_columns(redactor: Redactor, known: Iterable[str], id_column: str | None) -> None:
    """Redacting a column the run does not read is a typo; redacting the id is refused (ids
    name the records in every section: give the run a surrogate id instead)."""
    known = list(dict.fromkeys(known))
    unknown = [c for c in redactor.columns if c not in known]
    if unknown:
        raise InputError(f"cannot redact {', '.join(map(repr, unknown))}: not a column of the "
                         f"run's records. Columns: {', '.join(known) or '(none)'}.")
    if id_column and redactor.covers(id_column):
        raise InputError(f"cannot redact the id column {id_column!r}: ids name the records in "
                         "every section. Run with a surrogate id column (a row number or a "
                         "hash made before the run) to share the report.")


def redacted_summary(summary: dict, redactor: Redactor, rules) -> dict:
    """A copy of summary.json's data with the redacted columns' values replaced: the values
    by source or category, the oversized blocks' key values, and free text."""
    import copy

    out = copy.deepcopy(summary)
    source = getattr(rules, "source_column", None)
    by = out.get("removals_by") or {}
    for column in list(by):
        if redactor.covers(column):
            redactor.learn(column, by[column])
            by[column] = {redactor.value(column, v): stats for v, stats in by[column].items()}
    metrics = out.get("before_after") or {}
    for group in [metrics.get("table") or {}, *(metrics.get("by_source") or {}).values()]:
        shares = group.get("shares") or {}
        for column in list(shares):
            if redactor.covers(column):
                redactor.learn(column, shares[column])
                shares[column] = {redactor.value(column, v): x for v, x in shares[column].items()}
    if metrics.get("by_source") and source and redactor.covers(source):
        redactor.learn(source, metrics["by_source"])
        metrics["by_source"] = {redactor.value(source, k): v
                                for k, v in metrics["by_source"].items()}
    block = out.get("stages", {}).get("block", {})
    for skipped in block.get("skipped_blocks", []) or []:
        key = str(skipped.get("key", ""))
        column = next((c for c in redactor.columns if c in key), None)
        if column is not None:
            redactor.learn(column, [skipped.get("value")])
            skipped["value"] = redactor.value(column, skipped.get("value"))
    out["warnings"] = [redactor.text(w) for w in out.get("warnings", [])]
    for found in out.get("diagnostics") or []:
        for field in ("message", "what_to_do"):
            if field in found:
                found[field] = redactor.text(found[field])
    for skipped in block.get("skipped_blocks", []) or []:
        skipped["how"] = redactor.text(skipped.get("how", ""))
    return out
