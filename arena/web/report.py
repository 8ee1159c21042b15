"""One self-contained HTML league report: tables and plotly charts, offline.

The figures are laid out here in Python with plotly's graph objects from the
league document (``arena league show --json``: standings, head-to-head, cost,
pooled audit) and the episodes' digests (:mod:`arena.web.report_data`); the
page's script only draws them with plotly.js, which is inlined (never fetched
from a CDN), and fills the tables. Nothing on the page is computed in the
browser, so every number on it is one the arena's own functions produced.

Names reach the charts as text: plotly reads a subset of HTML in labels, legends and
hover text (``<a href>`` draws a live link), so every name is written escaped
(:func:`_label`), and every axis of names is a category axis, so an entrant named
``2024-01-01`` is a name, not a date on a time axis.

What a person reads off a chart is stated where it is drawn: each interval is captioned
by the method that drew it (``ciMethod``), an allocated league's means are titled as
``league show`` titles them (:func:`arena.league.report.means_title`), and an entrant has
one colour in every chart, given by its name (:func:`entrant_colours`).
"""

from __future__ import annotations

import html
import json
from collections import defaultdict
from typing import Any

import plotly.graph_objects as go
from plotly.colors import qualitative
from plotly.offline import get_plotlyjs

from arena.figures import fixed
from arena.league.cost import TOKEN_KINDS
from arena.league.report import STOP_REASONS, means_title
from arena.league.standings import STRAT_T, TOO_FEW, TOO_FEW_NOTE, T
from arena.web.page import asset, fill, script_json

FLAGS_SECTION = "flags"
FLAG_MARKS = {"soft-play": ("square-open", 44), "waves-through": ("diamond-open", 62)}
"""How each collusion flag is marked on the bias heat map: an outline around the cell's
figure, so a cell with both flags shows both and its number stays readable."""

INTERVAL_METHODS = {T: "t-interval", STRAT_T: "strat-t interval"}
"""How the page captions an interval, by the method that drew it (``ciMethod``): a paired
league's are post-stratified by partner (strat-t, docs/league.md), others are t-intervals."""

ENTRANT_COLOURS = (*qualitative.Plotly, *qualitative.Dark24)
"""The entrants' colours, in the order names take them: plotly's own ten, then 24 more, so
up to 34 entrants never share one."""

_LAYOUT = {"template": "plotly_white", "margin": {"l": 120, "r": 30, "t": 40, "b": 60}}


def report_html(
    document: dict[str, Any],
    episodes: list[dict[str, Any]],
    *,
    source: str,
    caution: str | None = None,
) -> str:
    """The report page of a league document and its episode digests, as one HTML string.

    Each digest may carry ``replay``, the relative address of its replay page.
    ``caution`` (``unchecked``, ``partial``) marks a report of logs not fully verified.
    """
    data = {
        "source": source,
        "caution": caution,
        "league": document["league"],
        "means": means_title(document["league"]),
        "intervalMethods": INTERVAL_METHODS,
        "standings": document["standings"],
        "headToHead": document["headToHead"],
        "ciNote": TOO_FEW_NOTE
        if any(s.get("ciCoverage") == TOO_FEW for s in document["standings"])
        else None,
        "cost": document["cost"],
        "flags": _flags(document),
        "power": _pooled(document).get("power"),
        "episodes": episodes,
        "figures": report_figures(document, episodes),
    }
    marked = f"{caution.upper()}: " if caution else ""
    parts = {
        "title": html.escape(f"{marked}league report: {source}"),
        "style": asset("report.css"),
        "plotly": get_plotlyjs(),
        "script": asset("report.js"),
        "data": script_json(data),
    }
    return fill("report.html", parts)


