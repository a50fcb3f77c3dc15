"""A private PostgreSQL cluster for serving the marts: initdb, start, stop, with Debian's binaries.

initdb and postgres refuse to run as root, so as root every server command runs as the `postgres` system
user (Debian's package creates it) through runuser. The superuser connects only through a Unix socket in
the cluster's own 0700 folder (trust: only that user and root can reach the socket); over TCP every role
needs a SCRAM password, and the server listens on 127.0.0.1 unless told otherwise.
"""

from __future__ import annotations

import os
import pwd
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

import psycopg
from psycopg import sql

from lfh.errors import ServeError

SUPERUSER = "postgres"
SYSTEM_USER = "postgres"
BIN_ENV_VAR = "LFH_PG_BIN"
SOCKET_PATH_MAX = 100  # sun_path is 108 bytes; the socket file name adds up to 17
LOG_NAME = "lfh-server.log"


class ClusterError(ServeError):
    """The cluster could not be set up, started or stopped; the message says what to do."""


@dataclass(frozen=True)
class Cluster:
    data_dir: Path
    bin_dir: Path
    host: str
    port: int
    socket_dir: Path
    run_as: str | None  # system user that runs the server, when we are root

    def admin_conninfo(self, dbname: str = "postgres") -> str:
        return psycopg.conninfo.make_conninfo(host=str(self.socket_dir), port=self.port, user=SUPERUSER,
                                              dbname=dbname)

    @property
    def log_file(self) -> Path:
        return self.data_dir / LOG_NAME


def _version_key(path: Path) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", path.parent.name))


def find_bin_dir() -> Path | None:
    """$LFH_PG_BIN, else the newest /usr/lib/postgresql/<version>/bin, else the folder of pg_ctl on PATH."""
    configured = os.environ.get(BIN_ENV_VAR)
    if configured:
        return Path(configured)
    candidates = sorted(Path("/usr/lib/postgresql").glob("*/bin"), key=_version_key)
    candidates = [path for path in candidates if (path / "initdb").is_file()]
    if candidates:
        return candidates[-1]
    on_path = shutil.which("pg_ctl")
    return Path(on_path).resolve().parent if on_path else None


def require_bin_dir() -> Path:
    found = find_bin_dir()
    if found is None or not (found / "initdb").is_file():
        raise ClusterError(
            "no PostgreSQL server binaries found (looked in $LFH_PG_BIN, /usr/lib/postgresql/*/bin, PATH). "
            "Install them: apt-get install postgresql (make test does this), or set LFH_PG_BIN."
        )
    return found


def server_user() -> str | None:
    """None when we may run the server ourselves; the system user to run it as when we are root."""
    if os.geteuid() != 0:
        return None
    try:
        pwd.getpwnam(SYSTEM_USER)
    except KeyError as exc:
        raise ClusterError(
            "running as root, and PostgreSQL refuses to run as root: there is no `postgres` system user to run "
            "it as. Create one (useradd --system postgres) or run lfh serve as an ordinary user."
        ) from exc
    return SYSTEM_USER


def _as_server_user(run_as: str | None, command: list[str]) -> list[str]:
    return ["runuser", "-u", run_as, "--", *command] if run_as else command


def _run(run_as: str | None, command: list[str], what: str) -> subprocess.CompletedProcess:
    result = subprocess.run(_as_server_user(run_as, command), cwd="/", text=True, capture_output=True, check=False)
    if result.returncode != 0:
        raise ClusterError(f"{what} failed (exit {result.returncode}):\n{result.stderr.strip() or result.stdout}")
    return result


def _give_to(path: Path, run_as: str | None) -> None:
    if run_as:
        entry = pwd.getpwnam(run_as)
        os.chown(path, entry.pw_uid, entry.pw_gid)


def _socket_dir(data_dir: Path, run_as: str | None) -> Path:
    """The data folder itself (0700), or a private temporary folder when its path is too long for a socket."""
    if len(str(data_dir)) <= SOCKET_PATH_MAX:
        return data_dir
    private = Path(tempfile.mkdtemp(prefix="lfhpg-"))
    _give_to(private, run_as)
    return private


def _hba(host: str) -> str:
    loopback = host in {"127.0.0.1", "localhost", "::1"}
    networks = ["127.0.0.1/32", "::1/128"] if loopback else ["0.0.0.0/0", "::/0"]
    lines = [
        "# Written by lfh serve. The socket lives in the cluster's 0700 folder: only its owner and root reach it.",
        "local all all trust",
        *(f"host all all {network} scram-sha-256" for network in networks),
    ]
    return "\n".join(lines) + "\n"


def is_initialized(data_dir: Path) -> bool:
    return (data_dir / "PG_VERSION").is_file()


