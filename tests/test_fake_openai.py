"""The fake endpoint's one-write mode (the benchmarks' fast endpoint): the same stream, whole."""

from __future__ import annotations

import http.client
import json

from tests.fake_openai import FakeOpenAIServer, text_reply


def _stream(server: FakeOpenAIServer) -> bytes:
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    body = {"model": "fake-model", "stream": True, "stream_options": {"include_usage": True},
            "messages": [{"role": "user", "content": "hi"}]}
    connection.request("POST", "/v1/chat/completions", json.dumps(body), {"Content-Type": "application/json"})
    response = connection.getresponse()
    assert response.status == 200 and response.getheader("Content-Type") == "text/event-stream"
    data = response.read()  # de-chunked by http.client
    connection.close()
    return data


def _events(data: bytes) -> list[dict]:
    lines = [line.removeprefix(b"data: ") for line in data.split(b"\n\n") if line]
    assert lines[-1] == b"[DONE]"
    return [json.loads(line) for line in lines[:-1]]


def test_one_write_sends_the_same_stream_as_chunk_by_chunk() -> None:
    streams = []
    for one_write in (False, True):
        with FakeOpenAIServer(one_write=one_write) as server:
            server.add(text_reply("Sure. Three sections."), times=None)
            streams.append(_events(_stream(server)))
    plain, whole = streams
    text = "".join(e["choices"][0]["delta"].get("content", "") for e in whole if e["choices"])
    assert text == "Sure. Three sections."
    assert [e["choices"] for e in whole] == [e["choices"] for e in plain]
    assert whole[-1]["usage"] == plain[-1]["usage"] and whole[-1]["usage"]["completion_tokens"] > 0