def report_figures(
    document: dict[str, Any], episodes: list[dict[str, Any]]
) -> dict[str, dict | None]:
    """Every chart of the page by its element id, as plotly JSON (None: nothing to draw)."""
    colours = entrant_colours(document, episodes)
    return {
        "standings-plot": _standings(document, colours),
        "narrowing-plot": _narrowing(document, colours),
        "duels-plot": _duels(document["standings"], document["headToHead"]),
        "scores-plot": _score_distributions(episodes, colours),
        "curve-plot": _points_over_deals(episodes, colours),
        "bias-plot": _bias(_pooled(document)),
        "calibration-plot": _calibration(_read_out(document), colours),
        "readout-plot": _bluffs_and_catches(_read_out(document), colours),
        "rule11-plot": _rule11(episodes),
        "tokens-plot": _tokens(document["cost"]),
    }


def entrant_colours(document: dict[str, Any], episodes: list[dict[str, Any]]) -> dict[str, str]:
    """Each entrant's one colour for every chart of the report.

    The colours go to the report's entrants (ranked, or only seated in an episode) in the
    order of their names, so a chart's order of traces (the standings rank, another sorts
    by name) never changes whose colour is whose."""
    names = {s["entrant"] for s in document["standings"]}
    names.update(name for episode in episodes for name in episode["entrants"])
    return {
        name: ENTRANT_COLOURS[place % len(ENTRANT_COLOURS)]
        for place, name in enumerate(sorted(names))
    }


def _figure(figure: go.Figure, **layout) -> dict:
    figure.update_layout(**_LAYOUT, **layout)
    return json.loads(figure.to_json())


def _standings(document: dict[str, Any], colours: dict[str, str]) -> dict:
    """Mean episode score per entrant, best on top, with its 95% interval over tables,
    captioned in its hover by the method that drew it."""
    rows = document["standings"][::-1]
    means = [s["meanScore"] for s in rows]
    figure = go.Figure(
        go.Scatter(
            x=means,
            y=[_label(s["entrant"]) for s in rows],
            mode="markers",
            marker={"size": 11, "color": [colours[s["entrant"]] for s in rows]},
            error_x={
                "type": "data",
                "symmetric": False,
                "array": [s["ci95"][1] - m for s, m in zip(rows, means, strict=True)],
                "arrayminus": [m - s["ci95"][0] for s, m in zip(rows, means, strict=True)],
            },
            # figures as the arena prints them (never -0.000), not d3's own formatting
            customdata=[
                [
                    *(fixed(v, 3) for v in (*s["ci95"], s["meanScore"])),
                    INTERVAL_METHODS[s["ciMethod"]],
                ]
                for s in rows
            ],
            hovertemplate="%{y}: %{customdata[2]}, 95% %{customdata[3]}"
            " [%{customdata[0]}, %{customdata[1]}]<extra></extra>",
        )
    )
    return _figure(
        figure,
        xaxis_title=f"{means_title(document['league'])} (95% CI over tables)",
        yaxis={"type": "category"},
        height=120 + 40 * len(rows),
    )


def _narrowing(document: dict[str, Any], colours: dict[str, str]) -> dict | None:
    """A ``--target-ci`` league's half-widths after each round, the target, and where and
    why it stopped (None for a league without a target)."""
    looks = document.get("narrowing")
    if not looks:
        return None
    league = document["league"]
    names = [s["entrant"] for s in document["standings"]]
    x = [look["tables"] for look in looks]
    traces = [
        go.Scatter(
            x=x,
            y=[look["halfWidth"].get(name) for look in looks],
            name=_label(name),
            line={"color": colours[name]},
        )
        for name in names
    ]
    figure = go.Figure(traces)
    figure.add_hline(y=league["targetCi"], line_dash="dash", annotation_text="target")
    if "stoppedAfterTables" in league:
        figure.add_vline(
            x=league["stoppedAfterTables"],
            line_dash="dot",
            annotation_text=f"stopped: {STOP_REASONS.get(league['stopped'], league['stopped'])}",
        )
    return _figure(
        figure,
        xaxis_title="tables played",
        yaxis_title=f"half-width (each look at {league['lookLevel']:.2%})",
        height=360,
    )


