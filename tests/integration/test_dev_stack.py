"""`lethe dev` (what `make run` runs), as a user would drive it: start, curl, look in Temporal, Ctrl-C, again."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import psutil
import pytest

from tests.support import free_port

BIN = Path(sys.executable).parent


@pytest.fixture
def dev_env() -> Iterator[dict[str, str]]:
    data_dir = Path(tempfile.mkdtemp(prefix="lethe-test-dev-"))
    data_dir.chmod(0o755)  # Postgres runs as its own system user and must reach its data
    temporal_port = free_port()
    env = {
        **os.environ,
        "LETHE_DATA_DIR": str(data_dir / "state"),
        "LETHE_PORT": str(free_port()),
        "LETHE_TEMPORAL_ADDRESS": f"127.0.0.1:{temporal_port}",
        "LETHE_TEMPORAL_UI_PORT": str(free_port()),
        "LETHE_ADMIN_TOKEN": "",
    }
    yield env
    shutil.rmtree(data_dir, ignore_errors=True)


class DevStack:
    """One `lethe dev` process, read line by line until its banner is complete."""

    def __init__(self, env: dict[str, str], cwd: Path | None = None) -> None:
        self.proc = subprocess.Popen(
            [str(BIN / "lethe"), "dev"], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
            cwd=cwd,
        )
        self.output = ""
        deadline = time.monotonic() + 90
        while "Ctrl-C stops everything." not in self.output:
            line = self.proc.stdout.readline() if self.proc.stdout else ""
            if not line and self.proc.poll() is not None:
                raise AssertionError(f"lethe dev exited early:\n{self.output}")
            self.output += line
            if time.monotonic() > deadline:
                raise AssertionError(f"lethe dev did not finish starting:\n{self.output}")
        # What it prints after the banner (crash reports, stopping) is kept too.
        self._reader = threading.Thread(target=self._read_rest, daemon=True)
        self._reader.start()

    def _read_rest(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.output += line

    def wait_for_output(self, text: str, timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        while text not in self.output:
            assert time.monotonic() < deadline, f"lethe dev never printed {text!r}:\n{self.output}"
            time.sleep(0.2)

    def field(self, name: str) -> str:
        match = re.search(rf"^\s+{name}\s+(\S+)", self.output, re.M)
        assert match, f"{name} missing from banner:\n{self.output}"
        return match.group(1)

    def curl(self) -> str:
        start = self.output.index("curl -s")
        command = self.output[start:self.output.index("\n\n", start)]
        return subprocess.run(["bash", "-c", command + " -w '\\n%{http_code}'"], capture_output=True, text=True,
                              check=True, timeout=30).stdout

    def descendants(self) -> list[psutil.Process]:
        return psutil.Process(self.proc.pid).children(recursive=True)

    def interrupt(self) -> int:
        self.proc.send_signal(signal.SIGINT)
        code = self.proc.wait(timeout=60)
        self._reader.join(timeout=10)
        return code


def _postmaster_pid(env: dict[str, str]) -> int:
    return int((Path(env["LETHE_DATA_DIR"]) / "postgres" / "postmaster.pid").read_text().split()[0])


def _completed_activities(env: dict[str, str], workflow_id: str) -> int:
    out = subprocess.run(
        [str(BIN / "temporal"), "workflow", "show", "--address", env["LETHE_TEMPORAL_ADDRESS"], "--workflow-id",
         workflow_id, "-o", "json"], capture_output=True, text=True, check=True, timeout=30).stdout
    return out.count("EVENT_TYPE_ACTIVITY_TASK_COMPLETED") + out.count('"ActivityTaskCompleted"')


def _workflows(env: dict[str, str], query: str) -> list[dict[str, object]]:
    out = subprocess.run(
        [str(BIN / "temporal"), "workflow", "list", "--address", env["LETHE_TEMPORAL_ADDRESS"], "--query", query,
         "-o", "json"], capture_output=True, text=True, check=True, timeout=30).stdout
    return json.loads(out) if out.strip() else []


def _workers(stack: DevStack) -> list[psutil.Process]:
    return [p for p in stack.descendants() if p.cmdline()[-2:] == ["cli.main", "worker"]]


def _one_turn(env: dict[str, str], api_key: str, memory_id: str) -> None:
    """A decorate and its report, both answered 200."""
    url = f"http://127.0.0.1:{env['LETHE_PORT']}/v1/memories/{memory_id}"
    auth = {"Authorization": f"Bearer {api_key}"}
    chat = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "Still there?"}]}
    decorated = httpx.post(f"{url}/decorate", json=chat, headers=auth, timeout=30)
    assert decorated.status_code == 200, decorated.text
    reply = {"choices": [{"message": {"role": "assistant", "content": "Yes."}}]}
    reported = httpx.post(f"{url}/report", json={"decorate_id": decorated.json()["decorate_id"], "response": reply},
                          headers=auth, timeout=30)
    assert reported.status_code == 200, reported.text


def _memory_workflows(env: dict[str, str], timeout: float = 30) -> list[dict[str, object]]:
    """The memories' workflows, once Temporal lists one."""
    deadline = time.monotonic() + timeout
    while not (found := _workflows(env, 'LetheTenant != "" AND WorkflowId STARTS_WITH "memory/"')):
        assert time.monotonic() < deadline, "no memory's workflow appeared in Temporal"
        time.sleep(0.5)
    return found


