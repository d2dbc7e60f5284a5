"""How many tokens the model's context window holds, as the server says it, remembered per model.

Local servers cut or refuse a prompt longer than their window (Ollama silently drops the prompt's
start — the tools and the memory; llama.cpp answers a streamed request with an empty body), so the
loop fits every prompt to the window (engine/agent/prompt_fit.py) and needs the number. Each server says it
somewhere else, all asked at once with a short timeout, the first sane answer in this order winning:

- the OpenAI-style model list (`GET /v1/models`): vLLM's `max_model_len`, LM Studio's and
  OpenRouter's `context_length` / `loaded_context_length` / `max_context_length`;
- llama.cpp's server (`GET /props`): `default_generation_settings.n_ctx`;
- LM Studio's own API (`GET /api/v0/models/<id>`): `loaded_context_length`, else `max_context_length`;
- Ollama (`POST /api/show`): the model's `num_ctx` parameter, else Ollama's default (2,048), at most
  the model's trained `*.context_length`.

A failed call can teach it too: "This model's maximum context length is N tokens" (OpenAI, vLLM,
llama-cpp-python) is `learn`ed. A number below 256 or above 10,000,000 is nonsense (0, negative,
10^12) and is ignored with a log line. The asks go through the SDK's own HTTP library
(http_client.plain_client), already imported when a model call is made, so asking costs no import
(and, for a plain-http server, no CA bundle).

What an error taught is also kept in the app's cache folder (`context-windows.json`, keyed by a digest
of the address and the model, so no address or key is written), for a server that says its window
nowhere else (OpenAI's): without it, the first long prompt after every start failed once more. A
server that does say its window is asked again at each start and its answer wins, so a window made
larger on the server is seen.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Awaitable, Callable

log = logging.getLogger(__name__)

MIN_WINDOW = 256
MAX_WINDOW = 10_000_000
OLLAMA_DEFAULT_NUM_CTX = 2048  # what Ollama runs a model with when nobody set num_ctx (newer versions: 4096)
ASK_TIMEOUT_S = 3.0
_ERROR_WINDOW = re.compile(r"maximum context length is (\d[\d,]*) tokens", re.IGNORECASE)
_ERROR_REQUESTED = re.compile(r"you requested (\d[\d,]*) tokens", re.IGNORECASE)
_LLAMA_CPP_EXCEEDS = re.compile(r"exceed(?:s)? (?:the )?(?:available )?context (?:size|window)[^\d]*(\d+)", re.IGNORECASE)


@dataclass(frozen=True)
class ContextWindow:
    """A window size and where it was read ("llama.cpp /props", "error", "settings", …)."""

    tokens: int
    source: str


def sane_window(value: Any, source: str) -> int | None:
    """`value` as a window size, or None (with a log line) when it is no plausible size."""
    if value is None:
        return None
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        value = int(value.strip())
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if not isinstance(value, int) or isinstance(value, bool):
        log.warning("%s reported a context window that is not a number (%r); ignored", source, value)
        return None
    if not MIN_WINDOW <= value <= MAX_WINDOW:
        log.warning("%s reported a context window of %d tokens, which is not plausible; ignored", source, value)
        return None
    return value


def window_from_error(text: str) -> int | None:
    """The window an overflow error names ("maximum context length is 1024 tokens"), or None."""
    match = _ERROR_WINDOW.search(text) or _LLAMA_CPP_EXCEEDS.search(text)
    return sane_window(int(match.group(1).replace(",", "")), "an error message") if match else None


def requested_from_error(text: str) -> int | None:
    """The prompt size an overflow error names ("However, you requested 1545 tokens"), or None."""
    match = _ERROR_REQUESTED.search(text)
    return int(match.group(1).replace(",", "")) if match else None


def server_root(api_base: str) -> str:
    """The server's address without the OpenAI path (`http://host:8080/v1` → `http://host:8080`)."""
    base = api_base.rstrip("/")
    return base[:-3] if base.endswith("/v1") else base


def learned_windows_path() -> Path:
    """Where the windows learned from errors are kept between starts (only data that can be learned again)."""
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "nanobot-desktop" / "context-windows.json"


