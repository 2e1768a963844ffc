"""The offline provider as litellm knows it."""

from __future__ import annotations

import litellm

from providers import offline


def test_the_offline_model_is_priced_in_litellms_map_at_nothing():
    """Known to litellm as a real model is (an unknown one made litellm search its whole
    cost map for a near match on every call): a call costs 0, found at once."""
    info = litellm.get_model_info(f"{offline.PROVIDER}/scripted")
    assert info["input_cost_per_token"] == info["output_cost_per_token"] == 0.0
    assert info["supports_function_calling"] is True
    response = litellm.completion(
        model="studio/scripted", messages=[{"role": "user", "content": "hello"}]
    )
    assert litellm.completion_cost(completion_response=response) == 0.0
