"""A round-robin HTTP/1.1 reverse proxy (asyncio, standard library only), for the stateless tests
of the toolgate gateway: every request goes to the next backend in turn, as a load balancer
without sticky sessions sends it, so consecutive requests of one client land on different
replicas.

    python round_robin.py [--log FILE] BACKEND [BACKEND ...]

    BACKEND   HOST:PORT (or http://HOST:PORT[/...]; only the address is used)
    --log     appends one line per request, `METHOD PATH -> BACKEND`, as it is forwarded

It listens on 127.0.0.1 on a free port and prints `listening on http://127.0.0.1:PORT` as the
first line of its standard output.

Each request of a client connection is handled on its own, in order (keep-alive and pipelined
requests included): its body is read whole (a chunked one is joined) and it is sent to the
backend on a new connection with `Connection: close` and a `Content-Length`. The response is
streamed back as it arrives (an SSE stream that stays open included): with the backend's
`Content-Length` when it gave one, else re-chunked, so the client connection can carry the next
request. A client that closes its connection ends the backend connection of its request.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import sys

# Headers that describe one connection, not the message: never forwarded either way.
HOP_BY_HOP = {
    "connection",
    "keep-alive",
    "proxy-connection",
    "proxy-authenticate",
    "proxy-authorization",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
    "expect",
}

CONNECT_TIMEOUT = 10  # seconds to open a backend connection
HEAD_TIMEOUT = 300  # seconds a backend may take to start its response (a slow tool call)
IDLE_TIMEOUT = 300  # seconds an idle client connection is kept
MAX_HEAD = 64 * 1024


class BadRequest(Exception):
    pass


class Proxy:
    def __init__(self, backends: list[tuple[str, str, int]], log: str | None) -> None:
        self.backends = backends
        self.turn = itertools.count()
        self.log = open(log, "a", encoding="utf-8", buffering=1) if log else None

    def next_backend(self) -> tuple[str, str, int]:
        return self.backends[next(self.turn) % len(self.backends)]

    async def client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                try:
                    head = await asyncio.wait_for(read_head(reader), IDLE_TIMEOUT)
                except (asyncio.TimeoutError, asyncio.IncompleteReadError, ConnectionError):
                    return
                if head is None:
                    return
                try:
                    keep = await self.one(head, reader, writer)
                except BadRequest as e:
                    await respond(writer, 400, f"round_robin: bad request: {e}\n")
                    return
                if not keep:
                    return
        except (ConnectionError, asyncio.IncompleteReadError):
            return
        finally:
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    async def one(self, head: bytes, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        """Forwards one request and streams its response; whether the connection goes on."""
        request_line, headers = parse_head(head)
        try:
            method, target, version = request_line.split(" ", 2)
        except ValueError:
            raise BadRequest(f"request line {request_line!r}") from None
        connection = header(headers, "connection").lower()
        keep = version == "HTTP/1.1" and "close" not in connection
        if "100-continue" in header(headers, "expect").lower():
            writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
            await writer.drain()
        body = await read_body(reader, headers)

        name, host, port = self.next_backend()
        if self.log:
            self.log.write(f"{method} {target} -> {name}\n")
        try:
            up_reader, up_writer = await asyncio.wait_for(asyncio.open_connection(host, port), CONNECT_TIMEOUT)
        except (OSError, asyncio.TimeoutError) as e:
            await respond(writer, 502, f"round_robin: backend {name} unreachable: {e}\n")
            return keep
        try:
            out = [f"{method} {target} HTTP/1.1"]
            out += [f"{k}: {v}" for k, v in headers if k.lower() not in HOP_BY_HOP and k.lower() != "content-length"]
            out += ["Connection: close", f"Content-Length: {len(body)}"]
            up_writer.write(("\r\n".join(out) + "\r\n\r\n").encode("latin-1") + body)
            await up_writer.drain()
            try:
                response_head = await asyncio.wait_for(read_head(up_reader), HEAD_TIMEOUT)
            except (asyncio.TimeoutError, asyncio.IncompleteReadError, ConnectionError) as e:
                response_head = None
                why = f"no response head ({type(e).__name__})"
            else:
                why = "closed before responding"
            if response_head is None:
                await respond(writer, 502, f"round_robin: backend {name}: {why}\n")
                return keep
            status_line, response_headers = parse_head(response_head)
            status = int(status_line.split(" ", 2)[1])
            return await self.stream(method, status, status_line, response_headers, up_reader, reader, writer, keep)
        finally:
            up_writer.close()
            with contextlib.suppress(Exception):
                await up_writer.wait_closed()

    async def stream(
        self,
        method: str,
        status: int,
        status_line: str,
        headers: list[tuple[str, str]],
        up: asyncio.StreamReader,
        client_reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        keep: bool,
    ) -> bool:
        bodyless = method == "HEAD" or status in (204, 304) or 100 <= status < 200
        chunked = "chunked" in header(headers, "transfer-encoding").lower()
        length = header(headers, "content-length")
        out = [status_line.replace("HTTP/1.0", "HTTP/1.1", 1)]
        out += [f"{k}: {v}" for k, v in headers if k.lower() not in HOP_BY_HOP]
        rechunk = not bodyless and (chunked or not length)
        if rechunk:
            out = [line for line in out if not line.lower().startswith("content-length:")]
            out.append("Transfer-Encoding: chunked")
        out.append("Connection: keep-alive" if keep else "Connection: close")
        writer.write(("\r\n".join(out) + "\r\n\r\n").encode("latin-1"))
        await writer.drain()
        if bodyless:
            return keep

        async def pump() -> None:
            if chunked:
                async for piece in dechunk(up):
                    await send_chunk(writer, piece)
                writer.write(b"0\r\n\r\n")
            elif length:
                remaining = int(length)
                while remaining > 0:
                    piece = await up.read(min(65536, remaining))
                    if not piece:
                        raise ConnectionError("the backend closed before the end of its body")
                    remaining -= len(piece)
                    writer.write(piece)
                    await writer.drain()
            else:
                while piece := await up.read(65536):
                    await send_chunk(writer, piece)
                writer.write(b"0\r\n\r\n")
            await writer.drain()

        # The client going away ends the backend connection (an SSE stream may never end).
        task = asyncio.ensure_future(pump())
        while not task.done():
            await asyncio.wait([task], timeout=0.25)
            if not task.done() and (client_reader.at_eof() or writer.is_closing()):
                task.cancel()
                with contextlib.suppress(BaseException):
                    await task
                return False
        try:
            task.result()
        except (ConnectionError, asyncio.IncompleteReadError, ValueError):
            return False  # the body was cut: the client sees the connection end
        return keep


async def send_chunk(writer: asyncio.StreamWriter, piece: bytes) -> None:
    if piece:
        writer.write(b"%x\r\n" % len(piece) + piece + b"\r\n")
        await writer.drain()


async def dechunk(reader: asyncio.StreamReader):
    """The pieces of a chunked body, as they arrive; the trailers are read and dropped."""
    while True:
        size_line = await reader.readuntil(b"\r\n")
        size = int(size_line.split(b";", 1)[0].strip() or b"0", 16)
        if size == 0:
            while (await reader.readuntil(b"\r\n")) != b"\r\n":
                pass
            return
        remaining = size
        while remaining > 0:
            piece = await reader.read(min(65536, remaining))
            if not piece:
                raise asyncio.IncompleteReadError(b"", remaining)
            remaining -= len(piece)
            yield piece
        await reader.readexactly(2)


async def read_head(reader: asyncio.StreamReader) -> bytes | None:
    """A message's head up to the blank line; None at a clean end of the connection."""
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError as e:
        if not e.partial.strip():
            return None
        raise
    except asyncio.LimitOverrunError:
        raise BadRequest("head too large") from None
    return head


