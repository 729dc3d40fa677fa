"""Which ceiling a request is planned against: the model's own, matched by name or family, else the default."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from config.groups import parse_model_ceilings
from config.mechanism import mechanism_config
from config.settings import Settings
from engine.ceilings import ceiling_for, match_model
from engine.config import MechanismConfig

TABLE = {"gpt-4": 8_192, "gpt-4o": 128_000, "gpt-4o-mini": 64_000, "claude": 200_000}


@pytest.mark.parametrize(("model", "expected"), [
    ("gpt-4o", 128_000),
    ("gpt-4o-2024-08-06", 128_000),       # a dated version takes its family's
    ("gpt-4o-mini-2024-07-18", 64_000),   # the longest family it extends
    ("GPT-4o", 128_000),                  # case is not a different model
    ("openai/gpt-4o", 128_000),           # a router's prefix
    ("gpt-4", 8_192),
    ("gpt-4.5-preview", 8_192),           # extends gpt-4 at a separator
    ("gpt-4x", None),                     # ...but not a longer word
    ("claude-3-5-sonnet-latest", 200_000),
    ("llama", None),
])
def test_a_model_matches_its_own_entry_or_its_family(model: str, expected: int | None) -> None:
    assert match_model(model, TABLE) == expected


def test_the_first_table_naming_the_model_decides() -> None:
    tenant, deployment = {"gpt-4o": 6_000}, TABLE
    assert ceiling_for("gpt-4o-2024-08-06", default=200_000, tables=(tenant, deployment)) == 6_000
    assert ceiling_for("gpt-4", default=200_000, tables=(tenant, deployment)) == 8_192
    assert ceiling_for("unknown", default=200_000, tables=(tenant, deployment)) == 200_000
    assert ceiling_for(None, default=200_000, tables=(tenant, deployment)) == 200_000


@given(st.text(min_size=1, max_size=40), st.integers(1000, 10_000_000))
def test_a_name_always_finds_its_own_entry(model: str, tokens: int) -> None:
    if not model.strip():
        return
    assert match_model(model, {model.strip().lower(): tokens}) == tokens


def test_known_windows_only_lower_the_default_and_named_ceilings_stand_as_given() -> None:
    config = mechanism_config(Settings(_env_file=None))  # type: ignore[call-arg]
    assert config.for_model("gpt-4o-mini").ceiling_tokens == 128_000   # smaller window than the 200k default
    assert config.for_model("gpt-4.1").ceiling_tokens == 200_000       # a larger window keeps the default
    assert config.for_model("some-local-model").ceiling_tokens == 200_000
    small = mechanism_config(Settings(_env_file=None, ceiling_tokens=6000,  # type: ignore[call-arg]
                                      model_ceilings="my-llama=8192, gpt-4.1=1000000"))
    assert small.for_model("gpt-4o-mini").ceiling_tokens == 6000
    assert small.for_model("my-llama").ceiling_tokens == 8192
    assert small.for_model("gpt-4.1-mini").ceiling_tokens == 1_000_000
    assert small.for_model("gpt-4.1-mini", {"gpt-4.1-mini": 50_000}).ceiling_tokens == 50_000


def test_for_model_changes_nothing_else() -> None:
    config = MechanismConfig(model_ceilings=(("m", 9_000),))
    assert config.for_model("m") == MechanismConfig(ceiling_tokens=9_000, model_ceilings=(("m", 9_000),))
    assert config.for_model("other") is config


@pytest.mark.parametrize("text", ["foo", "m=", "=5000", "m=12", "m=ten", "a=5000,b"])
def test_a_malformed_table_is_refused_naming_the_entry(text: str) -> None:
    with pytest.raises(ValueError, match="model=tokens"):
        parse_model_ceilings(text)
    with pytest.raises(ValueError, match="model_ceilings"):
        Settings(_env_file=None, model_ceilings=text)  # type: ignore[call-arg]


def test_an_empty_table_is_no_table() -> None:
    assert parse_model_ceilings("") == {} and parse_model_ceilings(" , ") == {}
