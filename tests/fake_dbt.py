"""A stand-in for the dbt executable (LFH_DBT_EXECUTABLE) for the build command's tests: it writes its pid, then
prints dbt's JSON log events for FAKE_DBT_NODES nodes, FAKE_DBT_SLEEP seconds apart (once the file FAKE_DBT_HOLD
exists, when that is set), and fails with FAKE_DBT_ERROR when that is set. It also records the argument lists it
was called with in FAKE_DBT_CALLS, and the folder it was started in with its LFH_DB (started_in.json, and one line
per call in started.jsonl)."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path


def event(name: str, message: str, level: str = "info", **data: object) -> None:
    print(json.dumps({"info": {"name": name, "level": level, "msg": message}, "data": data}), flush=True)


def main() -> int:
    workdir = Path(os.environ["FAKE_DBT_DIR"])
    # written under another name and renamed: a test that waits for dbt.pid to exist then reads it must never
    # find it empty (rename is atomic; write_text is not)
    partial = workdir / f"dbt.pid.{os.getpid()}.tmp"
    partial.write_text(str(os.getpid()))
    partial.replace(workdir / "dbt.pid")
    with (workdir / "calls.jsonl").open("a") as calls:
        calls.write(json.dumps(sys.argv[1:]) + "\n")
    # where dbt was started and the warehouse its profile reads (lfh.build.runner: the folder and the bare name)
    started = {"cwd": os.getcwd(), **{name: os.environ.get(name) for name in ("LFH_DB", "DBT_LOG_LEVEL_FILE")}}
    (workdir / "started_in.json").write_text(json.dumps(started))
    with (workdir / "started.jsonl").open("a") as every:
        every.write(json.dumps({**started, "LFH_MEMORY_LIMIT": os.environ.get("LFH_MEMORY_LIMIT")}) + "\n")
    nodes = int(os.environ.get("FAKE_DBT_NODES", "50"))
    pause = float(os.environ.get("FAKE_DBT_SLEEP", "0"))
    event("MainReportVersion", "Running with dbt=1.11.16")
    hold = os.environ.get("FAKE_DBT_HOLD")  # a file: the build runs on once it exists (at most 120 s later)
    deadline = time.monotonic() + 120
    while hold and not Path(hold).exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    for index in range(1, nodes + 1):
        event("LogStartLine", f"{index} of {nodes} START sql table model m{index}", index=index, total=nodes)
        time.sleep(pause)
        if index % 3 == 0:  # as dbt 1.11 reports a data or unit test: its total is named num_models
            event("LogTestResult", f"{index} of {nodes} PASS t{index}", index=index, num_models=nodes,
                  status="pass", node_info={"node_name": f"t{index}"})
        else:
            event("LogModelResult", f"{index} of {nodes} OK created sql table model m{index}", index=index,
                  total=nodes, status="success", node_info={"node_name": f"m{index}"})
    error = os.environ.get("FAKE_DBT_ERROR")
    if error:
        event("RunResultError", error, level="error")
        event("StatsLine", f"Done. PASS={nodes} WARN=0 ERROR=1 SKIP=0 NO-OP=0 TOTAL={nodes + 1}")
        return 1
    event("StatsLine", f"Done. PASS={nodes} WARN=0 ERROR=0 SKIP=0 NO-OP=0 TOTAL={nodes}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
