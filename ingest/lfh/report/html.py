"""Assembling reports/index.html: one self-contained file (inline CSS, inline SVG, no scripts, no external
URLs) that opens offline."""

from __future__ import annotations

import html
import io
import re
from dataclasses import dataclass

from matplotlib.figure import Figure

CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,Helvetica,Arial,sans-serif;margin:0;color:#222;
background:#fafafa;line-height:1.45}
main{max-width:1150px;margin:0 auto;padding:1.5rem 2rem 3rem}
h1{font-size:1.6rem;margin:.2rem 0}
h2{font-size:1.2rem;margin:2.2rem 0 .4rem;border-bottom:1px solid #ddd;padding-bottom:.2rem}
.banner{background:#fff4d6;border:1px solid #e8c766;padding:.6rem 1rem;border-radius:6px;margin:1rem 0}
.summary{display:flex;gap:1rem;flex-wrap:wrap;margin:1rem 0}
.summary div{background:#fff;border:1px solid #e3e3e3;border-radius:6px;padding:.5rem .9rem}
.summary b{display:block;font-size:1.25rem}
figure{margin:0;background:#fff;border:1px solid #e3e3e3;border-radius:6px;padding:.6rem}
figure svg{max-width:100%;height:auto;display:block}
figcaption{font-size:.92rem;color:#444;margin-top:.4rem}
.empty{color:#666;font-style:italic}
footer{margin-top:2.5rem;font-size:.8rem;color:#666}
code{background:#f0f0f0;padding:0 .2rem;border-radius:3px}
table{border-collapse:collapse;background:#fff;font-size:.85rem;margin:.4rem 0 1rem;display:block;overflow-x:auto}
th,td{border:1px solid #e3e3e3;padding:.2rem .45rem;text-align:left;white-space:nowrap}
th{background:#f3f3f3}
.caption{font-size:.92rem;color:#444}
"""


@dataclass(frozen=True)
class Section:
    key: str           # file stem of the saved figure, and the figure's id in the page
    title: str
    caption: str       # how to read the figure
    figure: Figure | None
    empty_note: str    # shown instead of the figure when the marts hold nothing to draw
    svg: str | None = None  # the rendered SVG document, filled by the report before the page is assembled
    table: str | None = None  # HTML tables shown instead of a figure (e.g. lfh.report.versions), with the caption


def svg_document(figure: Figure) -> str:
    """The figure as a standalone SVG file's text (no date, so reruns give the same bytes)."""
    buffer = io.StringIO()
    figure.savefig(buffer, format="svg", metadata={"Date": None, "Creator": None})
    return buffer.getvalue()


def inline_svg(document: str, key: str, title: str) -> str:
    """An SVG document as an inline <svg> element (XML prolog, DOCTYPE and metadata removed)."""
    text = document[document.index("<svg"):]
    text = re.sub(r"<metadata>.*?</metadata>", "", text, flags=re.DOTALL)
    return text.replace("<svg ", f'<svg id="fig-{key}" class="report-figure" role="img" '
                                f'aria-label="{html.escape(title)}" ', 1)


def render_page(title: str, banner: str | None, summary: list[tuple[str, str]], sections: list[Section],
                footer: str) -> str:
    parts = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
             '<meta name="viewport" content="width=device-width, initial-scale=1">',
             f"<title>{html.escape(title)}</title><style>{CSS}</style></head><body><main>",
             f"<h1>{html.escape(title)}</h1>"]
    if banner:
        parts.append(f'<div class="banner" id="banner">{html.escape(banner)}</div>')
    parts.append('<div class="summary">' + "".join(
        f"<div><b>{html.escape(value)}</b>{html.escape(label)}</div>" for label, value in summary) + "</div>")
    for section in sections:
        parts.append(f'<section id="{section.key}"><h2>{html.escape(section.title)}</h2>')
        if section.table is not None:
            parts.append(f'<div class="tables">{section.table}'
                         f'<p class="caption">{html.escape(section.caption)}</p></div>')
        elif section.svg is None:
            parts.append(f'<p class="empty">{html.escape(section.empty_note)}</p>')
        else:
            parts.append("<figure>" + inline_svg(section.svg, section.key, section.title)
                         + f"<figcaption>{html.escape(section.caption)}</figcaption></figure>")
        parts.append("</section>")
    parts.append(f"<footer>{html.escape(footer)}</footer></main></body></html>")
    return "\n".join(parts)
