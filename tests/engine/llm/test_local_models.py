"""Local model servers as people run them, against the scripted endpoint (tests/fake_openai.py): the
context window from each place a server says it, prompts fitted to it, the server's own diagnosis of
an empty or cut stream, waits without a fixed give-up, speed figures, servers without tool calling."""

from __future__ import annotations

import asyncio
import logging
import time
from pathlib import Path
from typing import Any

import pytest

from nanobot_desktop.engine.agent.context import PromptSection
from nanobot_desktop.engine.events import LLMCallFinished, LLMCallStarted, Progress, TurnFailed, WaitingForModel
from nanobot_desktop.engine.llm.context_window import (BOOK, ContextWindow, LearnedWindows, WindowBook, ask_window,
                                                       learned_windows_path, sane_window)
from nanobot_desktop.engine.llm.provider import OpenAICompatProvider, is_local_endpoint
from nanobot_desktop.engine.llm.types import ProviderError
from nanobot_desktop.engine.agent.prompt_fit import PromptTooLong, compact_skills, fit_prompt
from tests.fake_openai import FakeOpenAIServer, Reply, text_reply

USER = [{"role": "user", "content": "hi"}]
OVERFLOW = ("This model's maximum context length is 1024 tokens. However, you requested 1545 tokens "
            "(1545 in the messages, 0 in the completion). Please reduce the length of the messages or completion.")


@pytest.fixture
async def provider(fake_openai: FakeOpenAIServer):
    p = OpenAICompatProvider("sk-test", fake_openai.base_url, "fake-model", retry_base_delay_s=0, max_retries=0)
    yield p
    await p.close()


# ---- the window, from each place a server says it ----------------------------------------------


@pytest.mark.parametrize(("where", "answer", "source"), [
    ("vllm", None, "model list"),
    (("GET", "/props"), {"default_generation_settings": {"n_ctx": 8192}, "total_slots": 1}, "llama.cpp /props"),
    (("GET", "/api/v0/models/fake-model"), {"id": "fake-model", "loaded_context_length": 8192,
                                             "max_context_length": 32768}, "LM Studio /api/v0/models"),
    (("POST", "/api/show"), {"parameters": "temperature 0.7\nnum_ctx 8192", "details": {"family": "llama"},
                             "model_info": {"llama.context_length": 131072}}, "Ollama /api/show"),
])
async def test_each_server_says_its_window_where_it_says_it(fake_openai, where, answer, source) -> None:
    if where == "vllm":
        fake_openai.model_fields["fake-model"] = {"max_model_len": 8192}
    else:
        fake_openai.routes[where] = answer
    found = await ask_window(fake_openai.base_url, "k", "fake-model")
    assert found is not None and (found.tokens, found.source) == (8192, source)


async def test_ollama_without_num_ctx_runs_its_default_window(fake_openai) -> None:
    fake_openai.routes[("POST", "/api/show")] = {"parameters": "stop <|im_end|>", "details": {"family": "qwen2"},
                                                 "model_info": {"qwen2.context_length": 32768}}
    found = await ask_window(fake_openai.base_url, "k", "fake-model")
    assert found is not None and found.tokens == 2048  # what Ollama really runs it with, not the trained 32k


async def test_a_server_that_says_nothing_gives_no_window(fake_openai) -> None:
    assert await ask_window(fake_openai.base_url, "k", "fake-model") is None
    asked = sorted(fake_openai.route_requests)
    assert asked == [("GET", "/api/v0/models/fake-model"), ("GET", "/props"), ("POST", "/api/show")]


@pytest.mark.parametrize("nonsense", [0, -4096, 10**12, "lots", True])
async def test_a_nonsense_window_is_ignored_with_a_log_line(fake_openai, caplog, nonsense) -> None:
    fake_openai.routes[("GET", "/props")] = {"default_generation_settings": {"n_ctx": nonsense}}
    with caplog.at_level(logging.INFO, logger="nanobot_desktop.engine.llm.context_window"):
        assert await ask_window(fake_openai.base_url, "k", "fake-model") is None
    assert any("llama.cpp /props" in r.getMessage() and "ignored" in r.getMessage() for r in caplog.records)


