"""The rrdemo Space: MAJ vs RRMaj side by side, experiments, theory, leaderboard, about.

`build_demo()` opens the leaderboard once (database, migrations, the paper's tables, the
journal), hands it to the Leaderboard tab and to the Experiments tab's submit button, wires the
tabs to the library and returns the Blocks; nothing loads at import.
`python app.py` (or `make run`) serves it on GRADIO_SERVER_NAME:GRADIO_SERVER_PORT
(default 127.0.0.1:7860) and pre-loads the default offline model in the background. Offline GGUF
models run on llama.cpp when llama-cpp-python is installed (`--backend` / env RRDEMO_BACKEND:
auto, llamacpp, transformers); without it they run on transformers, said in one log line.
What a visitor can reach is limited (docs/security.md): models are registry names or hub ids, the
pool keeps a bounded number, uploads are small and deleted, and model runs are capped per visitor.
"""

from __future__ import annotations

import argparse
import logging
import os
import threading
from collections.abc import Callable

import gradio as gr
from starlette.middleware import Middleware

from leaderboard.hub_sync import Store, open_store
from rrdemo.agents import ModelSource
from rrdemo.allocator import limit_arenas
from rrdemo.backends.choice import BACKEND_CHOICES, DEFAULT_BACKEND, choose_backend
from rrdemo.backends.hardware import prepare
from rrdemo.backends.pool import ModelPool
from rrdemo.backends.registry import DEFAULT_MODEL
from rrdemo.ensemble import load_ensemble
from rrdemo.errors import RRError
from ui import scratch
from ui.about import build_about_tab
from ui.arena import ARENA_CSS, build_arena_tab
from ui.door import BodyLimit, body_limit
from ui.experiments_tab import build_experiments_tab
from ui.layout import PAGE_CSS
from ui.leaderboard_tab import build_leaderboard_tab
from ui.queue_door import QueueDoor, door_of
from ui.queue_limits import run_seconds, session_capacity, session_window, sessions_per_client
from ui.theory_tab import build_theory_tab
from ui.uploads import UploadBudget

log = logging.getLogger("rrdemo.app")

TITLE = "The Consensus Trap: MAJ vs token-level round-robin"
QUEUE_MAX_SIZE = 256  # a backstop for cheap reads; model runs have their own limits (queue_limits)
MAX_UPLOAD = "2mb"  # the largest file a visitor may upload: 2 MiB, gradio counts 1 kb as 1024
# bytes (a submission is at most 1 MiB)
DELETE_CACHE = (300, 900)  # every 5 minutes, delete uploads and outputs older than 15 minutes
DEFAULT_HOST, DEFAULT_PORT = "127.0.0.1", 7860


def _optional_tab(label: str, build: Callable[[], None]) -> None:
    """Build a tab that may fail (a broken tab must not take the whole demo down)."""
    try:
        build()
    except Exception as exc:  # the reason is shown when it was written to be; the rest is logged
        log.exception("the %s tab could not be built", label)
        why = str(exc) if isinstance(exc, RRError) else "the server log has the details"
        gr.Markdown(f"**The {label} tab is not available in this build** ({why}).")


def open_leaderboard() -> Store | None:
    """The leaderboard, opened once for the whole app; None (logged) when it cannot be opened."""
    try:
        return open_store()  # rebuilds from the journal; pushes it when configured
    except Exception:  # the other tabs still work
        log.exception("the leaderboard could not be opened")
        return None


def _leaderboard(store: Store | None) -> None:
    if store is None:
        raise RRError("the leaderboard database could not be opened (see the server log)")
    build_leaderboard_tab(store)


def build_demo(pool: ModelSource | None = None, leaderboard: Store | None = None) -> gr.Blocks:
    """The whole app. `pool` serves the models (one `ModelPool` per process by default);
    `leaderboard` is the open leaderboard both tabs use (`open_leaderboard()` by default)."""
    pool = pool if pool is not None else ModelPool(preferred_backend=DEFAULT_BACKEND, public=True)
    store = leaderboard if leaderboard is not None else open_leaderboard()
    with gr.Blocks(title=TITLE, delete_cache=DELETE_CACHE) as demo:
        gr.Markdown(f"## {TITLE}", elem_id="rr-title")
        with gr.Tab("Arena", id="arena"):
            build_arena_tab(pool)
        with gr.Tab("Experiments", id="experiments"):
            _optional_tab("Experiments", lambda: build_experiments_tab(pool, store))
        with gr.Tab("Theory", id="theory"):
            build_theory_tab()
        with gr.Tab("Leaderboard", id="leaderboard"):
            _optional_tab("Leaderboard", lambda: _leaderboard(store))
        with gr.Tab("About", id="about"):
            build_about_tab(pool)
    demo.queue(default_concurrency_limit=1, max_size=QUEUE_MAX_SIZE)
    door_of(demo)  # what every event is checked against at the door (`serve` puts it in front)
    return demo


