from __future__ import annotations

from engine.sizing import correction_ratio, estimate_tokens, updated_ratio


def test_estimate_tokens_about_four_characters_each() -> None:
    assert estimate_tokens("a" * 40) == 10
    assert estimate_tokens({"role": "user", "content": "hi"}) > 0
    assert estimate_tokens(None) == 0


def test_correction_ratio_is_provider_over_estimate() -> None:
    assert correction_ratio(1_200, 1_000) == 1.2


def test_correction_ratio_far_outside_plausible_is_not_kept() -> None:
    assert correction_ratio(10_000, 1_000) is None
    assert correction_ratio(100, 1_000) is None
    assert correction_ratio(0, 1_000) is None


def test_updated_ratio_keeps_previous_on_an_implausible_reading() -> None:
    assert updated_ratio(1.1, 9_000, 1_000) == 1.1
    assert updated_ratio(1.1, 900, 1_000) == 0.9
    assert updated_ratio(None, 9_000, 1_000) is None
