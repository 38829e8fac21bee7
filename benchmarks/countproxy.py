"""A loopback TCP proxy that counts the HTTP requests passing through it, by method and path.

Put between one client (the runtime worker) and the Prefect server, it tells
how many requests per second that client makes, which the server does not
log at our log level. Websocket upgrades pass through untouched (counted once).
"""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections import Counter

_REQUEST = re.compile(rb"(GET|POST|PUT|PATCH|DELETE) (/[^ \r\n]*) HTTP/1\.[01]\r\n")
_ID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


class CountingProxy:
    def __init__(self, upstream_port: int, host: str = "127.0.0.1") -> None:
        self.upstream_port = upstream_port
        self.host = host
        self.requests: Counter[str] = Counter()
        self._server: asyncio.AbstractServer | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self.port = 0

    async def start(self) -> CountingProxy:
        self._server = await asyncio.start_server(self._handle, self.host, 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    def total(self) -> int:
        return sum(self.requests.values())

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            up_reader, up_writer = await asyncio.open_connection(self.host, self.upstream_port)
        except OSError:
            writer.close()
            return
        upstream = asyncio.create_task(self._pipe(reader, up_writer, count=True))
        downstream = asyncio.create_task(self._pipe(up_reader, writer, count=False))
        for task in (upstream, downstream):
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
        await asyncio.gather(upstream, downstream, return_exceptions=True)

    async def _pipe(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, *, count: bool) -> None:
        tail = b""
        try:
            while data := await reader.read(65536):
                if count:
                    buffer = tail + data
                    end = 0
                    for match in _REQUEST.finditer(buffer):
                        path = _ID.sub("{id}", match.group(2).decode("latin-1").split("?", 1)[0])
                        self.requests[f"{match.group(1).decode()} {path}"] += 1
                        end = match.end()
                    # Keep a little for a request line split across reads, never a counted one.
                    tail = buffer[max(end, len(buffer) - 512) :]
                writer.write(data)
                await writer.drain()
        except (ConnectionError, asyncio.CancelledError):
            pass
        finally:
            with contextlib.suppress(Exception):
                writer.close()
