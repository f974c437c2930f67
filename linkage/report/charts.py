"""Charts of match weights as self-contained SVG: no plotting library, no network, no script.

Every function returns an `SVG`, a `str` subclass: `str(chart)` (or the chart itself) is the SVG
document, ready to write to a file or embed in HTML, and Jupyter shows it inline through
`_repr_svg_` (nothing from IPython is imported). The same input gives the same text, byte for
byte.

- `waterfall_svg(table, title=..., threshold=...)`: one pair's contributions, as returned per
  pair by `linkage.explain.contributions_table`: the prior's log-odds first, then a step per
  comparison starting where the previous one ended (green adds evidence, red takes it away,
  grey is no evidence), then the total match weight and the threshold as a dashed line.
- `mu_chart_svg(parameter_table)`: a Fellegi-Sunter model's `parameter_table()`: per comparison
  and level, a bar of the match weight `log2(m / u)` with m and u written beside it.
- `weight_histogram_svg(weights, threshold=...)`: how the match weights of the candidate pairs
  spread, with the threshold.

For the run report (`linkage.report`): `mu_bars_svg` (m and u side by side per level),
`level_weights_svg` (a rule sum's weight per level), `bar_chart_svg` (labelled counts or
importances), `shares_svg` (each source's share before and after removal), `precision_svg`
(precision per score band with its interval) and `s_curve_svg` (MinHash-LSH's
P(candidate) against Jaccard).

The drawn elements carry `class` and `data-*` attributes (the values they stand for), so a
test or a script can read a chart back without measuring pixels::

    from linkage.report.charts import waterfall_svg
    from linkage.explain import contributions_table

    table = contributions_table(run.pairs.head(1), run.rules, run.scorer)[0]
    chart = waterfall_svg(table, title="pair 1", threshold=run.scorer.threshold)
    chart                                   # inline in a notebook
    Path("pair.svg").write_text(chart)      # or a file any browser opens
"""

from __future__ import annotations

import html
import math
from collections.abc import Iterable
from pathlib import Path

import numpy as np
import pandas as pd

from linkage.errors import ParameterError

__all__ = [
    "SVG",
    "bar_chart_svg",
    "level_weights_svg",
    "mu_bars_svg",
    "mu_chart_svg",
    "precision_svg",
    "s_curve_svg",
    "shares_svg",
    "waterfall_svg",
    "weight_histogram_svg",
]

POSITIVE = "#2e7d32"  # green: evidence for a match
NEGATIVE = "#c62828"  # red: evidence against
NEUTRAL = "#9e9e9e"  # grey: no evidence (a null level, a zero weight)
TOTAL = "#1f4e79"  # blue: the match weight
THRESHOLD = "#333333"
_FONT = "12"
_CHAR = 6.8  # approximate width of one character at the font size, for layout only
_ROW = 22
_BAR = 14


class SVG(str):
    """SVG text that Jupyter displays as a picture; everywhere else it is a plain `str`."""

    __slots__ = ()

    def _repr_svg_(self) -> str:
        return str(self)

    def __str__(self) -> str:
        return str.__str__(self)

    def __repr__(self) -> str:
        return f"<linkage.report.charts.SVG, {len(self):,} characters>"

    def save(self, path: str | Path) -> Path:
        """Write the SVG to `path` (UTF-8) and return the path."""
        path = Path(path)
        path.write_text(str(self), encoding="utf-8")
        return path


# ---------------------------------------------------------------------- drawing helpers


def _esc(value: object) -> str:
    return html.escape(str(value), quote=True)


def _n(value: float) -> str:
    """A coordinate or value, rounded to 2 decimals, never `-0`."""
    text = f"{value:.2f}"
    return "0.00" if text == "-0.00" else text


def _num(value: float) -> str:
    """A data value for a `data-*` attribute: exact enough to compare, deterministic."""
    if not math.isfinite(value):
        return "inf" if value > 0 else ("-inf" if value < 0 else "nan")
    text = repr(float(value))
    return "0.0" if text == "-0.0" else text


def _signed(value: float, digits: int = 2) -> str:
    if not math.isfinite(value):
        return "+inf" if value > 0 else ("-inf" if value < 0 else "nan")
    text = f"{value:+.{digits}f}"
    return text.replace("-0." + "0" * digits, "+0." + "0" * digits)


def _attrs(**attributes: object) -> str:
    parts = []
    for key, value in attributes.items():
        if value is None:
            continue
        name = key.rstrip("_").replace("_", "-")
        parts.append(f'{name}="{_esc(value)}"')
    return " ".join(parts)


def _text(x: float, y: float, content: object, **attributes: object) -> str:
    return f'<text {_attrs(x=_n(x), y=_n(y), **attributes)}>{_esc(content)}</text>'


def _document(width: float, height: float, title: str, body: Iterable[str], kind: str,
              **attributes: object) -> SVG:
    head = (
        f'<svg xmlns="http://www.w3.org/2000/svg" '
        f'{_attrs(width=_n(width), height=_n(height), viewBox=f"0 0 {_n(width)} {_n(height)}")} '
        f'font-family="Helvetica, Arial, sans-serif" font-size="{_FONT}" role="img" '
        f'{_attrs(class_=kind, **attributes)}>'
    )
    lines = [head, f"<title>{_esc(title or kind)}</title>",
             f'<rect x="0" y="0" width="{_n(width)}" height="{_n(height)}" fill="#ffffff"/>']
    if title:
        lines.append(_text(12, 20, title, font_size="14", font_weight="bold"))
    lines.extend(body)
    lines.append("</svg>")
    return SVG("\n".join(lines) + "\n")


