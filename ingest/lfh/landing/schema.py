"""The DDL of the raw tables `lfh ingest` writes (docs/CONTRACTS.md). One place, so every writer agrees.

Columns beyond the contract: raw.rejects.detail (a sentence saying what was wrong and where), and
raw.load_log.{stories,label_responses,hand_labels}_landed (the per-table split of rows_landed) and
raw.load_log.runs_landed (rows added to raw.runs, not counted in rows_landed).
"""

from __future__ import annotations

import duckdb

PROVENANCE = """
    source_file varchar not null,
    source_row integer,
    file_sha256 varchar not null,
    loaded_at timestamp not null,
    load_id varchar not null"""

RAW_TABLES: dict[str, str] = {
    "stories": f"""
        story_id varchar not null,
        model varchar not null,
        model_canonical varchar not null,
        query varchar not null,
        subject varchar,
        object varchar,
        role_category varchar,
        story_text varchar not null,
        generated_at varchar,
        occurrence integer not null,
        source_kind varchar not null,
        prompt_id varchar,
        prompt_tokens integer,
        completion_tokens integer,
        is_simulated boolean,
        run_id varchar,
        model_id varchar,
        model_version varchar,
        system_fingerprint varchar,{PROVENANCE}""",
    "label_responses": f"""
        response_id varchar not null,
        story_id varchar not null,
        labeler_model varchar not null,
        prompt_version varchar not null,
        sample_index integer not null,
        request_text varchar,
        response_text varchar not null,
        responded_at varchar,
        prompt_tokens integer,
        completion_tokens integer,
        run_id varchar,
        labeler_version varchar,
        system_fingerprint varchar,{PROVENANCE}""",
    "runs": f"""
        run_id varchar not null,
        run_kind varchar not null,
        run_name varchar,
        model varchar,
        model_canonical varchar,
        model_id varchar,
        base_url varchar,
        reported_models varchar,
        system_fingerprints varchar,
        sampling varchar,
        prompt_catalog_sha256 varchar,
        label_template_sha256 varchar,
        lfh_version varchar,
        git_commit varchar,
        git_dirty boolean,
        started_at timestamp,
        finished_at timestamp,
        requests bigint,
        retries bigint,
        failures bigint,
        prompt_tokens bigint,
        completion_tokens bigint,
        is_simulated boolean not null,
        is_synthesized boolean not null,
        manifest_json varchar,{PROVENANCE}""",
    "hand_labels": f"""
        story_id varchar not null,
        role varchar not null,
        gender varchar,
        name varchar,
        name_raw varchar,
        reference_words varchar[],
        label_source varchar not null,{PROVENANCE}""",
    "rejects": """
        source_file varchar not null,
        source_row integer,
        target_table varchar not null,
        reason varchar not null,
        detail varchar,
        raw_record varchar,
        file_sha256 varchar not null,
        loaded_at timestamp not null,
        load_id varchar not null""",
    "load_log": """
        load_id varchar not null,
        source_file varchar not null,
        file_sha256 varchar,
        file_kind varchar,
        rows_read bigint,
        rows_landed bigint,
        duplicates bigint,
        rejected bigint,
        stories_landed bigint,
        label_responses_landed bigint,
        hand_labels_landed bigint,
        runs_landed bigint,
        started_at timestamp not null,
        finished_at timestamp,
        status varchar not null,
        error varchar""",
}


# Columns added after warehouses already existed: added (null for the rows landed before) when missing.
ADDED_COLUMNS: dict[str, list[tuple[str, str]]] = {
    "stories": [("prompt_tokens", "integer"), ("completion_tokens", "integer"), ("is_simulated", "boolean"),
                ("run_id", "varchar"), ("model_id", "varchar"), ("model_version", "varchar"),
                ("system_fingerprint", "varchar")],
    "label_responses": [("run_id", "varchar"), ("labeler_version", "varchar"), ("system_fingerprint", "varchar")],
    "load_log": [("runs_landed", "bigint")],
}


def ensure_raw_schema(connection: duckdb.DuckDBPyConnection) -> None:
    """Create the raw schema and the tables `lfh ingest` writes when missing; add ADDED_COLUMNS to older tables
    (nothing else of an existing table is changed)."""
    connection.execute("create schema if not exists raw")
    for table, columns in RAW_TABLES.items():
        connection.execute(f"create table if not exists raw.{table} ({columns}\n)")
    for table, added in ADDED_COLUMNS.items():
        for name, sql_type in added:
            connection.execute(f"alter table raw.{table} add column if not exists {name} {sql_type}")
