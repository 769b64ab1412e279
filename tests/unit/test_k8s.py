"""Issue 18, item 3: the Kubernetes manifests in ``deploy/k8s/``.

Every object is checked against the Kubernetes API's own schema (``kubernetes-validate``,
whose schemas ship inside the package: nothing is downloaded), then against what Narrador
needs of it: probes on the health checks that exist, one beat, the keyring only where it is
used, resources on every container, budgets that select real pods, and a ``narrador.toml``
that Narrador's own schema accepts."""

from __future__ import annotations

import tomllib
from pathlib import Path

import click
import pytest
import yaml

from worker.app.cli import main
from worker.config.settings import settings_from_mapping

K8S = Path(__file__).resolve().parents[2] / "deploy" / "k8s"
KUBERNETES = "1.30.0"  # the oldest Kubernetes release the manifests promise to fit


def _docs() -> list[dict]:
    kustomization = yaml.safe_load((K8S / "kustomization.yaml").read_text())
    docs = []
    for name in kustomization["resources"]:
        docs += [d for d in yaml.safe_load_all((K8S / name).read_text()) if d]
    return docs


def _by_kind(kind: str) -> dict[str, dict]:
    return {d["metadata"]["name"]: d for d in _docs() if d["kind"] == kind}


def _pod(name: str) -> dict:
    return _by_kind("Deployment")[name]["spec"]["template"]["spec"]


def test_kustomization_lists_every_manifest():
    listed = yaml.safe_load((K8S / "kustomization.yaml").read_text())["resources"]
    assert sorted(listed) == sorted(p.name for p in K8S.glob("*.yaml") if p.name != "kustomization.yaml")


@pytest.mark.parametrize("doc", _docs(), ids=lambda d: f"{d['kind']}/{d['metadata']['name']}")
def test_every_object_fits_the_kubernetes_schema(doc):
    kubernetes_validate = pytest.importorskip("kubernetes_validate")
    kubernetes_validate.validate(doc, KUBERNETES, strict=True)  # raises ValidationError


def test_web_is_probed_on_healthz_and_never_mounts_the_keyring():
    pod = _pod("narrador-web")
    (web,) = pod["containers"]
    for probe in ("readinessProbe", "livenessProbe"):
        assert web[probe]["httpGet"]["path"] == "/healthz"
    assert web["livenessProbe"]["periodSeconds"] * web["livenessProbe"]["failureThreshold"] >= 120
    assert not any(v.get("secret") for v in pod["volumes"])
    assert _by_kind("Deployment")["narrador-web"]["spec"]["replicas"] >= 2
    service = _by_kind("Service")["narrador-web"]
    assert service["spec"]["selector"] == pod_labels("narrador-web")


def pod_labels(name: str) -> dict:
    return _by_kind("Deployment")[name]["spec"]["template"]["metadata"]["labels"]


def test_workers_are_several_with_a_heartbeat_liveness_check_and_the_keyring():
    deployment = _by_kind("Deployment")["narrador-worker"]
    assert deployment["spec"]["replicas"] >= 2
    pod = deployment["spec"]["template"]["spec"]
    (worker,) = pod["containers"]
    assert worker["command"][:2] == ["narrador", "worker"]
    probe = worker["livenessProbe"]["exec"]["command"]
    # the heartbeat of this pod's worker (worker.app.heartbeat; issue 14, item 1), not a broker ping,
    # which a worker whose main loop hangs on its pool child would not answer either but
    # which costs a round trip through every worker's control queue
    assert probe == ["narrador", "health", "worker"]
    assert worker["livenessProbe"]["periodSeconds"] * worker["livenessProbe"]["failureThreshold"] >= 60
    keyring = next(v for v in pod["volumes"] if v.get("secret"))
    assert keyring["secret"]["secretName"] == "narrador-keyring"
    mount = next(m for m in worker["volumeMounts"] if m["name"] == keyring["name"])
    assert mount["readOnly"] and mount["mountPath"] == "/run/secrets/narrador"