def serve(demo: gr.Blocks, host: str, port: int, **options) -> None:
    """Launch `demo` behind its door: the body limit of every request (`ui.door.BodyLimit`), the
    upload limits (per file, and per client: `ui.uploads`), the checks of every event and
    session (`ui.queue_door.QueueDoor`), the session limit, the page's layout
    (`ui.arena.ARENA_CSS`, `ui.layout.PAGE_CSS`) and the sweep of old uploads and
    outputs (at start, then on `DELETE_CACHE`'s schedule: `ui.scratch`); `options` go to `launch`
    (tests: prevent_thread_lock)."""
    demo.launch(
        css=ARENA_CSS + PAGE_CSS,
        server_name=host,
        server_port=port,
        max_file_size=MAX_UPLOAD,
        state_session_capacity=session_capacity(),
        app_kwargs={
            "middleware": [
                Middleware(BodyLimit),
                Middleware(UploadBudget),
                Middleware(QueueDoor, door=door_of(demo)),
            ],
            "lifespan": scratch.lifespan(*DELETE_CACHE),
        },
        **options,
    )


def server_address() -> tuple[str, int]:
    """GRADIO_SERVER_NAME / GRADIO_SERVER_PORT, read when called (defaults 127.0.0.1:7860)."""
    host = os.environ.get("GRADIO_SERVER_NAME") or DEFAULT_HOST
    port = int(os.environ.get("GRADIO_SERVER_PORT") or DEFAULT_PORT)
    return host, port


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Serve the rrdemo app.")
    parser.add_argument(
        "--ensemble",
        default=os.environ.get("RRDEMO_ENSEMBLE") or None,
        help="an ensemble file whose served agents (vLLM, TGI, llama.cpp) the arena can use by "
        "name in per-agent mode (also: env RRDEMO_ENSEMBLE); see docs/serving.md",
    )
    parser.add_argument(
        "--backend",
        default=os.environ.get("RRDEMO_BACKEND") or DEFAULT_BACKEND,
        choices=BACKEND_CHOICES,
        help="engine of the offline GGUF models (also: env RRDEMO_BACKEND; default auto: llama.cpp "
        "when llama-cpp-python is installed, else transformers); hub models use transformers",
    )
    args = parser.parse_args(argv)
    try:  # the environment's limits, read again where used: a bad one is one line, exit 2
        session_capacity(), session_window(), sessions_per_client(), run_seconds(), body_limit()
    except RRError as exc:
        parser.error(str(exc))
    logging.basicConfig(level=logging.INFO)
    limit_arenas()  # before the server's worker threads: their memory stays flat under load
    prepare()  # on ZeroGPU, `spaces` must be imported before torch touches CUDA
    try:
        default_backend = choose_backend(DEFAULT_MODEL, args.backend)
    except RRError as exc:  # --backend llamacpp without llama-cpp-python: say so, serve anyway
        log.warning("%s; serving the offline models on transformers", exc)
        args.backend, default_backend = "transformers", "transformers"
    log.info("offline models run on %s", default_backend)
    pool = ModelPool(preferred_backend=args.backend, public=True)
    if args.ensemble:
        try:
            ensemble = load_ensemble(args.ensemble)
        except RRError as exc:
            parser.error(str(exc))  # one line, exit 2
        ensemble.register(pool)
        log.info("ensemble %s:\n%s", args.ensemble, ensemble.describe())
    # Warm the default model while the first visitor reads the page (a GGUF's first load converts it).
    threading.Thread(
        target=pool.get, args=(DEFAULT_MODEL, None, default_backend), daemon=True
    ).start()
    host, port = server_address()
    if os.environ.get("SPACE_ID"):
        host = (
            os.environ.get("GRADIO_SERVER_NAME") or "0.0.0.0"
        )  # a Space's proxy connects from outside
    serve(build_demo(pool), host, port)


if __name__ == "__main__":
    main()
