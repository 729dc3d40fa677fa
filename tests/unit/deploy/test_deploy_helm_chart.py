"""The Helm chart lints strictly, renders for each supported setup, and every manifest is valid Kubernetes.

Rendering and linting use helm-python-sdk (Helm's Go library, no helm binary); validation uses
kubernetes-validate's bundled schemas, offline.
"""

from __future__ import annotations

import base64
import copy
from pathlib import Path
from typing import Any

import helm_python as helm
import kubernetes_validate
import pytest
import yaml

from config.settings import Settings

ROOT = Path(__file__).resolve().parents[3]
CHART = ROOT / "deploy" / "helm" / "lethe"
RELEASE = "lethe"
NAMESPACE = "lethe"
# The oldest Kubernetes the chart supports (Chart.yaml kubeVersion) and the newest kubernetes-validate ships.
KUBE_VERSIONS = ("1.29.0", f"{kubernetes_validate.latest_version()}.0")
TLS_MOUNT = "/etc/lethe/temporal-tls"

VALUE_SETS: dict[str, dict[str, Any]] = {
    "defaults": {},
    "temporal-cloud-api-key": {
        "database": {"url": "postgres://lethe:pw@db.example.com:5432/lethe?sslmode=require"},
        "temporal": {
            "address": "us-east-1.aws.api.temporal.io:7233",
            "namespace": "lethe-prod.a1b2c",
            "apiKey": {"value": "tc-api-key"},
            "searchAttributes": {"register": False},
        },
        "openai": {"apiKey": "sk-test"},
        "config": {"LETHE_EMBEDDER": "openai", "LETHE_JUDGE": "openai"},
    },
    "mtls-existing-secrets": {
        "database": {"existingSecret": "lethe-db", "existingSecretKey": "url"},
        "temporal": {
            "address": "lethe-prod.a1b2c.tmprl.cloud:7233",
            "namespace": "lethe-prod.a1b2c",
            "mtls": {"enabled": True, "existingSecret": "lethe-temporal-client", "caKey": "ca.crt"},
        },
        "adminToken": {"existingSecret": "lethe-admin", "existingSecretKey": "token"},
        "secretKey": {"existingSecret": "lethe-secret-key"},
        "openai": {"existingSecret": "lethe-openai"},
    },
    "ingress-autoscaling": {
        "database": {"existingSecret": "lethe-db"},
        "gateway": {
            "ingress": {
                "enabled": True,
                "className": "nginx",
                "annotations": {"nginx.ingress.kubernetes.io/proxy-body-size": "8m"},
                "hosts": [{"host": "lethe.example.com", "paths": [{"path": "/", "pathType": "Prefix"}]}],
                "tls": [{"secretName": "lethe-tls", "hosts": ["lethe.example.com"]}],
            },
            "autoscaling": {"enabled": True, "minReplicas": 2, "maxReplicas": 8,
                            "targetMemoryUtilizationPercentage": 80},
        },
        "worker": {"autoscaling": {"enabled": True, "minReplicas": 1, "maxReplicas": 4}},
        "serviceMonitor": {"enabled": True, "labels": {"release": "prometheus"}},
    },
}
SET_NAMES = list(VALUE_SETS)


@pytest.fixture(scope="module")
def chart() -> Any:
    with helm.Chart.load(CHART) as loaded:
        yield loaded


@pytest.fixture(scope="module")
def rendered(chart: Any) -> dict[str, list[dict[str, Any]]]:
    """Every value set's manifests, rendered once."""
    result = {}
    for name, values in VALUE_SETS.items():
        files = chart.render(copy.deepcopy(values), name=RELEASE, namespace=NAMESPACE, is_install=True)
        docs = []
        for path, text in files.items():
            if path.endswith(".txt"):
                continue
            docs.extend(doc for doc in yaml.safe_load_all(text) if doc)
        result[name] = docs
    return result


def notes(chart: Any, values: dict[str, Any]) -> str:
    files = chart.render(copy.deepcopy(values), name=RELEASE, namespace=NAMESPACE, is_install=True)
    return files[f"{RELEASE}/templates/NOTES.txt"]


