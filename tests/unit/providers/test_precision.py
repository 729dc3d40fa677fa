"""The embedded model's precision on this machine: the decision, the CPU read, and the kept measurement."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from contracts.errors import InvalidInput
from providers import precision
from providers.factory import make_embedder
from providers.precision import Cpu, _parse_cpuinfo, _parse_sysctl, cache_key, faster, machine_preference

EPYC = Cpu(model="AMD EPYC 7763", flags=frozenset({"sse4_2", "avx", "avx2", "fma"}))


def test_faster_takes_the_quicker_precision() -> None:
    assert faster({"int8": 5.8, "float32": 12.1}) == "int8"
    assert faster({"int8": 14.0, "float32": 9.0}) == "float32"


def test_a_near_tie_keeps_int8() -> None:
    assert faster({"int8": 10.0, "float32": 9.7}) == "int8"  # 3 % is noise
    assert faster({"int8": 10.0, "float32": 9.4}) == "float32"
    assert faster({"int8": 10.0, "float32": 9.7}, margin=0.0) == "float32"


def test_int8_when_float32_was_not_timed() -> None:
    assert faster({"int8": 50.0}) == "int8"


def test_cache_key_names_cpu_flags_runtime_and_threads() -> None:
    key = cache_key(EPYC, onnxruntime_version="1.22.0", threads=1)
    assert key == cache_key(Cpu(model=EPYC.model, flags=frozenset(sorted(EPYC.flags))),
                            onnxruntime_version="1.22.0", threads=1)
    others = {
        cache_key(Cpu(model="Intel Xeon Gold 6338", flags=EPYC.flags), onnxruntime_version="1.22.0", threads=1),
        cache_key(Cpu(model=EPYC.model, flags=EPYC.flags | {"avx512_vnni"}), onnxruntime_version="1.22.0",
                  threads=1),
        cache_key(EPYC, onnxruntime_version="1.23.0", threads=1),
        cache_key(EPYC, onnxruntime_version="1.22.0", threads=2),
    }
    assert len(others) == 4 and key not in others


def test_cpuinfo_gives_the_model_and_flags() -> None:
    text = ("processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD Ryzen 7 5800X 8-Core Processor\n"
            "flags\t\t: fpu sse4_2 avx avx2 fma\n\nprocessor\t: 1\nmodel name\t: ignored\nflags\t\t: fpu\n")
    cpu = _parse_cpuinfo(text)
    assert cpu.model == "AMD Ryzen 7 5800X 8-Core Processor"
    assert cpu.flags == {"fpu", "sse4_2", "avx", "avx2", "fma"}
    assert cpu.describe() == "AMD Ryzen 7 5800X 8-Core Processor (avx512_vnni no, avx_vnni no, avx2 yes)"


def test_sysctl_flags_are_spelt_as_linux_spells_them() -> None:
    text = ("machdep.cpu.brand_string: Intel(R) Core(TM) i9-10910 CPU @ 3.60GHz\n"
            "machdep.cpu.features: FPU SSE4.2 AVX1.0\n"
            "machdep.cpu.leaf7_features: AVX2 AVX512F AVX512VNNI\n")
    cpu = _parse_sysctl(text)
    assert cpu.model.startswith("Intel(R) Core(TM) i9")
    assert {"avx2", "avx512_vnni", "sse4_2"} <= cpu.flags
    assert "avx512_vnni yes" in cpu.describe()


def test_a_machine_measures_once_then_reads_its_figures(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                        caplog: pytest.LogCaptureFixture) -> None:
    timed: list[int] = []

    def measure(*, threads: int, model_cache: Path | None) -> dict[str, float]:
        timed.append(threads)
        return {"int8": 20.0, "float32": 11.0}

    monkeypatch.setattr(precision, "measure", measure)
    caplog.set_level("INFO", logger="providers.precision")
    first = machine_preference(threads=1, model_cache=tmp_path)
    assert first.choice == "float32" and not first.cached
    assert [p.name for p in tmp_path.iterdir()] == [next(tmp_path.glob("embedder-precision-*.json")).name]
    second = machine_preference(threads=1, model_cache=tmp_path)
    assert second.choice == "float32" and second.cached and second.ms_per_text == first.ms_per_text
    assert timed == [1]
    line = caplog.records[-1].getMessage()
    assert "int8 20.00 ms/text, float32 11.00 ms/text" in line and "avx2" in line
    assert "this machine takes float32" in line

    machine_preference(threads=2, model_cache=tmp_path)  # other threads: timed again
    assert timed == [1, 2]
    assert machine_preference(threads=3, model_cache=tmp_path, measure_now=False) is None  # only if known
    assert timed == [1, 2]


def test_an_unreadable_measurement_is_taken_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(precision, "measure", lambda **_: {"int8": 5.0, "float32": 9.0})
    machine_preference(model_cache=tmp_path)
    (kept,) = tmp_path.glob("embedder-precision-*.json")
    kept.write_text("{not json")
    assert not machine_preference(model_cache=tmp_path).cached
    assert json.loads(kept.read_text())["ms_per_text"] == {"int8": 5.0, "float32": 9.0}


def test_measure_times_both_precisions(tmp_path: Path) -> None:
    figures = precision.measure(threads=1, budget_seconds=0.0)
    assert set(figures) == {"int8", "float32"} and all(ms > 0 for ms in figures.values())


def test_the_factory_builds_either_precision() -> None:
    assert make_embedder(precision="float32").model_id == "local/all-MiniLM-L6-v2-onnx-int8"
    assert make_embedder(precision="int8").model_id.endswith("/dynamic-int8")
    with pytest.raises(InvalidInput) as caught:
        make_embedder(precision="auto")  # type: ignore[arg-type]
    assert caught.value.field == "embedder_precision"
