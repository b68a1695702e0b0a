"""Live updates: poll the refs cheaply and tell every open page when they move."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable

POLL_SECONDS = 0.25


class Watcher:
    """Polls ``probe`` (a state token) and hands each change to every subscriber."""

    def __init__(self, probe: Callable[[], str], interval: float = POLL_SECONDS) -> None:
        self.probe = probe
        self.interval = interval
        self.token = ""
        self._queues: set[asyncio.Queue[str | None]] = set()
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        self.token = await asyncio.to_thread(self.probe)
        self._task = asyncio.create_task(self._run())

    def end_streams(self) -> None:
        """Tell every open event stream to finish (the server is shutting down)."""
        for queue in list(self._queues):
            self._offer(queue, None)

    async def stop(self) -> None:
        self.end_streams()
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    def subscribe(self) -> asyncio.Queue[str | None]:
        queue: asyncio.Queue[str | None] = asyncio.Queue(maxsize=16)
        self._queues.add(queue)
        return queue

    def unsubscribe(self, queue: asyncio.Queue[str | None]) -> None:
        self._queues.discard(queue)

    async def poll_once(self) -> bool:
        """Probe now; True (and subscribers told) when the state changed."""
        try:
            token = await asyncio.to_thread(self.probe)
        except Exception:  # a ref caught mid-rename: try again next tick
            return False
        if token == self.token:
            return False
        self.token = token
        for queue in list(self._queues):
            self._offer(queue, token)
        return True

    @staticmethod
    def _offer(queue: asyncio.Queue[str | None], item: str | None) -> None:
        if queue.full():  # a slow client only needs the latest token
            with contextlib.suppress(asyncio.QueueEmpty):
                queue.get_nowait()
        queue.put_nowait(item)

    async def _run(self) -> None:
        while True:
            await asyncio.sleep(self.interval)
            await self.poll_once()
