# syntax=docker/dockerfile:1
# Custodian runtime image: one `custodian run --json` per container start.
#
#   docker build -t custodian:0.1.0 .
#   docker build -t custodian:0.1.0-claude --build-arg CLAUDE_CODE_VERSION=2.1.197 .
#
# The canon is baked in at /opt/custodian/canon; mount a ConfigMap or volume over it to change it
# without a rebuild. The memory directory is meant to be a volume (a PVC in Kubernetes).

ARG PYTHON_VERSION=3.12

# ---- builder: turn the source tree into one wheel; no build tools reach the final image ----
FROM python:${PYTHON_VERSION}-slim-bookworm AS builder
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_NO_CACHE_DIR=1
WORKDIR /src
COPY pyproject.toml README.md LICENSE ./
COPY runtime ./runtime
# runtime/custodian_runtime/_data links to these: the wheel ships the files they hold.
COPY canon ./canon
COPY demo ./demo
COPY evals ./evals
RUN pip wheel --no-deps --wheel-dir /wheels .

# ---- final ----
FROM python:${PYTHON_VERSION}-slim-bookworm
# Empty: no Claude Code CLI (the HTTP adapters need none). Set it to a version, never "latest":
# CLI flags and output change between releases, and the adapter is checked against one version.
ARG CLAUDE_CODE_VERSION=""

LABEL org.opencontainers.image.title="custodian" \
      org.opencontainers.image.description="A bounded runtime that lets a language model look after a state-hub's project state."

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_NO_CACHE_DIR=1

# A fixed numeric uid/gid so Kubernetes can verify runAsNonRoot and fsGroup can own the PVC.
RUN groupadd --gid 10001 custodian \
    && useradd --uid 10001 --gid 10001 --no-create-home --home-dir /tmp \
       --shell /usr/sbin/nologin custodian

# Optional layer. The npm package's real binary is a platform optional dependency
# (@anthropic-ai/claude-code-linux-x64 or -arm64); some npm versions skip the postinstall that
# copies it into place, so if `claude` does not run afterwards we link the platform binary directly.
RUN set -eu; \
    if [ -z "${CLAUDE_CODE_VERSION}" ]; then \
        echo "CLAUDE_CODE_VERSION is empty: building without the Claude Code CLI"; exit 0; \
    fi; \
    apt-get update; \
    apt-get install -y --no-install-recommends ca-certificates nodejs npm; \
    npm install --global --no-fund --no-audit --foreground-scripts \
        "@anthropic-ai/claude-code@${CLAUDE_CODE_VERSION}"; \
    if ! HOME=/tmp/claude-probe claude --version >/dev/null 2>&1; then \
        native="$(find "$(npm root --global)/@anthropic-ai" -type f -name claude \
                  -path '*claude-code-linux-*' ! -path '*musl*' | head -n 1)"; \
        test -n "${native}" || { echo "no platform binary of @anthropic-ai/claude-code found" >&2; exit 1; }; \
        chmod 0755 "${native}"; \
        ln -sfn "${native}" /usr/local/bin/claude; \
    fi; \
    HOME=/tmp/claude-probe claude --version; \
    npm cache clean --force; \
    rm -rf /var/lib/apt/lists/* /root/.npm /tmp/claude-probe

RUN --mount=type=bind,from=builder,source=/wheels,target=/wheels \
    pip install /wheels/*.whl

COPY --chown=root:root canon/ /opt/custodian/canon/
# The image's own memory directory only matters without a volume; it must be writable by the uid.
RUN install -d -o 10001 -g 10001 -m 0750 /var/lib/custodian/memory

ENV CUSTODIAN_CANON_DIR=/opt/custodian/canon \
    CUSTODIAN_MEMORY_DIR=/var/lib/custodian/memory \
    CUSTODIAN_LOG_FORMAT=json \
    HOME=/tmp

USER 10001:10001
WORKDIR /tmp

# Exit codes: 0 done/dry/skipped, 2 config, 3 hub unobservable, 4 model/plan, 5 writes failed,
# 75 another run holds the lock. The run summary is JSON on stdout, one log line per phase on stderr.
ENTRYPOINT ["custodian", "run"]
CMD ["--json"]
