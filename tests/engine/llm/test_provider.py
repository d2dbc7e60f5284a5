"""OpenAICompatProvider against the loopback fake of the OpenAI API (tests/fake_openai.py)."""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
import sys
from typing import Any

import pytest

from nanobot_desktop.engine.llm.types import ProviderError, Usage
from nanobot_desktop.engine.llm.provider import (
    OpenAICompatProvider,
    keeps_reasoning_content,
    make_provider,
    parse_tool_arguments,
    sanitize_messages,
)
from tests.fake_openai import (NO_SCRIPT_MESSAGE, FakeOpenAIServer, invalid_chunk_reply, text_reply,
                               tool_calls_reply)

USER = [{"role": "user", "content": "hi"}]


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
async def provider(fake_openai: FakeOpenAIServer):
    p = OpenAICompatProvider("sk-test", fake_openai.base_url, "fake-model", retry_base_delay_s=0)
    yield p
    await p.close()


@pytest.fixture
def sleeps(provider: OpenAICompatProvider) -> list[float]:
    """The back-off delays the provider asked for, recorded instead of waited."""
    recorded: list[float] = []

    async def fake_sleep(seconds: float) -> None:
        recorded.append(seconds)

    provider._sleep = fake_sleep
    return recorded


# ---- streaming -----------------------------------------------------------------------------------


async def test_text_deltas_arrive_in_order_and_assemble(provider, fake_openai) -> None:
    fake_openai.add_text("Hello brave new world", chunk_size=4, usage=(12, 5))
    deltas: list[str] = []

    response = await provider.chat(USER, on_text_delta=deltas.append)

    assert deltas == ["Hell", "o br", "ave ", "new ", "worl", "d"]
    assert response.content == "Hello brave new world"
    assert response.tool_calls == [] and response.finish_reason == "stop"
    assert response.usage == Usage(prompt_tokens=12, completion_tokens=5, total_tokens=17, reported=True)
    assert response.model == "fake-model"
    assert response.latency_s > 0


async def test_request_body_is_streamed_and_sanitized(fake_openai) -> None:
    provider = OpenAICompatProvider("sk-test", fake_openai.base_url, "fake-model",
                                    extra_headers={"X-Title": "nanobot"}, retry_base_delay_s=0)
    fake_openai.add_text("ok")
    tools = [{"type": "function", "function": {"name": "read_file", "parameters": {"type": "object"}}}]
    history = [
        {"role": "system", "content": "You are nanobot."},
        {"role": "user", "content": "", "timestamp": "2026-01-01T10:00:00"},
        {"role": "assistant", "content": "", "reasoning_content": "let me look",
         "tool_calls": [{"id": "call_1", "type": "function",
                         "function": {"name": "read_file", "arguments": {"path": "ä.txt"}}}]},
        {"role": "tool", "tool_call_id": "call_1", "name": "read_file", "content": "data",
         "timestamp": "2026-01-01T10:00:01"},
    ]
    try:
        await provider.chat(history, tools, temperature=0.1, max_tokens=8192)
    finally:
        await provider.close()

    [sent] = fake_openai.requests
    assert sent["stream"] is True and sent["stream_options"] == {"include_usage": True}
    assert sent["model"] == "fake-model" and sent["temperature"] == 0.1 and sent["max_tokens"] == 8192
    assert sent["tools"] == tools and sent["tool_choice"] == "auto"
    assert sent["messages"] == [
        {"role": "system", "content": "You are nanobot."},
        {"role": "user", "content": "(empty)"},
        {"role": "assistant", "content": None,
         "tool_calls": [{"id": "call_1", "type": "function",
                         "function": {"name": "read_file", "arguments": '{"path": "ä.txt"}'}}]},
        {"role": "tool", "tool_call_id": "call_1", "name": "read_file", "content": "data"},
    ]
    assert sent.headers["authorization"] == "Bearer sk-test"
    assert sent.headers["x-title"] == "nanobot"


