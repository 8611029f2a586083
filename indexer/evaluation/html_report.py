"""`lawindex eval --html FILE`: the evaluation as pictures, in one self-contained HTML file.

Three figures, drawn by matplotlib's SVG backend (text as paths: no font file, nothing beside the file) and
put inline: recall@k for k = 1..20 per way (by ir-measures, as every other measure of eval), each pair of
ways' per-question nDCG@8 differences (its wins, losses and ties), and the rank each way's misses reached.
Beside them, the tables they are drawn from, every question, id and law escaped by the template (Jinja2,
autoescaped), and a Content-Security-Policy that lets no script run in the file.
"""

from __future__ import annotations

import io
import re
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from indexer.evaluation.evaluate import CUTOFF, DEPTH, MEASURES, NAMES, Report, qrels_of, run_of

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["RECALL_DEPTHS", "html_report", "recall_at", "report_context"]

RECALL_DEPTHS = range(1, 21)
# One colour a way, the page's own (indexer/service/page/static/page.css).
COLOURS = {"words": "#0550ae", "meaning": "#8250df", "hybrid": "#1b7c83"}
WON, LOST = "#116329", "#a40e26"
_DRAWING = threading.Lock()


def recall_at(report: Report, way: str) -> list[float]:
    """`way`'s mean recall@k over the judged questions for each k of RECALL_DEPTHS, by ir-measures."""
    import ir_measures

    measures = [ir_measures.parse_measure(f"R@{k}") for k in RECALL_DEPTHS]
    found = ir_measures.calc_aggregate(measures, qrels_of(report.judged), run_of(report.judged, report.asked[way]))
    return [float(found.get(measure, 0.0)) for measure in measures]


@dataclass(frozen=True)
class _Miss:
    id: str
    state: str
    question: str
    ways: list[tuple[str, str]]  # (way, "LAW rank, LAW -" ...)


def html_report(report: Report) -> str:
    """The whole file: the measures, the three figures as inline SVG, the misses, escaped."""
    from indexer.service.page import templates

    return templates().get_template("eval.html").render(**report_context(report))


def report_context(report: Report) -> dict[str, Any]:
    """What the templates draw a report from (eval.html, the file; eval_view.html, the page's view of a questions
    file on the server): the measures, the figures as SVG, the wins and the misses, every text still to escape."""
    pairs = [(a, b) for i, a in enumerate(report.ways) for b in report.ways[i + 1 :]]
    recall = {way: recall_at(report, way) for way in report.ways}
    from matplotlib import rc_context

    # Text as paths (no font needed where it is read), the same ids for the same figure, and nothing in a
    # label read as math (`text.parse_math` is read as each text is made, so around the drawing too). The
    # settings are matplotlib's global ones: one drawing at a time (serve draws in its threads).
    with _DRAWING, rc_context({"svg.fonttype": "path", "svg.hashsalt": "lawindex", "text.parse_math": False}):
        figures = [("recall", "Recall@k for k = 1..20, each way", _svg(_recall_figure(report, recall), "recall"))]
        if pairs:
            wins = _svg(_wins_figure(report, pairs), "wins")
            figures.append(("wins", "Per question, nDCG@8 of one way minus the other", wins))
        caption = f"The rank each miss reached (not in the first {CUTOFF})"
        figures.append(("misses", caption, _svg(_misses_figure(report), "misses")))
    misses = []
    for number, one in enumerate(report.judged):
        ways = [
            (way, ", ".join(f"{law} {rank or '-'}" for law, rank in missed))
            for way in report.ways
            if (missed := report.missed(way, number))
        ]
        if ways:
            misses.append(_Miss(one.id, one.state, one.question, ways))
    return {
        "report": report,
        "measures": [(name, NAMES[name]) for name in MEASURES],
        "recall": recall,
        "depths": list(RECALL_DEPTHS),
        "wins": [(a, b, *report.wins(a, b)) for a, b in pairs],
        "figures": figures,
        "misses": misses,
        "cutoff": CUTOFF,
        "depth": DEPTH,
    }


def _figure(height: float) -> Figure:
    from matplotlib.figure import Figure

    return Figure(figsize=(8, height), layout="constrained")


def _recall_figure(report: Report, recall: dict[str, list[float]]) -> Figure:
    figure = _figure(3.6)
    axes = figure.subplots()
    for way in report.ways:
        axes.plot(list(RECALL_DEPTHS), recall[way], marker="o", markersize=3, label=way, color=COLOURS.get(way))
    axes.axvline(CUTOFF, color="#57606a", linestyle=":", linewidth=1)
    axes.set_xlabel("k (laws retrieved)")
    axes.set_ylabel("mean recall@k")
    axes.set_xticks(list(RECALL_DEPTHS))
    axes.set_ylim(0, 1.02)
    axes.grid(alpha=0.3)
    axes.legend(loc="lower right")
    return figure