def _nice_step(span: float, target: int = 6) -> float:
    raw = span / max(target, 1)
    if raw <= 0 or not math.isfinite(raw):
        return 1.0
    power = 10.0 ** math.floor(math.log10(raw))
    for factor in (1.0, 2.0, 2.5, 5.0, 10.0):
        if raw <= factor * power:
            return factor * power
    return 10.0 * power


def _domain(values: Iterable[float], pad: float = 0.04) -> tuple[float, float]:
    finite = [float(v) for v in values if math.isfinite(v)]
    lo, hi = (min(finite), max(finite)) if finite else (0.0, 1.0)
    if hi - lo < 1e-9:
        lo, hi = lo - 1.0, hi + 1.0
    margin = (hi - lo) * pad
    return lo - margin, hi + margin


class _Scale:
    def __init__(self, lo: float, hi: float, left: float, right: float):
        self.lo, self.hi, self.left, self.right = lo, hi, left, right

    def __call__(self, value: float) -> float:
        value = min(max(value, self.lo), self.hi)  # infinities land on the edge
        return self.left + (value - self.lo) / (self.hi - self.lo) * (self.right - self.left)


def _axis(scale: _Scale, y: float, label: str) -> list[str]:
    """A horizontal axis at `y` with nice ticks and a label under it."""
    out = [f'<line {_attrs(x1=_n(scale.left), x2=_n(scale.right), y1=_n(y), y2=_n(y))} '
           f'stroke="#555555" class="axis"/>']
    step = _nice_step(scale.hi - scale.lo)
    tick = math.ceil(scale.lo / step) * step
    while tick <= scale.hi + 1e-9:
        x = scale(tick)
        value = 0.0 if abs(tick) < step * 1e-9 else tick
        out.append(f'<line {_attrs(x1=_n(x), x2=_n(x), y1=_n(y), y2=_n(y + 4))} '
                   f'stroke="#555555"/>')
        out.append(_text(x, y + 16, f"{value:g}", text_anchor="middle", fill="#555555",
                         class_="tick"))
        tick += step
    out.append(_text((scale.left + scale.right) / 2, y + 32, label, text_anchor="middle",
                     fill="#333333"))
    return out


def _threshold_line(scale: _Scale, threshold: float, top: float, bottom: float) -> list[str]:
    x = scale(threshold)
    right_half = x > (scale.left + scale.right) / 2
    return [
        f'<line {_attrs(x1=_n(x), x2=_n(x), y1=_n(top), y2=_n(bottom))} stroke="{THRESHOLD}" '
        f'stroke-width="1.5" stroke-dasharray="6 4" class="threshold" '
        f'data-threshold="{_num(threshold)}"/>',
        _text(x - 4 if right_half else x + 4, top + 10, f"threshold {threshold:g}",
              fill=THRESHOLD, class_="threshold-label",
              text_anchor="end" if right_half else "start"),
    ]


def _colour(value: float) -> tuple[str, str]:
    if value > 0:
        return POSITIVE, "positive"
    if value < 0:
        return NEGATIVE, "negative"
    return NEUTRAL, "zero"


def _check_threshold(threshold: float | None) -> float | None:
    if threshold is None:
        return None
    threshold = float(threshold)
    if not math.isfinite(threshold):
        raise ParameterError(f"threshold must be a finite number, not {threshold!r}")
    return threshold


def _need(frame: pd.DataFrame, columns: list[str], what: str) -> None:
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ParameterError(f"{what} needs the column(s) {', '.join(missing)}; it has "
                         f"{', '.join(map(str, frame.columns)) or 'none'}")


# ---------------------------------------------------------------------- the charts