async def test_reasoning_content_is_sent_back_only_to_thinking_endpoints(fake_openai) -> None:
    history = [*USER, {"role": "assistant", "content": "a", "reasoning_content": "why"}, *USER]
    for keep in (True, False):
        fake_openai.add_text("ok")
        provider = OpenAICompatProvider("k", fake_openai.base_url, "m", keep_reasoning=keep)
        try:
            await provider.chat(history)
        finally:
            await provider.close()
    kept, dropped = fake_openai.requests
    assert kept["messages"][1] == {"role": "assistant", "content": "a", "reasoning_content": "why"}
    assert dropped["messages"][1] == {"role": "assistant", "content": "a"}


@pytest.mark.parametrize("url, expected", [
    ("https://api.deepseek.com/v1", True),
    ("https://api.moonshot.ai/v1", True),
    ("https://api.openai.com/v1", False),
    ("http://localhost:11434/v1", False),
])
def test_thinking_endpoints_are_recognized_by_host(url: str, expected: bool) -> None:
    assert keeps_reasoning_content(url) is expected


async def test_split_tool_call_deltas_are_assembled(provider, fake_openai) -> None:
    fake_openai.add_tool_calls([("read_file", {"path": "notes/a.txt", "limit": 10}, "call_abc")],
                               content="Let me look.")
    texts: list[str] = []

    response = await provider.chat(USER, on_text_delta=texts.append)

    assert "".join(texts) == "Let me look." and response.content == "Let me look."
    assert response.finish_reason == "tool_calls"
    [call] = response.tool_calls
    assert (call.id, call.name, call.parse_error) == ("call_abc", "read_file", None)
    assert call.arguments == {"path": "notes/a.txt", "limit": 10}
    assert json.loads(call.raw_arguments) == call.arguments


async def test_parallel_tool_calls_keep_their_order(provider, fake_openai) -> None:
    calls = [("read_file", {"path": "a.txt"}), ("list_dir", {"path": "."}), ("exec", {"command": "ls -l"})]
    fake_openai.add_tool_calls(calls)

    response = await provider.chat(USER)

    assert [(c.name, c.arguments) for c in response.tool_calls] == [(n, a) for n, a in calls]
    assert len({c.id for c in response.tool_calls}) == 3
    assert response.content is None


async def test_reasoning_deltas_are_delivered_and_kept(provider, fake_openai) -> None:
    fake_openai.add_reasoning("First, think. Then answer.", then_text="The answer is 4.")
    thoughts: list[str] = []
    texts: list[str] = []

    response = await provider.chat(USER, on_text_delta=texts.append, on_reasoning_delta=thoughts.append)

    assert "".join(thoughts) == "First, think. Then answer." and len(thoughts) > 1
    assert response.reasoning_content == "First, think. Then answer."
    assert "".join(texts) == response.content == "The answer is 4."


# ---- malformed tool-call arguments ---------------------------------------------------------------


async def test_a_chunk_that_is_json_but_not_an_object_is_a_malformed_reply(provider, fake_openai) -> None:
    fake_openai.add(invalid_chunk_reply("Half an answer ", chunk="[1, 2]"))
    deltas: list[str] = []

    with pytest.raises(ProviderError) as failure:
        await provider.chat(USER, on_text_delta=deltas.append)

    assert failure.value.kind == "malformed"
    assert "not a JSON object (list) after 15 characters" in failure.value.message
    assert "".join(deltas) == "Half an answer "  # what came before it was shown, and is not sent again


async def test_trailing_comma_in_arguments_is_repaired(provider, fake_openai) -> None:
    fake_openai.add_raw_tool_call("read_file", '{"path": "a.txt",}')
    [call] = (await provider.chat(USER)).tool_calls
    assert call.arguments == {"path": "a.txt"} and call.parse_error is None
    assert call.raw_arguments == '{"path": "a.txt",}'


async def test_unrepairable_arguments_become_a_parse_error(provider, fake_openai) -> None:
    fake_openai.add_raw_tool_call("read_file", '{"path": "a.txt" "limit": 3}')
    [call] = (await provider.chat(USER)).tool_calls
    assert call.arguments == {}
    assert call.parse_error == "arguments are not valid JSON: Expecting ',' delimiter at char 17"
    assert call.raw_arguments == '{"path": "a.txt" "limit": 3}'


