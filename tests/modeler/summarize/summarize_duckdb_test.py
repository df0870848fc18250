#!/usr/bin/env python3
"""The summary as an operator loads it: `lumos-model summarize` over real traces (the bundled
8-rank DLRM import, a whole run) and two capture windows of a `synth gpt` job in the agent's
DIR/<job>/<stamp>/ layout, the second with a straggler rank, a slower kernel and slower
collectives put in on purpose; loaded into a real DuckDB with read_json_auto / read_csv_auto and
no column hints; the column types DuckDB inferred and the operator's three queries (slowest
rank per job, kernels whose p90 grew between windows, collectives below the expected bus
bandwidth) checked against what was put in.

Usage: summarize_duckdb_test.py LUMOS_MODEL SOURCE_DIR VENV_PYTHON
Exit 77 (skip) only without python3 (the ctest wrapper); without duckdb it fails, naming
scripts/setup.sh, which installs it."""

import os
import subprocess
import sys
import tempfile

LUMOS_MODEL, SOURCE_DIR, VENV_PYTHON = sys.argv[1:4]

try:
    import duckdb
except ImportError:
    VENV = os.path.dirname(os.path.dirname(VENV_PYTHON))
    if os.path.realpath(sys.prefix) != os.path.realpath(VENV) and os.access(VENV_PYTHON, os.X_OK):
        os.execv(VENV_PYTHON, [VENV_PYTHON] + sys.argv)
    sys.exit("FAIL: no duckdb module (run scripts/setup.sh: it installs PyPI duckdb into " +
             VENV + ")")

WINDOW_1 = "20261201T233956Z"
WINDOW_2 = "20261201T234956Z"
SLOW_RANK = 3
SLOW_KERNEL = "flash_fwd"


def run(*args):
    r = subprocess.run([LUMOS_MODEL, *args], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"FAIL: lumos-model {' '.join(args)}: exit {r.returncode}\n{r.stderr}")
    return r.stdout


def check(condition, what):
    if not condition:
        sys.exit("FAIL: " + what)
    print("ok:", what.split("\n")[0])