def waterfall_svg(table: pd.DataFrame, *, title: str = "",
                  threshold: float | None = None) -> SVG:
    """A waterfall of one pair's match weight: a step per row of `table`, then the total.

    `table` has the columns comparison, level and contribution (and optionally similarity), as
    `linkage.explain.contributions_table` returns for each pair. A "(prior)" row, when there is
    one, is drawn first. Each step starts where the previous one ended; green steps add, red
    steps subtract, grey ones are zero. The last bar ("match weight") runs from 0 to the sum.
    `threshold`, when given, is a dashed vertical line.

    Steps are `<rect class="step ...">` and the total `<rect class="total">`, each with
    `data-start`, `data-end` and `data-value` (in match-weight units).
    """
    _need(table, ["comparison", "level", "contribution"], "waterfall_svg")
    if table.empty:
        raise ParameterError("waterfall_svg needs at least one contribution row")
    threshold = _check_threshold(threshold)
    is_prior = table["comparison"].astype(str).eq("(prior)").to_numpy()
    order = np.concatenate([np.flatnonzero(is_prior), np.flatnonzero(~is_prior)])
    rows = table.iloc[order]
    values = rows["contribution"].to_numpy(dtype=float)
    if not np.isfinite(values).all():
        raise ParameterError("waterfall_svg: every contribution must be a finite number")
    similarity = (rows["similarity"].to_numpy(dtype=float) if "similarity" in rows
                  else np.full(len(rows), np.nan))

    labels = []
    for comparison, level in zip(rows["comparison"], rows["level"], strict=True):
        level = "" if level is None or (isinstance(level, float) and math.isnan(level)) else level
        labels.append(f"{comparison}: {level}" if str(level) != "" else str(comparison))
    labels.append("match weight")
    ends = np.cumsum(values)
    starts = ends - values
    total = float(ends[-1])

    label_width = min(max(max(len(s) for s in labels) * _CHAR + 16, 120.0), 340.0)
    width = label_width + 600
    top = (36 if title else 14) + (16 if threshold is not None else 0)
    n_rows = len(values) + 1
    plot_bottom = top + n_rows * _ROW + 6
    height = plot_bottom + 44
    extent = [0.0, *ends.tolist()] + ([threshold] if threshold is not None else [])
    scale = _Scale(*_domain(extent, pad=0.06), label_width + 10, width - 140)

    body: list[str] = []
    zero = scale(0.0)
    body.append(f'<line {_attrs(x1=_n(zero), x2=_n(zero), y1=_n(top), y2=_n(plot_bottom))} '
                f'stroke="#bbbbbb" class="zero" data-x="{_n(zero)}"/>')
    for i, (value, start, end) in enumerate(zip(values, starts, ends, strict=True)):
        y = top + i * _ROW
        fill, sign = _colour(value)
        left = float(_n(scale(min(start, end))))
        right = float(_n(scale(max(start, end))))
        tip = f"{labels[i]}: {_signed(value)}"
        if math.isfinite(similarity[i]):
            tip += f" (similarity {similarity[i]:.3f})"
        body.append(
            f'<rect {_attrs(x=_n(left), y=_n(y + (_ROW - _BAR) / 2), width=_n(right - left))} '
            f'height="{_BAR}" fill="{fill}" '
            f'{_attrs(class_=f"step {sign}", data_label=labels[i], data_value=_num(value))} '
            f'{_attrs(data_start=_num(start), data_end=_num(end))}>'
            f"<title>{_esc(tip)}</title></rect>"
        )
        body.append(_text(label_width, y + _ROW / 2 + 4, labels[i], text_anchor="end",
                          class_="label"))
        body.append(_text(right + 4, y + _ROW / 2 + 4, _signed(value), fill=fill,
                          class_="value"))
        # a thin connector from this step's end down to the next bar
        x_end = scale(end)
        body.append(f'<line {_attrs(x1=_n(x_end), x2=_n(x_end), y1=_n(y + (_ROW + _BAR) / 2))} '
                    f'{_attrs(y2=_n(y + _ROW + (_ROW - _BAR) / 2))} stroke="#777777" '
                    f'stroke-dasharray="2 2" class="connector"/>')
    y = top + len(values) * _ROW
    left, right = float(_n(scale(min(0.0, total)))), float(_n(scale(max(0.0, total))))
    verdict = ""
    if threshold is not None:
        verdict = " (match)" if total >= threshold else " (no match)"
    body.append(
        f'<rect {_attrs(x=_n(left), y=_n(y + (_ROW - _BAR) / 2), width=_n(right - left))} '
        f'height="{_BAR}" fill="{TOTAL}" '
        f'{_attrs(class_="total", data_value=_num(total), data_start="0.0", data_end=_num(total))}>'
        f"<title>{_esc(f'match weight {_signed(total)}{verdict}')}</title></rect>"
    )
    body.append(_text(label_width, y + _ROW / 2 + 4, "match weight", text_anchor="end",
                      font_weight="bold", class_="label"))
    body.append(_text(right + 4, y + _ROW / 2 + 4, f"{_signed(total)}{verdict}", fill=TOTAL,
                      font_weight="bold", class_="value"))
    if threshold is not None:
        body += _threshold_line(scale, threshold, top - 18, plot_bottom)
    body += _axis(scale, plot_bottom, "match weight (log2 odds)")
    return _document(width, height, title, body, "waterfall", data_total=_num(total),
                     data_threshold=None if threshold is None else _num(threshold))


