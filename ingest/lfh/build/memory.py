"""The build's memory limit: DuckDB's `memory_limit` from LFH_MEMORY_LIMIT, with a default computed from the machine.

DuckDB keeps its working memory under the limit by spilling to a temp folder beside the warehouse
(`<warehouse>.tmp/`, see profiles.yml); the process's peak RSS stays somewhat above it (the Python/dbt process,
allocator slack, and operators whose memory DuckDB does not count against the limit: at 5 million stories the
process peaked 0.8-2 GiB above a 3 GiB limit, docs/SCALE.md). The default is 1/8 of physical memory, between 1 GiB
and 2.5 GiB, so that a 5 million story build peaks under 4 GiB and leaves the rest of a shared machine to others,
at the price of some spilling.
Raise it (LFH_MEMORY_LIMIT=8GiB) on a machine of your own for a faster build.
"""

from __future__ import annotations

import os
import re
from fractions import Fraction

from lfh.errors import ConfigError

MEMORY_ENV_VAR = "LFH_MEMORY_LIMIT"
DEFAULT_SHARE = 1 / 8
DEFAULT_FLOOR_MIB = 1024
DEFAULT_CAP_MIB = 2560

_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(B|KB|MB|GB|TB|KIB|MIB|GIB|TIB)?\s*$", re.IGNORECASE)
_UNIT_BYTES = {"B": 1, "KB": 10**3, "MB": 10**6, "GB": 10**9, "TB": 10**12,
               "KIB": 2**10, "MIB": 2**20, "GIB": 2**30, "TIB": 2**40}


class MemoryLimitError(ConfigError):
    """LFH_MEMORY_LIMIT does not parse."""


def physical_memory_bytes() -> int:
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


def default_limit_text() -> str:
    """The default in words, from the constants below it (lfh build --help shows it): "1/8 of this machine's
    memory, 1-2.5 GiB"."""
    share = Fraction(DEFAULT_SHARE).limit_denominator(64)
    return (f"{share.numerator}/{share.denominator} of this machine's memory, "
            f"{DEFAULT_FLOOR_MIB / 1024:g}-{DEFAULT_CAP_MIB / 1024:g} GiB")


def default_memory_limit() -> str:
    mib = int(physical_memory_bytes() * DEFAULT_SHARE / 2**20)
    return f"{max(DEFAULT_FLOOR_MIB, min(DEFAULT_CAP_MIB, mib))}MiB"


def parse_size(text: str) -> int:
    """Bytes in a DuckDB size ("4GiB", "3000MB", "512MiB"); a bare number is taken as MiB."""
    match = _SIZE.match(text)
    if not match:
        raise MemoryLimitError(f"{MEMORY_ENV_VAR}={text!r} is not a size: write e.g. 4GiB or 3000MiB")
    unit = (match.group(2) or "MIB").upper()
    size = int(float(match.group(1)) * _UNIT_BYTES[unit])
    if size < 64 * 2**20:
        raise MemoryLimitError(f"{MEMORY_ENV_VAR}={text!r} is below 64MiB: the build cannot run in that; "
                               "write e.g. 4GiB")
    return size


def memory_limit() -> str:
    """The limit dbt's profile gets (DuckDB syntax, MiB): LFH_MEMORY_LIMIT when set, else the computed default."""
    configured = os.environ.get(MEMORY_ENV_VAR, "").strip()
    if not configured:
        return default_memory_limit()
    return f"{parse_size(configured) // 2**20}MiB"