def init_cluster(data_dir: Path, bin_dir: Path, run_as: str | None, host: str) -> None:
    """initdb into data_dir (created 0700, owned by the server user) and write its pg_hba.conf."""
    data_dir.parent.mkdir(parents=True, exist_ok=True)
    if data_dir.exists() and any(data_dir.iterdir()):
        raise ClusterError(f"{data_dir} exists, is not empty and holds no cluster: empty it or choose --data-dir")
    data_dir.mkdir(mode=0o700, exist_ok=True)
    data_dir.chmod(0o700)
    _give_to(data_dir, run_as)
    if run_as:
        reachable = subprocess.run(["runuser", "-u", run_as, "--", "test", "-w", str(data_dir)], check=False)
        if reachable.returncode != 0:
            raise ClusterError(
                f"the {run_as} system user cannot reach {data_dir}: every parent folder must be searchable by "
                "it (chmod o+x on them), or choose a --data-dir it can reach."
            )
    _run(run_as, [str(bin_dir / "initdb"), "--pgdata", str(data_dir), "--username", SUPERUSER,
                  "--auth-local", "trust", "--auth-host", "scram-sha-256", "--encoding", "UTF8",
                  "--locale", "C", "--no-instructions"], "initdb")
    write_hba(data_dir, host, run_as)


def write_hba(data_dir: Path, host: str, run_as: str | None) -> None:
    hba = data_dir / "pg_hba.conf"
    hba.write_text(_hba(host), encoding="utf-8")
    hba.chmod(0o600)
    _give_to(hba, run_as)


def running_port(data_dir: Path) -> tuple[int, str, str] | None:
    """(port, socket dir, listen address) of a running server, from its postmaster.pid; None when stopped."""
    pid_file = data_dir / "postmaster.pid"
    try:
        lines = pid_file.read_text(encoding="utf-8").splitlines()
    except (FileNotFoundError, PermissionError):
        return None
    try:
        os.kill(int(lines[0]), 0)
    except PermissionError:
        pass  # alive, owned by another user (the postgres system user)
    except (ValueError, ProcessLookupError, IndexError):
        return None
    return int(lines[3]), lines[4], lines[5] if len(lines) > 5 else ""


def start(data_dir: Path, host: str, port: int, bin_dir: Path | None = None) -> Cluster:
    """Initialize data_dir if needed and start the server; returns once it accepts connections."""
    bin_dir = bin_dir or require_bin_dir()
    run_as = server_user()
    data_dir = data_dir.resolve()
    if running_port(data_dir) is not None:
        raise ClusterError(f"a server already runs on {data_dir}: stop it first (lfh serve --stop)")
    if not is_initialized(data_dir):
        init_cluster(data_dir, bin_dir, run_as, host)
    else:
        write_hba(data_dir, host, run_as)
    socket_dir = _socket_dir(data_dir, run_as)
    options = f"-c listen_addresses='{host}' -p {port} -c unix_socket_directories='{socket_dir}'"
    # A new session: Ctrl-C in the terminal reaches lfh serve only, which then stops the server cleanly.
    command = _as_server_user(run_as, [str(bin_dir / "pg_ctl"), "start", "--pgdata", str(data_dir), "--wait",
                                       "--timeout", "60", "--log", str(data_dir / LOG_NAME), "-o", options])
    result = subprocess.run(command, cwd="/", text=True, capture_output=True, check=False, start_new_session=True)
    if result.returncode != 0:
        log_tail = _log_tail(data_dir)
        raise ClusterError(
            f"the PostgreSQL server did not start on {host}:{port} (exit {result.returncode}).\n"
            f"{result.stderr.strip()}\n{log_tail}\nIs the port taken? Try another with --port."
        )
    return Cluster(data_dir=data_dir, bin_dir=bin_dir, host=host, port=port, socket_dir=socket_dir, run_as=run_as)


def _log_tail(data_dir: Path, lines: int = 15) -> str:
    try:
        return "\n".join((data_dir / LOG_NAME).read_text(encoding="utf-8", errors="replace").splitlines()[-lines:])
    except (FileNotFoundError, PermissionError):
        return ""


def stop(data_dir: Path, bin_dir: Path | None = None) -> bool:
    """Fast shutdown (clients disconnected, no data at risk: the marts are reloaded on each start).
    Returns False when no server was running."""
    data_dir = data_dir.resolve()
    if running_port(data_dir) is None:
        return False
    bin_dir = bin_dir or require_bin_dir()
    _run(server_user(), [str(bin_dir / "pg_ctl"), "stop", "--pgdata", str(data_dir), "--mode", "fast", "--wait"],
         "pg_ctl stop")
    return True


def ensure_database(cluster: Cluster, name: str) -> None:
    with psycopg.connect(cluster.admin_conninfo(), autocommit=True) as connection:
        exists = connection.execute("select 1 from pg_database where datname = %s", [name]).fetchone()
        if not exists:
            connection.execute(sql.SQL("create database {}").format(sql.Identifier(name)))