def mu_chart_svg(parameter_table: pd.DataFrame) -> SVG:
    """Per comparison and level, a bar of the match weight log2(m/u), with m and u as text.

    `parameter_table` is `FellegiSunter.parameter_table()`: comparison, level, m, u and
    (optionally) match_weight; without that column it is computed as log2(m/u). Bars are
    `<rect class="level ...">` with `data-comparison`, `data-level`, `data-m`, `data-u` and
    `data-weight`; a weight that is infinite (m or u of 0) is drawn to the edge.
    """
    _need(parameter_table, ["comparison", "level", "m", "u"], "mu_chart_svg")
    table = parameter_table.reset_index(drop=True)
    m = table["m"].to_numpy(dtype=float)
    u = table["u"].to_numpy(dtype=float)
    if "match_weight" in table:
        weights = table["match_weight"].to_numpy(dtype=float)
    else:
        with np.errstate(divide="ignore", invalid="ignore"):
            weights = np.log2(m) - np.log2(u)
    comparisons = list(dict.fromkeys(table["comparison"].astype(str)))
    levels = table["level"].astype(str).tolist()

    label_width = min(max([len(s) for s in levels + comparisons] + [8]) * _CHAR + 24, 300.0)
    width = label_width + 560
    top = 36
    n_rows = len(table) + len(comparisons)
    plot_bottom = top + n_rows * _ROW + 6
    height = plot_bottom + 44
    scale = _Scale(*_domain([0.0, *weights.tolist()], pad=0.05), label_width + 10,
                   width - 230)
    zero = scale(0.0)
    body = [f'<line {_attrs(x1=_n(zero), x2=_n(zero), y1=_n(top), y2=_n(plot_bottom))} '
            f'stroke="#bbbbbb" class="zero"/>']
    row = 0
    names = table["comparison"].astype(str).to_numpy()
    for comparison in comparisons:
        y = top + row * _ROW
        body.append(_text(12, y + _ROW / 2 + 4, comparison, font_weight="bold",
                          class_="comparison"))
        row += 1
        for i in np.flatnonzero(names == comparison):
            y = top + row * _ROW
            weight = float(weights[i])
            fill, sign = _colour(weight)
            left = scale(min(0.0, weight)) if not math.isnan(weight) else zero
            right = scale(max(0.0, weight)) if not math.isnan(weight) else zero
            text = f"m={m[i]:.3g}  u={u[i]:.3g}  w={_signed(weight)}"
            body.append(
                f'<rect {_attrs(x=_n(left), y=_n(y + (_ROW - _BAR) / 2), width=_n(right - left))}'
                f' height="{_BAR}" fill="{fill}" {_attrs(class_=f"level {sign}")} '
                f'{_attrs(data_comparison=comparison, data_level=levels[i])} '
                f'{_attrs(data_m=_num(m[i]), data_u=_num(u[i]), data_weight=_num(weight))}>'
                f"<title>{_esc(f'{comparison}: {levels[i]}: {text}')}</title></rect>"
            )
            body.append(_text(label_width, y + _ROW / 2 + 4, levels[i], text_anchor="end",
                              class_="label"))
            body.append(_text(width - 222, y + _ROW / 2 + 4, text, fill="#333333",
                              class_="value"))
            row += 1
    body += _axis(scale, plot_bottom, "match weight log2(m / u)")
    return _document(width, height, "match weight log2(m/u) per comparison level", body,
                     "mu-chart")


def weight_histogram_svg(weights: np.ndarray, *, threshold: float | None,
                         bins: int = 40, log: bool = False) -> SVG:
    """A histogram of match weights, with the threshold as a dashed line.

    `log`: the count axis on a log scale (1, 10, 100, ...): the few matches above the
    threshold stay visible next to the many non-matches (a bin of one pair is drawn, a bin of
    none is not).

    Non-finite weights (NaN, infinities) are left out. Bins are `<rect class="bin ...">` with
    `data-count`, `data-low` and `data-high`; their counts sum to the number of finite weights.
    Bins whose middle is at or above the threshold are drawn green, the others grey.
    """
    if isinstance(bins, bool) or not isinstance(bins, int | np.integer) or bins < 1:
        raise ParameterError(f"bins must be a positive integer, not {bins!r}")
    threshold = _check_threshold(threshold)
    values = np.asarray(weights, dtype=float).ravel()
    values = values[np.isfinite(values)]
    lo, hi = (float(values.min()), float(values.max())) if len(values) else (0.0, 1.0)
    if hi - lo < 1e-9:
        lo, hi = lo - 0.5, hi + 0.5
    counts, edges = np.histogram(values, bins=int(bins), range=(lo, hi))

    width, height = 720.0, 320.0
    top, bottom, left, right = 36.0, height - 50, 60.0, width - 20
    extent = [lo, hi] + ([threshold] if threshold is not None else [])
    scale = _Scale(*_domain(extent, pad=0.02), left, right)
    peak = int(counts.max()) if len(values) else 1
    if log:
        decades = max(math.ceil(math.log10(max(peak, 1)) + 1e-12), 1)
        ticks = [0.0] + [10.0 ** k for k in range(decades + 1)]

        def y_of(count: float) -> float:
            # 0 at the axis, 1 a tenth of a decade up, then one decade per step
            if count <= 0:
                return bottom
            return bottom - (0.1 + math.log10(count)) / (0.1 + decades) * (bottom - top)
    else:
        step = _nice_step(peak, 4)
        top_count = max(math.ceil(peak / step) * step, 1)
        ticks = []
        tick = 0.0
        while tick <= top_count + 1e-9:
            ticks.append(tick)
            tick += step

        def y_of(count: float) -> float:
            return bottom - count / top_count * (bottom - top)

    body = []
    for tick in ticks:
        y = y_of(tick)
        body.append(f'<line {_attrs(x1=_n(left), x2=_n(right), y1=_n(y), y2=_n(y))} '
                    f'stroke="#eeeeee"/>')
        body.append(_text(left - 6, y + 4, f"{tick:,.0f}" if log else f"{tick:g}",
                          text_anchor="end", fill="#555555", class_="tick"))
    for count, low, high in zip(counts, edges[:-1], edges[1:], strict=True):
        above = threshold is not None and (low + high) / 2 >= threshold
        x0, x1 = float(_n(scale(low))), float(_n(scale(high)))
        y = y_of(int(count))
        body.append(
            f'<rect {_attrs(x=_n(x0), y=_n(y), width=_n(max(x1 - x0 - 1, 0.5)))} '
            f'{_attrs(height=_n(bottom - y))} fill="{POSITIVE if above else NEUTRAL}" '
            f'{_attrs(class_="bin above" if above else "bin")} '
            f'{_attrs(data_count=int(count), data_low=_num(low), data_high=_num(high))}>'
            f"<title>{_esc(f'[{low:.2f}, {high:.2f}): {int(count):,} pair(s)')}</title></rect>"
        )
    if threshold is not None:
        body += _threshold_line(scale, threshold, top, bottom)
        n_above = int((values >= threshold).sum())
        body.append(_text(right, 20, f"{n_above:,} of {len(values):,} pair(s) at or above "
                          f"the threshold", text_anchor="end", fill="#333333", class_="note"))
    body += _axis(scale, bottom, "match weight (log2 odds)")
    middle = (top + bottom) / 2 + (50 if log else 0)  # a longer label starts lower
    body.append(_text(14, middle, "pairs (log scale)" if log else "pairs", fill="#555555",
                      transform=f"rotate(-90 14 {_n(middle)})"))
    title = f"match weights of {len(values):,} candidate pair(s)"
    return _document(width, height, title, body, "weight-histogram",
                     data_n=len(values), data_scale="log" if log else "linear",
                     data_threshold=None if threshold is None else _num(threshold))


