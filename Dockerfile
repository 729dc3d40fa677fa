# syntax=docker/dockerfile:1.7
# One image for every Lethe process; the command picks the role:
#   lethe gateway | lethe worker | lethe migrate | lethe register-search-attributes | lethe tenant create NAME
ARG PYTHON_IMAGE=python:3.12-slim-bookworm

FROM ${PYTHON_IMAGE} AS build
# uv installs exactly what uv.lock pins, hashes checked; the image never holds uv itself.
ARG UV_VERSION=0.13.9
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_NO_CACHE_DIR=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    UV_PROJECT_ENVIRONMENT=/opt/venv \
    UV_PYTHON_DOWNLOADS=never \
    UV_COMPILE_BYTECODE=1 \
    UV_LINK_MODE=copy \
    UV_NO_CACHE=1
RUN pip install uv==${UV_VERSION}
WORKDIR /src
# The locked dependencies first, in a layer of their own that only a change of the lock rebuilds. No extras: the
# embedded Postgres and the Temporal dev server are for `lethe dev` and the tests, never for production. The
# Python client (client/) is a workspace member the server depends on: uv reads its pyproject.toml to check the
# lock, and builds it, like the server, once its sources are in.
COPY pyproject.toml uv.lock README.md ./
COPY client/pyproject.toml client/README.md client/
RUN uv sync --locked --no-dev --no-install-workspace --python python
COPY contracts/ contracts/
COPY engine/ engine/
COPY store/ store/
COPY providers/ providers/
COPY recall/ recall/
COPY activities/ activities/
COPY workflows/ workflows/
COPY service/ service/
COPY api/ api/
COPY cli/ cli/
COPY config/ config/
COPY client/ client/
# A regular (non-editable) install, so the runtime stage needs only /opt/venv and no sources. Bytecode is compiled
# now because the runtime root filesystem is read-only. The embedded model's int8 form is made here, once
# (providers/onnx_int8.py), so no process converts it at start.
ENV PATH=/opt/venv/bin:$PATH
RUN uv sync --locked --no-dev --no-editable --python python \
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
