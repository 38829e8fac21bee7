"""The Helm chart: it lints, renders with default and full values, and the manifests validate.

Validation is ``kubernetes-validate --strict`` against the oldest Kubernetes
the chart declares and a current one. The Varnish start script is run for
real (with a shim that compiles instead of serving) so the VCL the chart ships
is proven to compile after Helm's and the script's substitutions.
"""

from __future__ import annotations

import base64
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.fixtures.helm import HELM_VERSION
from tests.fixtures.varnish import NO_JAIL, varnishd_binary

REPO = Path(__file__).resolve().parents[2]
CHART = REPO / "helm" / "pressroom"
RELEASE, NAMESPACE = "rel", "pressroom"
PREFIX = f"{RELEASE}-pressroom"
K8S_VERSIONS = ("1.30.0", "1.35.0")  # the chart's kubeVersion floor is 1.29; helm 4.1 ships client 1.35
WORKLOADS = ("Deployment", "StatefulSet", "Job")

FULL_VALUES = {
    "varnish": {"enabled": True},
    "postgresql": {"enabled": True},
    "objectStore": {"s3": {"endpointUrl": "http://s3.storage:8333", "accessKey": "AKIATEST", "secretKey": "shh"}},
    "shards": [
        {"name": "shard-a", "platform": True},
        # Shard b keeps its workspaces on a PostgreSQL of its own (in-cluster, selected by its labels).
        {
            "name": "b",
            "workspaces": {
                "backend": "postgresql",
                "existingSecret": "ws-b",
                "databasePodSelector": {"app": "ws-db-b"},
                "siteExistingSecret": "ws-b-site",
            },
        },
    ],
    "defaultShard": "b",
    "ingress": {"enabled": True, "controlPlaneHost": "cp.example.com", "siteHost": "sites.example.com"},
    "metrics": {
        "serviceMonitor": {"enabled": True, "labels": {"release": "kube-prometheus-stack"}},
        "scrapeFrom": [{"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "monitoring"}}}],
    },
}
# Kinds of a CRD kubernetes-validate has no schema for; each is checked against its operator's types below.
CRD_API_GROUPS = ("monitoring.coreos.com/",)


@dataclass
class Rendered:
    text: str
    objects: list[dict[str, Any]]

    def get(self, kind: str, name: str) -> dict[str, Any]:
        for obj in self.objects:
            if obj["kind"] == kind and obj["metadata"]["name"] == name:
                return obj
        raise AssertionError(f"no {kind}/{name} in {sorted((o['kind'], o['metadata']['name']) for o in self.objects)}")

    def of_kind(self, *kinds: str) -> list[dict[str, Any]]:
        return [obj for obj in self.objects if obj["kind"] in kinds]

    def core(self) -> list[dict[str, Any]]:
        """The objects of Kubernetes' own APIs (not of a CRD)."""
        return [obj for obj in self.objects if not obj["apiVersion"].startswith(CRD_API_GROUPS)]


def helm(helm_binary: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    result = subprocess.run([str(helm_binary), *args], capture_output=True, text=True, timeout=120, check=False)
    if check:
        assert result.returncode == 0, f"helm {' '.join(args)} failed:\n{result.stdout}\n{result.stderr}"
    return result


def render(helm_binary: Path, *args: str) -> Rendered:
    text = helm(helm_binary, "template", RELEASE, str(CHART), "--namespace", NAMESPACE, *args).stdout
    return Rendered(text, [doc for doc in yaml.safe_load_all(text) if doc])


def container_env(container: dict[str, Any]) -> dict[str, Any]:
    return {entry["name"]: entry.get("value", entry.get("valueFrom")) for entry in container.get("env", [])}


def pod_spec(workload: dict[str, Any]) -> dict[str, Any]:
    return workload["spec"]["template"]["spec"]  # type: ignore[no-any-return]


def main_container(workload: dict[str, Any]) -> dict[str, Any]:
    return pod_spec(workload)["containers"][0]  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def full_values(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("helm") / "values-full.yaml"
    path.write_text(yaml.safe_dump(FULL_VALUES))
    return path


@pytest.fixture(scope="module")
def default_render(helm_binary: Path) -> Rendered:
    return render(helm_binary)


@pytest.fixture(scope="module")
def full_render(helm_binary: Path, full_values: Path) -> Rendered:
    return render(helm_binary, "--values", str(full_values))


@pytest.fixture(params=["default", "full"])
def rendered(request: pytest.FixtureRequest) -> Iterator[Rendered]:
    yield request.getfixturevalue(f"{request.param}_render")


# --- lint, render, validate ------------------------------------------------------------------


def test_helm_is_the_pinned_version(helm_binary: Path) -> None:
    assert helm(helm_binary, "version", "--short").stdout.startswith(HELM_VERSION)


def test_lint_passes_with_default_and_full_values(helm_binary: Path, full_values: Path) -> None:
    helm(helm_binary, "lint", "--strict", str(CHART))
    helm(helm_binary, "lint", "--strict", str(CHART), "--values", str(full_values))


@pytest.mark.parametrize("version", K8S_VERSIONS)
def test_rendered_manifests_validate_strictly(rendered: Rendered, version: str) -> None:
    validator = Path(sys.executable).parent / "kubernetes-validate"
    if not validator.exists():
        pytest.fail(f"{validator} is missing: install the dev extras (`make install`)", pytrace=False)
    core = rendered.core()
    result = subprocess.run(
        [str(validator), "--strict", "-k", version, "-"],
        input=yaml.safe_dump_all(core),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    lines = result.stdout.splitlines()
    assert result.returncode == 0, result.stdout + result.stderr
    # A kind without a schema is only a WARN (exit 0): demand a pass for every object.
    assert [line for line in lines if not line.startswith("INFO")] == []
    assert sum("passed for resource" in line for line in lines) == len(core)


def test_default_values_render_every_component(default_render: Rendered) -> None:
    kinds = {(obj["kind"], obj["metadata"]["name"]) for obj in default_render.objects}
    assert {
        ("Deployment", f"{PREFIX}-prefect"),
        ("Service", f"{PREFIX}-prefect"),
        ("Deployment", f"{PREFIX}-control-plane"),
        ("Service", f"{PREFIX}-control-plane"),
        ("PodDisruptionBudget", f"{PREFIX}-control-plane"),
        ("Deployment", f"{PREFIX}-site"),
        ("Service", f"{PREFIX}-site"),
        ("StatefulSet", f"{PREFIX}-shard-default"),
        ("Service", f"{PREFIX}-shard-default"),
        ("Secret", f"{PREFIX}-shard-default"),
        ("NetworkPolicy", f"{PREFIX}-shard-default"),
        ("NetworkPolicy", f"{PREFIX}-prefect"),
        ("Job", f"{PREFIX}-migrate"),
        ("ServiceAccount", PREFIX),
        ("ConfigMap", f"{PREFIX}-env"),
        ("Secret", f"{PREFIX}-auth"),
        ("PersistentVolumeClaim", f"{PREFIX}-data"),
    } <= kinds
    assert not any(name.endswith(("-varnish", "-postgresql")) for _, name in kinds)


def test_full_values_add_varnish_and_postgresql(full_render: Rendered) -> None:
    full_render.get("Deployment", f"{PREFIX}-varnish")
    full_render.get("Service", f"{PREFIX}-varnish")
    full_render.get("ConfigMap", f"{PREFIX}-varnish")
    statefulset = full_render.get("StatefulSet", f"{PREFIX}-postgresql")
    assert statefulset["spec"]["volumeClaimTemplates"][0]["spec"]["accessModes"] == ["ReadWriteOnce"]
    init = full_render.get("ConfigMap", f"{PREFIX}-postgresql-init")
    assert "CREATE DATABASE prefect OWNER pressroom;" in init["data"]["10-prefect-database.sql"]


# --- what the objects say ----------------------------------------------------------------------


def test_each_shard_runs_its_runtime_over_only_its_directory_with_its_own_secret(full_render: Rendered) -> None:
    shards = full_render.of_kind("StatefulSet")
    assert sorted(s["metadata"]["name"] for s in shards if "-shard-" in s["metadata"]["name"]) == [
        f"{PREFIX}-shard-b",
        f"{PREFIX}-shard-shard-a",
    ]
    for name, platform in (("shard-a", "true"), ("b", "false")):
        workload = full_render.get("StatefulSet", f"{PREFIX}-shard-{name}")
        assert workload["spec"]["replicas"] == 1
        container = main_container(workload)
        assert container["command"] + container["args"] == [
            "python",
            "-m",
            "control_plane.cli",
            "runtime",
            "--shard",
            name,
        ]
        assert container["readinessProbe"]["httpGet"]["path"] == "/healthz"
        [data] = [m for m in container["volumeMounts"] if m["name"] == "data"]
        assert data["subPath"] == f"shards/{name}"  # the pod sees no other shard's workspaces
        env = container_env(container)
        assert env["PRESSROOM_RUNTIME_SECRET"] == {
            "secretKeyRef": {"name": f"{PREFIX}-shard-{name}", "key": "PRESSROOM_RUNTIME_SECRET"}
        }
        assert env["PRESSROOM_RUNTIME_PLATFORM"] == platform and env["PRESSROOM_RUNTIME_HOST"] == "0.0.0.0"
        assert full_render.get("Service", f"{PREFIX}-shard-{name}")["spec"]["ports"][0]["port"] == 8100
        secret = full_render.get("Secret", f"{PREFIX}-shard-{name}")
        assert len(base64.b64decode(secret["data"]["PRESSROOM_RUNTIME_SECRET"])) >= 16
    assert not any("-worker-" in w["metadata"]["name"] for w in full_render.of_kind(*WORKLOADS))


def test_the_control_plane_routes_to_every_shard_and_mounts_no_workspaces(full_render: Rendered) -> None:
    from control_plane.settings import ControlPlaneSettings

    container = main_container(full_render.get("Deployment", f"{PREFIX}-control-plane"))
    assert not any(m["name"] == "data" for m in container["volumeMounts"])
    env = container_env(container)
    assert env["PRESSROOM_SHARD_SECRET_SHARD_A"] == {
        "secretKeyRef": {"name": f"{PREFIX}-shard-shard-a", "key": "PRESSROOM_RUNTIME_SECRET"}
    }
    # Kubernetes expands $(VAR) from the entries before it; the result is what the code reads.
    shards = re.sub(r"\$\((\w+)\)", lambda match: f"secret-of-{match.group(1).lower()}", env["PRESSROOM_SHARDS"])
    settings = ControlPlaneSettings.from_env(
        {"PRESSROOM_SHARDS": shards, "PRESSROOM_DEFAULT_SHARD": env["PRESSROOM_DEFAULT_SHARD"]}
    )
    assert settings.default_shard == "b"
    assert {name: target.url for name, target in settings.shards.items()} == {
        "shard-a": f"http://{PREFIX}-shard-shard-a:8100",
        "b": f"http://{PREFIX}-shard-b:8100",
    }
    assert settings.shards["b"].secret is not None
    assert settings.shards["b"].secret.get_secret_value() == "secret-of-pressroom_shard_secret_b"
    site = main_container(full_render.get("Deployment", f"{PREFIX}-site"))
    [data] = [m for m in site["volumeMounts"] if m["name"] == "data"]
    assert data["readOnly"] is True
    assert container_env(site)["PRESSROOM_SITE_DATA_DIRS"] == (
        "/var/lib/pressroom/shards/shard-a,/var/lib/pressroom/shards/b"
    )


def test_the_ingress_publishes_the_control_plane_and_the_site_through_varnish(full_render: Rendered) -> None:
    ingress = full_render.get("Ingress", PREFIX)
    routes = {
        rule["host"]: (path["backend"]["service"]["name"], path["backend"]["service"]["port"]["number"])
        for rule in ingress["spec"]["rules"]
        for path in rule["http"]["paths"]
    }
    assert routes == {
        "cp.example.com": (f"{PREFIX}-control-plane", 8000),
        "sites.example.com": (f"{PREFIX}-varnish", 80),
    }


def test_the_dockerfile_builds_every_package_and_runs_as_the_charts_user() -> None:
    dockerfile = (REPO / "Dockerfile").read_text()
    copied = set(re.findall(r"^COPY (\w+) \1$", dockerfile, re.MULTILINE))
    assert copied == {"control_plane", "dispatch", "flows", "tenant_runtime"}
    values = yaml.safe_load((CHART / "values.yaml").read_text())
    assert f"USER {values['podSecurityContext']['runAsUser']}" in dockerfile
    assert "FROM python:3.11-slim" in dockerfile


def test_network_policies_say_who_may_talk_to_whom(full_render: Rendered) -> None:
    def sources(name: str) -> set[str]:
        policy = full_render.get("NetworkPolicy", name)
        return {
            peer["podSelector"]["matchLabels"]["app.kubernetes.io/component"]
            if "podSelector" in peer
            else "namespace:" + peer["namespaceSelector"]["matchLabels"]["kubernetes.io/metadata.name"]
            for rule in policy["spec"]["ingress"]
            for peer in rule["from"]
        }

    # Not the site, not another shard; Prometheus' namespace only because metrics.scrapeFrom names it.
    assert sources(f"{PREFIX}-shard-b") == {"control-plane", "namespace:monitoring"}
    assert sources(f"{PREFIX}-postgresql") == {"control-plane", "migrate", "prefect"}  # never a runtime or the site
    assert sources(f"{PREFIX}-prefect") == {"control-plane", "migrate", "shard-shard-a", "shard-b"}
    selected = full_render.get("NetworkPolicy", f"{PREFIX}-shard-b")["spec"]["podSelector"]["matchLabels"]
    assert selected == full_render.get("StatefulSet", f"{PREFIX}-shard-b")["spec"]["selector"]["matchLabels"]


def test_a_shard_on_postgresql_workspaces_reaches_only_its_own_workspace_database(full_render: Rendered) -> None:
    on_pg = container_env(main_container(full_render.get("StatefulSet", f"{PREFIX}-shard-b")))
    assert on_pg["PRESSROOM_WORKSPACE_BACKEND"] == "postgresql"
    assert on_pg["PRESSROOM_WORKSPACE_DATABASE_URL"] == {
        "secretKeyRef": {"name": "ws-b", "key": "PRESSROOM_WORKSPACE_DATABASE_URL"}
    }
    assert "PRESSROOM_DATABASE_URL" not in on_pg and "PRESSROOM_DB_PASSWORD" not in on_pg  # not the control plane's
    on_files = container_env(main_container(full_render.get("StatefulSet", f"{PREFIX}-shard-shard-a")))
    assert not any(name.startswith("PRESSROOM_WORKSPACE_") for name in on_files)
    # Its workspace database admits shard b on 5432, and no one else through this policy.
    policy = full_render.get("NetworkPolicy", f"{PREFIX}-shard-b-workspaces")["spec"]
    assert policy["podSelector"]["matchLabels"] == {"app": "ws-db-b"}
    [rule] = policy["ingress"]
    assert [p["podSelector"]["matchLabels"]["app.kubernetes.io/component"] for p in rule["from"]] == ["shard-b", "site"]
    assert rule["ports"] == [{"port": 5432, "protocol": "TCP"}]
    # The site reads it with its own read-only role; no other credential of the shard reaches the site.
    site = container_env(main_container(full_render.get("Deployment", f"{PREFIX}-site")))
    assert site["PRESSROOM_SITE_WS_DB_1"] == {
        "secretKeyRef": {"name": "ws-b-site", "key": "PRESSROOM_WORKSPACE_DATABASE_URL"}
    }
    assert site["PRESSROOM_SITE_WORKSPACE_DATABASES"] == "$(PRESSROOM_SITE_WS_DB_1)"
    assert "PRESSROOM_WORKSPACE_DATABASE_URL" not in site and "PRESSROOM_RUNTIME_SECRET" not in site
    # The bundled database (the control plane's and Prefect's) still admits no runtime.
    bundled = full_render.get("NetworkPolicy", f"{PREFIX}-postgresql")["spec"]["ingress"]
    assert not any(
        "shard" in p["podSelector"]["matchLabels"]["app.kubernetes.io/component"] for r in bundled for p in r["from"]
    )


def test_processes_run_the_cli_commands(full_render: Rendered) -> None:
    def argv(kind: str, name: str) -> list[str]:
        container = main_container(full_render.get(kind, name))
        return [*container["command"], *container.get("args", [])]

    assert argv("Deployment", f"{PREFIX}-control-plane") == ["python", "-m", "control_plane.cli", "serve"]
    assert argv("Deployment", f"{PREFIX}-site") == ["python", "-m", "control_plane.cli", "site"]
    assert argv("Job", f"{PREFIX}-migrate") == ["python", "-m", "control_plane.cli", "migrate"]
    assert argv("Deployment", f"{PREFIX}-prefect")[:3] == ["prefect", "server", "start"]


def _settings_env_names() -> set[str]:
    """Every PRESSROOM_* / PREFECT_* variable a settings class reads."""
    from control_plane.settings import ControlPlaneSettings
    from dispatch.settings import DispatchSettings
    from flows.probes import ProbeSettings
    from tenant_runtime.config import env_name
    from tenant_runtime.settings import RuntimeSettings
    from tenant_runtime.storage.factory import StorageSettings

    classes = (ControlPlaneSettings, DispatchSettings, RuntimeSettings, StorageSettings, ProbeSettings)
    return {env_name(cls, field) for cls in classes for field in cls.model_fields if field != "storage"}


def test_configmap_sets_only_settings_the_code_reads(rendered: Rendered) -> None:
    data = rendered.get("ConfigMap", f"{PREFIX}-env")["data"]
    known = _settings_env_names()
    pressroom_names = {name for name in data if name.startswith("PRESSROOM_")}
    assert pressroom_names <= known, f"unknown settings: {sorted(pressroom_names - known)}"
    assert {
        "PRESSROOM_DATA_DIR",
        "PRESSROOM_SITE_URL",
        "PRESSROOM_PURGE_URL",
        "PRESSROOM_OBJECT_STORE",
        "PRESSROOM_S3_BUCKET",
        "PRESSROOM_S3_REGION",
        "PRESSROOM_HOST",
        "PRESSROOM_SITE_HOST",
    } <= pressroom_names
    assert data["PREFECT_API_URL"] == f"http://{PREFIX}-prefect:4200/api"
    assert data["PREFECT_SERVER_ANALYTICS_ENABLED"] == "false"
    assert data["DO_NOT_TRACK"] == "1"
    assert data["PRESSROOM_OBJECT_STORE"] == "s3"
    assert data["PRESSROOM_HOST"] == data["PRESSROOM_SITE_HOST"] == "0.0.0.0"


def test_purges_go_to_varnish_when_it_fronts_the_site(default_render: Rendered, full_render: Rendered) -> None:
    assert (
        default_render.get("ConfigMap", f"{PREFIX}-env")["data"]["PRESSROOM_PURGE_URL"] == f"http://{PREFIX}-site:8080/"
    )
    assert full_render.get("ConfigMap", f"{PREFIX}-env")["data"]["PRESSROOM_PURGE_URL"] == f"http://{PREFIX}-varnish/"
    assert (
        full_render.get("ConfigMap", f"{PREFIX}-env")["data"]["PRESSROOM_S3_ENDPOINT_URL"] == "http://s3.storage:8333"
    )


def test_secrets_reach_only_the_processes_that_need_them(full_render: Rendered) -> None:
    control = container_env(main_container(full_render.get("Deployment", f"{PREFIX}-control-plane")))
    assert control["PRESSROOM_DATABASE_URL"] == (
        f"postgresql+psycopg://pressroom:$(PRESSROOM_DB_PASSWORD)@{PREFIX}-postgresql:5432/pressroom"
    )
    assert control["PRESSROOM_DB_PASSWORD"] == {"secretKeyRef": {"name": f"{PREFIX}-postgresql", "key": "password"}}
    assert control["PRESSROOM_OPERATOR_TOKEN"]["secretKeyRef"]["name"] == f"{PREFIX}-auth"
    # One dashboard cookie key for every replica: a sign-in made on one is valid on the others.
    assert control["PRESSROOM_SESSION_SECRET"] == {
        "secretKeyRef": {"name": f"{PREFIX}-auth", "key": "PRESSROOM_SESSION_SECRET"}
    }
    (auth,) = [s for s in full_render.of_kind("Secret") if s["metadata"]["name"] == f"{PREFIX}-auth"]
    assert len(base64.b64decode(auth["data"]["PRESSROOM_SESSION_SECRET"])) >= 16
    for name in ("PRESSROOM_S3_ACCESS_KEY", "PRESSROOM_S3_SECRET_KEY"):
        assert control[name] == {"secretKeyRef": {"name": f"{PREFIX}-s3", "key": name}}
    prefect = container_env(main_container(full_render.get("Deployment", f"{PREFIX}-prefect")))
    assert prefect["PREFECT_API_DATABASE_CONNECTION_URL"].startswith("postgresql+asyncpg://pressroom:$(PREFECT_DB_")
    assert prefect["PREFECT_SERVER_ANALYTICS_ENABLED"] == "false" and prefect["DO_NOT_TRACK"] == "1"
    assert not any(name.startswith("PRESSROOM_") for name in prefect)
    for kind, workload in (("StatefulSet", f"{PREFIX}-shard-shard-a"), ("Deployment", f"{PREFIX}-site")):
        env = container_env(main_container(full_render.get(kind, workload)))
        assert "PRESSROOM_PURGE_SECRET" in env and "PRESSROOM_S3_SECRET_KEY" in env
        assert "PRESSROOM_DATABASE_URL" not in env and "PRESSROOM_OPERATOR_TOKEN" not in env
        assert "PRESSROOM_SESSION_SECRET" not in env
        assert not any(name.startswith("PRESSROOM_SHARD_SECRET_") for name in env)  # other shards' credentials
    site = container_env(main_container(full_render.get("Deployment", f"{PREFIX}-site")))
    assert "PRESSROOM_RUNTIME_SECRET" not in site
    secret_values = [value for obj in full_render.of_kind("ConfigMap") for value in obj["data"].values()]
    assert not any(value == "shh" for value in secret_values)


def test_default_database_urls_come_from_an_existing_secret(default_render: Rendered) -> None:
    control = container_env(main_container(default_render.get("Deployment", f"{PREFIX}-control-plane")))
    assert control["PRESSROOM_DATABASE_URL"] == {
        "secretKeyRef": {"name": "pressroom-database", "key": "PRESSROOM_DATABASE_URL"}
    }
    prefect = container_env(main_container(default_render.get("Deployment", f"{PREFIX}-prefect")))
    assert prefect["PREFECT_API_DATABASE_CONNECTION_URL"] == {
        "secretKeyRef": {"name": "pressroom-database", "key": "PREFECT_API_DATABASE_CONNECTION_URL"}
    }


def test_no_container_runs_as_root_or_writes_its_root_filesystem(rendered: Rendered) -> None:
    workloads = rendered.of_kind(*WORKLOADS)
    assert workloads
    for workload in workloads:
        spec = pod_spec(workload)
        pod = spec.get("securityContext", {})
        for container in spec.get("initContainers", []) + spec["containers"]:
            where = f"{workload['kind']}/{workload['metadata']['name']}/{container['name']}"
            own = container.get("securityContext", {})
            assert own.get("runAsNonRoot", pod.get("runAsNonRoot")) is True, where
            assert own.get("runAsUser", pod.get("runAsUser")) not in (None, 0), where
            assert own.get("allowPrivilegeEscalation") is False, where
            assert own.get("readOnlyRootFilesystem") is True, where
            assert own.get("capabilities", {}).get("drop") == ["ALL"], where
            assert container.get("resources", {}).get("requests"), where


def test_http_services_are_probed_on_their_health_endpoints(full_render: Rendered) -> None:
    for name, path in (
        (f"{PREFIX}-control-plane", "/healthz"),
        (f"{PREFIX}-site", "/healthz"),
        (f"{PREFIX}-prefect", "/api/health"),
        (f"{PREFIX}-varnish", "/healthz"),
    ):
        container = main_container(full_render.get("Deployment", name))
        assert container["readinessProbe"]["httpGet"]["path"] == path, name
        assert "livenessProbe" in container, name


def test_image_comes_from_values(helm_binary: Path) -> None:
    rendered = render(helm_binary, "--set", "image.repository=ghcr.io/acme/pressroom", "--set", "image.tag=1.2.3")
    images = {main_container(w)["image"] for w in rendered.of_kind(*WORKLOADS)}
    assert images == {"ghcr.io/acme/pressroom:1.2.3"}


def test_the_session_secret_comes_from_values_or_an_existing_secret_where_it_may_be_missing(helm_binary: Path) -> None:
    given = render(helm_binary, "--set", "auth.sessionSecret=0123456789abcdef-given")
    (auth,) = [s for s in given.of_kind("Secret") if s["metadata"]["name"] == f"{PREFIX}-auth"]
    assert base64.b64decode(auth["data"]["PRESSROOM_SESSION_SECRET"]) == b"0123456789abcdef-given"
    existing = render(helm_binary, "--set", "auth.existingSecret=my-auth")
    assert not [s for s in existing.of_kind("Secret") if s["metadata"]["name"] == f"{PREFIX}-auth"]
    control = container_env(main_container(existing.get("Deployment", f"{PREFIX}-control-plane")))
    assert control["PRESSROOM_SESSION_SECRET"] == {
        "secretKeyRef": {"name": "my-auth", "key": "PRESSROOM_SESSION_SECRET", "optional": True}
    }
    assert control["PRESSROOM_OPERATOR_TOKEN"]["secretKeyRef"] == {"name": "my-auth", "key": "PRESSROOM_OPERATOR_TOKEN"}


def test_migrations_run_as_a_hook_before_install_and_upgrade(default_render: Rendered, full_render: Rendered) -> None:
    hook = "helm.sh/hook"
    assert default_render.get("Job", f"{PREFIX}-migrate")["metadata"]["annotations"][hook] == "pre-install,pre-upgrade"
    # The bundled PostgreSQL is itself part of the release, so it exists only after install.
    assert full_render.get("Job", f"{PREFIX}-migrate")["metadata"]["annotations"][hook] == "post-install,pre-upgrade"


def test_control_plane_has_a_disruption_budget_and_a_service_account(default_render: Rendered) -> None:
    budget = default_render.get("PodDisruptionBudget", f"{PREFIX}-control-plane")
    deployment = default_render.get("Deployment", f"{PREFIX}-control-plane")
    assert budget["spec"]["selector"]["matchLabels"] == deployment["spec"]["selector"]["matchLabels"]
    assert pod_spec(deployment)["serviceAccountName"] == PREFIX
    assert pod_spec(deployment)["automountServiceAccountToken"] is False


@pytest.mark.parametrize(
    ("setting", "message"),
    [
        ("shards[0].name=Bad_Name", "must be a DNS label"),
        ("defaultShard=nope", "is not one of shards[].name"),
        (
            "shards[1].name=b,shards[1].platform=true,shards[0].name=default,shards[0].platform=true",
            "at most one of shards[] may set platform",
        ),
        ('auth.purgeSecret=a"b', "auth.purgeSecret may only hold"),
        (
            "shards[0].name=default,shards[0].workspaces.backend=postgresql",
            "workspaces.existingSecret must name the Secret",
        ),
        (
            "shards[0].name=default,shards[0].workspaces.backend=mysql",
            "workspaces.backend must be sqlite or postgresql",
        ),
        ('varnish.enabled=true,varnish.purgeAllowedCidrs={evil"}', "is not an IP address or CIDR"),
        ("metrics.token=short", "metrics.token must be at least 16 characters"),
        ("auth.sessionSecret=short", "auth.sessionSecret must be at least 16 characters"),
    ],
)
def test_bad_values_fail_with_a_message(helm_binary: Path, setting: str, message: str) -> None:
    result = helm(helm_binary, "template", RELEASE, str(CHART), "--set", setting, check=False)
    assert result.returncode != 0
    assert message in result.stderr


# --- Prometheus ---------------------------------------------------------------------------------


def test_the_control_plane_and_every_runtime_carry_scrape_annotations_for_their_own_port(
    full_render: Rendered,
) -> None:
    for kind, name in (
        ("Deployment", f"{PREFIX}-control-plane"),
        ("StatefulSet", f"{PREFIX}-shard-shard-a"),
        ("StatefulSet", f"{PREFIX}-shard-b"),
    ):
        workload = full_render.get(kind, name)
        annotations = workload["spec"]["template"]["metadata"]["annotations"]
        [port] = main_container(workload)["ports"]
        assert annotations["prometheus.io/scrape"] == "true", name
        assert annotations["prometheus.io/port"] == str(port["containerPort"]), name
        assert annotations["prometheus.io/path"] == "/metrics", name
    for name in (f"{PREFIX}-site", f"{PREFIX}-prefect", f"{PREFIX}-varnish"):  # they serve no /metrics of ours
        assert "prometheus.io/scrape" not in full_render.get("Deployment", name)["spec"]["template"]["metadata"].get(
            "annotations", {}
        )


def test_the_scrape_token_reaches_only_the_control_plane_and_its_settings_accept_it(full_render: Rendered) -> None:
    from control_plane.settings import ControlPlaneSettings

    secret = full_render.get("Secret", f"{PREFIX}-metrics")
    token = base64.b64decode(secret["data"]["PRESSROOM_METRICS_TOKEN"]).decode()
    control = container_env(main_container(full_render.get("Deployment", f"{PREFIX}-control-plane")))
    assert control["PRESSROOM_METRICS_TOKEN"] == {
        "secretKeyRef": {"name": f"{PREFIX}-metrics", "key": "PRESSROOM_METRICS_TOKEN"}
    }
    settings = ControlPlaneSettings.from_env({"PRESSROOM_METRICS_TOKEN": token})
    assert settings.metrics_token is not None and settings.metrics_token.get_secret_value() == token
    for kind, name in (
        ("StatefulSet", f"{PREFIX}-shard-b"),
        ("Deployment", f"{PREFIX}-site"),
        ("Deployment", f"{PREFIX}-prefect"),
    ):
        assert "PRESSROOM_METRICS_TOKEN" not in container_env(main_container(full_render.get(kind, name))), name


def _service_monitor(obj: dict[str, Any]) -> dict[str, Any]:
    """``obj`` read as the Prometheus Operator's ServiceMonitor type and written back (unknown fields are dropped)."""
    from cloudcoil.models.prometheus_operator.v1 import ServiceMonitor

    model = ServiceMonitor.model_validate(obj)
    return model.model_dump(by_alias=True, exclude_unset=True, mode="json")  # type: ignore[no-any-return]


def test_service_monitors_are_valid_and_select_the_services_that_serve_metrics(full_render: Rendered) -> None:
    monitors = {m["metadata"]["name"]: m for m in full_render.of_kind("ServiceMonitor")}
    assert sorted(monitors) == [f"{PREFIX}-control-plane", f"{PREFIX}-runtimes"]
    for monitor in monitors.values():
        assert monitor["apiVersion"] == "monitoring.coreos.com/v1"
        # Every field the chart writes is one of the CRD's: the round trip through its types loses nothing.
        assert _service_monitor(monitor) == monitor
        assert monitor["metadata"]["labels"]["release"] == "kube-prometheus-stack"

    def selected(monitor: dict[str, Any]) -> list[str]:
        wanted = monitor["spec"]["selector"]["matchLabels"].items()
        return sorted(
            svc["metadata"]["name"]
            for svc in full_render.of_kind("Service")
            if wanted <= svc["metadata"]["labels"].items()
        )

    control, runtimes = monitors[f"{PREFIX}-control-plane"], monitors[f"{PREFIX}-runtimes"]
    assert selected(control) == [f"{PREFIX}-control-plane"]
    assert selected(runtimes) == [f"{PREFIX}-shard-b", f"{PREFIX}-shard-shard-a"]
    [endpoint] = control["spec"]["endpoints"]
    assert (endpoint["port"], endpoint["path"]) == ("http", "/metrics")
    assert endpoint["authorization"] == {
        "type": "Bearer",
        "credentials": {"name": f"{PREFIX}-metrics", "key": "PRESSROOM_METRICS_TOKEN"},
    }
    [endpoint] = runtimes["spec"]["endpoints"]
    assert (endpoint["port"], endpoint["path"]) == ("http", "/metrics") and "authorization" not in endpoint
    assert runtimes["spec"]["targetLabels"] == ["pressroom.io/shard"]
    assert full_render.get("Service", f"{PREFIX}-shard-b")["metadata"]["labels"]["pressroom.io/shard"] == "b"


def test_a_service_monitor_field_the_crd_lacks_would_be_caught(full_render: Rendered) -> None:
    monitor = full_render.get("ServiceMonitor", f"{PREFIX}-runtimes")
    wrong = {**monitor, "spec": {**monitor["spec"], "endpoints": [{"port": "http", "pth": "/metrics"}]}}
    assert _service_monitor(wrong) != wrong


def test_metrics_defaults_and_switches(default_render: Rendered, helm_binary: Path) -> None:
    assert not default_render.of_kind("ServiceMonitor")  # needs the operator's CRDs: opt-in
    assert default_render.get("Secret", f"{PREFIX}-metrics")
    policy = default_render.get("NetworkPolicy", f"{PREFIX}-shard-default")
    assert len(policy["spec"]["ingress"]) == 1  # only the control plane until metrics.scrapeFrom names Prometheus
    given = render(
        helm_binary,
        "--set",
        "metrics.existingSecret=monitoring-token",
        "--set",
        "metrics.existingSecretKey=token",
        "--set",
        "metrics.serviceMonitor.enabled=true",
    )
    assert not [s for s in given.of_kind("Secret") if s["metadata"]["name"].endswith("-metrics")]
    control = container_env(main_container(given.get("Deployment", f"{PREFIX}-control-plane")))
    assert control["PRESSROOM_METRICS_TOKEN"] == {"secretKeyRef": {"name": "monitoring-token", "key": "token"}}
    [endpoint] = given.get("ServiceMonitor", f"{PREFIX}-control-plane")["spec"]["endpoints"]
    assert endpoint["authorization"]["credentials"] == {"name": "monitoring-token", "key": "token"}
    off = render(helm_binary, "--set", "metrics.enabled=false")
    assert not off.of_kind("ServiceMonitor")
    assert not [s for s in off.of_kind("Secret") if s["metadata"]["name"].endswith("-metrics")]
    workload = off.get("Deployment", f"{PREFIX}-control-plane")
    assert "PRESSROOM_METRICS_TOKEN" not in container_env(main_container(workload))
    assert "prometheus.io/scrape" not in workload["spec"]["template"]["metadata"]["annotations"]


# --- the Varnish configuration ---------------------------------------------------------------


def test_the_chart_ships_the_package_vcl() -> None:
    assert (CHART / "files" / "varnish.vcl").read_bytes() == (
        REPO / "tenant_runtime" / "edge" / "varnish.vcl"
    ).read_bytes()


def test_the_varnish_start_script_fills_in_the_secret_and_the_vcl_compiles(
    full_render: Rendered, tmp_path: Path
) -> None:
    data = full_render.get("ConfigMap", f"{PREFIX}-varnish")["data"]
    assert '.host = "rel-pressroom-site";' in data["pressroom.vcl"]
    assert '"10.0.0.0"/8;' in data["pressroom.vcl"]
    assert re.findall(r"\$\{[A-Z_]+\}", data["pressroom.vcl"]) == ["${PURGE_SECRET}"] * 2
    config, work = tmp_path / "config", tmp_path / "work"
    config.mkdir()
    work.mkdir()
    # The Service name does not resolve here, and varnishd resolves backends when compiling.
    (config / "pressroom.vcl").write_text(data["pressroom.vcl"].replace('"rel-pressroom-site"', '"127.0.0.1"'))
    script = data["start.sh"].replace("/etc/varnish/pressroom", str(config)).replace("/var/lib/varnish", str(work))
    # A varnishd shim on PATH: compile the -f file the script hands over instead of serving it.
    shim = tmp_path / "bin" / "varnishd"
    shim.parent.mkdir()
    shim.write_text(
        '#!/bin/sh\nwhile [ $# -gt 0 ]; do if [ "$1" = -f ]; then vcl=$2; fi; shift; done\n'
        f'exec {varnishd_binary()} -C {" ".join(NO_JAIL)} -n {work}/compile -f "$vcl" >/dev/null\n'
    )
    shim.chmod(0o755)
    env = {"PATH": f"{shim.parent}:/usr/bin:/bin:/usr/sbin", "PURGE_SECRET": "c2VjcmV0+/="}
    ran = subprocess.run(["sh", "-c", script], env=env, capture_output=True, text=True, timeout=120, check=False)
    assert ran.returncode == 0, ran.stderr[-3000:]
    vcl = (work / "pressroom.vcl").read_text()
    assert 'req.http.x-purge-secret != "c2VjcmV0+/="' in vcl and "${" not in vcl

    refused = subprocess.run(
        ["sh", "-c", script],
        env={**env, "PURGE_SECRET": 'bad"secret'},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert refused.returncode == 1 and "may only hold" in refused.stderr