@pytest.mark.parametrize("raw, arguments", [
    ('{"path": "a.txt"}', {"path": "a.txt"}),
    ("", {}),
    ("   ", {}),
    ('```json\n{"path": "a.txt"}\n```', {"path": "a.txt"}),
    ('```\n{"path": "a.txt"}\n```', {"path": "a.txt"}),
    ('{"path": "a.txt",}', {"path": "a.txt"}),
    ('{"paths": ["a", "b",], "n": 1,}', {"paths": ["a", "b"], "n": 1}),
    ('{"text": "a,}"}', {"text": "a,}"}),  # commas and brackets inside strings are left alone
    ('{"path": "a.txt"', {"path": "a.txt"}),  # truncated: closed at the end
    ('{"a": {"b": [1, 2', {"a": {"b": [1, 2]}}),
    ('{"a": 1,', {"a": 1}),
    ('"{\\"path\\": \\"a.txt\\"}"', {"path": "a.txt"}),  # an object encoded as a JSON string
])
def test_parse_tool_arguments_repairs_only_unambiguous_damage(raw: str, arguments: dict[str, Any]) -> None:
    assert parse_tool_arguments(raw) == (arguments, None)


@pytest.mark.parametrize("raw, error", [
    ('{"path": "a.txt" "n": 1}', "arguments are not valid JSON: Expecting ',' delimiter at char 17"),
    ('{"path": "a.t', "arguments are not valid JSON: Unterminated string starting at char 9"),
    ('{"path":', "arguments are not valid JSON: Expecting value at char 8"),
    ("{'path': 'a'}", "arguments are not valid JSON: Expecting property name enclosed in double quotes at char 1"),
    ('{"a": [1}', "arguments are not valid JSON: Expecting ',' delimiter at char 8"),
    ("path=a.txt", "arguments are not valid JSON: Expecting value at char 0"),
    ('["a.txt"]', "arguments must be a JSON object, got an array"),
    ("42", "arguments must be a JSON object, got a number"),
    ("null", "arguments must be a JSON object, got null"),
    ('"a.txt"', "arguments must be a JSON object, got a string"),
])
def test_parse_tool_arguments_reports_what_is_wrong(raw: str, error: str) -> None:
    assert parse_tool_arguments(raw) == ({}, error)


def test_sanitize_messages_does_not_modify_its_input() -> None:
    original = [{"role": "assistant", "content": "", "timestamp": "t", "tool_calls": [
        {"id": "c", "type": "function", "function": {"name": "f", "arguments": {"x": 1}}}]}]
    snapshot = json.dumps(original)
    clean = sanitize_messages(original)
    assert json.dumps(original) == snapshot
    assert clean[0]["tool_calls"][0]["function"]["arguments"] == '{"x": 1}'
    assert sanitize_messages([{"role": "assistant", "content": ""}]) == [{"role": "assistant", "content": "(empty)"}]


def test_sanitize_messages_sends_clean_history_entries_as_they_are_and_copies_the_rest() -> None:
    entry = {"role": "user", "content": "what is on the list?"}  # as Session.get_history hands it out
    stored = {"role": "assistant", "content": "three tasks", "timestamp": "2026-11-28T10:00:00"}
    thinking = {"role": "assistant", "content": "done", "reasoning_content": "because"}
    clean = sanitize_messages([entry, stored, thinking], keep_reasoning=True)
    assert clean[0] is entry  # nothing to change: not copied for every call
    assert clean[1] == {"role": "assistant", "content": "three tasks"} and clean[1] is not stored
    assert clean[2] == thinking and clean[2] is not thinking
    assert sanitize_messages([thinking]) == [{"role": "assistant", "content": "done"}]
    assert sanitize_messages([{"role": "user", "content": ""}]) == [{"role": "user", "content": "(empty)"}]


# ---- retries ---------------------------------------------------------------------------------------


async def test_429_is_retried_after_the_retry_after_delay(provider, fake_openai, sleeps) -> None:
    fake_openai.add_error(429, "Rate limit reached for requests", code="rate_limit_exceeded", retry_after=2)
    fake_openai.add_text("finally")

    response = await provider.chat(USER)

    assert response.content == "finally"
    assert len(fake_openai.requests) == 2
    assert sleeps == [2.0]