# ---------------------------------------------------------------------- report charts

M_COLOUR = "#1f4e79"  # blue: m, the share among matches
U_COLOUR = "#ef6c00"  # orange: u, the share among non-matches
BEFORE = "#9e9e9e"  # grey: share before removal
AFTER = "#1f4e79"  # blue: share after removal


def _y_axis(top: float, bottom: float, left: float, right: float, label: str) -> list[str]:
    """Grid lines and ticks of a vertical 0..1 axis (probabilities, shares)."""
    out = []
    for k in range(6):
        value = k / 5
        y = bottom - value * (bottom - top)
        out.append(f'<line {_attrs(x1=_n(left), x2=_n(right), y1=_n(y), y2=_n(y))} '
                   f'stroke="#eeeeee"/>')
        out.append(_text(left - 6, y + 4, f"{value:g}", text_anchor="end", fill="#555555",
                         class_="tick"))
    middle = (top + bottom) / 2
    out.append(_text(14, middle, label, fill="#555555", text_anchor="middle",
                     transform=f"rotate(-90 14 {_n(middle)})"))
    return out


def _grouped_rows(table: pd.DataFrame) -> list[tuple[str, list[int]]]:
    """Row positions grouped by comparison, comparisons in first-seen order."""
    names = table["comparison"].astype(str).to_numpy()
    return [(name, np.flatnonzero(names == name).tolist()) for name in dict.fromkeys(names)]


def mu_bars_svg(parameter_table: pd.DataFrame) -> SVG:
    """Per comparison and level, m (blue) and u (orange) side by side on a 0..1 scale.

    m is how often matches land on the level, u how often non-matches do; their ratio is the
    level's match weight (`mu_chart_svg` draws that). Bars are `<rect class="m">` and
    `<rect class="u">` with `data-comparison`, `data-level` and `data-value`.
    """
    _need(parameter_table, ["comparison", "level", "m", "u"], "mu_bars_svg")
    table = parameter_table.reset_index(drop=True)
    m = table["m"].to_numpy(dtype=float)
    u = table["u"].to_numpy(dtype=float)
    levels = table["level"].astype(str).tolist()
    groups = _grouped_rows(table)
    label_width = min(max([len(s) for s in levels] + [len(g) for g, _ in groups] + [8])
                      * _CHAR + 24, 300.0)
    width = label_width + 520
    top = 52
    plot_bottom = top + (len(table) + len(groups)) * _ROW + 6
    height = plot_bottom + 44
    scale = _Scale(0.0, 1.0, label_width + 10, width - 170)
    body = [
        f'<rect x="{_n(label_width + 10)}" y="30" width="10" height="10" fill="{M_COLOUR}"/>',
        _text(label_width + 24, 39, "m: share of matches", fill="#333333"),
        f'<rect x="{_n(label_width + 180)}" y="30" width="10" height="10" fill="{U_COLOUR}"/>',
        _text(label_width + 194, 39, "u: share of non-matches", fill="#333333"),
    ]
    row = 0
    for comparison, rows in groups:
        body.append(_text(12, top + row * _ROW + _ROW / 2 + 4, comparison, font_weight="bold",
                          class_="comparison"))
        row += 1
        for i in rows:
            y = top + row * _ROW
            for k, (kind, value, fill) in enumerate((("m", m[i], M_COLOUR),
                                                     ("u", u[i], U_COLOUR))):
                shown = value if math.isfinite(value) else 0.0
                body.append(
                    f'<rect {_attrs(x=_n(scale(0.0)), y=_n(y + 3 + k * 8))} '
                    f'{_attrs(width=_n(scale(shown) - scale(0.0)))} height="7" fill="{fill}" '
                    f'{_attrs(class_=kind, data_comparison=comparison, data_level=levels[i])} '
                    f'{_attrs(data_value=_num(value))}>'
                    f"<title>{_esc(f'{comparison}: {levels[i]}: {kind}={value:.4g}')}</title>"
                    "</rect>"
                )
            body.append(_text(label_width, y + _ROW / 2 + 4, levels[i], text_anchor="end",
                              class_="label"))
            body.append(_text(width - 162, y + _ROW / 2 + 4, f"m={m[i]:.3g}  u={u[i]:.3g}",
                              fill="#333333", class_="value"))
            row += 1
    body += _axis(scale, plot_bottom, "probability of the level")
    return _document(width, height, "m and u probabilities per comparison level", body,
                     "mu-bars")


