"""Step policies: the curve math on its own, then each curve, Retry-After, the timeout and the fail-fast path
observed on a real Prefect server (timestamps of every attempt, taken inside the step)."""

from __future__ import annotations

import asyncio
import importlib
import inspect
import itertools
import threading
import time
import uuid
from collections.abc import Callable
from types import ModuleType, SimpleNamespace
from typing import Any

import pytest
from prefect import Task, flow, task
from prefect.states import Failed
from prefect.utilities.math import clamped_poisson_interval

from control_plane.local import PrefectServerHandle
from flows.policies import PRESETS, RETRY_IO, RETRY_NEVER, WEBHOOK, RetryCondition, StepPolicy
from flows.steps import StepFailed, run_step
from tenant_runtime import webhooks
from tenant_runtime.actions.webhooks import register_webhook
from tenant_runtime.errors import NotFound, Permanent
from tenant_runtime.workspace import Workspace
from tests.tenant_runtime.content import OWNER, publish

# By module path: ``flows`` re-exports flows under their modules' names.
FLOW_MODULES: tuple[ModuleType, ...] = tuple(
    importlib.import_module(f"flows.{name}")
    for name in ("pipeline", "publish", "seed_example_site", "rebuild_search_index", "unpublish_document")
)

# --- the curve math, without Prefect --------------------------------------------------------------


def test_each_curve_gives_its_delays_capped() -> None:
    constant = StepPolicy("c", retries=3, delay_seconds=2.0)
    linear = StepPolicy("l", retries=4, delay_seconds=1.0, backoff="linear", cap_seconds=3.0)
    exponential = StepPolicy("e", retries=5, delay_seconds=0.5, backoff="exponential", cap_seconds=4.0)

    assert constant.delays() == [2.0, 2.0, 2.0]
    assert linear.delays() == [1.0, 2.0, 3.0, 3.0]
    assert exponential.delays() == [0.5, 1.0, 2.0, 4.0, 4.0]
    assert StepPolicy("none").delays() == []


def test_jitter_bounds_hold_every_delay_prefect_draws() -> None:
    policy = StepPolicy("j", retries=3, delay_seconds=1.0, backoff="linear", jitter=0.5)
    for retry in range(3):
        low, high = policy.bounds(retry)
        draws = [clamped_poisson_interval(policy.delay(retry), clamping_factor=0.5) for _ in range(2000)]
        assert low <= min(draws) and max(draws) <= high
        assert high == pytest.approx(policy.delay(retry) * 1.5)
        assert low < policy.delay(retry) < high
    assert StepPolicy("k", retries=1, delay_seconds=1.0).bounds(0) == (1.0, 1.0)


