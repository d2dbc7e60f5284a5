"""The loopback fake OpenAI endpoint as a process of its own (started by common.fake_server_process).

    python bench/fake_server.py '{"text": "...", "chunk_size": 4, "delay_ms": 5, "one_write": false}'

The tests' fake (tests/fake_openai.py), the one fake endpoint of the project. Prints its base URL on
one line, answers every chat request with `text` streamed in chunks of `chunk_size` characters (word
by word when null), `delay_ms` apart, and stops when stdin closes. `one_write` sends each answer
without delay in one write after its headers, for timing what happens around a zero-latency call.
Its own process, so that serving the stream does not compete for the GIL of the process measured.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.fake_openai import FakeOpenAIServer, text_reply  # noqa: E402


def main() -> int:
    spec = json.loads(sys.argv[1]) if len(sys.argv) > 1 else {}
    reply = text_reply(spec.get("text") or "Hello.", spec.get("chunk_size"),
                       delay_s=float(spec.get("delay_ms") or 0) / 1000)
    with FakeOpenAIServer(one_write=bool(spec.get("one_write"))) as server:
        server.add(reply, times=None)
        print(server.base_url, flush=True)
        sys.stdin.read()  # until the parent closes our stdin (or dies)
    return 0


if __name__ == "__main__":
    sys.exit(main())
