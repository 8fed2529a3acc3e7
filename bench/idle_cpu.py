"""What the web app costs while nobody uses it, and what its queue's pace costs a visitor.

Two `python app.py` servers start side by side, as a visitor meets them: one at gradio's own
queue pace (`RRDEMO_QUEUE_POLL_MS=1`: the queue looks for work every millisecond when it has
none), one at the app's default (20 ms, `ui.queue_limits`). Once both are idle (their default
model warmed), their CPU time is read from /proc over the same windows; then each answers cheap
calls (`/theory`, posted and read to the end) one after another, and the time from post to
answer is kept. Prints a table and writes bench/idle_cpu.json.

    .venv/bin/python -m bench.idle_cpu
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from pathlib import Path

from bench.load_memory import _cpu_ticks, _start, _wait_idle

ROOT = Path(__file__).resolve().parent.parent
PACES = {"gradio (1 ms)": "1", "app default (20 ms)": "20"}
THEORY = [0.03, 0.4, 100, 1000]  # the Theory tab's inputs


def _call_seconds(url: str) -> float:
    import httpx

    start = time.perf_counter()
    posted = httpx.post(f"{url}gradio_api/call/theory", json={"data": THEORY}, timeout=60)
    posted.raise_for_status()
    event = posted.json()["event_id"]
    with httpx.stream("GET", f"{url}gradio_api/call/theory/{event}", timeout=60) as stream:
        for line in stream.iter_lines():
            if line.startswith("event: complete") or line.startswith("event: error"):
                break
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--windows", type=int, default=3, help="CPU windows of --seconds each")
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--calls", type=int, default=40, help="cheap calls per server")
    parser.add_argument("--out", default=str(ROOT / "bench" / "idle_cpu.json"))
    args = parser.parse_args(argv)
    tick = os.sysconf("SC_CLK_TCK")
    with tempfile.TemporaryDirectory(prefix="rrdemo-idle-") as tmp:
        servers = {}
        try:
            for name, pace in PACES.items():
                folder = Path(tmp) / pace
                folder.mkdir()
                log = open(folder / "app.log", "w")  # noqa: SIM115 (closed with the folder)
                servers[name] = _start({"RRDEMO_QUEUE_POLL_MS": pace}, folder, log)
            for server, _ in servers.values():
                _wait_idle(server.pid)
            time.sleep(10)
            shares: dict[str, list[float]] = {name: [] for name in servers}
            for _ in range(args.windows):
                before = {n: _cpu_ticks(s.pid) for n, (s, _) in servers.items()}
                time.sleep(args.seconds)
                for n, (s, _) in servers.items():
                    used = (_cpu_ticks(s.pid) - before[n]) / tick
                    shares[n].append(round(100 * used / args.seconds, 2))
            calls = {n: [] for n in servers}
            for _ in range(args.calls):  # alternate, so both meet the same machine
                for n, (_, url) in servers.items():
                    calls[n].append(_call_seconds(url))
        finally:
            for server, _ in servers.values():
                server.terminate()
                server.wait(30)
    rows = {
        n: {
            "idle_percent_of_a_core": shares[n],
            "idle_median": statistics.median(shares[n]),
            "call_ms_median": round(1000 * statistics.median(calls[n]), 1),
            "call_ms_p90": round(1000 * statistics.quantiles(calls[n], n=10)[-1], 1),
        }
        for n in servers
    }
    print(
        "| queue pace | idle CPU, % of a core (median of windows) | cheap call, median ms | p90 ms |"
    )
    print("|---|---|---|---|")
    for n, r in rows.items():
        print(f"| {n} | {r['idle_median']} {r['idle_percent_of_a_core']} | "
              f"{r['call_ms_median']} | {r['call_ms_p90']} |")  # fmt: skip
    result = {"windows_s": args.seconds, "calls": args.calls, "paces": PACES, "rows": rows}
    Path(args.out).write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