async def test_an_ask_cancelled_before_its_requests_start_leaves_no_coroutine_unawaited(fake_openai) -> None:
    """Engine shutdown cancels an ask still out (WindowBook.cancel_pending), possibly before its four
    requests have started: none of them may be left as a coroutine never awaited (a RuntimeWarning)."""
    import gc
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        asking = asyncio.ensure_future(ask_window(fake_openai.base_url, "k", "fake-model"))
        await asyncio.sleep(0)  # it runs up to its gather: the four asks are tasks that have not started
        asking.cancel()
        with pytest.raises(asyncio.CancelledError):
            await asking
        gc.collect()
    assert [str(w.message) for w in caught if "never awaited" in str(w.message)] == []


def test_sane_window_bounds() -> None:
    assert sane_window(256, "x") == 256 and sane_window("4096", "x") == 4096 and sane_window(8192.0, "x") == 8192
    assert sane_window(255, "x") is None and sane_window(10_000_001, "x") is None


async def test_the_window_is_asked_once_per_model_and_remembered(fake_openai) -> None:
    fake_openai.routes[("GET", "/props")] = {"default_generation_settings": {"n_ctx": 4096}}
    book = WindowBook()
    first, second = await asyncio.gather(book.window(fake_openai.base_url, "k", "fake-model"),
                                         book.window(fake_openai.base_url, "k", "fake-model"))
    assert first == second and first is not None and first.tokens == 4096
    assert (await book.window(fake_openai.base_url, "k", "fake-model")) == first
    assert fake_openai.route_requests.count(("GET", "/props")) == 1


async def test_an_overflow_error_teaches_the_window(provider, fake_openai) -> None:
    fake_openai.add_error(400, OVERFLOW, code="context_length_exceeded")
    with pytest.raises(ProviderError) as caught:
        await provider.chat(USER)
    assert caught.value.kind == "context_overflow"
    assert "(1,545 tokens asked for, 1,024 fit)" in caught.value.message
    known = BOOK.known(fake_openai.base_url, "fake-model")
    assert known is not None and known.tokens == 1024


async def test_a_window_an_error_taught_is_known_after_a_new_start(provider, fake_openai) -> None:
    fake_openai.add_error(400, OVERFLOW, code="context_length_exceeded")
    with pytest.raises(ProviderError):
        await provider.chat(USER)
    kept = learned_windows_path()
    assert kept.is_relative_to(Path.home())  # the test's own home and cache folder (tests/conftest.py)
    text = kept.read_text(encoding="utf-8")
    assert "1024" in text and fake_openai.base_url not in text and "127.0.0.1" not in text  # keyed by a digest

    BOOK.forget()  # a new start: nothing in memory, the server still says its window nowhere
    assert BOOK.known(fake_openai.base_url, "fake-model") is None
    window = await provider.context_window()
    assert window is not None and window.tokens == 1024 and "earlier run" in window.source
    assert (await provider.context_window(model="another-model")) is None  # kept per model


async def test_a_window_the_server_says_wins_over_one_an_error_taught_before(fake_openai) -> None:
    learned = LearnedWindows(learned_windows_path())
    learned.put((fake_openai.base_url, "fake-model"), ContextWindow(1024, "the server's error"))
    fake_openai.routes[("GET", "/props")] = {"default_generation_settings": {"n_ctx": 8192}}  # made larger since
    window = await WindowBook(LearnedWindows()).window(fake_openai.base_url, "k", "fake-model")
    assert window is not None and window.tokens == 8192


async def test_a_damaged_file_of_learned_windows_is_ignored_and_replaced(fake_openai, caplog) -> None:
    kept = learned_windows_path()
    kept.parent.mkdir(parents=True, exist_ok=True)
    kept.write_text("{ not json", encoding="utf-8")
    book = WindowBook(LearnedWindows())
    with caplog.at_level(logging.WARNING):
        assert await book.window(fake_openai.base_url, "k", "fake-model") is None
    assert "only a cache" in caplog.text
    book.learn(fake_openai.base_url, "fake-model", 2048, "the server's error")
    assert LearnedWindows().get((fake_openai.base_url, "fake-model")) == ContextWindow(
        2048, "the server's error, on an earlier run")


# ---- prompts fitted to the window ---------------------------------------------------------------


def _history(turns: int, size: int = 400) -> list[dict[str, Any]]:
    history: list[dict[str, Any]] = []
    for number in range(turns):
        history += [{"role": "user", "content": f"question {number} " + "q" * size},
                    {"role": "assistant", "content": f"answer {number} " + "a" * size}]
    return history