def _duels(standings: list[dict], duels: list[dict]) -> dict:
    """Net points per deal the row entrant took from the column's (blank: never met)."""
    names = [s["entrant"] for s in standings]
    cells = {(d["entrant"], d["opponent"]): d for d in duels}
    z = [[_get(cells.get((a, b)), "pointsPerDeal") for b in names] for a in names]
    hover = [
        [
            _label(
                f"{a} vs {b}: {_signed(d['pointsPerDeal'])} per deal over {d['deals']} deals, "
                f"95% {INTERVAL_METHODS[d['ciMethod']]}"
                f" [{_signed(d['ci95'][0])}, {_signed(d['ci95'][1])}]"
                if (d := cells.get((a, b)))
                else f"{a} and {b} never met"
            )
            for b in names
        ]
        for a in names
    ]
    return _figure(
        go.Figure(_matrix(names, z, hover, "points/deal", "RdBu")),
        xaxis={"title": "opponent", "type": "category"},
        yaxis={"title": "entrant", "autorange": "reversed", "type": "category"},
        height=160 + 60 * len(names),
    )


def _entrant_scores(episodes: list[dict]) -> dict[str, list[float]]:
    """Each entrant's score per episode: the mean of its seats there, as in the standings."""
    scores: dict[str, list[float]] = defaultdict(list)
    for episode in episodes:
        if episode["score"] is None:
            continue
        mine: dict[str, list[float]] = defaultdict(list)
        for name, score in zip(episode["entrants"], episode["score"], strict=True):
            mine[name].append(score)
        for name, values in mine.items():
            scores[name].append(sum(values) / len(values))
    return dict(sorted(scores.items()))


def _score_distributions(episodes: list[dict], colours: dict[str, str]) -> dict | None:
    scores = _entrant_scores(episodes)
    if not scores:
        return None
    figure = go.Figure(
        [
            go.Box(
                x=values,
                name=_label(name),
                boxpoints="all",
                jitter=0.4,
                pointpos=0,
                marker_color=colours[name],
                line_color=colours[name],
            )
            for name, values in scores.items()
        ]
    )
    return _figure(
        figure,
        xaxis_title="episode score",
        yaxis={"type": "category"},
        showlegend=False,
        height=140 + 50 * len(scores),
    )


def _points_over_deals(episodes: list[dict], colours: dict[str, str]) -> dict | None:
    """Each entrant's mean running points after each deal, over its seats."""
    sums: dict[str, list[float]] = defaultdict(list)
    counts: dict[str, list[int]] = defaultdict(list)
    for episode in episodes:
        for slot, name in enumerate(episode["entrants"]):
            for deal, points in enumerate(episode["pointsAfterDeal"]):
                if deal == len(sums[name]):
                    sums[name].append(0.0)
                    counts[name].append(0)
                sums[name][deal] += points[slot]
                counts[name][deal] += 1
    if not sums:
        return None
    figure = go.Figure(
        [
            go.Scatter(
                x=list(range(1, len(sums[name]) + 1)),
                y=[s / n for s, n in zip(sums[name], counts[name], strict=True)],
                name=_label(name),
                mode="lines+markers",
                line_color=colours[name],
                marker_color=colours[name],
            )
            for name in sorted(sums)
        ]
    )
    return _figure(figure, xaxis_title="deals played", yaxis_title="mean points so far", height=380)


def _pooled(document: dict[str, Any]) -> dict[str, Any]:
    """The pooled audit's flags section, or {} when there is none (or it failed)."""
    section = (document.get("audit") or {}).get(FLAGS_SECTION)
    return section if isinstance(section, dict) else {}


READ_OUT = "decisions"
"""The decision read-out's pooled section (docs/decisions.md)."""
OTHER = "#555555"
"""The colour of a read-out key that is no entrant's name (it is keyed by seat spec, which
a league file's entrant may name otherwise)."""


def _read_out(document: dict[str, Any]) -> dict[str, Any]:
    """The pooled decision read-out's entrants, or {} when there is none (or it failed)."""
    section = (document.get("audit") or {}).get(READ_OUT)
    entrants = section.get("entrants") if isinstance(section, dict) else None
    return entrants if isinstance(entrants, dict) else {}


