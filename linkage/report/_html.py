"""Small HTML builders for the report: every value is escaped unless it is `Markup`."""

from __future__ import annotations

import html
import math
import re
from collections.abc import Iterable, Mapping

# The SVG namespace is implied for <svg> inside HTML; leaving it out keeps the page free of
# any URL at all, so a reviewer can check "no network" with a plain text search.
_XMLNS = ' xmlns="http://www.w3.org/2000/svg"'
_CODE = re.compile(r"`([^`<>]+)`")


class Markup(str):
    """HTML that is already safe (built here from escaped parts): not escaped again."""

    __slots__ = ()


def esc(value: object) -> Markup:
    """`value` as HTML text: `<script>` in a record becomes harmless `&lt;script&gt;`."""
    if isinstance(value, Markup):
        return value
    return Markup(html.escape(str(value), quote=True))


def join(parts: Iterable[object], sep: str = "\n") -> Markup:
    return Markup(sep.join(esc(p) for p in parts))


def tag(name: str, content: object = "", **attributes: object) -> Markup:
    """`<name attr="...">content</name>`; attribute names lose a trailing `_` (class_) and
    turn `_` into `-` (data_value); None drops the attribute."""
    attrs = "".join(
        f' {key.rstrip("_").replace("_", "-")}="{esc(value)}"'
        for key, value in attributes.items() if value is not None
    )
    return Markup(f"<{name}{attrs}>{esc(content)}</{name}>")


def count(value: object) -> str:
    """A count with thousands separators; a missing one as a dash."""
    if value is None:
        return "–"
    return f"{int(value):,}"


def share(value: object, digits: int = 2) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    return f"{float(value):.{digits}%}"


def number(value: object, digits: int = 3) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    return f"{float(value):.{digits}f}"


def table(headers: list[str], rows: Iterable[Iterable[object]], *, class_: str = "data",
          row_attributes: Iterable[Mapping[str, object]] | None = None,
          numeric: Iterable[int] = ()) -> Markup:
    """A table; `numeric` lists the column positions to right-align."""
    right = set(numeric)
    head = "".join(str(tag("th", h, class_="num" if k in right else None))
                   for k, h in enumerate(headers))
    attributes = iter(row_attributes) if row_attributes is not None else None
    body = []
    for row in rows:
        extra = next(attributes) if attributes is not None else {}
        cells = "".join(str(tag("td", cell, class_="num" if k in right else None))
                        for k, cell in enumerate(row))
        attrs = "".join(f' {k.replace("_", "-")}="{esc(v)}"' for k, v in extra.items())
        body.append(f"<tr{attrs}>{cells}</tr>")
    return Markup(f'<table class="{esc(class_)}"><thead><tr>{head}</tr></thead>'
                  f"<tbody>{''.join(body)}</tbody></table>")


def figure(chart_id: str, svg: str, caption: str) -> Markup:
    """An SVG chart inline in the page, with a caption under it."""
    inline = str(svg).replace(_XMLNS, "", 1)
    return Markup(f'<figure class="chart" id="{esc(chart_id)}">{inline}'
                  f"{tag('figcaption', caption)}</figure>")


def section(section_id: str, title: str, *parts: object, intro: str | None = None) -> Markup:
    body = [tag("h2", title)]
    if intro:
        body.append(tag("p", intro, class_="intro"))
    body.extend(esc(p) for p in parts if p)
    return Markup(f'<section id="{esc(section_id)}">\n' + "\n".join(body) + "\n</section>")


def paragraph(text: object, class_: str | None = None) -> Markup:
    """A paragraph; `name` in backticks is set as code (after escaping, so data stays text)."""
    return tag("p", Markup(_CODE.sub(r"<code>\1</code>", esc(text))), class_=class_)


def bullets(items: Iterable[object], class_: str | None = None) -> Markup:
    return tag("ul", Markup("".join(tag("li", item) for item in items)), class_=class_)