async def test_a_huge_retry_after_is_capped(provider, fake_openai, sleeps) -> None:
    fake_openai.add_error(503, "overloaded", retry_after=3600)
    fake_openai.add_text("ok")
    await provider.chat(USER)
    assert sleeps == [30.0]


async def test_500_forever_gives_a_server_error_after_the_retries(fake_openai) -> None:
    provider = OpenAICompatProvider("k", fake_openai.base_url, "fake-model", max_retries=2, retry_base_delay_s=1)
    recorded: list[float] = []

    async def fake_sleep(seconds: float) -> None:
        recorded.append(seconds)

    provider._sleep = fake_sleep
    fake_openai.add_error(500, "The server had an error while processing your request.", times=None)
    try:
        with pytest.raises(ProviderError) as caught:
            await provider.chat(USER)
    finally:
        await provider.close()

    assert caught.value.kind == "server" and caught.value.status == 500
    assert str(caught.value) == ("The endpoint had a server error (500) after 3 attempts; it said: "
                                 "“The server had an error while processing your request”. Try again in a moment.")
    assert len(fake_openai.requests) == 3
    assert recorded == [1.0, 2.0]  # exponential back-off


async def test_a_429_for_missing_quota_is_not_retried(provider, fake_openai, sleeps) -> None:
    fake_openai.add_error(429, "You exceeded your current quota.", code="insufficient_quota", times=None)
    with pytest.raises(ProviderError) as caught:
        await provider.chat(USER)
    assert caught.value.kind == "rate_limit" and "quota" in str(caught.value)
    assert len(fake_openai.requests) == 1 and sleeps == []


async def test_a_stream_cut_before_any_text_is_retried(provider, fake_openai, sleeps) -> None:
    fake_openai.add_drop("")
    fake_openai.add_text("second try")
    assert (await provider.chat(USER, on_text_delta=lambda _: None)).content == "second try"
    assert len(fake_openai.requests) == 2


async def test_a_stream_cut_after_text_is_not_retried(provider, fake_openai, sleeps) -> None:
    fake_openai.add_drop("half an answer")
    fake_openai.add_text("must not be requested")
    seen: list[str] = []
    with pytest.raises(ProviderError) as caught:
        await provider.chat(USER, on_text_delta=seen.append)
    assert "".join(seen) == "half an answer"
    assert caught.value.kind == "cut"  # not "Could not connect…": the server was reached and then hung up
    assert len(fake_openai.requests) == 1 and fake_openai.pending == 1


async def test_a_refused_max_tokens_is_sent_as_max_completion_tokens(provider, fake_openai) -> None:
    fake_openai.add_error(400, "Unsupported parameter: 'max_tokens' is not supported with this model. "
                          "Use 'max_completion_tokens' instead.", code="unsupported_parameter", param="max_tokens")
    fake_openai.add_text("one")
    fake_openai.add_text("two")

    assert (await provider.chat(USER, max_tokens=100)).content == "one"
    assert (await provider.chat(USER, max_tokens=100)).content == "two"  # remembered for this model

    first, second, third = fake_openai.requests
    assert first["max_tokens"] == 100
    assert "max_tokens" not in second and second["max_completion_tokens"] == 100
    assert "max_tokens" not in third and third["max_completion_tokens"] == 100


async def test_a_refused_temperature_is_left_out(provider, fake_openai) -> None:
    fake_openai.add_error(400, "Unsupported value: 'temperature' does not support 0.1 with this model. "
                          "Only the default (1) value is supported.", code="unsupported_value", param="temperature")
    fake_openai.add_text("ok")
    assert (await provider.chat(USER, temperature=0.1)).content == "ok"
    assert [("temperature" in r) for r in fake_openai.requests] == [True, False]


async def test_a_parameter_error_that_is_not_a_refusal_is_reported(provider, fake_openai) -> None:
    fake_openai.add_error(400, "max_tokens is too large: 100000. This model supports at most 4096 completion tokens.",
                          code="invalid_value", param="max_tokens")
    with pytest.raises(ProviderError) as caught:
        await provider.chat(USER, max_tokens=100000)
    assert caught.value.kind == "bad_request" and "at most 4096" in str(caught.value)
    assert len(fake_openai.requests) == 1