def test_beat_is_exactly_one_recreated_replica_without_secrets():
    deployment = _by_kind("Deployment")["narrador-beat"]
    assert deployment["spec"]["replicas"] == 1
    assert deployment["spec"]["strategy"] == {"type": "Recreate"}
    (beat,) = deployment["spec"]["template"]["spec"]["containers"]
    assert beat["command"] == ["narrador", "beat"]
    assert beat["livenessProbe"]["exec"]["command"] == ["narrador", "health", "beat"]
    assert "envFrom" not in beat and not any(v.get("secret") for v in deployment["spec"]["template"]["spec"]["volumes"])


def test_every_container_has_requests_a_memory_limit_and_runs_unprivileged():
    for name, deployment in _by_kind("Deployment").items():
        spec = deployment["spec"]["template"]["spec"]
        assert spec["securityContext"]["runAsNonRoot"] and spec["securityContext"]["runAsUser"] == 1000, name
        for container in spec["containers"]:
            resources = container["resources"]
            assert {"cpu", "memory"} <= set(resources["requests"]), name
            assert "memory" in resources["limits"], name
            assert container["securityContext"]["allowPrivilegeEscalation"] is False
            assert container["securityContext"]["readOnlyRootFilesystem"] is True


def test_the_dockerfile_user_is_the_uid_the_pods_run_as():
    dockerfile = (K8S.parent / "Dockerfile").read_text()
    assert "useradd --uid 1000" in dockerfile


def test_disruption_budgets_select_real_pods():
    budgets = _by_kind("PodDisruptionBudget")
    assert set(budgets) == {"narrador-web", "narrador-worker"}
    for name, budget in budgets.items():
        assert budget["spec"]["selector"]["matchLabels"] == pod_labels(name)


def test_every_secret_and_config_map_referenced_exists():
    secrets, maps = set(_by_kind("Secret")), set(_by_kind("ConfigMap"))
    for name, deployment in _by_kind("Deployment").items():
        spec = deployment["spec"]["template"]["spec"]
        for volume in spec["volumes"]:
            if "secret" in volume:
                assert volume["secret"]["secretName"] in secrets, name
            if "configMap" in volume:
                assert volume["configMap"]["name"] in maps, name
        for container in spec["containers"]:
            for source in container.get("envFrom", []):
                assert source["secretRef"]["name"] in secrets, name
            for env in container.get("env", []):
                ref = env.get("valueFrom", {}).get("secretKeyRef")
                if ref:
                    assert ref["key"] in _by_kind("Secret")[ref["name"]]["stringData"], name


def test_the_configuration_loads_with_narradors_schema():
    text = _by_kind("ConfigMap")["narrador-config"]["data"]["narrador.toml"]
    settings = settings_from_mapping(tomllib.loads(text), base_dir=Path("/config"), environ={})
    assert settings.keystore == "redis" and settings.redis_url.startswith("redis+sentinel://")
    assert settings.narrador.keyring_file == "/run/secrets/narrador/keyring.json"
    assert settings.narrador.archive_s3_bucket  # workers on several machines archive to one bucket
    for deployment in _by_kind("Deployment").values():
        (container,) = deployment["spec"]["template"]["spec"]["containers"]
        mounts = {m["mountPath"] for m in container["volumeMounts"]}
        assert str(settings.instance_dir) in mounts and "/config" in mounts


def _check_command(argv: list[str]) -> None:
    """``argv`` names an existing ``narrador`` subcommand and only options it has."""
    assert argv[0] == "narrador"
    command: click.Command = main
    args = argv[1:]
    while isinstance(command, click.Group):
        name, args = args[0], args[1:]
        assert name in command.commands, f"no subcommand {name!r} in {argv}"
        command = command.commands[name]
    command.make_context("narrador", list(args))  # raises on an unknown option or a bad value


def test_every_narrador_command_in_the_manifests_exists():
    for _name, deployment in _by_kind("Deployment").items():
        for container in deployment["spec"]["template"]["spec"]["containers"]:
            for argv in (container["command"], container.get("livenessProbe", {}).get("exec", {}).get("command")):
                if argv and argv[0] == "narrador":
                    _check_command(argv)
