"""Shared pytest set-up: fixtures live in tests/fixtures, one module per service."""

pytest_plugins = [
    "tests.fixtures.s3",
    "tests.fixtures.prefect_server",
    "tests.fixtures.stack",
    "tests.fixtures.workspaces",
    "tests.fixtures.databases",
    "tests.fixtures.browser",
    "tests.fixtures.varnish",
    "tests.fixtures.helm",
    "tests.fixtures.webhook_receiver",
    "tests.fixtures.shards",
    "tests.fixtures.source_server",
    "tests.fixtures.logs",
]
