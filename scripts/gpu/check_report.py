"""The tables of scripts/gpu-check.sh, from its work folder, as the steps finish.

    python3 check_report.py WORK OUT

Rewrites OUT/gpu-check.md (every table, from whatever the steps have written so far) and
OUT/steps.csv (one row per training-loop run, in the format of
../shared/data/traces/h200-pytorch/steps.csv). gpu-check.sh calls it after every step, so a
call cut short by the device's time limit still brings back the tables of the steps that ran.

Every row says what was checked and, when a check failed, why (the exit status, the signal, the
last line the run wrote to stderr), never a bare "failed". What WORK holds (all written by
gpu-check.sh):
  machine.txt                 the GPU, driver, torch
  steps.tsv                   step, status (ran | skipped | cut), seconds, note
  checkers.tsv                checker, exit status, gtest summary
  runs.tsv                    tag, way, size, exit status, seconds, step (one row per run)
  TAG.json, TAG.err           a run's JSON line and stderr
  TAG.inspect.json            `lumos-model inspect --json` of what the agent wrote
  replay/NAME.txt, .exit      `lumos-model replay` outputs
  estimates.tsv               variant, --set, exit status (one row per estimate)
  est-VARIANT.estimate.json   `lumos-model estimate --json`
  TAG.capture.txt             what `lumos-ctl capture` said
  windows.tsv                 tag, mode, window files, CaptureWindow text
"""

import csv
import gzip
import json
import os
import signal
import statistics
import sys

# The ways a run of the loop is made, as steps.csv's `how` names them.
HOW = {
    "plain": "plain",
    "lumos": "lumos-run",
    "profiler": "torch.profiler",
    "both": "lumos-run + torch.profiler",
    "dormant": "lumos-run on-demand, no window",
    "periodic": "lumos-run periodic",
    "ondemand": "lumos-run on-demand + lumos-ctl capture",
    "nonvtx": "lumos-run on-demand + lumos-ctl capture, no NVTX",
}
OVERHEAD_WAYS = ("plain", "lumos", "profiler", "dormant")


def read_text(path, default=""):
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except OSError:
        return default


def read_tsv(path, width=0):
    """The rows of a tab-separated file, each padded with empty cells to `width`."""
    rows = [line.split("\t") for line in read_text(path).splitlines() if line.strip()]
    return [row + [""] * (width - len(row)) for row in rows]


def exit_words(status):
    """An exit status as a reader wants it: 'exit 1', 'killed by SIGSEGV', 'timed out'."""
    try:
        code = int(status)
    except ValueError:
        return f"exit {status}"
    if code == 124:
        return "timed out"
    if code > 128:
        try:
            return f"killed by {signal.Signals(code - 128).name}"
        except ValueError:
            return f"exit {code}"
    return f"exit {code}"


def last_line(text):
    lines = [l.strip() for l in text.splitlines() if l.strip()]
    return lines[-1][:200] if lines else "nothing on stderr"