def parse_head(head: bytes) -> tuple[str, list[tuple[str, str]]]:
    lines = head.decode("latin-1").split("\r\n")
    first = lines[0]
    headers = []
    for line in lines[1:]:
        if not line:
            continue
        if ":" not in line:
            raise BadRequest(f"header line {line!r}")
        k, v = line.split(":", 1)
        headers.append((k.strip(), v.strip()))
    return first, headers


def header(headers: list[tuple[str, str]], name: str) -> str:
    return ", ".join(v for k, v in headers if k.lower() == name)


async def read_body(reader: asyncio.StreamReader, headers: list[tuple[str, str]]) -> bytes:
    if "chunked" in header(headers, "transfer-encoding").lower():
        return b"".join([piece async for piece in dechunk(reader)])
    length = header(headers, "content-length")
    if not length:
        return b""
    try:
        n = int(length)
    except ValueError:
        raise BadRequest(f"Content-Length {length!r}") from None
    return await reader.readexactly(n)


async def respond(writer: asyncio.StreamWriter, status: int, text: str) -> None:
    reason = {400: "Bad Request", 502: "Bad Gateway"}.get(status, "Error")
    body = text.encode()
    writer.write(
        f"HTTP/1.1 {status} {reason}\r\nContent-Type: text/plain\r\nContent-Length: {len(body)}\r\n\r\n".encode() + body
    )
    with contextlib.suppress(ConnectionError):
        await writer.drain()


def backend(text: str) -> tuple[str, str, int]:
    address = text.split("://", 1)[-1].split("/", 1)[0]
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit():
        raise argparse.ArgumentTypeError(f"expected HOST:PORT, got {text!r}")
    return address, host.strip("[]"), int(port)


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--log", help="append `METHOD PATH -> BACKEND` per request to this file")
    ap.add_argument("backends", nargs="+", type=backend, help="HOST:PORT of each backend")
    args = ap.parse_args()
    proxy = Proxy(args.backends, args.log)
    server = await asyncio.start_server(proxy.client, "127.0.0.1", 0, limit=MAX_HEAD)
    port = server.sockets[0].getsockname()[1]
    print(f"listening on http://127.0.0.1:{port}", flush=True)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(main())
    sys.exit(0)