def level_weights_svg(table: pd.DataFrame, *, title: str = "weight per comparison level",
                      axis_label: str = "weight") -> SVG:
    """Per comparison and level, a bar of its weight from zero (a rule sum's weight table).

    `table` has the columns comparison, level and weight. Bars are `<rect class="level ...">`
    with `data-comparison`, `data-level` and `data-weight`.
    """
    _need(table, ["comparison", "level", "weight"], "level_weights_svg")
    table = table.reset_index(drop=True)
    weights = table["weight"].to_numpy(dtype=float)
    levels = table["level"].astype(str).tolist()
    groups = _grouped_rows(table)
    label_width = min(max([len(s) for s in levels] + [len(g) for g, _ in groups] + [8])
                      * _CHAR + 24, 300.0)
    width = label_width + 480
    top = 36
    plot_bottom = top + (len(table) + len(groups)) * _ROW + 6
    height = plot_bottom + 44
    scale = _Scale(*_domain([0.0, *weights.tolist()], pad=0.05), label_width + 10, width - 90)
    zero = scale(0.0)
    body = [f'<line {_attrs(x1=_n(zero), x2=_n(zero), y1=_n(top), y2=_n(plot_bottom))} '
            f'stroke="#bbbbbb" class="zero"/>']
    row = 0
    for comparison, rows in groups:
        body.append(_text(12, top + row * _ROW + _ROW / 2 + 4, comparison, font_weight="bold",
                          class_="comparison"))
        row += 1
        for i in rows:
            y = top + row * _ROW
            weight = float(weights[i])
            fill, sign = _colour(weight)
            left = scale(min(0.0, weight)) if math.isfinite(weight) else zero
            right = scale(max(0.0, weight)) if math.isfinite(weight) else zero
            body.append(
                f'<rect {_attrs(x=_n(left), y=_n(y + (_ROW - _BAR) / 2), width=_n(right - left))}'
                f' height="{_BAR}" fill="{fill}" {_attrs(class_=f"level {sign}")} '
                f'{_attrs(data_comparison=comparison, data_level=levels[i])} '
                f'{_attrs(data_weight=_num(weight))}>'
                f"<title>{_esc(f'{comparison}: {levels[i]}: {_signed(weight)}')}</title></rect>"
            )
            body.append(_text(label_width, y + _ROW / 2 + 4, levels[i], text_anchor="end",
                              class_="label"))
            body.append(_text(width - 82, y + _ROW / 2 + 4, _signed(weight), fill=fill,
                              class_="value"))
            row += 1
    body += _axis(scale, plot_bottom, axis_label)
    return _document(width, height, title, body, "level-weights")


def bar_chart_svg(labels: Iterable[object], values: Iterable[float], *, title: str,
                  axis_label: str, kind: str = "bar-chart", digits: int | None = None) -> SVG:
    """Horizontal bars from zero, one per label, in the order given (counts, importances).

    Bars are `<rect class="bar">` with `data-label` and `data-value`; `digits` rounds the
    value written beside each bar (None: a count with thousands separators).
    """
    labels = [str(v) for v in labels]
    numbers = np.asarray(list(values), dtype=float)
    if len(labels) != len(numbers):
        raise ParameterError(f"bar_chart_svg needs one value per label; got {len(labels)} labels "
                         f"and {len(numbers)} values")
    label_width = min(max([len(s) for s in labels] + [8]) * _CHAR + 16, 320.0)
    width = label_width + 480
    top = 36
    plot_bottom = top + max(len(labels), 1) * _ROW + 6
    height = plot_bottom + 44
    scale = _Scale(*_domain([0.0, *numbers.tolist()], pad=0.05), label_width + 10, width - 100)
    zero = scale(0.0)
    body = [f'<line {_attrs(x1=_n(zero), x2=_n(zero), y1=_n(top), y2=_n(plot_bottom))} '
            f'stroke="#bbbbbb" class="zero"/>']
    for i, (label, value) in enumerate(zip(labels, numbers, strict=True)):
        y = top + i * _ROW
        shown = value if math.isfinite(value) else 0.0
        left, right = scale(min(0.0, shown)), scale(max(0.0, shown))
        text = f"{value:,.0f}" if digits is None else f"{value:.{digits}f}"
        body.append(
            f'<rect {_attrs(x=_n(left), y=_n(y + (_ROW - _BAR) / 2), width=_n(right - left))} '
            f'height="{_BAR}" fill="{TOTAL if value >= 0 else NEGATIVE}" '
            f'{_attrs(class_="bar", data_label=label, data_value=_num(value))}>'
            f"<title>{_esc(f'{label}: {text}')}</title></rect>"
        )
        body.append(_text(label_width, y + _ROW / 2 + 4, label, text_anchor="end",
                          class_="label"))
        body.append(_text(right + 4, y + _ROW / 2 + 4, text, fill="#333333", class_="value"))
    body += _axis(scale, plot_bottom, axis_label)
    return _document(width, height, title, body, kind)


