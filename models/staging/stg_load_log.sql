-- One row per file load, as recorded by lfh ingest.
with

source_load_log as (
    {{ source_or_empty('raw', 'load_log', [
        ('load_id', 'string'), ('source_file', 'string'), ('file_sha256', 'string'), ('file_kind', 'string'),
        ('rows_read', 'bigint'), ('rows_landed', 'bigint'), ('duplicates', 'bigint'), ('rejected', 'bigint'),
        ('started_at', 'timestamp'), ('finished_at', 'timestamp'), ('status', 'string'), ('error', 'string')]) }}
)

select
    load_id, source_file, file_sha256, file_kind, rows_read, rows_landed, duplicates, rejected,
    started_at, finished_at, status, error
from source_load_log
