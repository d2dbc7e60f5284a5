"""An MCP server written for the tests on the official SDK (FastMCP), run as its own process.

    python sdk_server.py stdio PIDDIR
    python sdk_server.py http PORT PIDDIR     (streamable HTTP on 127.0.0.1:PORT/mcp)
    python sdk_server.py sse PORT PIDDIR      (SSE on 127.0.0.1:PORT/sse)

Every process writes its pid into PIDDIR, so a test can check that none is left after shutdown.
Tools: `echo`, `slow` (sleeps past any short timeout), `crash` (the process exits mid-call),
`image` (a real 2x2 PNG), `fail` (a tool error), `count` (calls served by this process), `grow` (adds
a tool at run time and says so with `notifications/tools/list_changed`).
"""

from __future__ import annotations

import asyncio
import os
import struct
import sys
import zlib
from pathlib import Path

from mcp.server.fastmcp import Context, FastMCP
from mcp.server.fastmcp.utilities.types import Image


def tiny_png() -> bytes:
    """A valid 2x2 red PNG, built by hand so no image library is needed."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    raw = b"".join(b"\x00" + b"\xff\x00\x00" * 2 for _ in range(2))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 2, 2, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


def build(port: int = 0) -> FastMCP:
    server = FastMCP("test-server", host="127.0.0.1", port=port, log_level="WARNING")
    served = {"count": 0}

    @server.tool()
    def echo(text: str) -> str:
        """Return the text unchanged."""
        served["count"] += 1
        return f"echo: {text}"

    @server.tool()
    async def slow(seconds: float = 30.0, marker: str = "") -> str:
        """Sleep, then answer (longer than a short toolTimeout). Cancelled by the client: writes `marker`."""
        try:
            await asyncio.sleep(seconds)
        except asyncio.CancelledError:
            if marker:
                Path(marker).write_text("cancelled")
            raise
        return "slept"

    @server.tool()
    def crash() -> str:
        """End this server process in the middle of the call."""
        print("about to crash on purpose", file=sys.stderr, flush=True)
        os._exit(7)

    @server.tool()
    def image() -> Image:
        """A 2x2 red PNG."""
        return Image(data=tiny_png(), format="png")

    @server.tool()
    def fail(reason: str = "broken on purpose") -> str:
        """Always fails with a tool error."""
        raise ValueError(reason)

    @server.tool()
    async def grow(ctx: Context) -> str:
        """Add a tool named `extra`, tell the client the list changed, and log a line over MCP."""
        def extra() -> str:
            """A tool that did not exist at start."""
            return "extra works"
        server.add_tool(extra)
        await ctx.info("grew a tool")
        await ctx.session.send_tool_list_changed()
        return "grown"

    @server.tool()
    def count() -> str:
        """How many echo calls this process has served."""
        return str(served["count"])

    return server


def main() -> None:
    mode = sys.argv[1]
    pid_dir = Path(sys.argv[-1])
    pid_dir.mkdir(parents=True, exist_ok=True)
    (pid_dir / str(os.getpid())).write_text(mode)
    print(f"test server {os.getpid()} starting ({mode})", file=sys.stderr, flush=True)
    if mode == "stdio":
        build().run("stdio")
    elif mode == "sse":
        build(int(sys.argv[2])).run("sse")
    else:
        build(int(sys.argv[2])).run("streamable-http")


if __name__ == "__main__":
    main()

