"""Streamed-render cost against reply length (SPEC §5: rendering a reply costs O(length), not O(length²)).

    python bench/render_cost.py

How: replies of 1k, 4k, 16k and 64k characters of realistic Markdown (paragraphs, lists, inline
code, fenced code blocks, tables, quotes) are streamed in 4-character deltas into the real ChatModel + ChatView
(shown, offscreen, 900×800), at the end of a conversation that already fills the view, as in the
app (so every size repaints a full viewport; an empty view would make the shortest reply look
cheaper per character only because less of the screen is painted). Every 16 deltas (64 characters,
about what a model streams between two of the view's 40 ms flushes) the view flushes and Qt processes
its events (layout and paint), as in the app. The total time per character must stay flat: the figure is the ratio of the largest to the
smallest per-character cost (about 1 for O(n); it would grow about 64× from 1k to 64k for O(n²)).
"""

from __future__ import annotations

import logging
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import BenchResult, bench_main, log, verdict
from qt_support import application, process_events_for

LENGTHS = (1_000, 4_000, 16_000, 64_000)
DELTA_CHARS = 4
DELTAS_PER_FLUSH = 16
TARGET_RATIO = 2.0

_SECTIONS = (
    "## Step {n}: reading the configuration\n\n"
    "The agent reads `config.json` first, then the **workspace** files. Each one is *small*, so the "
    "whole context fits well within the model's window.\n\n",
    "- `AGENTS.md` holds the instructions\n- `SOUL.md` holds the personality\n"
    "- `USER.md` holds what it knows about you\n\n",
    "```python\ndef load(path: str) -> dict:\n    with open(path, encoding=\"utf-8\") as handle:\n"
    "        return json.load(handle)  # step {n}\n```\n\n",
    "1. Open the file.\n2. Parse it.\n3. Validate every key against the schema, and report the first "
    "error with its line number.\n\n",
    "> Note: nothing is written until the whole file is valid, so a typo never costs you data.\n\n",
    "| File | Read at | Size |\n|---|---|---:|\n| `AGENTS.md` | start | 1.2 kB |\n"
    "| `MEMORY.md` | every turn | 3.4 kB |\n| `HISTORY.md` | search only | 48 kB |\n\n",
)


def markdown_reply(length: int) -> str:
    parts: list[str] = []
    size = 0
    number = 0
    while size < length:
        part = _SECTIONS[number % len(_SECTIONS)].format(n=number)
        parts.append(part)
        size += len(part)
        number += 1
    return "".join(parts)[:length]


def stream_into_view(length: int) -> float:
    """Seconds to stream a reply of `length` characters into a fresh, visible chat view."""
    from nanobot_desktop.gui.chat.model import AssistantMessage, ChatModel, UserMessage
    from nanobot_desktop.gui.chat.view import ChatView

    model = ChatModel()
    view = ChatView(model)
    view.resize(900, 800)
    view.show()
    earlier = markdown_reply(1_500)
    for number in range(4):
        model.extend([UserMessage(f"Earlier question {number}: what does the agent read first?"),
                      AssistantMessage(text=earlier)])
    model.append(UserMessage("Explain how the configuration is loaded, step by step."))
    process_events_for(0.2)
    text = markdown_reply(length)
    deltas = [text[i:i + DELTA_CHARS] for i in range(0, len(text), DELTA_CHARS)]
    app = application()
    started = time.perf_counter()
    model.begin_assistant()
    for number, delta in enumerate(deltas, start=1):
        model.append_text_delta(delta)
        if number % DELTAS_PER_FLUSH == 0:
            view.flush_now()
            app.processEvents()
    model.finish_assistant()
    view.flush_now()
    app.processEvents()
    elapsed = time.perf_counter() - started
    shown = model.item(model.rowCount() - 1)
    if getattr(shown, "text", None) != text:
        raise RuntimeError("the streamed message does not hold the reply's text")
    view.close()
    view.deleteLater()
    model.deleteLater()
    process_events_for(0.05)
    return elapsed


def run() -> list[BenchResult]:
    logging.disable(logging.WARNING)
    application()
    stream_into_view(2_000)  # warm-up: imports, fonts, highlighter caches
    per_char_us: dict[int, float] = {}
    totals_ms: dict[int, float] = {}
    for length in LENGTHS:
        log(f"render cost: streaming {length:,} characters")
        seconds = stream_into_view(length)
        totals_ms[length] = seconds * 1000
        per_char_us[length] = seconds / length * 1e6
    ratio = max(per_char_us.values()) / min(per_char_us.values())
    figure = f"ratio {ratio:.2f} (" + ", ".join(
        f"{length // 1000}k: {totals_ms[length]:.0f} ms = {per_char_us[length]:.1f} µs/char" for length in LENGTHS) + ")"
    return [BenchResult("Streamed render cost vs length", figure, f"per-char ratio ≤ ~{TARGET_RATIO:g}",
                        verdict(ratio <= TARGET_RATIO),
                        note=f"{DELTA_CHARS}-char deltas, a flush + Qt events every {DELTAS_PER_FLUSH} deltas",
                        numbers={"total_ms": totals_ms, "per_char_us": per_char_us, "ratio": ratio})]


if __name__ == "__main__":
    sys.exit(bench_main(run))