SKILLS = PromptSection("skills", "# Skills\n\n<skills>\n" + "".join(
    f'  <skill available="true">\n    <name>s{n}</name>\n    <description>{"d" * 300}</description>\n'
    f"    <location>/w/skills/s{n}/SKILL.md</location>\n  </skill>\n" for n in range(10)) + "</skills>")


def test_the_oldest_history_goes_first_and_the_current_message_stays() -> None:
    history = _history(20)
    current = {"role": "user", "content": "the current question " + "c" * 2000}
    fit = fit_prompt([PromptSection("identity", "i" * 4000)], history, current, [], window=4096, max_tokens=8192)
    assert 0 < len(fit.history) < len(history) and fit.dropped == len(history) - len(fit.history)
    assert fit.history == history[-len(fit.history):] and fit.history[0]["role"] == "user"
    assert fit.tokens <= 4096 - 1024 and not fit.compacted  # a quarter kept for the reply


def test_the_skills_summary_is_compacted_only_when_the_history_is_gone() -> None:
    sections = [PromptSection("identity", "i" * 6000), SKILLS]
    current = {"role": "user", "content": "now"}
    roomy = fit_prompt(sections, _history(2, 100), current, [], window=8192, max_tokens=1000)
    assert roomy.sections == sections and not roomy.compacted and roomy.dropped == 0
    tight = fit_prompt(sections, _history(2, 100), current, [], window=2600, max_tokens=600)
    assert tight.compacted == ("skills",)
    skills = tight.sections[1].text
    assert "<description>" not in skills and skills.count("<location>") == 10 and skills.count("<name>") == 10


def test_a_system_prompt_that_cannot_fit_is_refused_with_what_to_change() -> None:
    with pytest.raises(PromptTooLong) as caught:
        fit_prompt([PromptSection("identity", "i" * 12000), SKILLS], [], {"role": "user", "content": "hi"},
                   [{"type": "function", "function": {"name": "t", "parameters": {}}}], window=1024,
                   max_tokens=8192, model="smollm2-135m")
    message = caught.value.message
    assert caught.value.window == 1024 and caught.value.needed > 1024
    assert "'smollm2-135m'" in message and "1,024" in message and "--ctx-size" in message and "num_ctx" in message


def test_compact_skills_keeps_names_and_locations() -> None:
    compacted = compact_skills(SKILLS)
    assert len(compacted.text) < len(SKILLS.text) / 3 and "<location>/w/skills/s9/SKILL.md</location>" in compacted.text


async def _turn(engine, key: str, text: str):
    """One turn to its end; the engine is shut down after it (its endpoint client closed in this loop)."""
    try:
        return await engine.loop.process(key, text)
    finally:
        await engine.shutdown()


def _engine_events(engine) -> list[object]:
    seen: list[object] = []
    engine.bus.subscribe(seen.append)
    return seen


async def test_a_turn_is_fitted_to_the_servers_window_and_tells_the_fill(make_engine, fake_openai) -> None:
    fake_openai.routes[("GET", "/props")] = {"default_generation_settings": {"n_ctx": 6000}}
    engine = make_engine()
    key = "desktop:fit"
    engine.sessions.append(engine.sessions.get_or_create(key), _history(30))
    seen = _engine_events(engine)
    fake_openai.add_text("fits", usage=(3000, 2))
    result = await _turn(engine, key, "the question now")
    assert result.status == "ok"
    sent = fake_openai.requests[-1]["messages"]
    assert sent[-1]["content"].endswith("the question now")
    assert 2 < len(sent) - 2 < 60 and sent[1]["role"] == "user"  # trimmed, at a user message
    assert sent[-2]["content"].startswith("answer 29")  # the newest history kept
    started = next(e for e in seen if isinstance(e, LLMCallStarted))
    finished = next(e for e in seen if isinstance(e, LLMCallFinished))
    assert started.window_tokens == 6000 and 0 < started.estimated_tokens <= 6000 - 1500
    assert (finished.window_tokens, finished.prompt_tokens) == (6000, 3000)


async def test_the_settings_window_wins_over_the_server(make_engine, fake_openai) -> None:
    fake_openai.routes[("GET", "/props")] = {"default_generation_settings": {"n_ctx": 100000}}
    engine = make_engine()
    engine.app_settings.model_context_window = 1024
    seen = _engine_events(engine)
    result = await _turn(engine, "desktop:small", "hello")
    assert result.status == "failed" and result.kind == "context_overflow"
    assert fake_openai.requests == []  # refused before sending
    failed = next(e for e in seen if isinstance(e, TurnFailed))
    assert failed.unsent_text == "hello" and "holds 1,024" in failed.error
    assert not (engine.workspace.root / "sessions" / "desktop_small.jsonl").exists()


