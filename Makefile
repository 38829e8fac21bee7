# Pressroom: `make up` runs the whole stack, `make test` runs the whole suite.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-$(shell cat pyproject.toml | sha1sum | cut -c1-12)

.PHONY: up test install system-deps bench-deps lint bench bench-quick screenshots clean

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PY) -m venv $(VENV)
	@$(BIN)/python -m pip install -q --upgrade pip uv
	$(BIN)/uv pip install --python $(BIN)/python -q -e '.[dev,bench]'
	@rm -f $(VENV)/.installed-* && touch $(STAMP)

install: $(STAMP)

system-deps:
	@bash scripts/system-deps.sh

up: install
	$(BIN)/pressroom up

CODE := control_plane dispatch flows tenant_runtime tests benchmarks

# Both cores: one pytest worker per core, a test file per worker at a time (module fixtures stay
# whole); each worker starts its own Prefect server. PYTEST_WORKERS=0 runs in this process.
PYTEST_WORKERS ?= 2

# Then the workspace suite and the real-stack publish, search and backup/import tests again with the
# workspaces on PostgreSQL (127.0.0.1:5432; tests/fixtures/workspaces.py makes and drops the database).
# The real-stack part is the four tests that cover what differs there (pages, search, tenant isolation of
# search, backup → import → clone, restore): the rest of those files is the same code over the same rows.
PG_WORKSPACE_TESTS := tests/tenant_runtime \
	tests/integration/test_delivery_pipeline.py::test_a_publish_delivers_record_search_aggregates_and_a_signed_webhook \
	tests/integration/test_delivery_pipeline.py::test_tenants_never_see_each_others_search_or_feeds \
	tests/integration/test_backups.py::test_backup_then_import_gives_back_every_public_url_byte_identical_and_clones_under_a_new_slug \
	tests/integration/test_backups.py::test_restore_to_t_shows_its_dry_run_republishes_the_site_of_t_and_undo_brings_it_back

test: install system-deps lint
	$(BIN)/pytest -q -p no:cacheprovider -n $(PYTEST_WORKERS) --dist loadfile --durations=25
	PRESSROOM_TEST_WORKSPACE_BACKEND=postgresql $(BIN)/pytest -q -p no:cacheprovider -n $(PYTEST_WORKERS) \
		--dist loadfile --durations=10 $(PG_WORKSPACE_TESTS)

# The dashboard's main pages over a seeded site, 1280x800, into docs/dashboard/ (Chromium via Playwright).
screenshots: install system-deps
	PYTHONPATH=. $(BIN)/python scripts/dashboard_screenshots.py docs/dashboard

bench-deps:
	@bash scripts/bench-deps.sh

bench-quick: install bench-deps
	$(BIN)/python -m benchmarks --quick

bench: install bench-deps
	$(BIN)/python -m benchmarks

lint: install
	$(BIN)/lint-imports
	$(BIN)/ruff check $(CODE)
	$(BIN)/ruff format --check $(CODE)
	$(BIN)/mypy

clean:
	rm -rf $(VENV) data