class Work:
    def __init__(self, folder):
        self.folder = folder
        self.runs = {}  # tag -> {way, size, exit, seconds}
        for row in read_tsv(self.path("runs.tsv")):
            if len(row) >= 6:
                self.runs[row[0]] = {"way": row[1], "size": row[2], "exit": row[3],
                                     "seconds": float(row[4]), "step": row[5]}

    def tags(self, size, way):
        """Every run of SIZE made WAY in the estimation steps, in the order they ran."""
        return [t for t, r in self.runs.items() if r["size"] == size and r["way"] == way
                and r["step"].startswith("estimate")]

    def median_step(self, tags):
        """(median of the runs' median steps, how many runs had one), or (None, 0)."""
        values = [r["median_ms"] for r in map(self.result, tags) if r]
        return (statistics.median(values), len(values)) if values else (None, 0)

    def path(self, *parts):
        return os.path.join(self.folder, *parts)

    def result(self, tag):
        """The run's JSON line, or None."""
        lines = read_text(self.path(tag + ".json")).strip().splitlines()
        if not lines:
            return None
        try:
            return json.loads(lines[-1])
        except ValueError:
            return None

    def problem(self, tag):
        """Why a run has no result, in one line; None when it has one and exited 0."""
        run = self.runs.get(tag)
        if run is None:
            return "not run"
        result = self.result(tag)
        if run["exit"] == "0" and result is not None:
            return None
        why = exit_words(run["exit"])
        if run["exit"] == "0":
            why = "exit 0 but no JSON line"
        return f"{why}: {last_line(read_text(self.path(tag + '.err')))}"

    def agent_check(self, tag):
        """What the agent wrote for a run, checked: (ok, words)."""
        inspect = read_text(self.path(tag + ".inspect.json"))
        if not inspect:
            if not os.path.isdir(self.path("traces", tag)):
                return False, "no trace folder"
            return False, "inspect failed: " + last_line(read_text(self.path(tag + ".inspect.err")))
        try:
            files = json.loads(inspect)["files"]
        except (ValueError, KeyError):
            return False, "inspect output not readable"
        events = sum(f.get("events", 0) for f in files)
        size = sum(f.get("file_bytes", 0) for f in files)
        lost = sum(f.get("events_lost", 0) for f in files)
        by_source = {}
        for f in files:
            for source, count in (f.get("loss") or {}).items():
                by_source[source] = by_source.get(source, 0) + count
        nested = sum(f.get("nested_driver_calls", 0) for f in files)
        devices = sorted({d.get("name", "?") for f in files for d in f.get("devices", [])})
        unclosed = sum(1 for f in files if not f.get("closed_cleanly", False))
        damaged = sum(1 for f in files if f.get("damage"))
        problems = []
        if not files:
            problems.append("no trace file")
        if lost or by_source:
            detail = ", ".join(f"{k} {v}" for k, v in sorted(by_source.items()))
            problems.append(f"LOSS {lost} events ({detail or 'no source'})")
        if nested:
            problems.append(f"{nested} driver calls recorded inside runtime calls")
        if not devices:
            problems.append("no device in the header")
        if unclosed:
            problems.append(f"{unclosed} file(s) not closed cleanly")
        if damaged:
            problems.append(f"{damaged} file(s) damaged")
        words = (f"{len(files)} file(s), {events} events, {size} bytes"
                 f" ({size / events:.2f} B/event)" if events else f"{len(files)} file(s), 0 events")
        words += f", devices {', '.join(devices) or 'none'}"
        if problems:
            words += "; " + "; ".join(problems)
        return not problems, words