def _digest(key: tuple[str, str]) -> str:
    return hashlib.sha256("\0".join(key).encode("utf-8")).hexdigest()[:24]


class LearnedWindows:
    """The windows errors taught, in a small JSON file: {digest of (address, model): {tokens, source}}."""

    def __init__(self, path: Path | None = None) -> None:
        self._path = path
        self._entries: dict[str, dict[str, Any]] | None = None

    @property
    def path(self) -> Path:
        return self._path or learned_windows_path()

    def get(self, key: tuple[str, str]) -> ContextWindow | None:
        entry = self._load().get(_digest(key))
        tokens = sane_window(entry.get("tokens"), f"{self.path}") if isinstance(entry, dict) else None
        if not isinstance(entry, dict) or tokens is None:
            return None
        return ContextWindow(tokens, f"{entry.get('source') or 'an error'}, on an earlier run")

    def put(self, key: tuple[str, str], window: ContextWindow) -> None:
        entries = self._load()
        entries[_digest(key)] = {"tokens": window.tokens, "source": window.source}
        from nanobot_desktop.engine.workspace import atomic_write_text

        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write_text(self.path, json.dumps(entries, indent=1, sort_keys=True) + "\n")
        except OSError as error:  # a cache: the window is still known for this run
            log.warning("could not keep the learned context window in %s: %s", self.path, error)

    def _load(self) -> dict[str, dict[str, Any]]:
        if self._entries is None:
            self._entries = {}
            try:
                data = json.loads(self.path.read_text(encoding="utf-8"))
            except FileNotFoundError:
                data = {}
            except (OSError, ValueError) as error:
                log.warning("ignored %s (it is only a cache, rewritten when a window is learned): %s",
                            self.path, error)
                data = {}
            if isinstance(data, dict):
                self._entries = {key: value for key, value in data.items() if isinstance(value, dict)}
        return self._entries


class WindowBook:
    """The windows known so far, per (base URL, model): asked once, learned from errors (and kept)."""

    def __init__(self, learned: LearnedWindows | None = None) -> None:
        self._known: dict[tuple[str, str], ContextWindow] = {}
        self._asked: dict[tuple[str, str], asyncio.Future[ContextWindow | None]] = {}
        self._learned = learned if learned is not None else LearnedWindows()

    def known(self, api_base: str, model: str) -> ContextWindow | None:
        return self._known.get((api_base.rstrip("/"), model))

    async def cancel_pending(self) -> None:
        """Stop the asks still running on this loop and wait until they are gone (the engine shuts down):
        an ask outlives the turn that started it, but never the loop; the next turn asks again."""
        loop = asyncio.get_running_loop()
        pending = {key: task for key, task in self._asked.items() if not task.done() and task.get_loop() is loop}
        for task in pending.values():
            task.cancel()
        if pending:
            await asyncio.gather(*pending.values(), return_exceptions=True)
        for key in pending:
            self._asked.pop(key, None)

    def forget(self) -> None:
        """Forget every window known or being asked, as a new start does (tests, whose servers reuse
        ports); what errors taught is read again from its file."""
        self._known.clear()
        self._asked.clear()
        self._learned = LearnedWindows()

    def learn(self, api_base: str, model: str, tokens: int, source: str) -> None:
        """Remember a window found out from the server's own words (an error); replaces what was asked,
        and is kept for the next start."""
        key = (api_base.rstrip("/"), model)
        self._known[key] = ContextWindow(tokens, source)
        self._learned.put(key, self._known[key])

    async def window(self, api_base: str, api_key: str, model: str,
                     headers: dict[str, str] | None = None) -> ContextWindow | None:
        """The model's window: remembered, else asked of the server (once per model, even when asked
        by two turns at the same time); None when the server does not say."""
        key = (api_base.rstrip("/"), model)
        if key in self._known:
            return self._known[key]
        pending = self._asked.get(key)
        if pending is None:
            pending = self._asked[key] = asyncio.ensure_future(ask_window(api_base, api_key, model, headers))
        try:
            found = await asyncio.shield(pending)
        except Exception:  # asking is a courtesy: never the reason a turn fails
            log.info("could not ask %s for the context window of %s", api_base, model, exc_info=True)
            found = None
        if found is None and key not in self._known:
            found = self._learned.get(key)  # the server does not say: what an earlier error taught
        if found is not None and key not in self._known:
            self._known[key] = found
        return self._known.get(key)


