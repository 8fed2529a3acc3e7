"""Ensemble files: parsing, validation, registration into a ModelPool, and secrets kept out."""

from __future__ import annotations

import json

import pytest
import yaml

from rrdemo.backends.openai import OpenAIBackend
from rrdemo.backends.pool import ModelPool
from rrdemo.ensemble import ensemble_from_dict, load_ensemble
from rrdemo.errors import RRError

DOC = {
    "run": {
        "strength": "moderate",
        "k": 16,
        "m": 3,
        "max_tokens": 64,
        "order": "shuffled",
        "sampling": {"temperature": 0.5, "top_p": 0.9, "seed": 7},
    },
    "endpoints": {
        "vllm": {
            "base_url": "http://10.0.0.5:8000/v1",
            "api_key_env": "RRDEMO_TEST_VLLM_KEY",
            "served_model": "meta-llama/Llama-3.3-70B-Instruct",
            "concurrency": 32,
            "extra_body": {"add_special_tokens": False},
        }
    },
    "agents": [
        {"model": "smollm2", "corrupted": True, "count": 2},
        {"backend": "openai", "endpoint": "vllm", "model": "llama70b", "count": 2},
        {
            "backend": "openai",
            "base_url": "http://127.0.0.1:8080/v1",
            "served_model": "qwen",
            "tokenizer": None,
            "timeout_s": 30,
            "retries": 1,
            "stream": False,
        },
    ],
}


def write(tmp_path, doc, suffix=".yaml"):
    path = tmp_path / f"ensemble{suffix}"
    path.write_text(yaml.safe_dump(doc) if suffix != ".json" else json.dumps(doc))
    return path


def test_yaml_and_json_give_the_same_ensemble(tmp_path):
    from_yaml = load_ensemble(write(tmp_path, DOC, ".yaml"))
    from_json = load_ensemble(write(tmp_path, DOC, ".json"))
    assert from_yaml.config == from_json.config
    assert from_yaml.served == from_json.served
    config = from_yaml.config
    assert [a.model for a in config.agents] == [
        "smollm2",
        "smollm2",
        "llama70b",
        "llama70b",
        "qwen",
    ]
    assert config.label == "2c3t" and config.resolved_m == 3
    assert from_yaml.agents == config.agents
    assert (config.k, config.max_tokens, config.strength, config.order) == (
        16,
        64,
        "moderate",
        "shuffled",
    )
    assert (config.sampling.temperature, config.sampling.top_p, config.sampling.seed) == (
        0.5,
        0.9,
        7,
    )


def test_served_settings_merge_endpoint_and_agent(tmp_path):
    ensemble = load_ensemble(write(tmp_path, DOC))
    assert set(ensemble.served) == {"llama70b", "qwen"}
    llama = ensemble.served["llama70b"]
    assert llama.endpoint.base_url == "http://10.0.0.5:8000/v1"
    assert llama.endpoint.served_model == "meta-llama/Llama-3.3-70B-Instruct"
    assert llama.endpoint.concurrency == 32
    assert dict(llama.endpoint.extra_body) == {"add_special_tokens": False}
    # A hub id names the tokenizer by default; `tokenizer: null` asks for the completion format.
    assert llama.tokenizer == "meta-llama/Llama-3.3-70B-Instruct"
    qwen = ensemble.served["qwen"]
    assert qwen.tokenizer is None
    assert (qwen.endpoint.timeout_s, qwen.endpoint.retries, qwen.endpoint.stream) == (30, 1, False)
    assert "served 'qwen' at http://127.0.0.1:8080/v1" in ensemble.describe()


def test_register_puts_served_backends_and_leaves_local_ones_lazy(tmp_path, monkeypatch):
    monkeypatch.setenv("RRDEMO_TEST_VLLM_KEY", "sk-secret-value")
    loads = []
    pool = ModelPool(loader=lambda name, revision=None, **_: loads.append(name))
    ensemble = load_ensemble(write(tmp_path, DOC))
    ensemble.register(pool)
    config = ensemble.config
    assert loads == []  # registering touches neither local models nor the network
    llama = pool.get("llama70b")
    assert isinstance(llama, OpenAIBackend)
    assert llama.endpoint.served_model == "meta-llama/Llama-3.3-70B-Instruct"
    assert pool.get("qwen").endpoint.url == "http://127.0.0.1:8080/v1"
    pool.get("smollm2")
    assert loads == ["smollm2"]
    shown = json.dumps(config.to_dict()) + config.config_hash() + repr(llama)
    assert "sk-secret-value" not in shown and "RRDEMO_TEST_VLLM_KEY" not in shown


def test_the_key_variable_is_needed_when_a_request_is_sent_not_before(tmp_path, monkeypatch):
    monkeypatch.delenv("RRDEMO_TEST_VLLM_KEY", raising=False)
    ensemble = load_ensemble(write(tmp_path, DOC))
    pool = ModelPool()
    ensemble.register(pool)  # registering (planning) reads no key
    llama = pool.get("llama70b")
    assert "RRDEMO_TEST_VLLM_KEY is not set" in llama.missing_key()
    with pytest.raises(RRError, match="RRDEMO_TEST_VLLM_KEY is not set"):
        llama.check_serving()  # the first request sent needs it
    monkeypatch.setenv("RRDEMO_TEST_VLLM_KEY", "set-now")
    assert llama.missing_key() is None


