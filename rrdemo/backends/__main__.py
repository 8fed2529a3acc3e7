"""`python -m rrdemo.backends --warm NAME ...`: load (and convert once) models; list them otherwise."""

from __future__ import annotations

import argparse

from rrdemo.backends.choice import BACKEND_CHOICES, choose_backend
from rrdemo.backends.loading import load_backend
from rrdemo.backends.registry import describe_models


def main(argv: list[str] | None = None) -> int:
    """List the models, or load (and convert once) the ones named by --warm."""
    parser = argparse.ArgumentParser(
        prog="python -m rrdemo.backends", description="List or pre-load models."
    )
    parser.add_argument(
        "--warm", nargs="*", metavar="MODEL", help="load these models once (converts GGUF)"
    )
    parser.add_argument(
        "--backend",
        default="transformers",
        choices=BACKEND_CHOICES,
        help="engine to load them with (default transformers: converts the GGUF once)",
    )
    args = parser.parse_args(argv)
    if args.warm is None:
        print(describe_models())
        return 0
    for name in args.warm:
        load_backend(name, backend=choose_backend(name, args.backend))
        print(f"{name}: ready")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