def shares_svg(table: pd.DataFrame, *, title: str) -> SVG:
    """Per value of a column, its share of the records before (grey) and after (blue) the
    duplicates were removed: a source that loses more than the others shrinks.

    `table` has the columns value, share_before and share_after (as in summary.json's
    `removals_by`). Bars are `<rect class="before">` and `<rect class="after">` with
    `data-label` and `data-value`.
    """
    _need(table, ["value", "share_before", "share_after"], "shares_svg")
    table = table.reset_index(drop=True)
    labels = table["value"].astype(str).tolist()
    before = table["share_before"].to_numpy(dtype=float)
    after = table["share_after"].to_numpy(dtype=float)
    label_width = min(max([len(s) for s in labels] + [8]) * _CHAR + 16, 320.0)
    width = label_width + 500
    top = 52
    row_height = 30
    plot_bottom = top + max(len(labels), 1) * row_height + 6
    height = plot_bottom + 44
    finite = [v for v in [*before, *after] if math.isfinite(v)]
    peak = max([*finite, 0.0])
    scale = _Scale(0.0, min(1.0, max(peak * 1.1, 0.05)), label_width + 10, width - 150)
    body = [
        f'<rect x="{_n(label_width + 10)}" y="30" width="10" height="10" fill="{BEFORE}"/>',
        _text(label_width + 24, 39, "share before", fill="#333333"),
        f'<rect x="{_n(label_width + 130)}" y="30" width="10" height="10" fill="{AFTER}"/>',
        _text(label_width + 144, 39, "share after removal", fill="#333333"),
    ]
    for i, label in enumerate(labels):
        y = top + i * row_height
        for k, (kind, value, fill) in enumerate((("before", before[i], BEFORE),
                                                 ("after", after[i], AFTER))):
            shown = value if math.isfinite(value) else 0.0
            body.append(
                f'<rect {_attrs(x=_n(scale(0.0)), y=_n(y + 4 + k * 11))} '
                f'{_attrs(width=_n(scale(shown) - scale(0.0)))} height="10" fill="{fill}" '
                f'{_attrs(class_=kind, data_label=label, data_value=_num(value))}>'
                f"<title>{_esc(f'{label}: {kind} {value:.2%}')}</title></rect>"
            )
        body.append(_text(label_width, y + row_height / 2 + 4, label, text_anchor="end",
                          class_="label"))
        body.append(_text(width - 142, y + row_height / 2 + 4,
                          f"{before[i]:.1%} → {after[i]:.1%}", fill="#333333", class_="value"))
    body += _axis(scale, plot_bottom, "share of the records")
    return _document(width, height, title, body, "shares")


def precision_svg(table: pd.DataFrame, *, target: float | None = None) -> SVG:
    """Precision per score band (a bar) with its 95% interval (a whisker), from labelled pairs.

    `table` is what `linkage.measure.calibrate.calibrate` returns (band_from, band_to, labelled,
    matches, precision, ci_low, ci_high). Bars are `<rect class="band">` with `data-band`,
    `data-labelled`, `data-precision`, `data-low` and `data-high`; a band without labels has
    no bar, only the words "no labels". `target` is a dashed vertical line.
    """
    _need(table, ["band_from", "band_to", "labelled", "precision", "ci_low", "ci_high"],
          "precision_svg")
    table = table.reset_index(drop=True)
    labels = [f"[{lo:g}, {hi:g})  n={int(n)}" for lo, hi, n in
              zip(table["band_from"], table["band_to"], table["labelled"], strict=True)]
    label_width = min(max([len(s) for s in labels] + [8]) * _CHAR + 16, 320.0)
    width = label_width + 440
    top = 36 + (14 if target is not None else 0)
    plot_bottom = top + max(len(table), 1) * _ROW + 6
    height = plot_bottom + 44
    scale = _Scale(0.0, 1.0, label_width + 10, width - 90)
    body = []
    for i, row in table.iterrows():
        y = top + i * _ROW
        band = f"[{row['band_from']:g}, {row['band_to']:g})"
        body.append(_text(label_width, y + _ROW / 2 + 4, labels[i], text_anchor="end",
                          class_="label"))
        if int(row["labelled"]) == 0:
            body.append(_text(scale(0.0) + 4, y + _ROW / 2 + 4, "no labels", fill=NEUTRAL,
                              class_="empty", data_band=band))
            continue
        precision, low, high = (float(row["precision"]), float(row["ci_low"]),
                                float(row["ci_high"]))
        body.append(
            f'<rect {_attrs(x=_n(scale(0.0)), y=_n(y + (_ROW - _BAR) / 2))} '
            f'{_attrs(width=_n(scale(precision) - scale(0.0)))} height="{_BAR}" fill="{TOTAL}" '
            f'{_attrs(class_="band", data_band=band, data_labelled=int(row["labelled"]))} '
            f'{_attrs(data_precision=_num(precision), data_low=_num(low), data_high=_num(high))}>'
            f"<title>{_esc(f'{band}: precision {precision:.3f} (95% CI {low:.3f}-{high:.3f})')}"
            "</title></rect>"
        )
        middle = y + _ROW / 2
        body.append(f'<line {_attrs(x1=_n(scale(low)), x2=_n(scale(high)), y1=_n(middle))} '
                    f'{_attrs(y2=_n(middle))} stroke="#333333" stroke-width="1.5" '
                    f'class="interval"/>')
        for end in (low, high):
            body.append(f'<line {_attrs(x1=_n(scale(end)), x2=_n(scale(end)))} '
                        f'{_attrs(y1=_n(middle - 5), y2=_n(middle + 5))} stroke="#333333"/>')
        body.append(_text(width - 82, y + _ROW / 2 + 4, f"{precision:.3f}", fill="#333333",
                          class_="value"))
    if target is not None:
        target = _check_threshold(target)
        x = scale(target)
        body.append(f'<line {_attrs(x1=_n(x), x2=_n(x), y1=_n(top - 14), y2=_n(plot_bottom))} '
                    f'stroke="{THRESHOLD}" stroke-dasharray="6 4" class="target" '
                    f'data-target="{_num(target)}"/>')
        body.append(_text(x - 4, top - 4, f"target {target:g}", text_anchor="end",
                          fill=THRESHOLD))
    body += _axis(scale, plot_bottom, "precision (share of labelled pairs that match)")
    return _document(width, height, "precision per score band", body, "precision")


