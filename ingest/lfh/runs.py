"""What `lfh generate`/`label`/`simulate` (which write run manifests) and `lfh ingest` (which lands them in
raw.runs) agree on: the manifest's file name, the kinds of run, the id of a run synthesized for a file without a
manifest, and the base URL as it may be stored (never with a credential)."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

MANIFEST_SUFFIX = ".manifest.json"
MANIFEST_VERSION = 1
RUN_KINDS = ("generate", "label", "simulate")
FILE_RUN_KIND = "file"
# query parameters that may carry a credential (matched as parts of the lowercased name)
SECRET_PARAMETER_PARTS = ("key", "token", "secret", "password", "passwd", "auth", "credential", "signature",
                          "sig", "session")


def manifest_path(output: Path) -> Path:
    """The manifest of an output file: beside it, <stem>.manifest.json."""
    return output.with_name(output.stem + MANIFEST_SUFFIX)


def is_manifest(path: Path) -> bool:
    return path.name.lower().endswith(MANIFEST_SUFFIX)


def file_run_id(file_sha256: str, model: str) -> str:
    """The run synthesized for the rows of one model (or labeler) in a file without a manifest. Plain text, so
    SQL computes the same id for rows landed before run ids existed: 'file:' || file_sha256 || ':' || model."""
    return f"file:{file_sha256}:{model}"


def safe_url(url: str | None) -> str | None:
    """The URL without user name, password, fragment or query parameters that look like credentials (`api-key`,
    `token`, `sig`, ...). A URL that cannot be parsed is dropped (None) rather than stored as given."""
    if not url or not url.strip():
        return None
    try:
        parts = urlsplit(url.strip())
        host = parts.hostname or ""
        port = f":{parts.port}" if parts.port else ""
    except ValueError:
        return None
    if ":" in host:  # an IPv6 address keeps its brackets
        host = f"[{host}]"
    kept = [(name, value) for name, value in parse_qsl(parts.query, keep_blank_values=True)
            if not any(part in name.lower() for part in SECRET_PARAMETER_PARTS)]
    return urlunsplit((parts.scheme, host + port, parts.path, urlencode(kept), ""))
