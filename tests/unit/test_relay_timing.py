"""When the outbox relay goes: a decorate's events wait a moment for their report; a report's go at once.

Only the relay's timing is under test here (its delivery is the integration tests'): `deliver_once` records when
it was called instead of reading the outbox.
"""

from __future__ import annotations

import asyncio

from service.relay import OutboxRelay


class _Timed(OutboxRelay):
    def __init__(self, gather_seconds: float) -> None:
        super().__init__(db=None, client=None, task_queue="q", gather_seconds=gather_seconds)  # type: ignore[arg-type]
        self.deliveries: list[float] = []

    async def deliver_once(self) -> int:
        self.deliveries.append(asyncio.get_running_loop().time())
        return 0


async def _started(gather_seconds: float) -> _Timed:
    relay = _Timed(gather_seconds)
    relay.start()  # a start delivers what a previous process left
    await asyncio.sleep(gather_seconds + 0.2)
    assert len(relay.deliveries) == 1
    relay.deliveries.clear()
    return relay


async def test_a_decorates_events_wait_for_the_gather_and_a_report_ends_the_wait() -> None:
    relay = await _started(0.5)
    try:
        woken = asyncio.get_running_loop().time()
        relay.wake()  # a decorate committed: its report may follow
        await asyncio.sleep(0.2)
        assert relay.deliveries == []  # still gathering
        relay.wake(turn_over=True)  # the report committed: the turn is over
        await asyncio.sleep(0.05)
        assert len(relay.deliveries) == 1
        assert relay.deliveries[0] - woken < 0.4
    finally:
        await relay.stop()


async def test_a_wake_without_a_report_goes_out_once_the_gather_is_over() -> None:
    relay = await _started(0.3)
    try:
        woken = asyncio.get_running_loop().time()
        relay.wake()
        await asyncio.sleep(0.6)
        assert len(relay.deliveries) == 1
        assert relay.deliveries[0] - woken >= 0.3
    finally:
        await relay.stop()


async def test_a_report_alone_goes_out_at_once() -> None:
    relay = await _started(2.0)
    try:
        woken = asyncio.get_running_loop().time()
        relay.wake(turn_over=True)
        await asyncio.sleep(0.1)
        assert len(relay.deliveries) == 1 and relay.deliveries[0] - woken < 0.1
    finally:
        await relay.stop()
