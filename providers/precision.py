"""Which precision the embedded model's matrix products run in on this machine: int8 or float32.

int8 (providers/onnx_int8.py) was about three times faster where it was chosen, on a CPU with AVX-512 VNNI; on
one with AVX2 only it may not be. `auto` times both on a few fixed sentences and takes the faster. Loading both
and timing them costs about a second, so the figures are kept in the model cache, named by the CPU (model and
flags), the onnxruntime version and the threads: only a machine's first start pays. The two give different
vectors (cosine about 0.99), so a deployment fixes one per database (cli/precision.py); this module only says
what this machine prefers.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, get_args

from providers.embedder import LocalEmbedder
from providers.onnx_int8 import RECIPE, cache_dir

__all__ = [
    "PRECISIONS",
    "SAMPLE_TEXTS",
    "Cpu",
    "Precision",
    "Preference",
    "cache_key",
    "cpu",
    "faster",
    "machine_preference",
    "measure",
]

log = logging.getLogger(__name__)

Precision = Literal["int8", "float32"]
PRECISIONS: tuple[Precision, ...] = get_args(Precision)

# The flags that decide int8's speed: VNNI (a dot product of bytes in one instruction), else AVX2.
RELEVANT_FLAGS = ("avx512_vnni", "avx_vnni", "avx2")

# float32 must win by more than this share to be taken: a near tie is noise, and int8 is what deployments ran.
MARGIN = 0.05

# A short sentence and a message-sized text, as the hot path embeds them (each text on its own).
SAMPLE_TEXTS = (
    "Can we move the Lisbon offsite to the second week of March?",
    "Quick update on the checkout migration: the payments team finished the refund flow yesterday, but the tax "
    "rate table still reads from the old service, so we cannot switch traffic before Thursday. Could you ask "
    "Priya whether the new pricing page can ship without it, and remind me to book the Lisbon flights tonight?",
)


@dataclass(frozen=True)
class Cpu:
    model: str
    flags: frozenset[str]

    def describe(self) -> str:
        marks = ", ".join(f"{flag} {'yes' if flag in self.flags else 'no'}" for flag in RELEVANT_FLAGS)
        return f"{self.model} ({marks})"


def _parse_cpuinfo(text: str) -> Cpu:
    """Linux's /proc/cpuinfo: the first processor's model name and flags (`Features` on Arm)."""
    model, flags = "", ""
    for line in text.splitlines():
        name, _, value = line.partition(":")
        name = name.strip().lower()
        if name in ("model name", "hardware", "cpu model") and not model:
            model = value.strip()
        elif name in ("flags", "features") and not flags:
            flags = value
    return Cpu(model=model, flags=frozenset(flags.lower().split()))


def _parse_sysctl(text: str) -> Cpu:
    """macOS's `sysctl machdep.cpu`: `AVX512VNNI` and `AVXVNNI` spelt as Linux spells them."""
    model, flags = "", set()
    for line in text.splitlines():
        name, _, value = line.partition(":")
        if name.strip() == "machdep.cpu.brand_string":
            model = value.strip()
        elif name.strip() in ("machdep.cpu.features", "machdep.cpu.leaf7_features"):
            flags |= {flag.lower().replace(".", "_") for flag in value.split()}
    renamed = {"avx512vnni": "avx512_vnni", "avxvnni": "avx_vnni", "avx2_0": "avx2"}
    return Cpu(model=model, flags=frozenset(renamed.get(flag, flag) for flag in flags))


def cpu() -> Cpu:
    """This machine's CPU model and flags: /proc/cpuinfo, `sysctl machdep.cpu`, else `platform.processor()`."""
    found = Cpu(model="", flags=frozenset())
    try:
        if sys.platform.startswith("linux"):
            found = _parse_cpuinfo(Path("/proc/cpuinfo").read_text(errors="replace"))
        elif sys.platform == "darwin":
            answer = subprocess.run(["sysctl", "machdep.cpu"], capture_output=True, text=True, timeout=5, check=False)
            found = _parse_sysctl(answer.stdout)
    except (OSError, subprocess.SubprocessError) as exc:
        log.debug("cannot read the CPU's flags: %s", exc)
    return Cpu(model=found.model or platform.processor() or platform.machine() or "unknown CPU", flags=found.flags)