def of_kind(docs: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [doc for doc in docs if doc["kind"] == kind]


def named(docs: list[dict[str, Any]], kind: str, name: str) -> dict[str, Any]:
    matches = [doc for doc in of_kind(docs, kind) if doc["metadata"]["name"] == name]
    assert len(matches) == 1, f"expected one {kind} {name}, found {len(matches)}"
    return matches[0]


def pod_specs(docs: list[dict[str, Any]]) -> list[tuple[str, dict[str, Any]]]:
    return [
        (f"{doc['kind']}/{doc['metadata']['name']}", doc["spec"]["template"]["spec"])
        for doc in docs
        if doc["kind"] in {"Deployment", "Job"}
    ]


def container(docs: list[dict[str, Any]], deployment: str) -> dict[str, Any]:
    (only,) = named(docs, "Deployment", deployment)["spec"]["template"]["spec"]["containers"]
    return only


def configmap(docs: list[dict[str, Any]]) -> dict[str, str]:
    return named(docs, "ConfigMap", RELEASE)["data"]


def env_of(spec: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {entry["name"]: entry for entry in spec.get("env", [])}


def secret_ref(spec: dict[str, Any], name: str) -> tuple[str, str]:
    ref = env_of(spec)[name]["valueFrom"]["secretKeyRef"]
    return ref["name"], ref["key"]


@pytest.mark.parametrize("set_name", SET_NAMES)
def test_chart_lints_strictly(set_name: str) -> None:
    report = helm.lint(CHART, copy.deepcopy(VALUE_SETS[set_name]), strict=True, namespace=NAMESPACE,
                       kube_version=f"v{KUBE_VERSIONS[-1]}")
    problems = [m for m in report["messages"] if m["severity"] >= 2]
    assert not report["errors"] and not problems, report


@pytest.mark.parametrize("set_name", SET_NAMES)
def test_values_match_schema(chart: Any, set_name: str) -> None:
    chart.validate_schema(copy.deepcopy(VALUE_SETS[set_name]))


@pytest.mark.parametrize(
    "bad",
    [
        {"config": {"LOG_LEVEL": "DEBUG"}},
        {"temporal": {"mtls": {"enabled": True}}},
        {"temporal": {"address": "https://temporal.example.com"}},
        {"database": {"url": "mysql://nope"}},
        {"gateway": {"replicas": 3}},
    ],
    ids=["config-without-prefix", "mtls-without-secret", "address-not-host-port", "not-postgres", "typo"],
)
def test_schema_rejects_bad_values(chart: Any, bad: dict[str, Any]) -> None:
    with pytest.raises(helm.HelmValuesError):
        chart.validate_schema(bad)


@pytest.mark.parametrize("set_name", SET_NAMES)
def test_every_manifest_is_valid_kubernetes(rendered: dict[str, list[dict[str, Any]]], set_name: str) -> None:
    for doc in rendered[set_name]:
        if doc["apiVersion"].startswith("monitoring.coreos.com/"):
            continue  # a CRD kubernetes-validate has no schema for; test_service_monitor checks it
        for version in KUBE_VERSIONS:
            try:
                kubernetes_validate.validate(doc, version, strict=True)
            except kubernetes_validate.ValidationError as exc:
                pytest.fail(f"{doc['kind']}/{doc['metadata']['name']} on {version}: {exc.message} "
                            f"at {list(exc.path)}")


@pytest.mark.parametrize("set_name", SET_NAMES)
def test_pods_run_non_root_on_a_read_only_filesystem(
    rendered: dict[str, list[dict[str, Any]]], set_name: str
) -> None:
    for where, spec in pod_specs(rendered[set_name]):
        assert spec["securityContext"]["runAsNonRoot"] is True, where
        assert spec["securityContext"]["runAsUser"] != 0, where
        assert spec["automountServiceAccountToken"] is False, where
        volumes = {volume["name"]: volume for volume in spec["volumes"]}
        for box in spec["containers"]:
            security = box["securityContext"]
            assert security["readOnlyRootFilesystem"] is True, where
            assert security["allowPrivilegeEscalation"] is False, where
            assert security["capabilities"]["drop"] == ["ALL"], where
            mounts = {mount["mountPath"]: mount["name"] for mount in box["volumeMounts"]}
            for path in ("/tmp", "/var/lib/lethe"):
                assert "emptyDir" in volumes[mounts[path]], f"{where}: {path} is not a writable emptyDir"
            assert box["resources"]["requests"] and box["resources"]["limits"]["memory"], where


@pytest.mark.parametrize("set_name", SET_NAMES)
def test_probes_hit_healthz_and_readyz_on_the_served_port(
    rendered: dict[str, list[dict[str, Any]]], set_name: str
) -> None:
    docs = rendered[set_name]
    settings = configmap(docs)
    for deployment, port_setting in (("gateway", "LETHE_PORT"), ("worker", "LETHE_WORKER_HEALTH_PORT")):
        box = container(docs, f"{RELEASE}-{deployment}")
        ports = {port["name"]: port["containerPort"] for port in box["ports"]}
        for probe, path in (("startupProbe", "/healthz"), ("livenessProbe", "/healthz"),
                            ("readinessProbe", "/readyz")):
            get = box[probe]["httpGet"]
            assert get["path"] == path, (deployment, probe)
            assert ports[get["port"]] == int(settings[port_setting]), (deployment, probe)


@pytest.mark.parametrize("set_name", SET_NAMES)
def test_settings_are_lethe_settings(rendered: dict[str, list[dict[str, Any]]], set_name: str) -> None:
    known = set(Settings.variables())
    docs = rendered[set_name]
    settings = configmap(docs)
    assert set(settings) <= known, f"unknown settings: {set(settings) - known}"
    assert settings["LETHE_HOST"] == "0.0.0.0"
    for _, spec in pod_specs(docs):
        for box in spec["containers"]:
            names = set(env_of(box)) | set(settings)
            assert {name for name in names if name.startswith("LETHE_")} <= known
            assert {"LETHE_DATABASE_URL", "LETHE_TEMPORAL_ADDRESS", "LETHE_TEMPORAL_NAMESPACE",
                    "LETHE_TEMPORAL_TASK_QUEUE"} <= names
            assert box["envFrom"] == [{"configMapRef": {"name": RELEASE}}]
            # Secrets never sit in the ConfigMap.
            assert not {"LETHE_DATABASE_URL", "LETHE_TEMPORAL_API_KEY", "LETHE_ADMIN_TOKEN",
                        "LETHE_OPENAI_API_KEY", "LETHE_SECRET_KEY"} & set(settings)


@pytest.mark.parametrize("set_name", SET_NAMES)
def test_hooks_prepare_database_and_temporal_before_pods(
    rendered: dict[str, list[dict[str, Any]]], set_name: str
) -> None:
    docs = rendered[set_name]
    jobs = {doc["metadata"]["name"]: doc for doc in of_kind(docs, "Job")}
    expected = {f"{RELEASE}-migrate": ["migrate"]}
    if VALUE_SETS[set_name].get("temporal", {}).get("searchAttributes", {}).get("register", True):
        expected[f"{RELEASE}-search-attributes"] = ["register-search-attributes"]
    assert {name: job["spec"]["template"]["spec"]["containers"][0]["args"] for name, job in jobs.items()} \
        == expected

    def weight(doc: dict[str, Any]) -> int:
        return int(doc["metadata"]["annotations"]["helm.sh/hook-weight"])

    # What the Jobs read exists before them: hooks run before ordinary resources are created.
    needed = [named(docs, "ConfigMap", RELEASE), named(docs, "Secret", RELEASE),
              named(docs, "ServiceAccount", RELEASE)]
    for job in jobs.values():
        assert job["metadata"]["annotations"]["helm.sh/hook"] == "pre-install,pre-upgrade"
        assert job["spec"]["template"]["spec"]["restartPolicy"] == "Never"
        for doc in needed:
            assert doc["metadata"]["annotations"]["helm.sh/hook"] == "pre-install,pre-upgrade"
            assert weight(doc) < weight(job), doc["kind"]


def test_default_release_warns_about_a_missing_database(chart: Any) -> None:
    assert "WARNING: no database is configured" in notes(chart, {})
    assert "WARNING" not in notes(chart, VALUE_SETS["ingress-autoscaling"])


def test_temporal_cloud_uses_the_api_key_over_tls(
    chart: Any, rendered: dict[str, list[dict[str, Any]]]
) -> None:
    docs = rendered["temporal-cloud-api-key"]
    assert configmap(docs)["LETHE_TEMPORAL_TLS"] == "true"
    assert "LETHE_TEMPORAL_TLS_CERT" not in configmap(docs)
    secret = named(docs, "Secret", RELEASE)["data"]
    box = container(docs, f"{RELEASE}-worker")
    for env, value in (("LETHE_TEMPORAL_API_KEY", "tc-api-key"), ("LETHE_OPENAI_API_KEY", "sk-test"),
                       ("LETHE_DATABASE_URL", VALUE_SETS["temporal-cloud-api-key"]["database"]["url"])):
        name, key = secret_ref(box, env)
        assert name == RELEASE and base64.b64decode(secret[key]).decode() == value
    text = notes(chart, VALUE_SETS["temporal-cloud-api-key"])
    assert "tcld namespace search-attributes add" in text and "LetheNoteAskPending=Bool" in text


def test_mtls_mounts_the_client_certificate_from_the_existing_secret(
    rendered: dict[str, list[dict[str, Any]]]
) -> None:
    docs = rendered["mtls-existing-secrets"]
    settings = configmap(docs)
    assert settings["LETHE_TEMPORAL_TLS"] == "true"
    assert settings["LETHE_TEMPORAL_TLS_CERT"] == f"{TLS_MOUNT}/tls.crt"
    assert settings["LETHE_TEMPORAL_TLS_KEY"] == f"{TLS_MOUNT}/tls.key"
    assert settings["LETHE_TEMPORAL_TLS_CA"] == f"{TLS_MOUNT}/ca.crt"
    assert named(docs, "Secret", RELEASE)["data"] == {}
    for where, spec in pod_specs(docs):
        volume = {v["name"]: v for v in spec["volumes"]}["temporal-tls"]
        assert volume["secret"]["secretName"] == "lethe-temporal-client", where
        for box in spec["containers"]:
            assert {"name": "temporal-tls", "mountPath": TLS_MOUNT, "readOnly": True} in box["volumeMounts"]
            assert secret_ref(box, "LETHE_DATABASE_URL") == ("lethe-db", "url")
            assert secret_ref(box, "LETHE_ADMIN_TOKEN") == ("lethe-admin", "token")
            assert secret_ref(box, "LETHE_SECRET_KEY") == ("lethe-secret-key", "secret-key")
            assert secret_ref(box, "LETHE_OPENAI_API_KEY") == ("lethe-openai", "openai-api-key")
            assert "LETHE_TEMPORAL_API_KEY" not in env_of(box)


def test_ingress_and_autoscalers_point_at_the_gateway_and_worker(
    rendered: dict[str, list[dict[str, Any]]]
) -> None:
    docs = rendered["ingress-autoscaling"]
    service = named(docs, "Service", f"{RELEASE}-gateway")
    (ingress,) = of_kind(docs, "Ingress")
    backend = ingress["spec"]["rules"][0]["http"]["paths"][0]["backend"]["service"]
    assert backend == {"name": service["metadata"]["name"], "port": {"name": "http"}}
    assert ingress["spec"]["ingressClassName"] == "nginx"
    assert ingress["spec"]["tls"] == [{"secretName": "lethe-tls", "hosts": ["lethe.example.com"]}]
    hpas = {hpa["spec"]["scaleTargetRef"]["name"]: hpa for hpa in of_kind(docs, "HorizontalPodAutoscaler")}
    assert set(hpas) == {f"{RELEASE}-gateway", f"{RELEASE}-worker"}
    for target in hpas:
        deployment = named(docs, "Deployment", target)
        assert "replicas" not in deployment["spec"], "the HPA owns the replica count"
    assert len(hpas[f"{RELEASE}-gateway"]["spec"]["metrics"]) == 2


@pytest.mark.parametrize("set_name", SET_NAMES)
def test_shutdown_fits_in_the_pods_grace_period(rendered: dict[str, list[dict[str, Any]]], set_name: str) -> None:
    """A rolling update lets the worker's running jobs and the gateway's streamed replies finish: each process's
    own shutdown wait ends before Kubernetes' grace period does (then it would be killed mid-call)."""
    docs = rendered[set_name]
    worker_spec = named(docs, "Deployment", f"{RELEASE}-worker")["spec"]["template"]["spec"]
    worker_env = env_of(container(docs, f"{RELEASE}-worker"))
    worker_grace = float(worker_env["LETHE_WORKER_GRACEFUL_SHUTDOWN_SECONDS"]["value"])
    assert 0 < worker_grace < worker_spec["terminationGracePeriodSeconds"]
    gateway_spec = named(docs, "Deployment", f"{RELEASE}-gateway")["spec"]["template"]["spec"]
    box = container(docs, f"{RELEASE}-gateway")
    pre_stop = int(box["lifecycle"]["preStop"]["exec"]["command"][1])
    drain = float(env_of(box)["LETHE_GATEWAY_SHUTDOWN_SECONDS"]["value"])
    assert pre_stop > 0 and drain > 0
    assert pre_stop + drain < gateway_spec["terminationGracePeriodSeconds"]


@pytest.mark.parametrize("set_name", SET_NAMES)
def test_selectors_match_their_pods(rendered: dict[str, list[dict[str, Any]]], set_name: str) -> None:
    docs = rendered[set_name]
    deployments = of_kind(docs, "Deployment")
    assert {d["metadata"]["name"] for d in deployments} == {f"{RELEASE}-gateway", f"{RELEASE}-worker"}

    def selects(selector: dict[str, str]) -> list[str]:
        return [d["metadata"]["name"] for d in deployments
                if selector.items() <= d["spec"]["template"]["metadata"]["labels"].items()]

    for deployment in deployments:
        assert selects(deployment["spec"]["selector"]["matchLabels"]) == [deployment["metadata"]["name"]]
    for pdb in of_kind(docs, "PodDisruptionBudget"):
        assert len(selects(pdb["spec"]["selector"]["matchLabels"])) == 1
    assert {pdb["metadata"]["name"] for pdb in of_kind(docs, "PodDisruptionBudget")} == \
        {f"{RELEASE}-gateway", f"{RELEASE}-worker"}
    (service,) = of_kind(docs, "Service")
    assert selects(service["spec"]["selector"]) == [f"{RELEASE}-gateway"]
    gateway_ports = {p["name"] for p in container(docs, f"{RELEASE}-gateway")["ports"]}
    assert service["spec"]["ports"][0]["targetPort"] in gateway_ports


def test_service_monitor_scrapes_the_gateway_service(rendered: dict[str, list[dict[str, Any]]]) -> None:
    docs = rendered["ingress-autoscaling"]
    (monitor,) = of_kind(docs, "ServiceMonitor")
    assert monitor["apiVersion"] == "monitoring.coreos.com/v1"
    assert monitor["metadata"]["labels"]["release"] == "prometheus"
    service = named(docs, "Service", f"{RELEASE}-gateway")
    assert monitor["spec"]["selector"]["matchLabels"].items() <= service["metadata"]["labels"].items()
    assert monitor["spec"]["namespaceSelector"] == {"matchNames": [NAMESPACE]}
    (endpoint,) = monitor["spec"]["endpoints"]
    assert endpoint["path"] == "/metrics"
    assert endpoint["port"] in {port["name"] for port in service["spec"]["ports"]}
    assert not of_kind(rendered["defaults"], "ServiceMonitor")