BOOK = WindowBook()
"""The app's one book: providers are rebuilt when settings change, what a server said stays known."""


async def ask_window(api_base: str, api_key: str, model: str,
                     headers: dict[str, str] | None = None) -> ContextWindow | None:
    """Ask every place a server may say its window, at once; the first sane answer in the module's order."""
    from nanobot_desktop.engine.llm.http_client import plain_client

    root = server_root(api_base)
    sent = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    sent.update(headers or {})
    async with plain_client(api_base, timeout=ASK_TIMEOUT_S, headers=sent) as client:
        async def get(url: str) -> Any:
            return _json(await client.get(url))

        async def post(url: str, body: dict[str, Any]) -> Any:
            return _json(await client.post(url, json=body))

        # Each ask is (where, fetch, read): the request is made only when its task runs, so an ask
        # cancelled before it starts leaves no request coroutine behind un-awaited.
        asks: tuple[tuple[str, Callable[[], Awaitable[Any]], Callable[[Any], Any]], ...] = (
            ("model list", lambda: get(api_base.rstrip("/") + "/models"), lambda reply: _from_model_list(reply, model)),
            ("llama.cpp /props", lambda: get(root + "/props"), _from_props),
            ("LM Studio /api/v0/models", lambda: get(f"{root}/api/v0/models/{model}"), _from_lm_studio),
            ("Ollama /api/show", lambda: post(root + "/api/show", {"model": model}), _from_ollama),
        )
        answers = await asyncio.gather(*(_read(fetch, read) for _, fetch, read in asks), return_exceptions=True)
    for (source, _fetch, _reading), answer in zip(asks, answers, strict=True):
        if isinstance(answer, BaseException):
            continue
        tokens = sane_window(answer, f"{root} ({source})") if answer is not None else None
        if tokens is not None:
            log.info("%s: context window of %s is %d tokens (%s)", root, model, tokens, source)
            return ContextWindow(tokens, source)
    return None


async def _read(fetch: Callable[[], Awaitable[Any]], read: Callable[[Any], Any]) -> Any:
    return read(await fetch())


def _json(response: Any) -> Any:
    if response.status_code != 200:
        return None
    try:
        return response.json()
    except ValueError:
        return None


def _number_in(mapping: Any, *names: str) -> Any:
    if not isinstance(mapping, dict):
        return None
    for name in names:
        if mapping.get(name) is not None:
            return mapping[name]
    return None


def _from_model_list(payload: Any, model: str) -> Any:
    data = payload.get("data") if isinstance(payload, dict) else None
    for item in data if isinstance(data, list) else ():
        if isinstance(item, dict) and item.get("id") == model:
            return _number_in(item, "max_model_len", "loaded_context_length", "context_length",
                              "max_context_length", "context_window")
    return None


def _from_props(payload: Any) -> Any:
    settings = payload.get("default_generation_settings") if isinstance(payload, dict) else None
    found = _number_in(settings, "n_ctx")
    return found if found is not None else _number_in(payload, "n_ctx")


def _from_lm_studio(payload: Any) -> Any:
    return _number_in(payload, "loaded_context_length", "max_context_length")


def _from_ollama(payload: Any) -> Any:
    if not isinstance(payload, dict):
        return None
    parameters = payload.get("parameters")
    if isinstance(parameters, str):
        for line in parameters.splitlines():
            words = line.split()
            if len(words) == 2 and words[0] == "num_ctx":
                return words[1]
    info = payload.get("model_info")
    trained = [value for name, value in info.items() if name.endswith(".context_length")] \
        if isinstance(info, dict) else []
    if not trained and "details" not in payload:
        return None  # not Ollama's answer
    limit = trained[0] if trained and isinstance(trained[0], int) else OLLAMA_DEFAULT_NUM_CTX
    return min(OLLAMA_DEFAULT_NUM_CTX, limit) if limit > 0 else limit
