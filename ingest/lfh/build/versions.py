"""What `lfh build` says about model and labeler versions after a DuckDB build (docs/RUNS.md): one line per model
whose stories come from more than one version (which version the measures use), and one warning line when the
labeling in use comes from a labeler version that no hand labels were checked against. Read from the built tables;
nothing is said while every model has one version and the labeler in use was checked."""

from __future__ import annotations

from pathlib import Path

import duckdb

VERSIONS_TABLE = "intermediate.int_model_versions_ranked"
LABELERS_TABLE = "intermediate.int_story_labelers_assigned"
AGREEMENT_TABLE = "marts.fct_labeler_agreement"


def _table_exists(connection: duckdb.DuckDBPyConnection, qualified: str) -> bool:
    schema, name = qualified.split(".")
    return bool(connection.execute(
        "select count(*) from information_schema.tables where table_schema = ? and table_name = ?",
        [schema, name]).fetchone()[0])


def model_version_lines(connection: duckdb.DuckDBPyConnection) -> list[str]:
    """One line per model with several versions, naming them oldest first and the one(s) the measures use."""
    if not _table_exists(connection, VERSIONS_TABLE):
        return []
    rows = connection.execute(
        f"select model, model_version, selection from {VERSIONS_TABLE} where versions_of_model > 1 "
        "order by model, version_number").fetchall()
    by_model: dict[str, list[tuple[str, str]]] = {}
    for model, version, selection in rows:
        by_model.setdefault(model, []).append((version, selection))
    lines = []
    for model, versions in by_model.items():
        used = [version for version, selection in versions if selection != "not used"]
        how = {"latest": "its latest", "chosen": "chosen by var model_version_selected",
               "pooled": "pooled by var model_version_selected"}[
            next(selection for _version, selection in versions if selection != "not used")] if used else ""
        names = ", ".join(version for version, _selection in versions)
        use = f"the measures use {', '.join(used)} ({how})" if used else \
            "the measures use none of them (var model_version_selected names a version the model does not have)"
        lines.append(f"model versions: {model} answered as {len(versions)} versions ({names}; oldest first): {use}; "
                     "fct_model_drift compares each with the one before")
    return lines


def unchecked_labeler_line(connection: duckdb.DuckDBPyConnection) -> str | None:
    """A warning when a labeler version whose labels are in use has no hand-labeled character behind it."""
    if not (_table_exists(connection, LABELERS_TABLE) and _table_exists(connection, AGREEMENT_TABLE)):
        return None
    in_use = [row[0] for row in connection.execute(
        f"select distinct labeler_version from {LABELERS_TABLE} order by 1").fetchall()]
    checked = {row[0] for row in connection.execute(
        f"select distinct labeler_version from {AGREEMENT_TABLE} where n > 0").fetchall()}
    unchecked = [version for version in in_use if version not in checked]
    if not unchecked:
        return None
    return (f"warning: the labeling in use comes from labeler version(s) {', '.join(unchecked)} that no hand labels "
            "were checked against (fct_labeler_agreement has no rows for them): hand-label a sample of its stories "
            "(lfh audit-sample) before citing the measures")


def version_notes(db_path: Path) -> list[str]:
    """The lines above for a built DuckDB warehouse (none when it is not built yet). The build has succeeded when
    this runs: a warehouse that cannot be read now (another process holds it) gives a line saying so, not an error."""
    if not db_path.is_file():
        return []
    try:
        with duckdb.connect(str(db_path), read_only=True) as connection:
            notes = model_version_lines(connection)
            warning = unchecked_labeler_line(connection)
    except duckdb.Error as exc:
        return [f"model versions: not checked ({str(exc).splitlines()[0]}); fct_model_drift and dim_runs have them"]
    return notes + ([warning] if warning else [])
