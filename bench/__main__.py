"""Run every benchmark: `python -m bench` (or `make bench`). Each prints its own figures and ratios.

A single benchmark: `python -m bench.bench_ingest` (see each module's docstring for its options).
"""

from __future__ import annotations

import importlib
import pkgutil
import sys
from pathlib import Path


def main() -> None:
    folder = Path(__file__).parent
    names = sorted(info.name for info in pkgutil.iter_modules([str(folder)]) if info.name.startswith("bench_"))
    chosen = [name for name in names if not sys.argv[1:] or name in sys.argv[1:]]
    for name in chosen:
        print(f"\n=== {name} ===", flush=True)
        module = importlib.import_module(f"bench.{name}")
        saved_argv = sys.argv
        sys.argv = [name]  # each benchmark parses its own options: run it on its defaults
        try:
            module.main()
        finally:
            sys.argv = saved_argv


if __name__ == "__main__":
    main()
