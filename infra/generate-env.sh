#!/usr/bin/env bash
# Prints a fresh value for every secret docker-compose.yml requires, as a .env file:
#   bash infra/generate-env.sh > .env
# NATS reads its passwords as config values, so each is hex behind a letter (a leading digit would
# make a number of it); hex also keeps POSTGRES_PASSWORD safe inside WEFT_DATABASE_URL.
set -euo pipefail
secret() { printf 'w%s' "$(od -An -N24 -tx1 /dev/urandom | tr -d ' \n')"; }
echo "WEFT_SECRET_KEY=$(head -c 32 /dev/urandom | base64)"
for name in POSTGRES_PASSWORD MINIO_ROOT_PASSWORD \
  WEFT_NATS_GATEWAY_PASSWORD WEFT_NATS_PROCESS_CATALOG_PASSWORD WEFT_NATS_ENGINE_PASSWORD \
  WEFT_NATS_TRIGGER_PASSWORD WEFT_NATS_TESTING_PASSWORD WEFT_NATS_SUBSCRIBER_PASSWORD; do
  echo "$name=$(secret)"
done
