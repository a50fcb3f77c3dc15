"""Running one benchmark stage as a child process and measuring it (shared by the pipeline benchmarks)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Stage:
    name: str
    wall: float
    cpu: float
    peak_mib: float


def run_stage(name: str, command: list[str], environment: dict[str, str], cwd: Path | None = None) -> Stage:
    """Runs one stage as a child process; wait4 gives that child's own (and its children's) resource use.
    Exits with the stage's output when it fails; prints its last two lines when it succeeds."""
    print(f"  {name}", flush=True)
    started = time.perf_counter()
    process = subprocess.Popen(command, env=environment, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               cwd=cwd)
    output = process.stdout.read() if process.stdout else ""
    _pid, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - started
    exit_code = os.waitstatus_to_exitcode(status)
    if exit_code != 0:
        sys.exit(f"{name} failed (exit {exit_code}):\n{output[-3000:]}")
    for line in [line for line in output.strip().splitlines() if line.strip()][-2:]:
        print(f"    {line[:150]}")
    return Stage(name, wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024)


def load() -> str:
    """The machine's load average, 1 and 5 minutes: beside every figure a shared machine gives."""
    one, five, _fifteen = os.getloadavg()
    return f"{one:.1f}/{five:.1f}"
