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


def _resolved(given: Path) -> tuple[Path, str | None]:
    """(the absolute path, None) or (the path as given made absolute, why it cannot be used)."""
    try:
        return given.expanduser().resolve(strict=False), None
    except RuntimeError as exc:  # Python 3.11 raises RuntimeError("Symlink loop ...")
        return given.expanduser().absolute(), f"cannot follow its symbolic links ({exc})"
    except OSError as exc:
        return given.expanduser().absolute(), f"cannot resolve the path ({exc.strerror or exc})"


def _inside_simulated_subfolder(candidate: Path, searched: Path) -> bool:
    """A file under a folder marked simulated that lies inside (not above) the folder searched."""
    marked = marked_folder(candidate)
    return marked is not None and marked != searched and searched in marked.parents


def _folder_files(folder: Path, chosen: dict[Path, str | None], skipped: list[Path],
                  include_simulated: bool) -> None:
    try:
        candidates = sorted(folder.rglob("*"))
    except OSError as exc:
        chosen[folder] = f"cannot list the folder ({exc.strerror or exc})"
        return
    for candidate in candidates:
        if _is_hidden_or_temporary(candidate) or candidate.name == MARKER:
            continue
        try:
            broken_link = candidate.is_symlink() and not candidate.exists()
            if not broken_link and not candidate.is_file():
                continue
        except OSError:
            broken_link = True
        skip_simulated = not include_simulated and _inside_simulated_subfolder(candidate, folder)
        if skip_simulated or file_format(candidate) is None:
            skipped.append(candidate)
        elif broken_link:  # a symlink loop or a link to nothing: that entry fails, not the folder
            chosen[candidate] = "a symbolic link that leads nowhere (a loop, or its target is gone)"
        else:
            chosen[candidate] = None


def discover_files(paths: list[Path],
                   include_simulated: bool = True) -> tuple[list[tuple[Path, str | None]], list[Path]]:
    """(files to ingest, each with None or why it cannot be read at all; files skipped for their extension).
    A file named explicitly is always returned, even with an unknown extension (it then fails with a clear
    message); inside folders only known extensions are taken. A path that cannot be resolved or listed (a symlink
    loop, no permission) is returned with its problem: it is that file's failure, never the whole call's. A
    subfolder marked simulated (SIMULATED.txt, written by `lfh simulate`) is taken only with include_simulated."""
    chosen: dict[Path, str | None] = {}
    skipped: list[Path] = []
    for given in paths:
        path, problem = _resolved(given)
        if problem is not None:
            chosen[path] = problem
            continue
        try:
            is_folder = path.is_dir()
        except OSError as exc:
            chosen[path] = f"cannot read it ({exc.strerror or exc})"
            continue
        if is_folder:
            _folder_files(path, chosen, skipped, include_simulated)
        else:
            chosen.setdefault(path, None)
    return list(chosen.items()), skipped