# ---- the right diagnosis ---------------------------------------------------------------------------


async def test_an_empty_stream_is_explained_by_the_servers_own_error(provider, fake_openai) -> None:
    fake_openai.add_empty_stream()
    fake_openai.add_error(400, OVERFLOW, code="context_length_exceeded")
    with pytest.raises(ProviderError) as caught:
        await provider.chat(USER, max_tokens=500)
    assert caught.value.kind == "context_overflow" and "base URL" not in caught.value.message
    probe = fake_openai.requests[-1]
    assert "stream" not in probe and "stream_options" not in probe and probe["max_tokens"] == 1
    assert probe["messages"] == fake_openai.requests[0]["messages"]


async def test_an_empty_stream_the_plain_request_answers_keeps_the_first_diagnosis(provider, fake_openai) -> None:
    fake_openai.add_empty_stream()
    fake_openai.add_text("fine")
    with pytest.raises(ProviderError) as caught:
        await provider.chat(USER)
    assert caught.value.kind == "not_an_api" and "base URL" in caught.value.message


@pytest.mark.parametrize(("status", "said", "code", "kind", "words"), [
    (400, OVERFLOW, "context_length_exceeded", "context_overflow", "Start a new chat"),
    (503, "Loading model", None, "model_not_loaded", "Load it in the server"),
    (400, "No models loaded. Please load a model in the developer page or use the `lms load` command.", None,
     "model_not_loaded", "Load it in the server"),
    (500, "llama_decode: failed to allocate compute buffer: out of memory", None, "out_of_memory",
     "smaller model"),
    (400, "registry.ollama.ai/library/gemma:2b does not support tools", None, "tools_unsupported", "plain chat"),
])
async def test_each_cause_has_its_own_sentence_and_next_step(provider, fake_openai, status, said, code, kind,
                                                             words) -> None:
    fake_openai.add_error(status, said, code=code, times=None)
    with pytest.raises(ProviderError) as caught:
        await provider.chat(USER)
    assert caught.value.kind == kind and words in caught.value.message
    assert caught.value.facts["sentence"] == kind


async def test_a_server_gone_mid_stream_is_said_so(fake_openai) -> None:
    provider = OpenAICompatProvider("k", fake_openai.base_url, "fake-model", max_retries=0)

    def stop_when_asked_again(body: dict[str, Any]) -> Reply | None:
        if body.get("stream"):
            return Reply(deltas=[{"content": "Half an ans"}], drop=True)
        return None

    fake_openai.respond_with(stop_when_asked_again)
    real_probe = provider._probed

    async def probe_after_stop(request: dict[str, Any], error: ProviderError) -> ProviderError:
        await asyncio.to_thread(fake_openai.stop)  # the server is gone by the time it is asked again
        return await real_probe(request, error)

    provider._probed = probe_after_stop  # type: ignore[method-assign]
    try:
        with pytest.raises(ProviderError) as caught:
            await provider.chat(USER)
    finally:
        await provider.close()
    assert caught.value.kind == "server_gone"
    assert "no longer answers (connection refused)" in caught.value.message and "Start it again" in caught.value.message


# ---- honest waits ------------------------------------------------------------------------------------


def test_local_endpoints_are_told_apart() -> None:
    for url in ("http://127.0.0.1:8080/v1", "http://localhost:11434/v1", "http://192.168.1.5:1234/v1",
                "http://[::1]:8000/v1", "http://gpu-box.local:8000/v1"):
        assert is_local_endpoint(url), url
    for url in ("https://api.openai.com/v1", "https://openrouter.ai/api/v1", "http://8.8.8.8/v1"):
        assert not is_local_endpoint(url), url


async def test_a_local_server_reading_the_prompt_is_waited_for_past_the_give_up(fake_openai) -> None:
    provider = OpenAICompatProvider("k", fake_openai.base_url, "fake-model", first_byte_timeout_s=1.0, max_retries=0)
    fake_openai.add(Reply(deltas=[{"content": "late but "}, {"content": "here"}], delay_s=3.5))
    waits: list[tuple[str, float, float]] = []
    try:
        response = await provider.chat(USER, on_wait=lambda *w: waits.append(w))
    finally:
        await provider.close()
    assert response.content == "late but here"
    reading = [(waited, limit) for phase, waited, limit in waits if phase == "prompt"]
    assert reading and all(limit == 0 for _, limit in reading) and max(w for w, _ in reading) >= 2
    assert "first_byte" not in {phase for phase, _, _ in waits}  # never a give-up before the first token