with tempfile.TemporaryDirectory() as tmp:
    fleet = os.path.join(tmp, "fleet")
    job_dir = os.path.join(fleet, "gpt_synth")
    os.makedirs(job_dir)
    common = ["--set", "layers=2,tp=2,dp=2,iterations=3"]
    run("synth", "gpt", "-o", os.path.join(job_dir, WINDOW_1), "--window", WINDOW_1, *common)
    run("synth", "gpt", "-o", os.path.join(job_dir, WINDOW_2), "--window", WINDOW_2, "--seed", "2",
        "--slow-rank", f"{SLOW_RANK}=1.3", "--scale", f"kernel:{SLOW_KERNEL}=2", "--scale",
        "comm=3", *common)
    example = os.path.join(SOURCE_DIR, "examples", "dlrm-8rank")
    out = {}
    for fmt in ("ndjson", "csv"):
        out[fmt] = os.path.join(tmp, "summary-" + fmt)
        said = run("summarize", fleet, example, "-o", out[fmt], "--format", fmt)
        check(said.startswith(out[fmt] + ": 3 window(s), "), f"summarize --format {fmt}: {said}")

    db = duckdb.connect()
    for fmt, reader in (("ndjson", "read_json_auto"), ("csv", "read_csv_auto")):
        for table in ("iterations", "kernels", "collectives"):
            path = os.path.join(out[fmt], f"{table}.{fmt}")
            db.execute(f"CREATE TABLE {table}_{fmt} AS SELECT * FROM {reader}('{path}')")

    # The types DuckDB inferred by itself.
    for fmt in ("ndjson", "csv"):
        types = {}
        for table in ("iterations", "kernels", "collectives"):
            for name, sql_type, *_ in db.execute(f"DESCRIBE {table}_{fmt}").fetchall():
                types[(table, name)] = sql_type
        for (table, name), sql_type in types.items():
            if name.endswith("_ns") or name in ("rank", "iteration", "count", "bytes", "ranks",
                                                "schema_version", "rank_count", "grid_x",
                                                "block_x"):
                check(sql_type == "BIGINT", f"{fmt} {table}.{name} is BIGINT (got {sql_type})")
            elif name.endswith("_gbps"):
                check(sql_type == "DOUBLE", f"{fmt} {table}.{name} is DOUBLE (got {sql_type})")
            elif name in ("job", "window_stamp", "name", "op", "host", "kernel_class", "dtype"):
                check(sql_type == "VARCHAR", f"{fmt} {table}.{name} is VARCHAR (got {sql_type})")
        check(types[("iterations", "window_start_utc")].startswith("TIMESTAMP"),
              f"{fmt} window_start_utc is a timestamp ({types[('iterations', 'window_start_utc')]})")

    answers = {}
    for fmt in ("ndjson", "csv"):
        # 1. The slowest rank of each job and window: the one computing longest per iteration
        #    (the others wait for it in their collectives).
        slowest = db.execute(f"""
            SELECT job, window_stamp, rank, median(compute_exposed_ns + overlapped_ns) AS busy
            FROM iterations_{fmt} GROUP BY job, window_stamp, rank
            QUALIFY row_number() OVER (PARTITION BY job, window_stamp ORDER BY busy DESC) = 1
            ORDER BY job, window_stamp""").fetchall()
        # 2. Compute kernels whose p90 grew by more than half between two windows of a job
        #    (NCCL kernels' time includes waiting for peers: the collectives table has theirs).
        grew = db.execute(f"""
            SELECT DISTINCT b.name
            FROM kernels_{fmt} a JOIN kernels_{fmt} b
              ON a.job = b.job AND a.name = b.name AND a.grid_x = b.grid_x
                 AND a.grid_y = b.grid_y AND a.grid_z = b.grid_z AND a.block_x = b.block_x
                 AND a.block_y = b.block_y AND a.block_z = b.block_z
            WHERE a.window_start_utc < b.window_start_utc AND b.p90_ns > 1.5 * a.p90_ns
              AND b.kernel_class <> 'communication'
            ORDER BY 1""").fetchall()
        # 3. Collectives below 80 % of the bus bandwidth the cost model expects.
        slow = db.execute(f"""
            SELECT window_stamp, op, bytes, ranks, busbw_gbps, expected_busbw_gbps
            FROM collectives_{fmt} WHERE busbw_gbps < 0.8 * expected_busbw_gbps
            ORDER BY window_stamp, op, bytes""").fetchall()
        answers[fmt] = (slowest, grew, slow)
        by_window = {(job, w): rank for job, w, rank, _ in slowest}
        check(by_window.get(("gpt_synth", WINDOW_2)) == SLOW_RANK,
              f"{fmt}: the slowest rank of window 2 is the straggler: {slowest}")
        check(len(grew) >= 1 and all(SLOW_KERNEL in name for (name,) in grew),
              f"{fmt}: the kernels whose p90 grew are the slowed ones: {grew}")
        windows_below = {row[0] for row in slow}
        all_2 = db.execute(f"SELECT count(*) FROM collectives_{fmt} WHERE window_stamp = "
                           f"'{WINDOW_2}'").fetchone()[0]
        check(windows_below == {WINDOW_2} and len(slow) == all_2 and all_2 > 0,
              f"{fmt}: every collective of window 2 and none other is below the expected "
              f"bandwidth: {slow}")
        # The real whole-run trace: its rows are there, as a window without a stamp.
        whole = db.execute(f"""
            SELECT count(*), count(DISTINCT rank), any_value(trigger), any_value(window_stamp),
                   count(window_start_utc)
            FROM iterations_{fmt} WHERE job = 'dlrm_kineto'""").fetchone()
        check(whole[0] > 0 and whole[1] == 8 and whole[2] == "whole_run" and whole[3] is None and
              whole[4] == 0, f"{fmt}: the 8-rank DLRM whole run is one window: {whole}")
        breakdown = db.execute(f"""
            SELECT count(*) FROM iterations_{fmt} WHERE compute_exposed_ns + overlapped_ns +
              comm_exposed_ns + idle_ns <> duration_ns
              OR gpu_busy_ns <> duration_ns - idle_ns""").fetchone()[0]
        check(breakdown == 0, f"{fmt}: every iteration's breakdown adds up to its duration")
    check(answers["ndjson"] == answers["csv"], "NDJSON and CSV give the same answers")
print("3 passed, 0 failed")
