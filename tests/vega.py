"""What a Vega-Lite chart draws, read from its spec: an Altair chart built by views/charts.py,
or the element a page sent (AppTest's ``vega_lite_chart``, whose rows Streamlit moves out
of the spec into Arrow datasets)."""

from __future__ import annotations

import functools
import json
from typing import Any


@functools.cache
def _schema() -> dict[str, Any]:
    from altair.vegalite.v6.schema import load_schema

    return load_schema()  # 1.5 MB of JSON: parsed once per process


def valid(spec: dict[str, Any]) -> dict[str, Any]:
    """``spec``, once it is found valid against the Vega-Lite schema (jsonschema's error
    otherwise): the site sends specs unvalidated (views.charts.spec)."""
    from altair.utils.schemapi import validate_jsonschema

    validate_jsonschema(spec, _schema())
    return spec


def spec_of(chart: Any) -> dict[str, Any]:
    """The chart's Vega-Lite spec, each named dataset's rows under ``datasets``; validated."""
    if isinstance(chart, dict):
        return valid(chart)  # views.charts.spec's, rows inline
    if hasattr(chart, "to_dict"):
        return chart.to_dict()  # validated; Altair writes the rows under ``datasets`` itself
    import pyarrow as pa

    spec = valid(json.loads(chart.proto.spec))
    spec["datasets"] = {
        **spec.get("datasets", {}),
        **{
            d.name: pa.ipc.open_stream(d.data.data).read_all().to_pylist()
            for d in chart.proto.datasets
        },
    }
    return spec


def views(chart: Any) -> list[dict[str, Any]]:
    """Every single view of the chart, layers and panels in order: its ``mark`` (type),
    ``encoding``, ``rows`` (the data it draws, inherited from above where it has none),
    ``props`` (the mark's other properties) and ``panel`` (its panel's title, if any)."""
    spec = spec_of(chart)
    datasets = spec.get("datasets", {})
    out: list[dict[str, Any]] = []

    def walk(node: dict[str, Any], rows: list[dict], panel: str, top: bool = False) -> None:
        data = node.get("data", {})
        rows = datasets.get(data.get("name"), data.get("values", rows))
        panel = panel if top or "title" not in node else title_text(node["title"])
        for key in ("layer", "vconcat", "hconcat", "concat"):
            for child in node.get(key, []):
                walk(child, rows, panel)
        if "mark" in node:
            mark = node["mark"] if isinstance(node["mark"], dict) else {"type": node["mark"]}
            props = {k: v for k, v in mark.items() if k != "type"}
            out.append(
                {
                    "mark": mark["type"],
                    "encoding": node.get("encoding", {}),
                    "rows": rows,
                    "props": props,
                    "panel": panel,
                }
            )

    walk(spec, [], "", top=True)
    return out


def title(chart: Any) -> str:
    """The chart's title as one line of text."""
    return title_text(spec_of(chart).get("title"))


def title_text(title: Any) -> str:
    """A title as one line of text (a title may be a string, lines, or ``{"text": ...}``)."""
    if isinstance(title, dict):
        title = title.get("text")
    if isinstance(title, list):
        return " ".join(title)
    return title or ""


def marks(chart: Any, kind: str) -> list[dict[str, Any]]:
    """The chart's views of mark ``kind`` ("bar", "errorbar", "rule", "text", ...)."""
    return [v for v in views(chart) if v["mark"] == kind]


def shown(at: Any) -> list[Any]:
    """The Altair charts an AppTest run of a page shows, in order (their elements carry no
    widget key: a chart is told by its :func:`title`)."""
    return list(at.get("vega_lite_chart"))


def texts(chart: Any) -> list[str]:
    """Every text a chart writes out (its text marks' rows), a floor line's name among them."""
    return [
        str(row[v["encoding"]["text"]["field"]]) for v in marks(chart, "text") for row in v["rows"]
    ]
