"""The report's "What changed between versions" section (docs/RUNS.md): fct_model_drift and dim_runs as tables.
HTML tables, not figures: the reader needs the version names, values, intervals and q-values as written."""

from __future__ import annotations

import html

import polars as pl

from lfh.report.html import Section

DRIFT_ROWS = 25   # the drift rows shown: the smallest q-values first (every row is in fct_model_drift)
RUN_ROWS = 40     # the runs shown: the latest first (every run is in dim_runs)
TITLE = "What changed between versions"
CAPTION = (
    "A model answering under several versions (the snapshot its responses reported, else its configured model id) "
    "is never pooled: the measures above use each model's latest version (var model_version_selected picks another "
    "or pools them). First table: each version against the one before it, per measure and group, from "
    "fct_model_drift: both values (shares, or subordination ratios S), their ratio (later / earlier) with a 95% "
    "interval on the log scale, the p-value and the Benjamini–Hochberg q-value over the measure's family; the rows "
    f"with the smallest q-values, at most {DRIFT_ROWS}. Second table: the runs behind the warehouse (dim_runs): what "
    "answered, the versions its rows carry, when and how many; a run marked synthesized came from a file without a "
    "manifest (docs/RUNS.md).")
NO_DRIFT = "Every model has one version in this warehouse: there is nothing to compare between versions yet."


def _cell(value: object, digits: int = 3) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:.{digits}g}"
    return html.escape(str(value))


def _table(header: list[str], rows: list[list[str]], key: str) -> str:
    head = "".join(f"<th>{html.escape(name)}</th>" for name in header)
    body = "".join("<tr>" + "".join(f"<td>{cell}</td>" for cell in row) + "</tr>" for row in rows)
    return f'<table id="table-{key}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def _group(row: dict) -> str:
    parts = [row.get("race"), row.get("gender"), row.get("couple_type")]
    return " × ".join(part for part in parts if part) or "–"


def drift_table(drift: pl.DataFrame) -> str | None:
    """The drift rows with the smallest q-values (then p-values) as an HTML table; None without rows."""
    if drift.is_empty():
        return None
    shown = drift.sort(["drift_q_value", "drift_p_value"], nulls_last=True).head(DRIFT_ROWS)
    rows = [[_cell(row["model"]), f"{_cell(row['previous_version'])} → {_cell(row['model_version'])}",
             _cell(row["measure"]), _cell(row["domain"]), _cell(row["condition"]), _group(row),
             _cell(row["previous_estimate"]), _cell(row["estimate"]),
             f"{_cell(row['drift_ratio'])} [{_cell(row['drift_ci_lower'])}, {_cell(row['drift_ci_upper'])}]",
             _cell(row["drift_p_value"], 2), _cell(row["drift_q_value"], 2)]
            for row in shown.iter_rows(named=True)]
    return _table(["model", "versions", "measure", "domain", "condition", "group", "before", "after",
                   "ratio [95% interval]", "p", "q"], rows, "model-drift")


def runs_table(runs: pl.DataFrame) -> str | None:
    """The latest runs as an HTML table; None without runs."""
    if runs.is_empty():
        return None
    shown = runs.sort(["finished_at", "loaded_at", "run_id"], descending=True, nulls_last=True).head(RUN_ROWS)
    rows = []
    for row in shown.iter_rows(named=True):
        kind = row["run_kind"] + (" (simulated)" if row["is_simulated"] else "") \
            + (" (synthesized)" if row["is_synthesized"] else "")
        versions = row["model_versions"] or row["labeler_versions"]
        rows.append([_cell(kind), _cell(row["model"]), _cell(row["run_name"]), _cell(versions),
                     _cell(row["started_at"]), _cell(row["finished_at"]), f"{row['stories']:,}",
                     f"{row['label_responses']:,}", _cell(row["lfh_version"]), _cell(row["git_commit"])])
    return _table(["run", "model", "run name", "versions", "started", "finished", "stories", "label responses",
                   "lfh", "commit"], rows, "runs")


def versions_section(marts: dict[str, pl.DataFrame]) -> Section:
    """The section: the drift table (or a note that every model has one version) and the runs table."""
    drift = drift_table(marts.get("fct_model_drift", pl.DataFrame()))
    runs = runs_table(marts.get("dim_runs", pl.DataFrame()))
    parts = [drift if drift else f'<p class="empty">{html.escape(NO_DRIFT)}</p>']
    if runs:
        parts.append(runs)
    return Section("model-versions", TITLE, CAPTION, None, NO_DRIFT, table="\n".join(parts))
