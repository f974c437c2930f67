"""The report's record sections: the records themselves, two at a time, with the characters in
which they differ marked (`<del>` in the first, `<ins>` in the second, from `difflib`).

- removed records, each above the record kept in its place;
- the pairs nearest the threshold, just above it and just below it;
- the largest and the weakest clusters, with the pair that joined their two groups.

Which records: `linkage.report._records.pick`; their values: the run's
`report_records.parquet` (`Result.records`), redacted first where asked (`_redact`).
"""

from __future__ import annotations

import difflib
from typing import TYPE_CHECKING

import pandas as pd

from linkage.report._html import Markup, count, esc, paragraph, section, tag
from linkage.report._records import SIDE, VALUE_CHARS, Cluster, Key, Picked
from linkage.report._sections import cluster_members

if TYPE_CHECKING:
    from linkage.report._redact import Redactor
    from linkage.result import Result


class Records:
    """The sampled records by (side, id), as text, redacted; `columns`: the fields shown."""

    def __init__(self, result: Result, redactor: Redactor):
        frame = result.records
        self.id_name = str(result.summary_data.get("id_column") or "")
        self.kept = frame is not None
        self.rows: dict[Key, dict[str, str | None]] = {}
        self.columns: list[str] = []
        self.whole = {c for c in redactor.columns if redactor.mode == "hash"}
        if frame is None or frame.empty:
            return
        id_name = self.id_name if self.id_name in frame.columns else \
            next(c for c in frame.columns if c != SIDE)
        self.id_name = id_name
        self.columns = [str(c) for c in frame.columns if c not in (SIDE, id_name)]
        sides = frame[SIDE].astype(str).tolist() if SIDE in frame.columns else [""] * len(frame)
        for side, (_, row) in zip(sides, frame.iterrows(), strict=True):
            values = {}
            for c in self.columns:
                v = row[c]
                v = None if v is None or (isinstance(v, float) and v != v) else str(v)
                values[c] = redactor.value(c, v)
            self.rows[(side, str(row[id_name]))] = values

    def get(self, key: Key) -> dict[str, str | None] | None:
        return self.rows.get(key)


def _cut(text: str) -> str:
    return text if len(text) <= VALUE_CHARS else text[: VALUE_CHARS - 1] + "…"


def diff(a: str | None, b: str | None, whole: bool = False) -> tuple[Markup, Markup, bool]:
    """Two values as HTML with their differences marked: what only the first has in `<del>`,
    what only the second has in `<ins>`. `whole`: mark whole values (hashes differ all over)."""
    if a is None and b is None:
        return Markup('<span class="missing">–</span>'), Markup('<span class="missing">–</span>'),\
            False
    if a is None or b is None:
        one = Markup('<span class="missing">missing</span>')
        other = tag("mark", _cut(a if a is not None else b))
        return (one, other, True) if a is None else (other, one, True)
    a, b = _cut(a), _cut(b)
    if a == b:
        return esc(a), esc(b), False
    if whole:
        return tag("del", a), tag("ins", b), True
    left, right = [], []
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            left.append(str(esc(a[i1:i2])))
            right.append(str(esc(b[j1:j2])))
            continue
        if i2 > i1:
            left.append(str(tag("del", a[i1:i2])))
        if j2 > j1:
            right.append(str(tag("ins", b[j1:j2])))
    return Markup("".join(left)), Markup("".join(right)), True


def _label(key: Key, role: str) -> Markup:
    side = f" ({key[0]})" if key[0] else ""
    return Markup(f'{esc(key[1] + side)}<br><span class="role">{esc(role)}</span>')


def pair_table(records: Records, a: Key, b: Key, roles: tuple[str, str], caption: str,
               **attributes: object) -> Markup:
    """Two records side by side: a column per field, a row per record, differences marked."""
    ra, rb = records.get(a) or {}, records.get(b) or {}
    head = "".join(str(tag("th", c)) for c in records.columns)
    first, second, differs = [], [], 0
    for c in records.columns:
        x, y, changed = diff(ra.get(c), rb.get(c), c in records.whole)
        cls = "differs" if changed else None
        differs += changed
        first.append(str(tag("td", x, class_=cls)))
        second.append(str(tag("td", y, class_=cls)))
    if not records.columns:
        head = "<th>values</th>"
        first = second = ['<td class="missing">not kept</td>']
    attrs = "".join(f' {k.replace("_", "-")}="{esc(v)}"' for k, v in attributes.items())
    return Markup(
        f'<div class="scroll"><table class="data pair"{attrs} data-differs="{differs}">'
        f"{tag('caption', caption)}<thead><tr><th>record</th>{head}</tr></thead><tbody>"
        f"<tr><th>{_label(a, roles[0])}</th>{''.join(first)}</tr>"
        f"<tr><th>{_label(b, roles[1])}</th>{''.join(second)}</tr></tbody></table></div>")


def _no_values(records: Records) -> list[object]:
    if records.kept:
        return []
    return [paragraph("This run kept no record values (`report_records.parquet`): it was made "
                      "by an engine or a version of linkage that does not keep them. The pairs "
                      "are listed by id; `linkage explain RUN_DIR RECORD_ID` says more.",
                      class_="note")]


def _weight(w: float | None) -> str:
    return "not a candidate pair" if w is None else f"match weight {w:+.2f}"