def test_endpoint_does_not_change_the_config_hash(tmp_path):
    moved = json.loads(json.dumps(DOC))
    moved["endpoints"]["vllm"]["base_url"] = "http://other-host:9000/v1"
    assert (
        load_ensemble(write(tmp_path, DOC)).config.config_hash()
        == ensemble_from_dict(moved).config.config_hash()
    )


def test_run_settings_are_optional():
    ensemble = ensemble_from_dict({"agents": [{"model": "smollm2"}]})
    assert ensemble.config.k == 100 and ensemble.config.max_tokens == 512
    assert ensemble.served == {}


def test_offline_registry_model_served_uses_its_own_tokenizer():
    ensemble = ensemble_from_dict(
        {
            "agents": [
                {
                    "backend": "openai",
                    "base_url": "http://127.0.0.1:1/v1",
                    "served_model": "smollm2",
                    "model": "smollm2@llama",
                }
            ]
        }
    )
    assert ensemble.served["smollm2@llama"].tokenizer == "smollm2"


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        ([1, 2], "must be a mapping"),
        ({"agents": []}, "non-empty list"),
        ({"agents": [{"model": "smollm2"}], "extra": 1}, "unknown setting.*extra"),
        ({"agents": [{"model": "smollm2", "colour": "red"}]}, "agent #1: unknown setting.*colour"),
        ({"agents": [{"model": "smollm2", "backend": "grpc"}]}, "backend must be one of"),
        ({"agents": [{"model": "smollm2", "corrupted": "yes"}]}, "corrupted must be true or false"),
        ({"agents": [{"model": "smollm2", "count": 0}]}, "count must be at least 1, got 0"),
        ({"agents": [{"backend": "openai", "served_model": "x"}]}, "needs base_url"),
        (
            {"agents": [{"backend": "openai", "endpoint": "nope", "served_model": "x"}]},
            "unknown endpoint 'nope'",
        ),
        (
            {"agents": [{"backend": "openai", "base_url": "localhost:8000", "model": "x"}]},
            "must start with http",
        ),
        (
            {
                "agents": [
                    {"backend": "openai", "base_url": "http://h/v1", "model": "x", "retries": -1}
                ]
            },
            "retries must be at least 0, got -1",
        ),
        (
            {
                "agents": [
                    {"backend": "openai", "base_url": "http://h/v1", "model": "x"},
                    {"backend": "openai", "base_url": "http://other/v1", "model": "x"},
                ]
            },
            "different settings",
        ),
        (
            {
                "agents": [
                    {"model": "smollm2"},
                    {"backend": "openai", "base_url": "http://h/v1", "model": "smollm2"},
                ]
            },
            "already a local agent",
        ),
        (
            {
                "agents": [
                    {"backend": "openai", "base_url": "http://h/v1", "model": "x", "max_context": 9}
                ]
            },
            "max_context needs a tokenizer",
        ),
        ({"agents": [{"model": "smollm2"}], "run": {"k": "many"}}, "k must be a whole number"),
        ({"agents": [{"model": "smollm2"}], "run": {"k": 64, "max_tokens": 32}}, "at least K"),
        ({"agents": [{"model": "smollm2"}], "run": {"strength": "huge"}}, "unknown corruption"),
        (
            {"agents": [{"model": "smollm2"}], "run": {"sampling": {"temp": 1}}},
            "unknown setting.*temp",
        ),
    ],
)
def test_bad_ensembles_say_what_is_wrong(doc, message):
    with pytest.raises(RRError, match=message):
        ensemble_from_dict(doc)


def test_bad_files(tmp_path):
    with pytest.raises(RRError, match="does not exist"):
        load_ensemble(tmp_path / "missing.yaml")
    bad_yaml = tmp_path / "bad.yaml"
    bad_yaml.write_text("agents: [model: smollm2\n")
    with pytest.raises(RRError, match="not valid YAML"):
        load_ensemble(bad_yaml)
    bad_json = tmp_path / "bad.json"
    bad_json.write_text("{agents: }")
    with pytest.raises(RRError, match="not valid JSON"):
        load_ensemble(bad_json)
    other = tmp_path / "ensemble.toml"
    other.write_text("x = 1")
    with pytest.raises(RRError, match=r"\.yaml, \.yml or \.json"):
        load_ensemble(other)


def test_served_seats_name_their_weights_and_are_never_local_configs() -> None:
    served = {"backend": "openai", "base_url": "http://h/v1", "model": "smollm2@h"}
    named = ensemble_from_dict(
        {"agents": [{**served, "hub_id": "HuggingFaceTB/SmolLM2-135M-Instruct", "revision": "r1"}]}
    )
    [seat] = named.config.agents
    assert (seat.backend, seat.hub_id, seat.revision) == (
        "openai",
        "HuggingFaceTB/SmolLM2-135M-Instruct",
        "r1",
    )
    assert named.config.to_dict()["agents"][0]["hub_id"] == seat.hub_id  # logged and hashed
    assert (
        "weights HuggingFaceTB/SmolLM2-135M-Instruct at revision r1"
        in named.served["smollm2@h"].describe()
    )
    with pytest.raises(RRError, match="revision needs hub_id"):
        ensemble_from_dict({"agents": [{**served, "revision": "r1"}]})


def test_a_run_block_gives_only_what_it_says_and_runconfig_defaults_otherwise() -> None:
    ensemble = ensemble_from_dict(
        {"run": {"k": 8, "sampling": {"seed": 3}}, "agents": [{"model": "smollm2"}]}
    )
    assert ensemble.given == ("k", "sampling.seed")
    settings = ensemble.sweep_settings()
    assert (settings["k"], settings["seed"], settings["strengths"]) == ([8], 3, ["strong"])