def profiler_written(work, folder, on_gpu=True):
    path = work.path(folder, "torch_profiler.json.gz")
    if not os.path.exists(path):
        return "no profiler trace"
    try:
        with gzip.open(path) as f:
            events = json.load(f).get("traceEvents", [])
    except (OSError, ValueError) as error:
        return f"profiler trace not readable ({error})"
    gpu = sum(1 for e in events if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset"))
    note = "" if gpu or not on_gpu else " (NO GPU EVENT: the profiler lost CUPTI)"
    return f"{len(events)} Kineto events, {gpu} on the GPU{note}"


def print_steps(work):
    rows = read_tsv(work.path("steps.tsv"), 4)
    if not rows:
        return
    print("| step | status | seconds | note |\n|---|---|---:|---|")
    for row in rows:
        print(f"| {row[0]} | {row[1]} | {row[2]} | {row[3]} |")
    print()


def print_checkers(work):
    rows = read_tsv(work.path("checkers.tsv"), 3)
    if not rows:
        return
    print("| checker | result | gtest |\n|---|---|---|")
    for row in rows:
        verdict = "pass" if row[1] == "0" else exit_words(row[1])
        if row[1] == "0" and "SKIPPED" in row[2] and "PASSED  ] 0 tests" in row[2]:
            verdict = "all skipped"
        print(f"| {row[0]} | {verdict} | {row[2] or '-'} |")
    print()


def print_runs(work):
    """Every run with its checks: did it end well, and what did the agent write."""
    if not work.runs:
        return
    print("| run | how | exit | seconds | median step ms | what was written, checked |")
    print("|---|---|---|---:|---:|---|")
    for tag, run in work.runs.items():
        result = work.result(tag)
        problem = work.problem(tag)
        step = f"{result['median_ms']:.3f}" if result else "-"
        written = "-"
        if run["way"] not in ("plain", "profiler"):
            ok, words = work.agent_check(tag)
            written = words if ok else "CHECK FAILED: " + words
        if run["way"] in ("profiler", "both"):
            on_gpu = (result or {}).get("device", "cpu") != "cpu"
            written += "; " + profiler_written(work, tag, on_gpu)
        print(f"| {tag} | {HOW.get(run['way'], run['way'])} | {problem or 'exit 0'} | "
              f"{run['seconds']:.1f} | {step} | {written} |")
    print()


def print_overhead(work):
    rounds = {}
    for tag, run in work.runs.items():
        if run["step"] == "overhead" and run["way"] in OVERHEAD_WAYS:
            rounds.setdefault(run["size"], {}).setdefault(run["way"], []).append(tag)
    if not rounds:
        return
    print("overhead (interleaved rounds; median of the rounds' median steps, their range; "
          "targets: GPU-bound <= 1 %, launch-bound <= 1/3 of torch.profiler's, dormant <= 0.5 %):\n")
    print("| size | run | rounds | median step ms (range) | overhead |")
    print("|---|---|---:|---:|---:|")
    for size, ways in rounds.items():
        medians = {}
        for way in OVERHEAD_WAYS:
            tags = ways.get(way, [])
            values = [r["median_ms"] for r in map(work.result, tags) if r]
            medians[way] = statistics.median(values) if values else None
            cell = (f"{medians[way]:.3f} ({min(values):.3f}-{max(values):.3f})" if values
                    else "no result: " + "; ".join(
                        p for p in map(work.problem, tags) if p)[:200] if tags else "not run")
            over = "-"
            if way != "plain" and medians[way] and medians["plain"]:
                over = f"{100 * (medians[way] / medians['plain'] - 1):+.2f}%"
            print(f"| {size} | {HOW[way]} | {len(values)} of {len(tags)} | {cell} | {over} |")
        if medians["lumos"] and medians["plain"] and medians["profiler"]:
            agent = medians["lumos"] - medians["plain"]
            profiler = medians["profiler"] - medians["plain"]
            share = f"{100 * agent / profiler:.0f}%" if profiler > 0 else "-"
            print(f"| {size} | agent's overhead / torch.profiler's | | | {share} |")
    print()


def print_replays(work):
    folder = work.path("replay")
    if not os.path.isdir(folder):
        return
    for name in sorted(os.listdir(folder)):
        if not name.endswith(".txt"):
            continue
        stem = name[:-4]
        status = read_text(os.path.join(folder, stem + ".exit")).strip() or "?"
        text = [l.rstrip() for l in read_text(os.path.join(folder, name)).splitlines()]
        print(f"replay of {stem} (lumos-model replay --iteration '^step$'): {exit_words(status)}\n")
        start = next((i for i, l in enumerate(text) if l.startswith("iterations")), None)
        end = next((i for i, l in enumerate(text) if "mean |error|" in l), None)
        lines = (text[start:end + 1][:14] if start is not None and end is not None
                 else text[-3:])
        print("\n".join("    " + l for l in lines))
        print()


def print_windows(work):
    rows = read_tsv(work.path("windows.tsv"), 4)
    if not rows:
        return
    print("capture windows (periodic: 3 steps every 5 s; on demand: lumos-ctl capture "
          "--iterations 3; without NVTX the iterations must come from the kernel stream):\n")
    print("| run | exit | window files | how the window found its iterations | capture said |")
    print("|---|---|---:|---|---|")
    for row in rows:
        tag = row[0]
        capture = " ".join(read_text(work.path(tag + ".capture.txt")).split())[:160] or "-"
        print(f"| {tag} | {work.problem(tag) or 'exit 0'} | {row[2]} | {row[3] or '-'} | "
              f"{capture} |")
    print()


def print_estimates(work):
    rows = read_tsv(work.path("estimates.tsv"), 3)
    if not rows:
        return
    print("estimation from the `est` base trace alone (lumos-model estimate --set), against the "
          "variant's runs: ratios of the median step (over the rounds' runs) to the base's, plain "
          "runs and traced runs apart:\n")
    print("| variant | --set | estimate | plain ms (runs) | ratio plain | traced ms (runs) |"
          " ratio traced | estimated ratio | error (plain) | error (traced) |")
    print("|---|---|---|---:|---:|---:|---:|---:|---:|---:|")
    bases = {way: work.median_step(work.tags("est", way)) for way in ("plain", "lumos")}
    errors = []
    for row in rows:
        variant, setting, status = row[0], row[1], row[2]
        estimate = None
        try:
            with open(work.path(f"est-{variant}.estimate.json")) as f:
                document = json.load(f)["estimate"]
            estimate = (document["estimate"]["iteration_ns"] /
                        document["baseline"]["iteration_ns"])
        except (OSError, ValueError, KeyError, TypeError, ZeroDivisionError):
            pass
        said = "exit 0"
        if status != "0":
            said = exit_words(status) + ": " + last_line(
                read_text(work.path(f"est-{variant}.estimate.err")))
        cells, error_cells = [], []
        for way in ("plain", "lumos"):
            median, count = work.median_step(work.tags(f"est-{variant}", way))
            base = bases[way][0]
            ratio = median / base if median and base else None
            cells += [f"{median:.3f} ({count})" if median else "-",
                      f"{ratio:.3f}" if ratio else "-"]
            if ratio and estimate:
                error = 100 * (estimate / ratio - 1)
                error_cells.append(f"{error:+.1f}%")
                if way == "plain":
                    errors.append(abs(error))
            else:
                error_cells.append("-")
        print(f"| {variant} | {setting} | {said} | {' | '.join(cells)} | "
              f"{f'{estimate:.3f}' if estimate else '-'} | {' | '.join(error_cells)} |")
    if errors:
        print(f"\nmean |error| against plain ratios {statistics.fmean(errors):.1f}%, "
              f"max {max(errors):.1f}% (target: mean <= 3 %, each <= 6 %)")
    print()


def write_steps_csv(work, out):
    """One row per loop run, as ../shared/data/traces/h200-pytorch/steps.csv has them."""
    with open(os.path.join(out, "steps.csv"), "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["run", "median_ms", "mean_ms", "layers", "width", "heads", "seq",
                         "batch", "accumulate", "steps", "how", "exit", "step"])
        for tag, run in work.runs.items():
            r = work.result(tag) or {}
            writer.writerow([tag, r.get("median_ms", ""), r.get("mean_ms", ""),
                             r.get("layers", ""), r.get("width", ""), r.get("heads", ""),
                             r.get("seq", ""), r.get("batch", ""), r.get("accumulate", ""),
                             r.get("steps", ""), HOW.get(run["way"], run["way"]), run["exit"],
                             run["step"]])


def main():
    work, out = Work(sys.argv[1]), sys.argv[2]
    machine = " ".join(read_text(work.path("machine.txt")).split())
    print(f"# gpu-check\n\n{machine or 'machine: not recorded'}\n")
    for section in (print_steps, print_checkers, print_overhead, print_estimates, print_windows,
                    print_replays, print_runs):
        section(work)
    write_steps_csv(work, out)


if __name__ == "__main__":
    main()
