# syntax=docker/dockerfile:1
# Custodian runtime image: one `custodian run --json` per container start.
#
#   docker build -t custodian:0.4.0 --build-arg REVISION="$(git rev-parse HEAD)" .
#   docker build -t custodian:0.4.0-claude \
#     --build-arg CLAUDE_CODE_VERSION=2.1.197 --build-arg CLAUDE_CODE_SHA256=<sha256> .
#
# Every Python package comes from requirements/*.txt with its hash checked; nothing is resolved at
# build time. The canon is baked in at /opt/custodian/canon; mount a ConfigMap or volume over it
# to change it without a rebuild. The memory directory is meant to be a volume (a PVC).

# The base of every stage. Pin it by digest where a registry is reachable (README, "Reproducible
# builds"): --build-arg PYTHON_IMAGE=python:3.12-slim-bookworm@sha256:<digest>, or edit the
# default below; Renovate keeps the tag and the digest current.
ARG PYTHON_IMAGE=python:3.12-slim-bookworm
# Empty: no Claude Code CLI (the HTTP adapters need none). Set it to a version, never "latest":
# CLI flags and output change between releases, and the adapter is checked against one version.
# CLAUDE_CODE_SHA256 is the sha256 of that version's npm package for the image's platform and
# libc (README, "Reproducible builds"); the build fails if it is missing or does not match.
ARG CLAUDE_CODE_VERSION=""
ARG CLAUDE_CODE_SHA256=""

# ---- builder: turn the source tree into one wheel with the locked build backend ----
FROM ${PYTHON_IMAGE} AS builder
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_NO_CACHE_DIR=1
WORKDIR /src
COPY requirements/build.txt ./requirements/
RUN pip install --require-hashes -r requirements/build.txt
COPY pyproject.toml README.md LICENSE ./
COPY runtime ./runtime
# runtime/custodian_runtime/_data links to these: the wheel ships the files they hold.
COPY canon ./canon
COPY demo ./demo
COPY evals ./evals
# The git revision, known here and never looked up in a pod: `custodian --version`, every
# run_started record and custodian_build_info carry it ("unknown" without the build argument).
ARG REVISION=""
RUN if [ -n "${REVISION}" ]; then printf '%s\n' "${REVISION}" > runtime/custodian_runtime/_data/REVISION; fi
RUN pip wheel --no-deps --no-build-isolation --wheel-dir /wheels .

# ---- claude: the one native binary of the pinned Claude Code release, checked ----
# The CLI's npm package only selects a platform package that holds the real binary
# (@anthropic-ai/claude-code-linux-<arch>[-musl]/claude). This stage fetches that one package for
# the image's architecture and libc, checks its sha256 before unpacking it, and leaves the binary
# in /out. Neither npm nor Node is used, and nothing but /out reaches the final image.
FROM ${PYTHON_IMAGE} AS claude
ARG CLAUDE_CODE_VERSION
ARG CLAUDE_CODE_SHA256
RUN set -eu; \
    mkdir -p /out; \
    if [ -z "${CLAUDE_CODE_VERSION}" ]; then \
        echo "CLAUDE_CODE_VERSION is empty: building without the Claude Code CLI"; exit 0; \
    fi; \
    if [ -z "${CLAUDE_CODE_SHA256}" ]; then \
        echo "CLAUDE_CODE_SHA256 is empty: pass the sha256 of the package for ${CLAUDE_CODE_VERSION} (see README, Reproducible builds)" >&2; \
        exit 1; \
    fi; \
    case "$(uname -m)" in \
        x86_64) arch=x64 ;; \
        aarch64) arch=arm64 ;; \
        *) echo "no Claude Code binary for $(uname -m)" >&2; exit 1 ;; \
    esac; \
    libc=""; \
    if [ -e "/lib/ld-musl-$(uname -m).so.1" ]; then libc="-musl"; fi; \
    package="claude-code-linux-${arch}${libc}"; \
    url="https://registry.npmjs.org/@anthropic-ai/${package}/-/${package}-${CLAUDE_CODE_VERSION}.tgz"; \
    echo "fetching ${url}"; \
    python3 -c 'import sys, urllib.request; urllib.request.urlretrieve(sys.argv[1], sys.argv[2])' \
        "${url}" /tmp/claude.tgz; \
    echo "${CLAUDE_CODE_SHA256}  /tmp/claude.tgz" | sha256sum --check --strict -; \
    tar -xzf /tmp/claude.tgz -C /tmp package/claude; \
    install -m 0755 /tmp/package/claude /out/claude; \
    HOME=/tmp/claude-probe /out/claude --version; \
    rm -rf /tmp/claude.tgz /tmp/package /tmp/claude-probe

# ---- final ----
FROM ${PYTHON_IMAGE}
ARG CLAUDE_CODE_VERSION

LABEL org.opencontainers.image.title="custodian" \
      org.opencontainers.image.description="A bounded runtime that lets a language model look after a state-hub's project state." \
      io.custodian.claude-code-version="${CLAUDE_CODE_VERSION}"

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_NO_CACHE_DIR=1

# A fixed numeric uid/gid so Kubernetes can verify runAsNonRoot and fsGroup can own the PVC.
RUN groupadd --gid 10001 custodian \
    && useradd --uid 10001 --gid 10001 --no-create-home --home-dir /tmp \
       --shell /usr/sbin/nologin custodian

# /out holds the binary, or nothing when CLAUDE_CODE_VERSION is empty.
COPY --from=claude /out/ /usr/local/bin/

# The runtime lock first (hash-checked), then the wheel alone; `pip check` proves the lock
# satisfies everything the wheel declares.
RUN --mount=type=bind,source=requirements/runtime.txt,target=/tmp/runtime.txt \
    --mount=type=bind,from=builder,source=/wheels,target=/wheels \
    pip install --require-hashes -r /tmp/runtime.txt \
    && pip install --no-deps /wheels/*.whl \
    && pip check

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
