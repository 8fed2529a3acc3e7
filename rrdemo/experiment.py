"""`python -m rrdemo.experiment ...`: the same as `rrdemo experiment ...` (rrdemo/cli/experiment.py).

    python -m rrdemo.experiment --tasks logic3,gsm8k --configs 0c5t,1c4t,3c2t,5c0t \\
        --strengths strong --k 32 --m-star 5 --max-tokens 128 --n 16 --out runs/small.jsonl

Only an entry point: the sweep, the runner and the run log live in `rrdemo.runs`.
"""

if __name__ == "__main__":
    import sys

    from rrdemo.cli import main

    raise SystemExit(main(["experiment", *sys.argv[1:]]))