def _calibration(entrants: dict[str, Any], colours: dict[str, str]) -> dict | None:
    """Per entrant, how often its bids were true against how likely its own hand made them,
    bin by bin (docs/decisions.md): a point per bin with bids, sized by them; the diagonal
    is a seat whose bids are exactly as true as its own dice say."""
    traces = [
        go.Scatter(
            x=[0, 1], y=[0, 1], mode="lines", name="own hand's odds",
            line={"dash": "dot", "color": "grey"}, hoverinfo="skip",
        )
    ]  # fmt: skip
    for name in sorted(entrants):
        bins = [b for b in entrants[name]["calibration"] if b["bids"]]
        if not bins:
            continue
        most = max(b["bids"] for b in bins)
        colour = colours.get(name, OTHER)
        traces.append(
            go.Scatter(
                x=[b["meanChance"] for b in bins],
                y=[b["trueRate"] for b in bins],
                mode="lines+markers",
                name=_label(name),
                marker={"size": [6 + 14 * b["bids"] / most for b in bins], "color": colour},
                line={"color": colour},
                text=[_label(f"{name}: {b['bids']} bids") for b in bins],
                hovertemplate="%{text}<br>chance %{x:.3f}, true %{y:.3f}<extra></extra>",
            )
        )
    if len(traces) == 1:
        return None
    return _figure(
        go.Figure(traces),
        xaxis={"title": "bid's chance from its own hand (bin mean)", "range": [0, 1]},
        yaxis={"title": "share of those bids true", "range": [0, 1]},
        height=460,
    )


def _bluffs_and_catches(entrants: dict[str, Any], colours: dict[str, str]) -> dict | None:
    """One point per entrant: its bluff rate against its challenge accuracy, each with its
    95% interval (the method captioned in the legend)."""
    points = [
        (
            name,
            entrants[name]["figures"]["bluffRate"],
            entrants[name]["figures"]["challengeAccuracy"],
        )
        for name in sorted(entrants)
    ]
    points = [(n, x, y) for n, x, y in points if x["value"] is not None and y["value"] is not None]
    if not points:
        return None

    def bars(entry: dict[str, Any]) -> dict[str, Any]:
        low, high = entry["ci"] or (entry["value"], entry["value"])
        return {
            "type": "data", "symmetric": False,
            "array": [high - entry["value"]], "arrayminus": [entry["value"] - low],
        }  # fmt: skip

    traces = [
        go.Scatter(
            x=[x["value"]],
            y=[y["value"]],
            error_x=bars(x),
            error_y=bars(y),
            mode="markers",
            name=_label(f"{name} ({x['ciMethod']} intervals, 95%)"),
            marker={"size": 12, "color": colours.get(name, OTHER)},
            hovertemplate=_label(name)
            + ": bluffs %{x:.3f}, challenges won %{y:.3f}<extra></extra>",
        )
        for name, x, y in points
    ]
    return _figure(
        go.Figure(traces),
        xaxis={"title": "bluff rate (bids false when made)", "range": [0, 1]},
        yaxis={"title": "challenge accuracy (challenges won)", "range": [0, 1]},
        height=460,
    )


def _flags(document: dict[str, Any]) -> list[dict[str, Any]]:
    return _pooled(document).get("flags", [])


def _flagged_cells(pooled: dict[str, Any]) -> dict[str, list[tuple[str, str]]]:
    """The (row, column) cells of the bias matrix each kind of flag is about.

    A soft-play flag names a pair and is about both directions; waves-through one.
    """
    cells: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for flag in pooled.get("flags", []):
        a, b = flag["policies"]
        pairs = [(a, b), (b, a)] if flag["flag"] == "soft-play" else [(a, b)]
        cells[flag["flag"]].extend(pair for pair in pairs if pair not in cells[flag["flag"]])
    return cells


