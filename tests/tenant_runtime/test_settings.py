"""Settings: every PRESSROOM_* value validated once, errors naming the variable, secrets never shown."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from control_plane.settings import ControlPlaneSettings, Settings
from dispatch.settings import DispatchSettings
from tenant_runtime.config import SettingsError
from tenant_runtime.settings import RuntimeSettings

PACKAGES = ("control_plane", "dispatch", "flows", "tenant_runtime")
ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("cls", "variable", "value"),
    [
        (RuntimeSettings, "PRESSROOM_SQLITE_BUSY_TIMEOUT_MS", "soon"),
        (RuntimeSettings, "PRESSROOM_AGGREGATE_SETTLE_SECONDS", "90"),
        (DispatchSettings, "PRESSROOM_WORKER_POLL_SECONDS", "0"),
        (DispatchSettings, "PRESSROOM_MAX_RETRIES", "-1"),
        (DispatchSettings, "PRESSROOM_PUBLISH_BATCH_MAX", "lots"),
        (ControlPlaneSettings, "PRESSROOM_PORT", "80000"),
        (ControlPlaneSettings, "PRESSROOM_PUBLISHES_PER_HOUR", "many"),
        (ControlPlaneSettings, "PRESSROOM_LOG_FORMAT", "xml"),
        (ControlPlaneSettings, "PRESSROOM_MIGRATE_ON_START", "perhaps"),
    ],
)
def test_a_malformed_value_fails_at_start_up_naming_its_variable(cls: type, variable: str, value: str) -> None:
    with pytest.raises(SettingsError, match=f"^{variable}: "):
        cls.from_env({variable: value})


def test_the_whole_bundle_fails_on_the_first_bad_area_and_reads_only_the_given_environment(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PRESSROOM_PORT", "not-a-port")  # the process environment is not read when one is given
    settings = Settings.from_env({"PRESSROOM_DATA_DIR": str(tmp_path), "PREFECT_API_URL": "http://p.test/api/"})
    assert settings.control_plane.port == 8000
    assert settings.dispatch.api_url == "http://p.test/api" and settings.dispatch.ui_url == "http://p.test"
    assert settings.database_url == f"sqlite:///{tmp_path.resolve() / 'control-plane.db'}"
    assert settings.runtime.storage.root == tmp_path.resolve() / "objects"
    with pytest.raises(SettingsError, match="PRESSROOM_PORT"):
        Settings.from_env()


def test_secrets_are_never_in_a_repr_a_dump_or_an_error() -> None:
    env = {
        "PRESSROOM_OPERATOR_TOKEN": "pro_very-secret-token",
        "PRESSROOM_PURGE_SECRET": "purge-very-secret",
        "PRESSROOM_SESSION_SECRET": "session-very-secret-value",
    }
    control, runtime = ControlPlaneSettings.from_env(env), RuntimeSettings.from_env(env)
    shown = repr(control) + str(control) + repr(runtime) + control.model_dump_json() + runtime.model_dump_json()
    assert "very-secret" not in shown
    assert control.operator_token is not None and control.operator_token.get_secret_value() == "pro_very-secret-token"
    with pytest.raises(SettingsError) as refused:
        ControlPlaneSettings.from_env({"PRESSROOM_SESSION_SECRET": "tiny-secret"})
    assert "tiny-secret" not in str(refused.value)


def _reads_pressroom_variable(node: ast.AST) -> bool:
    """``os.environ.get("PRESSROOM_…")``, ``os.getenv("PRESSROOM_…")`` or ``os.environ["PRESSROOM_…"]``."""
    if isinstance(node, ast.Call) and node.args:
        target, argument = ast.unparse(node.func), node.args[0]
    elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load):
        target, argument = ast.unparse(node.value), node.slice
    else:
        return False
    return (
        target in ("os.environ.get", "os.getenv", "os.environ", "environ.get")
        and isinstance(argument, ast.Constant)
        and str(argument.value).startswith("PRESSROOM_")
    )


def test_no_setting_is_read_outside_its_settings_object() -> None:
    readers = [
        f"{path.relative_to(ROOT)}:{node.lineno}"
        for package in PACKAGES
        for path in sorted((ROOT / package).rglob("*.py"))
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if _reads_pressroom_variable(node)
    ]
    assert readers == []