def faster(ms_per_text: Mapping[Precision, float], *, margin: float = MARGIN) -> Precision:
    """The precision to run, given each one's milliseconds per text: float32 only when it beats int8 by more
    than `margin` (a share of int8's time); int8 when float32 was not timed."""
    int8, float32 = ms_per_text["int8"], ms_per_text.get("float32")
    if float32 is not None and float32 < int8 * (1 - margin):
        return "float32"
    return "int8"


def cache_key(machine: Cpu, *, onnxruntime_version: str, threads: int) -> str:
    """Names a measurement: another CPU, flag set, onnxruntime, int8 recipe or thread count times again."""
    parts = [machine.model, " ".join(sorted(machine.flags)), onnxruntime_version, RECIPE, str(threads)]
    return hashlib.blake2b("\x00".join(parts).encode(), digest_size=12).hexdigest()


def measure(*, threads: int = 1, model_cache: Path | None = None, budget_seconds: float = 0.5,
            texts: tuple[str, ...] = SAMPLE_TEXTS) -> dict[Precision, float]:
    """Milliseconds per text in each precision, each text embedded alone (as the hot path does), the median of
    rounds that alternate the two, so a busy moment weighs on both. Loading and a warm-up run are not counted;
    the rounds stop after `budget_seconds` (at least three)."""
    models = {p: LocalEmbedder(threads=threads, int8=p == "int8", model_cache=model_cache) for p in PRECISIONS}
    for model in models.values():
        for text in texts:
            model.embed_sync([text])
    rounds: dict[Precision, list[float]] = {p: [] for p in PRECISIONS}
    spent = 0.0
    while len(rounds["int8"]) < 3 or (spent < budget_seconds and len(rounds["int8"]) < 30):
        order = PRECISIONS if len(rounds["int8"]) % 2 == 0 else PRECISIONS[::-1]
        for precision in order:
            start = time.perf_counter()
            for text in texts:
                models[precision].embed_sync([text])
            elapsed = time.perf_counter() - start
            spent += elapsed
            rounds[precision].append(elapsed * 1000 / len(texts))
    return {p: round(statistics.median(times), 3) for p, times in rounds.items()}


@dataclass(frozen=True)
class Preference:
    choice: Precision
    ms_per_text: dict[Precision, float]
    cpu: Cpu
    cached: bool

    def describe(self) -> str:
        figures = ", ".join(f"{p} {ms:.2f} ms/text" for p, ms in self.ms_per_text.items())
        return f"{figures} on {self.cpu.describe()}"


def _read(path: Path) -> dict[Precision, float] | None:
    try:
        kept = json.loads(path.read_text())
        return {p: float(kept["ms_per_text"][p]) for p in PRECISIONS}
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _keep(path: Path, ms_per_text: Mapping[Precision, float], machine: Cpu) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile("w", dir=path.parent, prefix=".precision-", delete=False) as f:
            json.dump({"ms_per_text": dict(ms_per_text), "cpu": machine.model, "flags": sorted(machine.flags)}, f)
        os.replace(f.name, path)
    except OSError as exc:  # a read-only cache (the image's): the next start times again, a second or so
        log.info("cannot keep the embedder timings (%s): the next start measures again", exc)


def machine_preference(*, threads: int = 1, model_cache: Path | None = None,
                       measure_now: bool = True) -> Preference | None:
    """What `auto` picks on this machine: timed at its first start, read from the model cache after. With
    `measure_now=False`, None when the cache has no timings (nothing is loaded or timed)."""
    import onnxruntime

    machine = cpu()
    directory = model_cache or cache_dir()
    key = cache_key(machine, onnxruntime_version=onnxruntime.__version__, threads=threads)
    path = directory / f"embedder-precision-{key}.json"
    timings = _read(path)
    cached = timings is not None
    if timings is None:
        if not measure_now:
            return None
        timings = measure(threads=threads, model_cache=model_cache)
        _keep(path, timings, machine)
    preference = Preference(choice=faster(timings), ms_per_text=timings, cpu=machine, cached=cached)
    log.info("embedder precision auto: %s, %s: this machine takes %s", preference.describe(),
             "timed at its first start" if cached else "timed now", preference.choice,
             extra={"int8_ms_per_text": timings["int8"], "float32_ms_per_text": timings["float32"],
                    "cpu": machine.model, "precision_preferred": preference.choice})
    return preference