# ---- errors ----------------------------------------------------------------------------------------


async def test_a_wrong_key_is_an_auth_error_without_the_key(fake_openai) -> None:
    fake_openai.require_api_key = "sk-right"
    provider = OpenAICompatProvider("sk-wrong-0123456789", fake_openai.base_url, "fake-model", retry_base_delay_s=0)
    try:
        with pytest.raises(ProviderError) as caught:
            await provider.chat(USER)
        with pytest.raises(ProviderError) as listing:
            await provider.list_models()
    finally:
        await provider.close()
    assert caught.value.kind == "auth" and caught.value.status == 401
    assert str(caught.value) == "The endpoint rejected the API key (401). Check the API key in Settings."
    assert listing.value.kind == "auth"
    assert len(fake_openai.requests) == 1  # not retried


async def test_an_unknown_model_names_the_model(provider, fake_openai) -> None:
    fake_openai.known_models = {"fake-model"}
    with pytest.raises(ProviderError) as caught:
        await provider.chat(USER, model="gpt-nope")
    assert caught.value.kind == "model_not_found" and caught.value.status == 404
    assert "'gpt-nope'" in str(caught.value) and "Pick a model from the endpoint's list" in str(caught.value)


async def test_a_wrong_base_path_says_to_check_the_url(fake_openai) -> None:
    provider = OpenAICompatProvider("k", fake_openai.base_url.removesuffix("/v1"), "fake-model")
    try:
        with pytest.raises(ProviderError) as caught:
            await provider.chat(USER)
    finally:
        await provider.close()
    assert caught.value.status == 404 and caught.value.kind == "other"
    assert "Check the base URL" in str(caught.value)


async def test_a_bad_request_carries_the_servers_message(provider, fake_openai) -> None:
    fake_openai.add_error(400, "Invalid 'messages[1].content': string too long.", code="string_above_max_length")
    with pytest.raises(ProviderError) as caught:
        await provider.chat(USER)
    assert caught.value.kind == "bad_request" and caught.value.status == 400
    assert str(caught.value) == ("The endpoint rejected the request (400); it said: “Invalid "
                                 "'messages[1].content': string too long”. Check the model and the endpoint in Settings.")


async def test_an_empty_script_fails_loudly(provider, fake_openai) -> None:
    provider.max_retries = 0
    with pytest.raises(ProviderError) as caught:
        await provider.chat(USER)
    assert NO_SCRIPT_MESSAGE in str(caught.value)


async def test_a_closed_port_is_unreachable_and_names_the_url() -> None:
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    provider = OpenAICompatProvider("k", url, "m", max_retries=1, retry_base_delay_s=0)
    try:
        with pytest.raises(ProviderError) as caught:
            await provider.chat(USER)
    finally:
        await provider.close()
    assert caught.value.kind == "unreachable" and caught.value.status is None
    assert str(caught.value) == (f"Could not connect to {url} (connection refused) after 2 attempts. "
                                 "Check that the server is running and that its URL in Settings is right.")


async def test_an_endpoint_that_stops_answering_times_out(fake_openai) -> None:
    fake_openai.add_hang()
    provider = OpenAICompatProvider("k", fake_openai.base_url, "m", max_retries=0, timeout_s=0.3,
                                    wait_for_local=False)  # as a remote endpoint: a local one is waited for
    try:
        with pytest.raises(ProviderError) as caught:
            await provider.chat(USER)
    finally:
        await provider.close()
    assert caught.value.kind == "timeout"
    assert str(caught.value) == (f"{fake_openai.base_url} did not answer within 0.3 s. "
                                 "Try again, or check the endpoint and its timeouts in Settings.")


# ---- cancellation ----------------------------------------------------------------------------------


async def test_cancelling_mid_stream_closes_the_connection(provider, fake_openai) -> None:
    fake_openai.add_hang("partial")
    started = asyncio.Event()
    task = asyncio.create_task(provider.chat(USER, on_text_delta=lambda _: started.set()))
    await asyncio.wait_for(started.wait(), 10)

    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task

    assert await asyncio.to_thread(fake_openai.wait_for_disconnect, 10)
    assert fake_openai.disconnects == 1


