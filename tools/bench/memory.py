"""`saz bench memory`: a real engine process thinking for a long time, its memory sampled.

    saz bench memory gtp [--size 19] [--seconds 600] [--max-memory 1G] [--csv FILE]
    saz bench memory gomocup [--size 20] [--seconds 60] [--max-memory 350000000] [--csv FILE]

`gtp` starts `saz gtp` (Go on the shipped model unless `--model`), sets the board and runs
`lz-analyze` for `--seconds`, as Sabaki does when a user leaves analysis on; `gomocup` starts
`pbrain-saz`, sends `INFO max_memory` and one TURN with `INFO timeout_turn` of `--seconds`, as a
tournament manager does. Either way the process's resident memory (VmRSS) is read from /proc
every second; the report gives the samples' peak, the process's own high-water mark (VmHWM) at
the end, and the budget, and `--csv` keeps every sample. Linux only (/proc).
"""
from __future__ import annotations

import argparse
import subprocess
import sys
import threading
import time
from pathlib import Path

from saz.engine.search.options import parse_bytes


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "memory", help="an engine process's memory through a long think",
        description="Run saz gtp's lz-analyze or a pbrain-saz turn for a long time and sample "
                    "the process's resident memory every second.")
    p.add_argument("front_end", choices=("gtp", "gomocup"))
    p.add_argument("--size", type=int, help="board size (default: 19 for gtp, 20 for gomocup)")
    p.add_argument("--seconds", type=float, help="how long to think (default: 600 gtp, 60 "
                                                 "gomocup)")
    p.add_argument("--max-memory", type=parse_bytes,
                   help="gtp: the tree's --max-memory (default: the engine's 1G); gomocup: "
                        "INFO max_memory for the whole process (default 350000000)")
    p.add_argument("--model", type=Path, help="a model file (default: the shipped one)")
    p.add_argument("--csv", type=Path, help="write every sample (seconds, RSS bytes) here")
    p.set_defaults(handler=bench_memory)


def _status(pid: int, field: str) -> int:
    """A /proc/PID/status memory field (kB there) in bytes; 0 once the process is gone."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def bench_memory(args: argparse.Namespace) -> int:
    gtp = args.front_end == "gtp"
    size = args.size or (19 if gtp else 20)
    seconds = args.seconds or (600.0 if gtp else 60.0)
    if gtp:
        command = [sys.executable, "-m", "saz.engine.cli", "gtp", "--game", "go"]
        if args.max_memory:
            command += ["--max-memory", str(args.max_memory)]
        budget = args.max_memory or parse_bytes("1G")
        script = [f"boardsize {size}", "clear_board", "lz-analyze b 100"]
    else:
        command = [sys.executable, "-m", "saz.protocol.gomocup"]
        budget = args.max_memory or 350_000_000
        script = [f"INFO max_memory {budget}", f"INFO timeout_turn {int(seconds * 1000)}",
                  "INFO timeout_match 0", f"START {size}",
                  # The opponent's stone, not BEGIN: the empty board's centre is the game's book,
                  # answered without a search.
                  f"TURN {size // 2},{size // 2}"]
    if args.model:
        command += ["--model", str(args.model)]
    proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True, bufsize=1)
    assert proc.stdin is not None and proc.stdout is not None
    lines: list[str] = []
    out = proc.stdout
    reader = threading.Thread(target=lambda: lines.extend(out), daemon=True)
    reader.start()
    samples: list[tuple[float, int]] = []
    start = time.monotonic()
    for line in script:
        proc.stdin.write(line + "\n")
    proc.stdin.flush()
    deadline = start + seconds + (0 if gtp else 5)
    while time.monotonic() < deadline and proc.poll() is None:
        samples.append((time.monotonic() - start, _status(proc.pid, "VmRSS")))
        if not gtp and any(_is_move(text) for text in lines):
            break  # the turn was answered
        time.sleep(1.0)
    peak_hwm = _status(proc.pid, "VmHWM")
    proc.stdin.write("\n" if gtp else "END\n")  # any line stops lz-analyze
    if gtp:
        proc.stdin.write("quit\n")
    proc.stdin.flush()
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
    if args.csv:
        args.csv.write_text("seconds,rss_bytes\n" + "".join(f"{t:.1f},{rss}\n"
                                                            for t, rss in samples))
    peak = max((rss for _, rss in samples), default=0)
    mib = 2**20
    print(f"# {' '.join(command)}: {args.front_end} at {size}x{size} for {seconds:g} s")
    print()
    print("| what | value |")
    print("|---|---|")
    print(f"| samples (one a second) | {len(samples)} |")
    print(f"| RSS first / last sample | {samples[0][1] / mib:,.0f} MiB / "
          f"{samples[-1][1] / mib:,.0f} MiB |" if samples else "| RSS | no samples |")
    print(f"| RSS peak of the samples | {peak / mib:,.0f} MiB |")
    print(f"| VmHWM (the process's own peak) | {peak_hwm / mib:,.0f} MiB |")
    print(f"| budget ({'tree' if gtp else 'process'}) | {budget / mib:,.0f} MiB |")
    if not gtp:
        moves = [text.strip() for text in lines if _is_move(text)]
        print(f"| answer | {moves[0] if moves else 'none'} |")
    return 0


def _is_move(text: str) -> bool:
    parts = text.strip().split(",")
    return len(parts) == 2 and all(p.isdigit() for p in parts)
