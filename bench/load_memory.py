"""The server's memory under rounds of a full queue, the way issue 47's item 9 measured it.

`python app.py` is started as a visitor meets it (real default model and engine, its own data
folder and database), then each round sends, from 8 clients at once: 2 small Arena runs each
(one read to the end, one never read) and 50 cheap calls never read (`/theory`). After the round
the server is left to go idle (its CPU time stops moving), and its resident memory is read from
/proc. Prints one line per round and writes bench/load_memory.json.

    .venv/bin/python -m bench.load_memory --rounds 11
    .venv/bin/python -m bench.load_memory --rounds 11 --env MALLOC_ARENA_MAX=2   # a variant
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CLIENTS = 8
UNREAD_CALLS = 50
GRACE_S = 60  # how long the app keeps an ended raw call's unread frames (ui.queue_limits)
# The Arena's controls of one small run, by name; the rest keep their defaults.
RUN = {"model": "smollm2", "n": 3, "c": 1, "k": 8, "m": 0, "max_tokens": 32, "task": "logic3"}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _status_mb(pid: int, key: str) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no {key} for process {pid}")


def _cpu_ticks(pid: int) -> int:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime + stime


def _wait_idle(pid: int, window_s: float = 3.0, limit_s: float = 600.0) -> None:
    """Until the server spends under a tenth of a core over `window_s` (every run of the round
    has ended; an idle app still uses a few percent for its housekeeping)."""
    end = time.monotonic() + limit_s
    tick = os.sysconf("SC_CLK_TCK")
    while time.monotonic() < end:
        before = _cpu_ticks(pid)
        time.sleep(window_s)
        if _cpu_ticks(pid) - before < 0.1 * window_s * tick:
            return


def _payload() -> list:
    sys.path.insert(0, str(ROOT))
    from ui.state import ARENA_FIELDS, ArenaRequest

    request = ArenaRequest(**RUN)
    return [getattr(request, name) for name in ARENA_FIELDS]


def _round(url: str, index: int, data: list) -> dict[str, int]:
    import httpx

    codes: dict[str, int] = {"runs": 0, "unread": 0}
    lock = threading.Lock()

    def post(api: str, body: list, address: str) -> httpx.Response:
        return httpx.post(
            f"{url}gradio_api/call/{api}",
            json={"data": body},
            headers={"X-Forwarded-For": address},
            timeout=120,
        )

    def run(address: str, read: bool) -> None:
        posted = post("run", data, address)
        with lock:
            codes["runs"] += posted.status_code == 200
        if read and posted.status_code == 200:
            event = posted.json()["event_id"]
            with httpx.stream("GET", f"{url}gradio_api/call/run/{event}", timeout=600) as s:
                for _ in s.iter_lines():
                    pass

    def unread(address: str) -> None:
        for _ in range(UNREAD_CALLS):
            ok = post("theory", [0.03, 0.4, 100, 1000], address).status_code == 200
            with lock:
                codes["unread"] += ok

    threads = []
    for client in range(CLIENTS):
        address = f"10.47.{index}.{client}"
        threads += [threading.Thread(target=run, args=(address, read)) for read in (True, False)]
        threads.append(threading.Thread(target=unread, args=(address,)))
    for t in threads:
        t.start()
    for t in threads:
        t.join(900)
    return codes


def _start(env_extra: dict[str, str], folder: Path, log) -> tuple[subprocess.Popen, str]:
    port = _free_port()
    env = dict(
        os.environ,
        GRADIO_SERVER_NAME="127.0.0.1",
        GRADIO_SERVER_PORT=str(port),
        RRDEMO_DATA_DIR=str(folder / "data"),
        RRDEMO_PROXY_HOPS="1",
        LEADERBOARD_DB_URL=f"sqlite:///{folder / 'leaderboard.db'}",
        **env_extra,
    )
    server = subprocess.Popen(
        [sys.executable, "app.py"], cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=log
    )
    url = f"http://127.0.0.1:{port}/"
    import httpx

    for _ in range(600):
        try:
            if httpx.get(url + "gradio_api/info", timeout=5).status_code == 200:
                return server, url
        except httpx.HTTPError:
            pass
        if server.poll() is not None:
            raise SystemExit(f"app.py ended with {server.returncode}: see {folder / 'app.log'}")
        time.sleep(1)
    server.kill()
    raise SystemExit("app.py did not answer in 10 minutes")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=11)
    parser.add_argument(
        "--env",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="an environment variable for the server (a variant to compare)",
    )
    parser.add_argument("--out", default=str(ROOT / "bench" / "load_memory.json"))
    args = parser.parse_args(argv)
    env_extra = dict(item.split("=", 1) for item in args.env)
    data = _payload()
    with (
        tempfile.TemporaryDirectory(prefix="rrdemo-load-") as tmp,
        open(Path(tmp) / "app.log", "w") as log,
    ):
        server, url = _start(env_extra, Path(tmp), log)
        try:
            _wait_idle(server.pid)  # the app warms its default model at start
            rows = [{"round": 0, "rss_mb": round(_status_mb(server.pid, "VmRSS"))}]
            print(f"started: RSS {rows[0]['rss_mb']} MB", flush=True)
            for index in range(1, args.rounds + 1):
                start = time.monotonic()
                codes = _round(url, index, data)
                _wait_idle(server.pid)
                rss = round(_status_mb(server.pid, "VmRSS"))
                rows.append(
                    {
                        "round": index,
                        "rss_mb": rss,
                        **codes,
                        "seconds": round(time.monotonic() - start, 1),
                    }
                )
                print(
                    f"round {index}: RSS {rss} MB; runs accepted {codes['runs']}/16, unread "
                    f"calls accepted {codes['unread']}/{CLIENTS * UNREAD_CALLS}",
                    flush=True,
                )
            time.sleep(GRACE_S + 10)  # the unread frames of the last round are dropped
            _wait_idle(server.pid)
            after = round(_status_mb(server.pid, "VmRSS"))
            rows.append({"round": "after the grace", "rss_mb": after})
            print(f"{GRACE_S + 10} s later: RSS {after} MB", flush=True)
        finally:
            server.terminate()
            server.wait(30)
    result = {
        "env": env_extra,
        "run": RUN,
        "clients": CLIENTS,
        "unread_calls": UNREAD_CALLS,
        "rounds": rows,
    }
    Path(args.out).write_text(json.dumps(result, indent=1) + "\n")
    print(f"written {args.out}")


if __name__ == "__main__":
    main()
