"""A session's own model (`metadata["model"]`) and the model catalog, against the loopback fake endpoint."""

from __future__ import annotations

import json
import socket
from pathlib import Path

from nanobot_desktop.engine.llm.catalog import ModelCatalog
from nanobot_desktop.engine.runtime import Engine
from tests.fake_openai import write_fake_config


def lines_of(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def sent_models(fake_openai) -> list[str]:
    return [request["model"] for request in fake_openai.requests]


async def test_a_sessions_own_model_is_sent_remembered_on_disk_and_kept_after_a_restart(make_engine, fake_openai):
    fake_openai.models = ["fake-model", "big-model"]
    engine = make_engine()
    for _ in range(5):
        fake_openai.add_text("ok")
    await engine.loop.process("desktop:a", "first")
    path = engine.sessions.path_for("desktop:a")
    messages_before = path.read_bytes().split(b"\n", 1)[1]

    engine.session_models.set("desktop:a", "big-model")
    assert path.read_bytes().split(b"\n", 1)[1] == messages_before  # only the metadata line changed
    assert lines_of(path)[0]["metadata"]["model"] == "big-model"
    await engine.loop.process("desktop:a", "second")
    await engine.loop.process("desktop:b", "elsewhere")
    assert sent_models(fake_openai) == ["fake-model", "big-model", "fake-model"]
    assert "model" not in lines_of(engine.sessions.path_for("desktop:b"))[0]["metadata"]

    restarted = make_engine()  # a new Engine on the same config and workspace
    assert restarted.session_models.get("desktop:a") == "big-model"
    assert restarted.session_models.get("desktop:b") is None
    await restarted.loop.process("desktop:a", "third")
    assert sent_models(fake_openai)[-1] == "big-model"
    await restarted.shutdown()
    await engine.shutdown()


async def test_a_new_chat_keeps_its_choice_until_its_first_message_writes_it(make_engine, fake_openai):
    engine = make_engine()
    fake_openai.add_text("ok")
    engine.session_models.set("desktop:new", "big-model")
    path = engine.sessions.path_for("desktop:new")
    assert not path.exists()  # choosing a model puts no empty chat in the list
    assert engine.session_models.get("desktop:new") == "big-model"
    await engine.loop.process("desktop:new", "hello")
    assert sent_models(fake_openai) == ["big-model"]
    assert lines_of(path)[0]["metadata"]["model"] == "big-model"
    await engine.shutdown()


async def test_choosing_the_configs_model_again_removes_the_field(make_engine, fake_openai):
    engine = make_engine()
    fake_openai.add_text("ok")
    fake_openai.add_text("ok")
    engine.session_models.set("desktop:a", "big-model")
    await engine.loop.process("desktop:a", "one")
    path = engine.sessions.path_for("desktop:a")
    engine.session_models.set("desktop:a", "fake-model")  # the config's model: back to the default
    assert "model" not in lines_of(path)[0]["metadata"]
    assert engine.session_models.get("desktop:a") is None
    await engine.loop.process("desktop:a", "two")
    assert sent_models(fake_openai) == ["big-model", "fake-model"]
    await engine.shutdown()


def auto_config(tmp_path: Path, fake_url: str, **providers: dict) -> Path:
    path = write_fake_config(tmp_path / "auto" / "config.json", fake_url, tmp_path / "ws", provider="auto")
    data = json.loads(path.read_text(encoding="utf-8"))
    data["providers"].update(providers)
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


async def test_the_catalog_lists_every_configured_endpoint_and_says_which_cannot_be_reached(fake_openai, tmp_path):
    fake_openai.models = ["fake-model", "qwen3:8b"]
    unreachable = f"http://127.0.0.1:{closed_port()}/v1"
    path = auto_config(tmp_path, fake_openai.base_url,
                       openrouter={"apiKey": "sk-or", "apiBase": unreachable})
    engine = Engine.open(path)
    catalog: ModelCatalog = engine.session_models.catalog
    assert catalog.cached() is None  # nothing asked yet
    listings = await catalog.providers()
    assert [(p.name, p.error is None) for p in listings] == [("custom", True), ("openrouter", False)]
    custom, openrouter = listings
    assert [(o.model, o.label, o.served_by) for o in custom.options] == [
        ("fake-model", "fake-model", "Custom (OpenAI-compatible)"), ("qwen3:8b", "qwen3:8b", "Custom (OpenAI-compatible)")]
    assert openrouter.options == () and "connection refused" in (openrouter.error or "")
    assert fake_openai.model_list_requests == 1
    assert catalog.cached() == listings
    await catalog.providers()  # cached: nobody is asked again
    assert fake_openai.model_list_requests == 1
    await catalog.providers(refresh=True)
    assert fake_openai.model_list_requests == 2
    default = catalog.default_option()
    assert (default.model, default.served_by) == ("fake-model", "Custom (OpenAI-compatible)")
    await engine.shutdown()


async def test_a_model_only_a_prefix_routes_to_its_lister_is_stored_with_it_and_served_there(fake_openai, tmp_path):
    fake_openai.models = ["fake-model", "deep-one"]
    path = auto_config(tmp_path, fake_openai.base_url,
                       deepseek={"apiKey": "sk-deepseek", "apiBase": fake_openai.base_url})
    engine = Engine.open(path)
    listings = {p.name: p for p in await engine.session_models.catalog.providers()}
    deepseek = {o.label: o for o in listings["deepseek"].options}
    # Listed by DeepSeek, but the CLI's rules send a bare "deep-one" to the first provider with a key (custom).
    assert (deepseek["deep-one"].model, deepseek["deep-one"].served_by) == ("deepseek/deep-one", "DeepSeek")
    fake_openai.add_text("ok")
    engine.session_models.set("desktop:a", deepseek["deep-one"].model)
    await engine.loop.process("desktop:a", "hi")
    request = fake_openai.requests[-1]
    assert request["model"] == "deep-one" and request.headers["authorization"] == "Bearer sk-deepseek"
    await engine.shutdown()