def _wins_figure(report: Report, pairs: list[tuple[str, str]]) -> Figure:
    figure = _figure(2.2 * len(pairs))
    for axes, (first, second) in zip(figure.subplots(len(pairs), 1, squeeze=False)[:, 0], pairs, strict=True):
        differences = sorted(
            (a - b for a, b in zip(report.values(first, "nDCG@8"), report.values(second, "nDCG@8"), strict=True)),
            reverse=True,
        )
        colours = [WON if value > 0 else LOST if value < 0 else "#8c959f" for value in differences]
        axes.bar(range(len(differences)), differences, width=1.0, color=colours)
        won, lost, tied = report.wins(first, second)
        axes.set_title(f"{first} vs {second}: {won} wins, {lost} losses, {tied} ties", fontsize=10)
        axes.axhline(0, color="#57606a", linewidth=0.8)
        axes.set_ylim(-1.05, 1.05)
        axes.set_ylabel("nDCG@8 difference", fontsize=8)
        axes.set_xticks([])
    figure.supxlabel("questions, sorted by difference", fontsize=9)
    return figure


def _misses_figure(report: Report) -> Figure:
    """Each way's misses on one row: a point a relevant law left out of the first CUTOFF, at the rank it
    reached; those not in the first DEPTH at the right, past a gap."""
    import numpy as np

    figure = _figure(0.9 + 0.7 * len(report.ways))
    axes = figure.subplots()
    beyond = DEPTH * 2  # on the log scale, clear of DEPTH's own tick
    generator = np.random.default_rng(0)  # the same jitter every run: the same file for the same report
    for row, way in enumerate(report.ways):
        ranks = [rank or beyond for number in range(len(report.judged)) for _, rank in report.missed(way, number)]
        jitter = generator.uniform(-0.25, 0.25, len(ranks))
        axes.scatter(ranks, row + jitter, s=12, alpha=0.7, color=COLOURS.get(way), label=f"{way}: {len(ranks)}")
    axes.set_yticks(range(len(report.ways)), list(report.ways))
    axes.set_xscale("log")
    ticks = [t for t in (9, 10, 20, 50, 100) if t <= DEPTH] + [beyond]
    axes.set_xticks(ticks, [str(t) for t in ticks[:-1]] + [f"not in {DEPTH}"])
    axes.minorticks_off()
    axes.set_xlim(CUTOFF + 0.5, beyond * 1.25)
    axes.set_ylim(-0.6, len(report.ways) - 0.4)
    axes.set_xlabel("rank reached (log scale)")
    axes.grid(axis="x", alpha=0.3)
    axes.legend(loc="upper left", fontsize=8, ncols=len(report.ways))
    return figure


_ID = re.compile(r'\bid="([^"]+)"')
_STYLE = re.compile(r'\sstyle="([^"]*)"')
_STYLE_ELEMENT = re.compile(r"<style[^>]*>\*\{([^}]*)\}</style>")


def _svg(figure: Figure, prefix: str) -> str:
    """The figure as an inline <svg>: no XML prolog, its ids (glyphs, clip paths) made its own, so that several
    figures in one page never share one, and no CSS: each `style` attribute as the presentation attributes it
    sets (`fill="#fff"`), which a Content-Security-Policy without inline styles, the page's, lets draw."""
    out = io.StringIO()
    figure.savefig(out, format="svg", metadata={"Date": None, "Creator": None})  # no date: the same file again
    text = out.getvalue()
    text = text[text.index("<svg") :]
    ids = set(_ID.findall(text))
    for found in sorted(ids, key=len, reverse=True):
        text = text.replace(f'id="{found}"', f'id="{prefix}-{found}"')
        text = text.replace(f"#{found})", f"#{prefix}-{found})").replace(f'#{found}"', f'#{prefix}-{found}"')
    # matplotlib's one rule, `*{stroke-linejoin: round; stroke-linecap: butt}`, on the root: both are inherited,
    # and every element that sets either sets it itself.
    rule = _STYLE_ELEMENT.search(text)
    if rule is not None:
        text = text[: rule.start()] + text[rule.end() :]
        text = text.replace("<svg ", f"<svg{_attributes(rule.group(1))} ", 1)
    return _STYLE.sub(lambda found: _attributes(found.group(1)), text)


def _attributes(declarations: str) -> str:
    """CSS declarations (`fill: #fff; stroke: none`) as SVG presentation attributes (` fill="#fff" stroke="none"`)."""
    pairs = [part.split(":", 1) for part in declarations.split(";") if part.strip()]
    return "".join(f' {name.strip()}="{value.strip()}"' for name, value in pairs)