def _worker_restarts_while_the_gateway_answers(stack: DevStack, env: dict[str, str], api_key: str) -> None:
    """Kill -9 the worker: decorate and report keep answering, a new worker starts, the lane catches up."""
    [worker] = _workers(stack)
    worker.kill()
    worker.wait(timeout=10)
    _one_turn(env, api_key, "after-kill")
    deadline = time.monotonic() + 30
    while not [p for p in _workers(stack) if p.pid != worker.pid]:
        assert time.monotonic() < deadline, "the worker was not started again"
        time.sleep(0.3)
    workflow_id = f"memory/{_tenant_of(env, api_key)}/after-kill"
    while _completed_activities(env, workflow_id) < 2:
        assert time.monotonic() < deadline + 60, "the restarted worker never ran the lane"
        time.sleep(0.5)


def _stopped_cleanly(stack: DevStack, code: int, started: set[int]) -> None:
    """Ctrl-C ended lethe dev with status 0 and left none of the processes it started running."""
    assert code == 0, stack.output
    time.sleep(1)
    alive = [pid for pid in started if psutil.pid_exists(pid) and psutil.Process(pid).status() != "zombie"]
    assert alive == [], f"processes left running after Ctrl-C: {alive}"


def _tenant_of(env: dict[str, str], api_key: str) -> str:
    return str(_memory_workflows(env)[0]["execution"]["workflowId"]).split("/")[1]


