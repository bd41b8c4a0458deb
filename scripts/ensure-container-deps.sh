#!/usr/bin/env bash
# Installs the Debian container runtimes the real-container tests (test/field/containers-*.test.ts) start
# themselves: docker.io (dockerd + its CLI, run with a private data root and socket) and podman (rootful). The
# tests call them by their Debian paths (/usr/sbin/dockerd, /usr/bin/docker, /usr/bin/podman), never whatever
# `docker` comes first on PATH. Idempotent and quiet when everything is present.
set -euo pipefail
need=()
[ -x /usr/sbin/dockerd ] && [ -x /usr/bin/docker ] || need+=(docker.io)
[ -x /usr/bin/podman ] || need+=(podman)
command -v nsenter >/dev/null || need+=(util-linux)
[ ${#need[@]} -eq 0 ] && exit 0
exec bash "$(dirname "$0")/apt-install.sh" ensure-container-deps "${need[@]}"
