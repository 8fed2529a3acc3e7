def test_picking_a_model_that_reasons_sets_its_k_l_and_prompt_style() -> None:
    from rrdemo.defaults import INTERACTIVE_DEFAULTS, MODEL_DEFAULTS
    from ui.arena_controls import _task_length, model_settings

    entry = MODEL_DEFAULTS["qwen2.5-coder-1.5b"]
    assert model_settings("qwen2.5-coder-1.5b", "aqua") == (
        entry.k,
        entry.length("aqua"),
        "step-by-step",
    )
    generic = (
        INTERACTIVE_DEFAULTS.k,
        INTERACTIVE_DEFAULTS.max_tokens,
        INTERACTIVE_DEFAULTS.prompt_style,
    )
    assert model_settings("smollm2", "aqua") == generic  # back to the front ends' defaults
    assert _task_length("qwen2.5-coder-1.5b", "logic3", 100) == entry.length("logic3")
    assert _task_length("smollm2", "logic3", 100) == 100  # the user's L stays