def s_curve_svg(bands: int, rows: int, *, threshold: float | None = None,
                title: str = "") -> SVG:
    """MinHash-LSH's S-curve: the probability 1 - (1 - J^r)^b that a pair with Jaccard J
    shares a band and becomes a candidate, for `bands` b and `rows` r.

    The curve is `<polyline class="s-curve">` with `data-bands` and `data-rows`; the points
    at J = 0.5, 0.6, ... 0.95 are `<circle class="point">` with `data-j` and `data-p`; the
    curve's steepest point (1/b)^(1/r) is `<circle class="midpoint">`; `threshold` (the
    Jaccard that candidates are verified against) is a dashed vertical line.
    """
    if not (isinstance(bands, int | np.integer) and isinstance(rows, int | np.integer)
            and bands >= 1 and rows >= 1):
        raise ParameterError(f"bands and rows must be positive integers, not {bands!r} and "
                         f"{rows!r}")
    threshold = _check_threshold(threshold)

    def probability(j: np.ndarray | float) -> np.ndarray:
        return 1.0 - (1.0 - np.asarray(j, dtype=float) ** rows) ** bands

    width, height = 560.0, 340.0
    top, bottom, left, right = 36.0, height - 50, 60.0, width - 20
    x_of = _Scale(0.0, 1.0, left, right)

    def y_of(p: float) -> float:
        return bottom - p * (bottom - top)

    grid = np.linspace(0.0, 1.0, 201)
    points = " ".join(f"{_n(x_of(j))},{_n(y_of(p))}"
                      for j, p in zip(grid, probability(grid), strict=True))
    body = _y_axis(top, bottom, left, right, "P(candidate)")
    body.append(f'<polyline points="{points}" fill="none" stroke="{TOTAL}" stroke-width="2" '
                f'{_attrs(class_="s-curve", data_bands=int(bands), data_rows=int(rows))}/>')
    for j in (0.5, 0.6, 0.7, 0.8, 0.9, 0.95):
        p = float(probability(j))
        body.append(f'<circle {_attrs(cx=_n(x_of(j)), cy=_n(y_of(p)))} r="3" fill="{TOTAL}" '
                    f'{_attrs(class_="point", data_j=_num(j), data_p=_num(p))}>'
                    f"<title>{_esc(f'J = {j:g}: P(candidate) = {p:.3f}')}</title></circle>")
    middle = (1.0 / bands) ** (1.0 / rows)
    p_mid = float(probability(middle))
    body.append(f'<circle {_attrs(cx=_n(x_of(middle)), cy=_n(y_of(p_mid)))} r="5" '
                f'fill="none" stroke="{NEGATIVE}" stroke-width="2" '
                f'{_attrs(class_="midpoint", data_j=_num(middle), data_p=_num(p_mid))}>'
                f"<title>{_esc(f'steepest point (1/b)^(1/r) = {middle:.3f}')}</title></circle>")
    body.append(_text(x_of(middle) - 8, y_of(p_mid) + 4, f"(1/b)^(1/r) = {middle:.2f}",
                      fill=NEGATIVE, text_anchor="end"))
    if threshold is not None:
        body += _threshold_line(x_of, threshold, top, bottom)
    body += _axis(x_of, bottom, "Jaccard similarity J of a pair")
    return _document(width, height, title or f"S-curve: {bands} bands × {rows} rows", body,
                     "s-curve", data_bands=int(bands), data_rows=int(rows),
                     data_threshold=None if threshold is None else _num(threshold))
