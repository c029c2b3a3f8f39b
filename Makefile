# The two commands a new user needs: `make start` and `make test`.
# Each installs what it needs first (Node 24 and pnpm from the npm registry, dependencies).
SHELL := /bin/bash
TOOLCHAIN := source scripts/ensure-toolchain.sh

.PHONY: start test check build install bench validate-compose clean

install:
	@$(TOOLCHAIN) && pnpm install --frozen-lockfile --reporter=append-only

build: install
	@$(TOOLCHAIN) && pnpm build

## Every service in one process: in-memory bus, its own PostgreSQL in $$WEFT_DATA_DIR (default ./.weft), local blobs.
start: build
	@$(TOOLCHAIN) && pnpm start

## Format, lint and type-check with zero warnings.
check: install
	@$(TOOLCHAIN) && pnpm check

## Unit, integration (real PostgreSQL and NATS, started if missing) and end-to-end tests; the HTTP-level
## e2e suites run against both deployments: embedded (as `make start`) and distributed (each service a process).
test: build
	@$(TOOLCHAIN) && pnpm check
	@bash scripts/validate-compose.sh
	@$(TOOLCHAIN) && pnpm test

validate-compose:
	@bash scripts/validate-compose.sh

## make bench NAME=event-store|catalog|engine
bench: build
	@$(TOOLCHAIN) && pnpm bench $(NAME)

clean:
	rm -rf node_modules */*/node_modules */*/dist contracts/dist contracts/node_modules .test-tmp