@pytest.mark.parametrize(
    "arguments",
    [
        {"retries": -1},
        {"retries": 51},
        {"delay_seconds": -1.0},
        {"jitter": -0.1},
        {"delay_seconds": 5.0, "cap_seconds": 1.0},
        {"backoff": "fibonacci"},
        {"timeout_seconds": 0},
    ],
)
def test_a_policy_that_makes_no_sense_is_refused(arguments: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        StepPolicy("bad", **arguments)


def test_permanent_errors_and_the_policys_codes_fail_at_once() -> None:
    policy = StepPolicy("p", retries=3, non_retryable=frozenset({"not_found"}))

    assert policy.fails_at_once(StepFailed("s", "bad_signature", "no", permanent=True))
    assert policy.fails_at_once(StepFailed("s", "not_found", "gone"))
    assert policy.fails_at_once(Permanent("no"))
    assert policy.fails_at_once(NotFound("gone"))
    assert not policy.fails_at_once(StepFailed("s", "ConnectionError", "reset"))
    assert not policy.fails_at_once(TimeoutError())


def test_retry_after_adds_what_the_curve_does_not_already_wait() -> None:
    policy = StepPolicy(
        "w", retries=2, delay_seconds=1.0, jitter=0.5, retry_after_from_error=True, max_retry_after_seconds=10
    )
    shortest = policy.bounds(0)[0]

    assert policy.extra_wait(StepFailed("s", "busy", "", retry_after=5.0), 0) == pytest.approx(5.0 - shortest)
    assert policy.extra_wait(StepFailed("s", "busy", "", retry_after=0.1), 0) == 0.0  # the curve waits longer
    assert policy.extra_wait(StepFailed("s", "busy", "", retry_after=11.0), 0) is None  # too long: do not retry
    assert policy.extra_wait(webhooks.WebhookDeliveryFailed("x", details={"retry_after": 3}), 0) == pytest.approx(
        3 - shortest
    )
    assert policy.extra_wait(StepFailed("s", "ConnectionError", ""), 0) == 0.0
    ignoring = StepPolicy("i", retries=2, delay_seconds=1.0)
    assert ignoring.extra_wait(StepFailed("s", "busy", "", retry_after=50.0), 0) == 0.0


def test_task_options_are_the_explicit_curve_and_the_policys_condition() -> None:
    options = WEBHOOK.task_options()

    assert options["retries"] == 3 and options["retry_delay_seconds"] == [0.5, 1.0, 2.0]
    assert options["retry_jitter_factor"] == 0.3 and options["timeout_seconds"] == 300.0
    assert options["retry_condition_fn"] == RetryCondition(WEBHOOK)
    assert RETRY_NEVER.task_options()["retries"] == 0
    assert RETRY_IO.delays() == [0.5, 1.0]  # what the old RETRY_IO preset did


def test_the_condition_reads_the_failed_state_prefect_hands_it() -> None:
    condition = RetryCondition(StepPolicy("c", retries=1, non_retryable=frozenset({"not_found"})))
    task_run = SimpleNamespace(run_count=1, name="step-0")

    def ask(error: BaseException) -> bool:
        return asyncio.run(condition(None, task_run, Failed(data=error)))  # type: ignore[arg-type]

    assert ask(StepFailed("s", "ConnectionError", "reset")) is True
    assert ask(StepFailed("s", "not_found", "gone")) is False
    assert ask(StepFailed("s", "bad", "no", permanent=True)) is False


def _tasks(module: ModuleType) -> list[Task[Any, Any]]:
    return [value for _, value in inspect.getmembers(module) if isinstance(value, Task)]


def test_every_task_in_flows_declares_exactly_one_preset() -> None:
    tasks = {t.name: t for module in FLOW_MODULES for t in _tasks(module)}
    assert len(tasks) >= 16

    for name, declared in tasks.items():
        condition = declared.retry_condition_fn
        assert isinstance(condition, RetryCondition), name
        policy = condition.policy
        assert PRESETS.get(policy.name) is policy, name
        assert declared.retries == policy.retries, name
        assert declared.retry_delay_seconds == policy.delays(), name
        assert declared.timeout_seconds == policy.timeout_seconds, name
    assert tasks["notify_plugins"].retry_condition_fn == RetryCondition(WEBHOOK)
    assert tasks["render_page"].retry_condition_fn == RetryCondition(RETRY_IO)


# --- on a real Prefect server ---------------------------------------------------------------------

SLACK = 0.6  # seconds an attempt may start late: two state changes through the API on a loaded machine
EARLY = 0.02  # clocks: the engine schedules from its own now, the probe reads time.monotonic()

PROBED = (
    StepPolicy("t_constant", retries=3, delay_seconds=0.5, jitter=0.2),
    StepPolicy("t_linear", retries=3, delay_seconds=0.3, backoff="linear", jitter=0.2),
    StepPolicy("t_exponential", retries=4, delay_seconds=0.2, backoff="exponential", cap_seconds=0.8, jitter=0.2),
    StepPolicy(
        "t_webhook",
        retries=2,
        delay_seconds=0.2,
        backoff="exponential",
        jitter=0.2,
        retry_after_from_error=True,
        max_retry_after_seconds=5.0,
    ),
    StepPolicy("t_deaf", retries=2, delay_seconds=0.2, backoff="exponential", jitter=0.2),
    StepPolicy("t_timeout", retries=1, timeout_seconds=0.5),
    StepPolicy("t_timeout_once", timeout_seconds=0.5),
    StepPolicy("t_fail_fast", retries=3, delay_seconds=0.1, non_retryable=frozenset({"not_found"})),
    RETRY_NEVER,
)
POLICY = {policy.name: policy for policy in PROBED}
ATTEMPTS: dict[str, list[float]] = {}
ENDED: dict[str, float] = {}  # when the step's final state came back to the flow
CALLS: dict[str, Callable[[int], object]] = {}  # key -> what attempt n does (raise, or return)


async def _probe(key: str) -> None:
    def call() -> None:
        stamps = ATTEMPTS.setdefault(key, [])
        stamps.append(time.monotonic())
        CALLS[key](len(stamps))

    await run_step("probe", "acme", call)


STEPS: dict[str, Task[Any, Any]] = {
    policy.name: task(name=f"probe_{policy.name}", persist_result=False, **policy.task_options())(_probe)
    for policy in PROBED
}


@flow(name="policy_probe", persist_result=False)
async def policy_probe(policy: str, key: str) -> str:
    """Run one probe step; the name of its final state (the flow itself completes)."""
    state = await STEPS[policy](key, return_state=True)
    ENDED[key] = time.monotonic()
    return str(state.name)


def _observe(policy: str, call: Callable[[int], object]) -> tuple[str, list[float]]:
    """Run ``policy``'s probe step; its final state's name and the gaps between its attempts."""
    outcome, gaps, _ = _observe_timed(policy, call)
    return outcome, gaps


def _observe_timed(policy: str, call: Callable[[int], object]) -> tuple[str, list[float], float]:
    """The same, and how long the step took from its first attempt to its final state."""
    key = uuid.uuid4().hex
    CALLS[key] = call
    try:
        outcome = asyncio.run(policy_probe(policy, key))
    finally:
        CALLS.pop(key)
    stamps = ATTEMPTS.pop(key, [])
    gaps = [later - earlier for earlier, later in itertools.pairwise(stamps)]
    return outcome, gaps, ENDED.pop(key) - stamps[0]


def _fail_until(succeeds_at: int, error: Callable[[], BaseException] = lambda: ConnectionError("reset")) -> Any:
    def call(attempt: int) -> None:
        if attempt < succeeds_at:
            raise error()

    return call


@pytest.mark.integration
@pytest.mark.parametrize("policy", ["t_constant", "t_linear", "t_exponential"])
def test_each_curve_is_the_delay_observed_between_attempts(prefect_server: PrefectServerHandle, policy: str) -> None:
    curve = POLICY[policy]

    outcome, gaps = _observe(policy, _fail_until(curve.retries + 1))

    assert outcome == "Completed" and len(gaps) == curve.retries
    for retry, gap in enumerate(gaps):
        low, high = curve.bounds(retry)
        assert low - EARLY <= gap <= high + SLACK, (policy, retry, gap, (low, high), gaps)
    print(f"{policy}: curve {curve.delays()} observed {[round(g, 3) for g in gaps]}")


@pytest.fixture
def deliveries(workspace: Workspace) -> Callable[[webhooks.WebhookSender], Callable[[int], object]]:
    """A tenant with one webhook endpoint; each call gives the delivery step of a new publish."""
    with workspace.transaction() as tx:
        register_webhook(tx, OWNER, url="https://hooks.example/busy", allow_private=False)
    published = iter(range(100))

    def delivery(sender: webhooks.WebhookSender) -> Callable[[int], object]:
        document, operation = publish(workspace, f"busy-{next(published)}")
        return lambda _: webhooks.deliver_after_publish(workspace, sender, operation.id, document.id, 1)

    return delivery


@pytest.mark.integration
def test_an_endpoints_retry_after_is_waited_out_before_the_retry(
    prefect_server: PrefectServerHandle, deliveries: Callable[[webhooks.WebhookSender], Callable[[int], object]]
) -> None:
    sender = webhooks.MemoryWebhookSender()

    sender.fail(1, status=429, retry_after=1.5)
    honoured, gaps = _observe("t_webhook", deliveries(sender))
    sender.fail(1, status=503, retry_after=1.5)
    deaf, deaf_gaps = _observe("t_deaf", deliveries(sender))  # the same curve, not reading Retry-After

    assert honoured == deaf == "Completed" and [c.status for c in sender.calls] == [429, 200, 503, 200]
    curve = POLICY["t_webhook"]
    low, high = curve.bounds(0)
    [gap] = gaps
    assert 1.5 - EARLY <= gap <= 1.5 + (high - low) + SLACK, gaps
    [deaf_gap] = deaf_gaps
    assert low - EARLY <= deaf_gap <= high + SLACK, deaf_gaps
    print(f"Retry-After 1.5 s: waited {gap:.3f} s (the curve alone: {deaf_gap:.3f} s)")


@pytest.mark.integration
def test_a_retry_after_beyond_the_policys_limit_fails_the_step_at_once(
    prefect_server: PrefectServerHandle, deliveries: Callable[[webhooks.WebhookSender], Callable[[int], object]]
) -> None:
    sender = webhooks.MemoryWebhookSender()
    sender.fail(1, status=503, retry_after=30)

    outcome, gaps, took = _observe_timed("t_webhook", deliveries(sender))

    # Not waited out inside the attempt: the operation layer retries later.
    assert outcome == "Failed" and gaps == [] and len(sender.calls) == 1 and took < 5, took


@pytest.mark.integration
def test_a_step_over_its_timeout_is_timed_out_and_retried(prefect_server: PrefectServerHandle) -> None:
    def hang_first(attempt: int) -> None:
        if attempt == 1:
            # A blocking tenant-runtime call: abandoned in its thread at the timeout, not killed
            # (asyncio.run then waits for the thread before it returns).
            threading.Event().wait(2)

    retried, gaps = _observe("t_timeout", hang_first)
    once, once_gaps, took = _observe_timed("t_timeout_once", hang_first)

    assert retried == "Completed" and len(gaps) == 1 and 0.5 - EARLY <= gaps[0] <= 0.5 + SLACK, gaps
    assert once == "TimedOut" and once_gaps == [] and 0.5 - EARLY <= took <= 0.5 + SLACK, took


@pytest.mark.integration
@pytest.mark.parametrize(
    ("policy", "error"),
    [
        ("t_fail_fast", lambda: Permanent("bad signature")),
        ("t_fail_fast", lambda: NotFound("no such archive")),  # a code the policy never retries
        ("retry_never", lambda: ConnectionError("reset")),  # transient, but this step never retries
    ],
    ids=["permanent", "non-retryable-code", "retry-never"],
)
def test_the_fail_fast_path_is_exactly_one_attempt(
    prefect_server: PrefectServerHandle, policy: str, error: Callable[[], BaseException]
) -> None:
    outcome, gaps = _observe(policy, _fail_until(99, error))

    assert outcome == "Failed" and gaps == []
    transient, transient_gaps = _observe("t_fail_fast", _fail_until(2))  # what would have been retried
    assert transient == "Completed" and len(transient_gaps) == 1
