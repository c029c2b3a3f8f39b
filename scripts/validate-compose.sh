#!/usr/bin/env bash
# Checks docker-compose.yml without a Docker engine: Debian's docker-compose (1.29) parses the
# file, resolves variables and rejects unknown keys. Installs it with apt when missing (root).
# Exits non-zero when the file is invalid.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v docker-compose >/dev/null; then
  if [ "$(id -u)" != 0 ]; then
    echo "weft: docker-compose is missing and this is not root; install it (apt-get install docker-compose)" >&2
    exit 1
  fi
  [ -n "${WEFT_APT_UPDATED:-}" ] || { apt-get update -qq >&2; export WEFT_APT_UPDATED=1; }
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends docker-compose >&2
fi

# The file refuses to resolve without its secrets (every `${VAR:?...}`: no default secret); for
# validation only, each one that is unset gets a placeholder.
for name in $(grep -o '\${[A-Z0-9_]*:?' docker-compose.yml | sed 's/^..//; s/:?$//' | sort -u); do
  [ -n "${!name:-}" ] || export "$name=validate-compose-placeholder"
done
docker-compose -f docker-compose.yml config -q
echo "docker-compose.yml is valid"
