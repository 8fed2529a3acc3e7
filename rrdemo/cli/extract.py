"""`rrdemo extract`: print the final answer a task's extractor reads from a model output.

    python -m rrdemo extract --task gsm8k --text "... The answer is $1,200.00."   -> 1200
    echo "So the answer is (C)." | python -m rrdemo extract --task logic3 --text -

Exit 0 with the answer in normal form on stdout; exit 1 and nothing on stdout when the text
states no answer; exit 2 for an unknown task or kind.
"""

from __future__ import annotations

import argparse
import sys

from rrdemo.tasks import TASK_NAMES, get_task


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the `extract` command."""
    parser = subparsers.add_parser(
        "extract",
        help="print the final answer extracted from a model output",
        description="Extract the final answer from a model output, in the task's normal form "
        '("(B)", "1200", "\\frac{1}{2}"). Exit 1 when the text states no answer.',
    )
    parser.add_argument(
        "--task",
        required=True,
        help=f"benchmark: {', '.join(TASK_NAMES)} or custom (aliases like Logic3, MATH-500 work)",
    )
    parser.add_argument(
        "--text", required=True, help="the model output, or '-' to read it from stdin"
    )
    parser.add_argument(
        "--question",
        metavar="ID",
        help="a question of the task (e.g. aqua-0005): read the text as a run reads its answers, "
        "an option named by its value included",
    )
    parser.add_argument(
        "--kind",
        choices=("auto", "letter", "number", "math"),
        default=None,
        help="answer kind for --task custom (default: a stated '(X)' is a letter, else a number)",
    )
    parser.set_defaults(func=handler)


def handler(args: argparse.Namespace) -> int:
    """Extract and print; 0 when an answer was found, 1 when not."""
    task = get_task(args.task, kind=args.kind) if args.kind else get_task(args.task)
    text = sys.stdin.read() if args.text == "-" else args.text
    if args.question:
        task = task.for_question(_question(task.name, args.question))
    answer = task.extract(text)
    if answer is None:
        return 1
    print(answer)
    return 0


def _question(task: str, qid: str):
    from rrdemo.errors import RRError
    from rrdemo.runs.reextract import questions_by_id

    if task == "custom":
        raise RRError("--question needs a benchmark task; a custom question has no data set")
    question = questions_by_id(task, "auto").get(qid)
    if question is None:
        raise RRError(f"{task} has no question {qid!r}; ids look like {task}-0005")
    return question
