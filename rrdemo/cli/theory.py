"""`rrdemo theory`: print the paper's stability bound rho_max(K) (appendix B).

    python -m rrdemo theory --gamma-h 0.03 --drift 0.004 --k 100          -> 0.6600
    python -m rrdemo theory --k 10 100 1000                                -> one "K rho_max" line each
    python -m rrdemo theory --k 100 --json                                 -> both terms as JSON

Defaults are the paper's worked example. Exit 2 with a one-line message for bad values.
"""

from __future__ import annotations

import argparse
import json

from rrdemo.theory import PAPER_DRIFT, PAPER_GAMMA_H, PAPER_K, stability_bound


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the `theory` command."""
    parser = subparsers.add_parser(
        "theory",
        help="print the stability bound rho_max(K) of token-level round-robin",
        description="The largest corruption ratio rho for which the paper's sufficient stability "
        "condition for token-level RR with K tokens per turn holds (appendix B; conservative, "
        "with illustrative parameters): "
        "rho_max(K) = (1 + [(1+alpha)^K - 1] / [1 - (1-gamma_H)^K])^-1.",
    )
    parser.add_argument(
        "--gamma-h",
        type=float,
        default=PAPER_GAMMA_H,
        help=f"honest spectral gap gamma_H in (0, 1) (default {PAPER_GAMMA_H})",
    )
    parser.add_argument(
        "--drift",
        type=float,
        default=PAPER_DRIFT,
        help=f"compounding adversarial drift alpha per token, delta(V) = alpha V (default {PAPER_DRIFT})",
    )
    parser.add_argument(
        "--k",
        type=int,
        nargs="+",
        default=[PAPER_K],
        help=f"K, tokens per RR turn; several values print one line each (default {PAPER_K})",
    )
    parser.add_argument(
        "--digits", type=int, default=4, help="decimals printed (default 4)", choices=range(1, 13)
    )
    parser.add_argument(
        "--json", action="store_true", help="print R_H(K), Delta V_C(K) and rho_max as JSON"
    )
    parser.set_defaults(func=handler)


def handler(args: argparse.Namespace) -> int:
    """Compute every bound first (so bad input prints nothing), then print."""
    bounds = [stability_bound(args.gamma_h, args.drift, k) for k in args.k]
    if args.json:
        payload = [b.to_dict() for b in bounds]
        print(json.dumps(payload[0] if len(payload) == 1 else payload, indent=2))
    elif len(bounds) == 1:
        print(f"{bounds[0].rho_max:.{args.digits}f}")
    else:
        for b in bounds:
            print(f"{b.k}\t{b.rho_max:.{args.digits}f}")
    return 0
