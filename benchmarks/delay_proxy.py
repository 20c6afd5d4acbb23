"""A userspace TCP delay proxy on loopback: every byte is delivered `delay_ms` after it arrived,
in each direction, so a client and a server on one machine see a network distance between them.

    python benchmarks/delay_proxy.py --target 127.0.0.1:5432 --delay-ms 2

It prints `{"listening": "127.0.0.1:PORT"}` once ready. asyncio, one task per direction per
connection; a chunk waits in a queue stamped with its arrival time, so a burst is not delayed
more than one delay (the link has latency, not a narrow bandwidth). It listens on 127.0.0.1 and
forwards only to a loopback target. Run it as its own process: its CPU is then its own and the
measured clients and server keep their event loops to themselves. With `--stats FILE` it writes,
at SIGTERM, how many chunks it carried each way: a client's flights to the server, so a caller
can count round trips per operation whatever the machine's load.
"""

import argparse
import asyncio
import contextlib
import ipaddress
import json
import signal
import socket
import sys
import time

CHUNK = 65536
COUNTS = {"connections": 0, "up_chunks": 0, "down_chunks": 0}


async def _pipe(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, delay_s: float, counter: str
) -> None:
    """Copy reader to writer, each chunk `delay_s` after it was read, order kept."""
    queue: asyncio.Queue[tuple[float, bytes]] = asyncio.Queue()

    async def deliver() -> None:
        while True:
            due, data = await queue.get()
            if not data:
                break
            wait = due - time.monotonic()
            if wait > 0:
                await asyncio.sleep(wait)
            writer.write(data)
            await writer.drain()
        with contextlib.suppress(OSError):
            writer.write_eof()

    sender = asyncio.create_task(deliver())
    try:
        while True:
            data = await reader.read(CHUNK)
            COUNTS[counter] += bool(data)
            queue.put_nowait((time.monotonic() + delay_s, data))
            if not data:
                break
        await sender
    except (ConnectionError, OSError):
        sender.cancel()
    finally:
        with contextlib.suppress(Exception):
            writer.close()


async def serve(
    target_host: str, target_port: int, delay_s: float, port: int = 0, stats: str | None = None
) -> None:
    async def handle(client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter) -> None:
        try:
            server_r, server_w = await asyncio.open_connection(target_host, target_port)
        except OSError:
            client_w.close()
            return
        COUNTS["connections"] += 1
        for w in (client_w, server_w):
            sock = w.get_extra_info("socket")
            if sock is not None:
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        with contextlib.suppress(asyncio.CancelledError):  # the proxy is stopping
            await asyncio.gather(
                _pipe(client_r, server_w, delay_s, "up_chunks"),
                _pipe(server_r, client_w, delay_s, "down_chunks"),
                return_exceptions=True,
            )

    server = await asyncio.start_server(handle, "127.0.0.1", port)
    bound = server.sockets[0].getsockname()
    print(json.dumps({"listening": f"{bound[0]}:{bound[1]}"}), flush=True)
    stopping = asyncio.get_running_loop().create_future()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stopping.set_result, None)
    async with server:
        await stopping
    if stats:
        with open(stats, "w") as out:
            json.dump(COUNTS, out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--target", required=True, help="host:port, loopback only")
    parser.add_argument("--delay-ms", type=float, required=True, help="one-way delay")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--stats", help="write the chunk counts here at SIGTERM")
    args = parser.parse_args()
    host, _, port = args.target.rpartition(":")
    if not ipaddress.ip_address(socket.gethostbyname(host)).is_loopback:
        sys.exit("delay_proxy forwards to loopback only")
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(serve(host, int(port), args.delay_ms / 1000, args.port, args.stats))


if __name__ == "__main__":
    main()
