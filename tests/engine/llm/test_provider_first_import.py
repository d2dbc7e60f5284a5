"""The SDK's first import (~0.7 s) must not run on the event loop's thread: in the app that loop is
the GUI's, and the window would freeze at the first message (found by the issue-17 memory work). Nor
must what making its client imports (its HTTP stack: anyio, h11, httpcore; ~66 ms)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]

SCRIPT = textwrap.dedent("""
    import asyncio, sys, threading
    assert "openai" not in sys.modules
    from tests.fake_openai import FakeOpenAIServer
    from nanobot_desktop.engine.llm.provider import OpenAICompatProvider

    importing_threads = []
    http_stack_on_loop = set()

    class Watch:
        def find_spec(self, name, path=None, target=None):
            on_loop = threading.current_thread() is threading.main_thread()
            if name == "openai":
                importing_threads.append(on_loop)
            if on_loop and name.split(".")[0] in ("anyio", "h11", "httpcore", "httpcore2", "truststore"):
                http_stack_on_loop.add(name.split(".")[0])
            return None

    sys.meta_path.insert(0, Watch())

    async def main():
        ticks = 0
        async def tick():
            nonlocal ticks
            while True:
                ticks += 1
                await asyncio.sleep(0)
        ticker = asyncio.ensure_future(tick())
        with FakeOpenAIServer() as server:
            server.add_text("Hello")
            provider = OpenAICompatProvider("sk-test", server.base_url, "fake-model", retry_base_delay_s=0)
            reply = await provider.chat([{"role": "user", "content": "Hi"}])
        ticker.cancel()
        print("REPLY", reply.content, "MAIN-THREAD-IMPORT", importing_threads, "TICKS", ticks > 1,
              "HTTP-STACK-ON-LOOP", sorted(http_stack_on_loop))

    asyncio.run(main())
""")


def test_the_sdk_is_first_imported_off_the_event_loop_thread() -> None:
    done = subprocess.run([sys.executable, "-c", SCRIPT], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    line = done.stdout.strip().splitlines()[-1]
    # Imported once, from a worker thread; the loop kept turning meanwhile.
    assert line == "REPLY Hello MAIN-THREAD-IMPORT [False] TICKS True HTTP-STACK-ON-LOOP []", line
