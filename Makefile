# teamcomm — the two commands are `make run` and `make test`.
SHELL := /bin/bash
export CARGO_TARGET_DIR ?= $(HOME)/.cache/teamcomm-target
export TEST_DATABASE_URL ?= postgres://postgres@127.0.0.1:5432/postgres

DOMAIN_CRATES := teamcomm-kernel teamcomm-org teamcomm-keys teamcomm-forms teamcomm-messaging teamcomm-labels teamcomm-kudos teamcomm-checkin-engine teamcomm-webhooks teamcomm-workflows teamcomm-agents teamcomm-assistant teamcomm-plan
# Adapters that must stay free of the web and database frameworks too (the caches are in memory).
BOUNDED_CRATES := $(DOMAIN_CRATES) teamcomm-cache
FORBIDDEN_IN_DOMAIN := actix-web diesel diesel-async reqwest

.PHONY: run test lint fmt clippy deny boundaries openapi bench build

## Build and start the server with a demo organization (prints its admin API key once).
run:
	cargo build -p teamcomm-api --bin teamcomm
	$(CARGO_TARGET_DIR)/debug/teamcomm serve --demo --local-pg-dir .data/postgres

build:
	cargo build --workspace --all-targets

## Unit and integration tests against real PostgreSQL, including the real CLI end to end
## (scripts/install-cli.sh installs dailybot-cli 3.27.13 into a private virtualenv once) and the
## Matrix adapter against a real Synapse (scripts/install-synapse.sh, likewise, matrix-synapse 1.163.2),
## and the SMTP adapter against a real SMTP server (scripts/install-smtp.sh, aiosmtpd 1.4.6).
test:
	DAILYBOT_CLI="$$(bash scripts/install-cli.sh | tail -n1)" \
	TEAMCOMM_TEST_SYNAPSE_PYTHON="$$(bash scripts/install-synapse.sh | tail -n1)" \
	TEAMCOMM_TEST_SMTP_PYTHON="$$(bash scripts/install-smtp.sh | tail -n1)" \
	cargo nextest run --workspace --no-fail-fast

lint: fmt clippy deny

fmt:
	cargo fmt --all -- --check

clippy:
	cargo clippy --workspace --all-targets -- -D warnings

deny:
	cargo deny check bans licenses sources

## Domain crates must not depend on actix-web, diesel or reqwest (not even transitively).
boundaries:
	@fail=0; for c in $(BOUNDED_CRATES); do for d in $(FORBIDDEN_IN_DOMAIN); do \
	  out=$$(cargo tree -p $$c -e normal -i $$d 2>/dev/null); \
	  if [ -n "$$out" ]; then echo "boundary violation: $$c depends on $$d"; echo "$$out"; fail=1; fi; \
	done; done; \
	if [ $$fail -ne 0 ]; then exit 1; fi; echo "boundaries ok: $(BOUNDED_CRATES) are free of $(FORBIDDEN_IN_DOMAIN)"

## Regenerate docs/openapi.json from the routes.
openapi:
	UPDATE_OPENAPI=1 cargo nextest run -p teamcomm-tests -E 'test(openapi_document_is_served)'

## Throughput of GET /v1/me/ and GET /v1/users/ (10,000 people) against the stack's floor; see docs/performance.md.
bench:
	bash scripts/bench.sh

## The Plan (Beta) area against the floors: task create, a page of tasks on 100,000 and 1,000,000, the delta feed under 1,000+ changes a minute (issue 11 §4); see docs/performance.md.
.PHONY: bench-plan
bench-plan:
	bash scripts/bench_plan.sh
