"""Next-token entropy of the offline model while it answers the `demo` questions (docs/turns.md).

Usage: python -m tools.turn_entropy [N_QUESTIONS] [TOKENS]. Greedy; prints median, p90 and the
share of tokens above 1.0, 1.5, 2.0 and 2.5 nats (the uncertainty policy's threshold).
"""

from __future__ import annotations

import sys

import numpy as np
import torch


def main(n_questions: int = 12, tokens: int = 48) -> None:
    from rrdemo.backends.pool import ModelPool
    from rrdemo.tasks import get_task, load_questions
    from rrdemo.turns import entropy_nats

    backend = ModelPool().get("smollm2", None, "transformers")
    task = get_task("demo")
    values = []
    for question in load_questions("demo")[:n_questions]:
        ids = backend.encode(backend.render_prompt(task.prompt(question)))
        x = torch.tensor([ids])
        with torch.inference_mode():
            for _ in range(tokens):
                logits = backend.model(input_ids=x).logits[0, -1]
                values.append(entropy_nats(logits))
                token = int(torch.argmax(logits))
                if token in backend.eos_token_ids:
                    break
                x = torch.cat([x, torch.tensor([[token]])], dim=1)
    v = np.array(values)
    print(f"{len(v)} tokens, {n_questions} demo questions, greedy, smollm2 (transformers)")
    print(f"median {np.median(v):.2f} nats, p90 {np.percentile(v, 90):.2f} nats")
    for t in (1.0, 1.5, 2.0, 2.5):
        print(f"share above {t}: {(v > t).mean():.0%}")


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:3]))