def facts(items: Iterable[tuple[str, object]]) -> Markup:
    """A definition list of label: value."""
    rows = "".join(f"{tag('dt', k)}{tag('dd', v)}" for k, v in items)
    return Markup(f'<dl class="facts">{rows}</dl>')


CSS = """
:root { color-scheme: light; }
body { font-family: -apple-system, "Segoe UI", Helvetica, Arial, "Noto Sans KR", sans-serif;
       margin: 0; color: #222; background: #f6f7f9; line-height: 1.45; }
header { background: #1f4e79; color: #fff; padding: 18px 28px; }
header h1 { margin: 0 0 4px 0; font-size: 22px; }
header p { margin: 0; opacity: 0.9; }
nav { padding: 8px 28px; background: #e8edf3; font-size: 14px; }
nav a { margin-right: 14px; color: #1f4e79; text-decoration: none; }
main { padding: 8px 28px 40px 28px; max-width: 1180px; }
section { background: #fff; border: 1px solid #dde2e8; border-radius: 6px; margin: 18px 0;
          padding: 6px 20px 16px 20px; }
h2 { font-size: 18px; color: #1f4e79; border-bottom: 1px solid #e3e7ec; padding-bottom: 6px; }
h3 { font-size: 15px; margin: 18px 0 6px 0; }
p.intro, p.note { color: #555; font-size: 14px; }
table.data { border-collapse: collapse; font-size: 13px; margin: 8px 0 14px 0; }
table.data th, table.data td { border-bottom: 1px solid #e6e9ee; padding: 4px 10px;
                               text-align: left; vertical-align: top; }
table.data th { background: #f2f4f7; font-weight: 600; }
table.data td.num, table.data th.num { text-align: right; font-variant-numeric: tabular-nums; }
table.data td { max-width: 520px; overflow-wrap: anywhere; }
.cards { display: flex; flex-wrap: wrap; gap: 12px; margin: 10px 0; }
.card { background: #f2f6fa; border: 1px solid #dbe4ee; border-radius: 6px; padding: 8px 14px;
        min-width: 140px; }
.card .value { font-size: 20px; font-weight: 600; color: #1f4e79; }
.card .label { font-size: 12px; color: #555; }
dl.facts { display: grid; grid-template-columns: max-content auto; gap: 2px 14px;
           font-size: 13px; }
dl.facts dt { color: #555; }
dl.facts dd { margin: 0; overflow-wrap: anywhere; }
figure.chart { margin: 10px 0 18px 0; overflow-x: auto; }
figure.chart svg { display: block; max-width: none; }
figcaption { font-size: 13px; color: #555; margin-top: 4px; max-width: 900px; }
.unreliable { background: #fdecea; border: 1px solid #d9534f; border-radius: 6px;
               padding: 8px 14px; margin: 10px 0; }
.warning { background: #fff4e5; border: 1px solid #f0b35a; border-radius: 6px;
           padding: 8px 14px; margin: 10px 0; }
ul.members { margin: 0; padding-left: 16px; }
ul.members li { margin-bottom: 2px; }
div.scroll { overflow-x: auto; }
table.pair { margin: 6px 0 16px 0; }
table.pair caption, table.members caption { caption-side: top; text-align: left;
                                            font-weight: 600; padding: 4px 0; }
table.pair tbody th { text-align: left; white-space: nowrap; background: #fafbfc; }
table.pair td.differs { background: #fffbe6; }
.role { font-weight: 400; color: #666; font-size: 12px; }
del { background: #f8c9c9; color: #8a1010; text-decoration: line-through; }
ins { background: #c6ecc6; color: #0d5a0d; text-decoration: none; }
mark { background: #ffe08a; }
.missing { color: #999; font-style: italic; }
.redacted { float: right; color: #8a1010; }
code { background: #f2f4f7; padding: 0 3px; border-radius: 3px; }
footer { color: #777; font-size: 12px; padding: 0 28px 24px 28px; }
"""
