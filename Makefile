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
## The checks run beside the tests (both are needed; the checks take about a core for a minute or two).
test: build
	@mkdir -p .test-tmp && $(TOOLCHAIN) && { (pnpm check && bash scripts/validate-compose.sh) > .test-tmp/check.log 2>&1 & checks=$$!; \
	  pnpm test; tests=$$?; wait $$checks; checked=$$?; cat .test-tmp/check.log; \
	  [ $$checked = 0 ] || echo "make test: pnpm check or the compose validation failed (above)" >&2; \
	  [ $$tests = 0 ] && [ $$checked = 0 ]; }

validate-compose:
	@bash scripts/validate-compose.sh

## make bench NAME=event-store|catalog|engine
bench: build
	@$(TOOLCHAIN) && pnpm bench $(NAME)

clean:
	rm -rf node_modules */*/node_modules */*/dist contracts/dist contracts/node_modules .test-tmp