# ---------------------------------------------------------------------- removed records


def removed(result: Result, picked: Picked, records: Records) -> Markup:
    if result.summary_data.get("mode") != "dedupe":
        return Markup("")
    removed_n = result.summary_data.get("actions", {}).get("duplicate", 0)
    if not picked.removed:
        return section("removed", "Removed records", paragraph("No record was removed."))
    parts: list[object] = [*_no_values(records), paragraph(
        f"{len(picked.removed)} of the {count(removed_n)} removed records, chosen by a hash of "
        "their id (the same ones on every run), each above the record kept in its place. "
        "Characters only the removed record has are struck out in red; characters only the "
        "kept record has are green.", class_="note")]
    for a, b, w in picked.removed:
        parts.append(pair_table(records, a, b, ("removed", "kept in its place"),
                                f"{a[1]} removed for {b[1]}: {_weight(w)}",
                                data_kind="removed", data_removed=a[1], data_kept=b[1]))
    return section("removed", "Removed records: a sample", *parts,
                   intro="Why was this record removed? Each removed record next to the one "
                         "that stays.")


# ---------------------------------------------------------------------- borderline


def borderline(result: Result, picked: Picked, records: Records,
               threshold: float | None) -> Markup:
    if threshold is None or not (picked.above or picked.below):
        return Markup("")
    parts: list[object] = [*_no_values(records)]
    for name, found, where in (("above", picked.above, "at or just above"),
                               ("below", picked.below, "just below")):
        parts.append(tag("h3", f"{len(found)} pair(s) {where} the threshold {threshold:g}"))
        if not found:
            parts.append(paragraph("None.", class_="note"))
        for a, b, w, matched in found:
            verdict = "matched" if matched else "not matched"
            parts.append(pair_table(
                records, a, b, ("", ""), f"{a[1]} ~ {b[1]}: {_weight(w)}, {verdict}",
                data_kind=f"borderline-{name}", data_weight=repr(w),
                data_matched="true" if matched else "false"))
    return section("borderline", "Pairs nearest the threshold", *parts,
                   intro="The closest calls, where a wrong threshold shows first: the lowest "
                         "pairs the model matched and the highest it did not. If the pairs "
                         "below look like the same thing, lower the threshold; if those above "
                         "do not, raise it.")


# ---------------------------------------------------------------------- clusters


def _cluster(result: Result, c: Cluster, records: Records, kind: str) -> list[object]:
    out: list[object] = [tag("h3", f"cluster {c.cluster_id}: {c.size:,} records")]
    if c.edge is not None:
        a, b, w = c.edge
        out.append(paragraph(
            f"Joined at match weight {w:+.2f} by {a[1]} ~ {b[1]}: without this pair the "
            "cluster falls into group A and group B (its weakest link: every other path "
            "between the groups is weaker still).", class_="note"))
        out.append(pair_table(records, a, b, ("group A", "group B"),
                              f"the joining pair of cluster {c.cluster_id}",
                              data_kind=f"join-{kind}", data_cluster=str(c.cluster_id)))
    clusters = result.clusters
    action = {}
    if clusters is not None and "action" in clusters.columns:
        id_name = records.id_name if records.id_name in clusters.columns else clusters.columns[0]
        members = cluster_members(result, [c.cluster_id])
        sides = members["source"].astype(str) if "source" in members.columns and \
            result.mode == "link" else pd.Series([""] * len(members), index=members.index)
        action = {(s, str(i)): str(x) for s, i, x in zip(sides, members[id_name],
                                                          members["action"], strict=True)}
    head = "".join(str(tag("th", h)) for h in ["group", "record", "action", *records.columns])
    rows = []
    for key in c.members:
        values = records.get(key) or {}
        cells = "".join(str(tag("td", "–" if values.get(col) is None else
                                _cut(str(values[col])))) for col in records.columns)
        role = "representative" if key == c.representative else action.get(key, "")
        rows.append(f"<tr>{tag('td', c.groups.get(key, ''))}{tag('td', key[1])}"
                    f"{tag('td', role)}{cells}</tr>")
    more = c.size - len(c.members)
    out.append(Markup(f'<div class="scroll"><table class="data members" '
                      f'data-cluster="{esc(c.cluster_id)}"><thead><tr>{head}</tr></thead>'
                      f"<tbody>{''.join(rows)}</tbody></table></div>"))
    if more > 0:
        out.append(paragraph(f"… and {more:,} more records in this cluster.", class_="note"))
    return out


def cluster_records(result: Result, picked: Picked, records: Records) -> Markup:
    if not (picked.largest or picked.weakest):
        return Markup("")
    parts: list[object] = [*_no_values(records)]
    if picked.largest:
        parts.append(tag("h3", "The largest clusters"))
        for c in picked.largest:
            parts += _cluster(result, c, records, "largest")
    if picked.weakest:
        parts.append(tag("h3", "The weakest clusters (lowest joining pair)"))
        for c in picked.weakest:
            parts += _cluster(result, c, records, "weakest")
    return section("cluster-records", "Clusters, record by record", *parts,
                   intro="A cluster holds together through its strongest pairs; the pair "
                         "that joined its last two groups is its weakest link. A chained "
                         "cluster (two people joined through one doubtful pair) shows here as "
                         "two groups and the pair between them.")