async def test_stopping_the_server_releases_a_hanging_stream(provider) -> None:
    with FakeOpenAIServer() as server:
        server.add_hang("partial")
        started = asyncio.Event()
        local = OpenAICompatProvider("k", server.base_url, "m", max_retries=0)
        task = asyncio.create_task(local.chat(USER, on_text_delta=lambda _: started.set()))
        await asyncio.wait_for(started.wait(), 10)
        await asyncio.to_thread(server.stop)
        with pytest.raises(ProviderError):
            await asyncio.wait_for(task, 10)
        await local.close()


# ---- the fake's scripting helpers used by later tests -----------------------------------------------


async def test_respond_with_decides_by_request_content(provider, fake_openai) -> None:
    def responder(body: dict[str, Any]):
        if "heartbeat" in body["messages"][-1]["content"]:
            return tool_calls_reply([("heartbeat", {"action": "skip"})])
        return None  # fall back to the script

    fake_openai.respond_with(responder)
    fake_openai.add(text_reply("normal turn"))
    beat = await provider.chat([{"role": "user", "content": "heartbeat check"}])
    normal = await provider.chat(USER)
    assert beat.tool_calls[0].arguments == {"action": "skip"}
    assert normal.content == "normal turn"


# ---- models, construction, client lifecycle -----------------------------------------------------------


async def test_list_models_returns_the_endpoint_models(provider, fake_openai) -> None:
    fake_openai.models = ["llama3.1:8b", "qwen2.5:7b"]
    assert await provider.list_models() == ["llama3.1:8b", "qwen2.5:7b"]
    assert fake_openai.model_list_requests == 1


def test_make_provider_passes_the_resolved_values_through() -> None:
    provider = make_provider("deepseek", "sk-x", "https://proxy.example/v1", "deepseek-chat", {"X-A": "1"})
    assert (provider.api_base, provider.default_model, provider.extra_headers) == (
        "https://proxy.example/v1", "deepseek-chat", {"X-A": "1"})
    assert provider.keep_reasoning  # a DeepSeek provider keeps reasoning even behind a proxy URL
    assert not make_provider("openai", "sk-x", "https://api.openai.com/v1", "gpt-4o").keep_reasoning
    assert "sk-x" not in repr(provider)
    with pytest.raises(ProviderError, match="no base URL"):
        make_provider("custom", "", "", "m")


def test_a_new_event_loop_gets_a_new_client(fake_openai) -> None:
    provider = OpenAICompatProvider("k", fake_openai.base_url, "fake-model")
    fake_openai.add_text("first")
    fake_openai.add_text("second")

    async def one_call() -> tuple[str | None, object]:
        try:
            return (await provider.chat(USER)).content, provider._client
        finally:
            await provider.close()

    first, client_a = asyncio.run(one_call())
    second, client_b = asyncio.run(one_call())
    assert (first, second) == ("first", "second")
    assert client_a is not client_b


def test_importing_the_engine_provider_does_not_import_openai() -> None:
    code = ("import sys, nanobot_desktop.engine.llm.provider, nanobot_desktop.engine.llm.discovery; "
            "print('openai' in sys.modules, 'httpx2' in sys.modules)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.split() == ["False", "False"]


def test_the_fake_also_answers_non_streamed_requests(fake_openai) -> None:
    """Not used by the provider (it always streams), but other clients of the fake may be."""
    import urllib.request

    fake_openai.add_tool_calls([("cron", {"action": "list"}, "call_x")], content="Checking.")
    body = json.dumps({"model": "fake-model", "messages": USER}).encode()
    request = urllib.request.Request(fake_openai.base_url + "/chat/completions", data=body,
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as answer:
        completion = json.load(answer)
    [choice] = completion["choices"]
    assert choice["finish_reason"] == "tool_calls"
    assert choice["message"]["content"] == "Checking."
    assert choice["message"]["tool_calls"] == [
        {"id": "call_x", "type": "function", "function": {"name": "cron", "arguments": '{"action": "list"}'}}]
    assert completion["usage"]["total_tokens"] > 0
