"""`lfh serve`: options, messages and the foreground wait over lfh.serve (PostgreSQL cluster and mart load)."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path
from types import FrameType

import click
from psycopg.conninfo import make_conninfo

from lfh.cli.command import command
from lfh.serve.postgres_cluster import ClusterError, ensure_database, running_port, start, stop
from lfh.serve.postgres_load import PostgresLoadError, load_marts
from lfh.serve.publish import MANIFEST_FILE, SERVING_FILE, default_destination
from lfh.serve.server import default_data_dir, reader_url


def _stop_on_signal(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


def _wait_until_stopped(data_dir: Path) -> None:
    previous = signal.signal(signal.SIGTERM, _stop_on_signal)
    try:
        while running_port(data_dir) is not None:
            time.sleep(1)
        click.echo("the PostgreSQL server stopped on its own; see its log in the data folder", err=True)
    except KeyboardInterrupt:
        click.echo("stopping the PostgreSQL server...")
    finally:
        signal.signal(signal.SIGTERM, previous)
        stop(data_dir)


@command()
@click.option("--published", "published_dir", type=click.Path(path_type=Path, file_okay=False), default=None,
              help="Folder written by `lfh publish` (default: warehouse/published).")
@click.option("--data-dir", type=click.Path(path_type=Path, file_okay=False), default=None,
              help="PostgreSQL data folder, created by initdb on first use (default: warehouse/postgres).")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to listen on; anything but localhost opens the marts to the network (password needed).")
@click.option("--port", type=click.IntRange(1, 65535), default=5433, show_default=True)
@click.option("--database", default="lfh", show_default=True)
@click.option("--user", "reader_role", default="lfh_reader", show_default=True, help="The read-only role.")
@click.option("--password-env", default="LFH_PG_PASSWORD", show_default=True,
              help="Environment variable holding the read-only role's password.")
@click.option("--detach", is_flag=True, help="Leave the server running in the background and return.")
@click.option("--stop", "stop_only", is_flag=True, help="Stop a server started with --detach, then return.")
def serve(published_dir: Path | None, data_dir: Path | None, host: str, port: int, database: str,
          reader_role: str, password_env: str, detach: bool, stop_only: bool) -> None:
    """Serve the published marts from a local PostgreSQL (schema marts, read-only role). Ctrl-C stops it."""
    data_dir = (data_dir or default_data_dir()).resolve()
    if stop_only:
        click.echo(f"stopped the server on {data_dir}" if stop(data_dir) else f"no server runs on {data_dir}")
        return
    published_dir = (published_dir or default_destination()).resolve()
    serving_db = published_dir / SERVING_FILE
    if not (published_dir / MANIFEST_FILE).is_file() or not serving_db.is_file():
        raise click.ClickException(f"{published_dir} holds no publication: run `lfh publish` first")
    password = os.environ.get(password_env)
    if not password:
        raise click.UsageError(f"set the read-only role's password in ${password_env} and run again")
    try:
        cluster = start(data_dir, host, port)
    except ClusterError as exc:
        raise click.ClickException(str(exc)) from exc
    try:
        ensure_database(cluster, database)
        loaded = load_marts(serving_db, cluster.admin_conninfo(database), reader_role, password,
                            lock_down_database=True)
    except (PostgresLoadError, ClusterError) as exc:
        stop(data_dir)
        raise click.ClickException(str(exc)) from exc
    except BaseException:
        stop(data_dir)
        raise
    for mart in loaded:
        click.echo(f"  marts.{mart.name}: {mart.rows} rows")
    click.echo(f"serving {len(loaded)} marts at {reader_url(reader_role, host, port, database)}")
    click.echo(f"  password: the value of ${password_env} (for psql: PGPASSWORD)")
    click.echo(f"  libpq: {make_conninfo(host=host, port=port, dbname=database, user=reader_role)}")
    if detach:
        click.echo(f"running in the background; stop it with: lfh serve --stop --data-dir {data_dir}")
        return
    click.echo("press Ctrl-C to stop", nl=True)
    _wait_until_stopped(data_dir)
    click.echo("stopped")