def _bias(pooled: dict[str, Any]) -> dict | None:
    """How much more the row policy waved the column's bids through than it does in general."""
    if "bias" not in pooled:
        return None
    names = pooled["policies"]
    z = pooled["bias"]
    faced = pooled["faced"]
    hover = [
        [
            _label(f"{a} facing {b}: bias {_signed(z[i][j])} over {faced[i][j]} facings")
            for j, b in enumerate(names)
        ]
        for i, a in enumerate(names)
    ]
    traces = [_matrix(names, z, hover, "bias", "RdBu_r")]
    for kind, cells in _flagged_cells(pooled).items():
        traces.append(
            go.Scatter(
                x=[_label(b) for _, b in cells],
                y=[_label(a) for a, _ in cells],
                mode="markers",
                name=_label(f"flag: {kind}"),
                marker={
                    "symbol": FLAG_MARKS.get(kind, ("circle-open", 52))[0],
                    "size": FLAG_MARKS.get(kind, ("circle-open", 52))[1],
                    "color": "black",
                    "line": {"width": 3},
                },
                hovertemplate=f"{_label(kind)}: %{{y}} facing %{{x}}<extra></extra>",
            )
        )
    return _figure(
        go.Figure(traces),
        xaxis={"title": "bidder (faced)", "type": "category"},
        yaxis={"title": "facer", "autorange": "reversed", "type": "category"},
        legend={"orientation": "h", "y": -0.25},
        height=220 + 60 * len(names),
    )


def _rule11(episodes: list[dict]) -> dict | None:
    """Rejected replies, fallback moves and faults per entrant (rule 11), summed."""
    totals: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for episode in episodes:
        for slot, name in enumerate(episode["entrants"]):
            for kind in ("rejected", "fallbacks", "faults"):
                totals[name][kind] += episode[kind][slot]
    if not totals:
        return None
    names = sorted(totals)
    figure = go.Figure(
        [
            go.Bar(x=_labels(names), y=[totals[name][kind] for name in names], name=kind)
            for kind in ("rejected", "fallbacks", "faults")
        ]
    )
    return _figure(
        figure, barmode="group", xaxis={"type": "category"}, yaxis_title="count", height=340
    )


def _tokens(cost: dict[str, Any]) -> dict | None:
    """Tokens by kind per entrant; None when the league made no model calls."""
    if not cost["tokens"]["total"]:
        return None
    names = sorted(cost["byEntrant"])
    figure = go.Figure(
        [
            go.Bar(
                x=_labels(names), y=[cost["byEntrant"][n]["tokens"][kind] for n in names], name=kind
            )
            for kind in TOKEN_KINDS
        ]
    )
    return _figure(
        figure, barmode="stack", xaxis={"type": "category"}, yaxis_title="tokens", height=340
    )


def _matrix(
    names: list[str], z: list[list[float | None]], hover: list[list[str]], title: str, colors: str
) -> go.Heatmap:
    """A square matrix over ``names`` (row by column), each cell labelled with its signed
    value to 3 decimals, colored symmetrically around 0 (a blank cell: no data); ``hover``
    is already escaped (:func:`_label`)."""
    limit = max([abs(v) for row in z for v in row if v is not None] or [1.0]) or 1.0
    return go.Heatmap(
        z=z,
        x=_labels(names),
        y=_labels(names),
        text=[[_signed(v) for v in row] for row in z],
        texttemplate="%{text}",
        customdata=hover,
        hovertemplate="%{customdata}<extra></extra>",
        colorscale=colors,
        zmid=0,
        zmin=-limit,
        zmax=limit,
        colorbar={"title": {"text": title}},
    )


def _label(text: str) -> str:
    """Text as plotly shows it literally: its HTML subset never sees a tag or an entity."""
    return html.escape(text, quote=False)


def _labels(names: list[str]) -> list[str]:
    return [_label(name) for name in names]


def _get(row: dict | None, key: str):
    return None if row is None else row[key]


def _signed(value: float | None) -> str:
    return "" if value is None else fixed(value, 3, sign=True)