async def test_a_remote_endpoint_keeps_its_give_up(fake_openai) -> None:
    provider = OpenAICompatProvider("k", fake_openai.base_url, "fake-model", first_byte_timeout_s=1.0, max_retries=0,
                                    wait_for_local=False)
    fake_openai.add_stall()
    started = time.monotonic()
    try:
        with pytest.raises(ProviderError) as caught:
            await provider.chat(USER)
    finally:
        await provider.close()
    assert caught.value.kind == "timeout" and time.monotonic() - started < 5


async def test_stop_ends_a_wait_for_a_local_server(make_engine, fake_openai) -> None:
    engine = make_engine()
    fake_openai.add_stall()
    seen = _engine_events(engine)
    waiting = asyncio.Event()
    engine.bus.subscribe(lambda event: waiting.set() if isinstance(event, WaitingForModel) else None)
    task = asyncio.ensure_future(_turn(engine, "desktop:wait", "hello"))
    await asyncio.wait_for(waiting.wait(), 10)
    wait = next(e for e in seen if isinstance(e, WaitingForModel))
    assert (wait.phase, wait.limit_s) == ("prompt", 0)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert fake_openai.wait_for_disconnect()


# ---- speed -------------------------------------------------------------------------------------------


async def test_time_to_first_token_and_tokens_per_second_come_from_the_stream(provider, fake_openai) -> None:
    await provider._ready_client()  # the SDK imported first: the latency is then the request's alone
    fake_openai.add(Reply(deltas=[{"content": f"w{n} "} for n in range(6)], delay_s=0.25, usage=(10, 30)))
    response = await provider.chat(USER)
    assert 0.2 <= response.first_token_s < 1.0  # from sending, not from the SDK's first import
    generating = response.latency_s - response.first_token_s
    assert generating >= 1.0 and response.tokens_per_s == pytest.approx(30 / generating, rel=0.05)


async def test_without_usage_the_speed_counts_the_chunks_that_brought_text(provider, fake_openai) -> None:
    fake_openai.add(Reply(deltas=[{"content": f"w{n} "} for n in range(6)], delay_s=0.25))
    provider._adapted["fake-model"] = {"stream_options"}  # no usage asked for, as llama-cpp-python sends none
    await provider._ready_client()
    response = await provider.chat(USER)
    assert response.usage.completion_tokens == 0
    generating = response.latency_s - response.first_token_s
    assert response.tokens_per_s == pytest.approx(6 / generating, rel=0.05)


async def test_speed_reaches_the_inspector_event(make_engine, fake_openai) -> None:
    engine = make_engine()
    seen = _engine_events(engine)
    fake_openai.add(Reply(deltas=[{"content": "a "}, {"content": "b"}], delay_s=0.2, usage=(10, 8)))
    await _turn(engine, "desktop:speed", "hi")
    finished = next(e for e in seen if isinstance(e, LLMCallFinished))
    assert finished.first_token_s > 0.1 and finished.tokens_per_s > 0


# ---- servers without tool calling -----------------------------------------------------------------------


async def test_a_server_without_tools_is_told_once_and_the_turn_goes_on_as_chat(make_engine, fake_openai) -> None:
    engine = make_engine()
    seen = _engine_events(engine)
    refused = "tools param requires --jinja flag"
    fake_openai.respond_with(lambda body: Reply(status=500, error={"message": refused, "type": "server_error"})
                             if body.get("tools") else None)
    fake_openai.add(text_reply("Plain answer."), times=2)
    try:
        first = await engine.loop.process("desktop:notools", "hello")
        second = await engine.loop.process("desktop:notools", "again")
    finally:
        await engine.shutdown()
    assert (first.status, first.reply, second.reply) == ("ok", "Plain answer.", "Plain answer.")
    with_tools = [r for r in fake_openai.requests if r.get("tools")]
    assert len(with_tools) == 1  # asked once with tools, never again
    notices = [e for e in seen if isinstance(e, Progress) and "tool definitions" in e.text]
    assert len(notices) == 1 and "plain chat" in notices[0].text

