"""Which files `lfh ingest` reads: the paths given, folders searched recursively, by file extension."""

from __future__ import annotations

from pathlib import Path

from lfh.landing.simulated import MARKER, marked_folder

FORMAT_BY_SUFFIX: dict[str, str] = {
    ".xlsx": "xlsx",
    ".jsonl": "json",
    ".ndjson": "json",
    ".json": "json",
    ".csv": "csv",
    ".parquet": "parquet",
}


def file_format(path: Path) -> str | None:
    return FORMAT_BY_SUFFIX.get(path.suffix.lower())


def _is_hidden_or_temporary(path: Path) -> bool:
    # Excel writes "~$name.xlsx" lock files next to open workbooks; editors and OSes leave dot files.
    return path.name.startswith((".", "~$"))


def _inside_simulated_subfolder(candidate: Path, searched: Path) -> bool:
    """A file under a folder marked simulated that lies inside (not above) the folder searched."""
    marked = marked_folder(candidate)
    return marked is not None and marked != searched and searched in marked.parents


def discover_files(paths: list[Path], include_simulated: bool = True) -> tuple[list[Path], list[Path]]:
    """(files to ingest, files skipped). A file named explicitly is always returned, even with an unknown
    extension (it then fails with a clear message); inside folders only known extensions are taken, and a
    subfolder marked simulated (SIMULATED.txt, written by `lfh simulate`) only with include_simulated."""
    chosen: dict[Path, None] = {}
    skipped: list[Path] = []
    for given in paths:
        path = given.expanduser().resolve()
        if path.is_dir():
            for candidate in sorted(path.rglob("*")):
                if not candidate.is_file() or _is_hidden_or_temporary(candidate) or candidate.name == MARKER:
                    continue
                if not include_simulated and _inside_simulated_subfolder(candidate, path):
                    skipped.append(candidate)
                    continue
                if file_format(candidate) is None:
                    skipped.append(candidate)
                else:
                    chosen[candidate] = None
        else:
            chosen[path] = None
    return list(chosen), skipped
