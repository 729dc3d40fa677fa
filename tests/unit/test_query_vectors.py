"""A search's vector written as Postgres reads a `vector`: every float32 comes back exactly."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from store.query_vectors import vector_text

finite32 = st.floats(width=32, allow_nan=False, allow_infinity=False)


@given(arrays(np.float32, st.integers(1, 400), elements=finite32))
def test_every_float32_is_written_to_be_read_back_exactly(vector: np.ndarray) -> None:
    text = vector_text(vector)
    assert text.startswith("[") and text.endswith("]") and " " not in text
    back = np.array([float(x) for x in text[1:-1].split(",")], dtype=np.float32)
    assert np.array_equal(back, vector)


def test_lists_and_wider_arrays_are_taken_as_float32() -> None:
    assert vector_text([0.5, -1, 2.25]) == "[0.5,-1,2.25]"
    assert vector_text(np.array([1 / 3], dtype=np.float64)) == f"[{float(np.float32(1 / 3)):.9g}]"
