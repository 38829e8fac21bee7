# The Pressroom image the Helm chart runs (helm/pressroom/README.md, "The image contract"): one
# image for the control plane, the site server, the shard runtimes, the migration Job and the
# Prefect server (so client and server share the pinned Prefect version). The chart sets the
# command; the root filesystem may be read-only (HOME=/tmp, no bytecode files).
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    HOME=/tmp \
    PREFECT_SERVER_ANALYTICS_ENABLED=false \
    DO_NOT_TRACK=1

WORKDIR /build
COPY pyproject.toml README.md ./
COPY control_plane control_plane
COPY dispatch dispatch
COPY flows flows
COPY tenant_runtime tenant_runtime
RUN pip install . \
    && rm -rf /build \
    && useradd --uid 10001 --user-group --no-create-home --home-dir /tmp pressroom

WORKDIR /tmp
USER 10001
EXPOSE 8000 8080 8100 4200
CMD ["python", "-m", "control_plane.cli", "--help"]
