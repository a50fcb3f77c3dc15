-- Rows ingest could not land, as recorded (empty until a load rejects something).
with

source_rejects as (
    {{ source_or_empty('raw', 'rejects', [
        ('source_file', 'string'), ('source_row', 'integer'), ('target_table', 'string'), ('reason', 'string'),
        ('raw_record', 'string'), ('file_sha256', 'string'), ('loaded_at', 'timestamp'), ('load_id', 'string')]) }}
)

select source_file, source_row, target_table, reason, raw_record, file_sha256, loaded_at, load_id
from source_rejects
