"""The loopback fake OpenAI endpoint as a process of its own (started by common.fake_server_process).

    python bench/fake_server.py '{"text": "...", "chunk_size": 4, "delay_ms": 5}'

Prints its base URL on one line, answers every chat request with `text` streamed in chunks of
`chunk_size` characters (word by word when null), `delay_ms` apart, and stops when stdin closes.
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
    with FakeOpenAIServer() as server:
        server.add(reply, times=None)
        print(server.base_url, flush=True)
        sys.stdin.read()  # until the parent closes our stdin (or dies)
    return 0


if __name__ == "__main__":
    sys.exit(main())
