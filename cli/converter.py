"""The data converter Lethe's client and worker share: `temporalio.contrib.pydantic`'s, with one validator
cache for the whole process.

The pydantic converter caches a validator (`TypeAdapter`) per type, but per converter instance, and the worker
makes an instance for every workflow it loads. Each memory's workflow then built the validators for its input
and every activity result again: schema generation was about 4% of the lane's CPU at 200 memories.
"""

from __future__ import annotations

import functools
from typing import Any

from pydantic import TypeAdapter
from temporalio.contrib.pydantic import PydanticJSONPlainPayloadConverter
from temporalio.converter import (
    CompositePayloadConverter,
    DataConverter,
    DefaultPayloadConverter,
    JSONPlainPayloadConverter,
)

__all__ = ["lethe_data_converter"]

# Keyed by type: Lethe's payload types are a few dozen, all defined in modules the sandbox passes through.
_ADAPTERS = functools.lru_cache(maxsize=512)(TypeAdapter)


class _SharedJSONConverter(PydanticJSONPlainPayloadConverter):
    def __init__(self) -> None:
        super().__init__()
        self._type_adapter = _ADAPTERS

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        self._type_adapter = _ADAPTERS


class LethePayloadConverter(CompositePayloadConverter):
    def __init__(self) -> None:
        super().__init__(*(
            _SharedJSONConverter() if isinstance(converter, JSONPlainPayloadConverter) else converter
            for converter in DefaultPayloadConverter.default_encoding_payload_converters
        ))


lethe_data_converter = DataConverter(payload_converter_class=LethePayloadConverter)