def test_dev_stack_serves_curl_shows_workflow_stops_cleanly_and_keeps_data(dev_env: dict[str, str]) -> None:
    stack = DevStack(dev_env)
    try:
        api_key = stack.field("API key")
        body, status = stack.curl().rsplit("\n", 1)
        assert status == "200", body
        decorate_id = json.loads(body)["decorate_id"]
        assert decorate_id.startswith("dec_")

        second = subprocess.run([str(BIN / "lethe"), "dev"], env=dev_env, capture_output=True, text=True, timeout=60)
        assert second.returncode == 1 and "already running" in second.stdout

        deadline = time.monotonic() + 30
        workflow_id = _memory_workflows(dev_env)[0]["execution"]["workflowId"]
        assert workflow_id.endswith("/demo")
        # The worker (a process of its own) ran the lane's jobs for that decorate.
        while _completed_activities(dev_env, workflow_id) == 0:
            assert time.monotonic() < deadline + 60, "the worker never completed an activity"
            time.sleep(0.5)
        _worker_restarts_while_the_gateway_answers(stack, dev_env, api_key)
        started = {p.pid for p in stack.descendants()} | {_postmaster_pid(dev_env)}
    finally:
        code = stack.interrupt()
    _stopped_cleanly(stack, code, started)

    again = DevStack(dev_env)
    try:
        assert again.field("API key") == api_key  # same tenant, same data
        body, status = again.curl().rsplit("\n", 1)
        assert status == "200"
        assert json.loads(body)["decorate_id"] == decorate_id  # the same body again is a retry: same answer
        memory = subprocess.run(
            ["curl", "-s", f"http://127.0.0.1:{dev_env['LETHE_PORT']}/v1/memories/demo",
             "-H", f"Authorization: Bearer {api_key}"], capture_output=True, text=True, check=True).stdout
        assert json.loads(memory)["messages"] == 1  # nothing stored twice
        assert json.loads(memory)["events"] == 1
        # The banner's inspector URL serves the page, and the memory's workflow links to the dev Temporal UI.
        page = subprocess.run(["curl", "-s", again.field("inspector")], capture_output=True, text=True, check=True)
        assert "memory inspector" in page.stdout
        link = json.loads(subprocess.run(
            ["curl", "-s", f"http://127.0.0.1:{dev_env['LETHE_PORT']}/v1/memories/demo/workflow",
             "-H", f"Authorization: Bearer {api_key}"], capture_output=True, text=True, check=True).stdout)
        assert link["temporal_ui_url"].startswith(again.field("Temporal UI") + "/namespaces/default/workflows/")
    finally:
        assert again.interrupt() == 0


def _client_backends(env: dict[str, str]) -> list[psutil.Process]:
    postmaster = psutil.Process(_postmaster_pid(env))
    backends = []
    for child in postmaster.children():
        try:  # a backend may end between the listing and its reading (a pooled connection closed)
            if "[local]" in " ".join(child.cmdline()):
                backends.append(child)
        except psutil.NoSuchProcess:
            continue
    return backends


def _decorate_until(url: str, api_key: str, stop: threading.Event, answers: list[httpx.Response]) -> None:
    auth = {"Authorization": f"Bearer {api_key}"}
    with httpx.Client(timeout=30) as client:
        turn = 0
        while not stop.is_set():
            turn += 1
            chat = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": f"Turn {turn}: still there?"}]}
            answers.append(client.post(url, json=chat, headers=auth))


def test_dev_stack_reports_a_postgres_crash_answers_503_and_starts_again(dev_env: dict[str, str]) -> None:
    """SIGKILL on one Postgres backend under load: lethe dev says why, the gateway answers 503 (never 500) until
    Postgres has recovered by itself, and after Ctrl-C the next start comes up with no manual step."""
    stack = DevStack(dev_env)
    try:
        api_key = stack.field("API key")
        body, status = stack.curl().rsplit("\n", 1)
        assert status == "200", body
        answers: list[httpx.Response] = []
        stop = threading.Event()
        url = f"http://127.0.0.1:{dev_env['LETHE_PORT']}/v1/memories/crash/decorate"
        callers = [threading.Thread(target=_decorate_until, args=(url, api_key, stop, answers)) for _ in range(4)]
        for caller in callers:
            caller.start()
        try:
            deadline = time.monotonic() + 30
            while not (backends := _client_backends(dev_env)) or len(answers) < 8:
                assert time.monotonic() < deadline, "no decorate reached Postgres"
                time.sleep(0.05)
            backends[0].kill()
            stack.wait_for_output("terminated by signal 9")
            stack.wait_for_output("Postgres recovered")
            time.sleep(1.0)
        finally:
            stop.set()
            for caller in callers:
                caller.join(timeout=60)
        statuses = [answer.status_code for answer in answers]
        assert set(statuses) <= {200, 503}, [a.text for a in answers if a.status_code not in (200, 503)]
        refused = [answer for answer in answers if answer.status_code == 503]
        assert refused, f"no call was refused while Postgres recovered: {statuses}"
        assert all(answer.headers.get("Retry-After") for answer in refused)
        assert all(answer.json()["error"]["type"] == "service_unavailable" for answer in refused)
        assert statuses[-1] == 200, statuses[-8:]
        assert "killed from outside" in stack.output
        started = {p.pid for p in stack.descendants()} | {_postmaster_pid(dev_env)}
    finally:
        code = stack.interrupt()
    _stopped_cleanly(stack, code, started)

    again = DevStack(dev_env)
    try:
        body, status = again.curl().rsplit("\n", 1)
        assert status == "200", body
    finally:
        assert again.interrupt() == 0


def _temporal_server(stack: DevStack) -> psutil.Process:
    [server] = [p for p in stack.descendants() if p.cmdline()[1:3] == ["server", "start-dev"]]
    return server


def test_dev_stack_starts_temporal_again_when_it_dies(dev_env: dict[str, str]) -> None:
    """SIGKILL on the Temporal dev server: lethe dev says so with its log, decorate and report keep answering,
    the server comes back on the same data, and the lane runs what was said while it was away."""
    stack = DevStack(dev_env)
    try:
        api_key = stack.field("API key")
        body, status = stack.curl().rsplit("\n", 1)
        assert status == "200", body
        tenant_id = _tenant_of(dev_env, api_key)
        killed = _temporal_server(stack)
        killed.kill()
        killed.wait(timeout=10)
        stack.wait_for_output("The Temporal dev server was killed by signal 9 (SIGKILL)")

        _one_turn(dev_env, api_key, "while-away")

        stack.wait_for_output("Temporal dev server started again", timeout=60)
        assert _temporal_server(stack).pid != killed.pid
        # The memory started before the kill is still there, and the one talked to meanwhile runs its lane.
        assert _workflows(dev_env, f'WorkflowId = "memory/{tenant_id}/demo"')
        deadline = time.monotonic() + 90
        while not _workflows(dev_env, f'WorkflowId = "memory/{tenant_id}/while-away"') \
                or _completed_activities(dev_env, f"memory/{tenant_id}/while-away") < 2:
            assert time.monotonic() < deadline, f"the lane never ran what was said while Temporal was away:\n" \
                                                f"{stack.output}"
            time.sleep(0.5)
        started = {p.pid for p in stack.descendants()} | {_postmaster_pid(dev_env)}
    finally:
        code = stack.interrupt()
    _stopped_cleanly(stack, code, started)


def test_dev_stack_starts_with_env_example_copied_to_env(dev_env: dict[str, str], tmp_path: Path) -> None:
    # `cp .env.example .env` then `make run`, as docs/deploy.md says: the stack starts and serves. Ports and
    # the data directory come from the environment, which wins over .env.
    shutil.copy(Path(__file__).resolve().parents[2] / ".env.example", tmp_path / ".env")
    stack = DevStack(dev_env, cwd=tmp_path)
    try:
        assert stack.curl().rstrip().endswith("200")
    finally:
        assert stack.interrupt() == 0


def test_ctrl_c_while_dev_is_starting_stops_what_it_started_without_a_traceback(dev_env: dict[str, str]) -> None:
    proc = subprocess.Popen([str(BIN / "lethe"), "dev"], env=dev_env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    pid_file = Path(dev_env["LETHE_DATA_DIR"]) / "postgres" / "postmaster.pid"
    deadline = time.monotonic() + 60
    while not pid_file.exists():  # Postgres is starting: the banner is seconds away
        assert proc.poll() is None and time.monotonic() < deadline, "lethe dev never started Postgres"
        time.sleep(0.05)
    started = {p.pid for p in psutil.Process(proc.pid).children(recursive=True)}
    proc.send_signal(signal.SIGINT)
    output, _ = proc.communicate(timeout=60)
    assert proc.returncode == 130, output
    assert "Traceback" not in output and output.rstrip().endswith("interrupted"), output
    time.sleep(1)
    alive = [pid for pid in started if psutil.pid_exists(pid) and psutil.Process(pid).status() != "zombie"]
    assert alive == [], f"processes left running after Ctrl-C: {alive}"
    assert not pid_file.exists()  # Postgres was stopped, not abandoned
