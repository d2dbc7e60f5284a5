"""A failed model call is told in the UI language (issue 16's follow-up): the engine gives the
failure's sentence and values with its English text (`TurnFailed.facts`), the GUI words them.

Each failure comes from the real provider against the loopback fake endpoint (or a closed port);
in English the GUI's sentence must be the engine's word for word, in zh_CN it must be Chinese with
the values (URL, model, status, the server's own words) kept as they are.
"""

from __future__ import annotations

import asyncio
import socket
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from nanobot_desktop.engine.llm.provider import OpenAICompatProvider
from nanobot_desktop.engine.llm.types import ProviderError
from nanobot_desktop.gui.chat.failures import failure_text, model_call_failure
from nanobot_desktop.gui.chat.model import Notice
from nanobot_desktop.gui.common.i18n import install_translators, remove_translators
from tests.gui.i18n_walk import CJK, still_english
from tests.gui.window_fixtures import open_window, send, wait_idle

__all__ = ["open_window"]

USER = [{"role": "user", "content": "hi"}]
KEY = "sk-test-secret-4242"


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _failure(base_url: str, **options: Any) -> ProviderError:
    async def call() -> ProviderError:
        provider = OpenAICompatProvider(KEY, base_url, "fake-model", retry_base_delay_s=0, **options)
        try:
            with pytest.raises(ProviderError) as caught:
                await provider.chat(USER)
        finally:
            await provider.close()
        return caught.value

    return asyncio.run(call())


CASES = {  # sentence: (how the fake endpoint fails, provider options)
    "auth": (lambda fake: fake.add_error(401, f"Incorrect API key provided: {KEY}"), {}),
    "model_not_found": (lambda fake: fake.add_error(404, "The model `fake-model` does not exist", code="model_not_found"), {}),
    "not_found": (lambda fake: fake.add_error(404, "no route here"), {}),
    "rate_limit": (lambda fake: fake.add_error(429, "Slow down", times=2), {"max_retries": 1}),
    "quota": (lambda fake: fake.add_error(429, "You exceeded your current quota.", code="insufficient_quota"), {}),
    "server_status": (lambda fake: fake.add_error(503, "Overloaded", times=3), {"max_retries": 2}),
    "bad_request": (lambda fake: fake.add_error(400, "messages must not be empty"), {}),
    "timeout": (lambda fake: fake.add_hang(), {"max_retries": 0, "timeout_s": 0.3, "wait_for_local": False}),
    "unreachable": (None, {"max_retries": 1}),
}


@pytest.fixture(scope="module")
def failures() -> dict[str, ProviderError]:
    """Every sentence, once, from the real provider (the fake endpoint made here: module scope)."""
    from tests.fake_openai import FakeOpenAIServer

    made: dict[str, ProviderError] = {}
    with FakeOpenAIServer() as fake:
        for sentence, (script, options) in CASES.items():
            if script is None:
                made[sentence] = _failure(f"http://127.0.0.1:{_closed_port()}/v1", **options)
            else:
                script(fake)
                made[sentence] = _failure(fake.base_url, **options)
    return made


@pytest.mark.parametrize("sentence", list(CASES))
def test_in_english_the_gui_says_exactly_what_the_engine_says(qapp: QApplication, failures, sentence: str) -> None:
    error = failures[sentence]
    assert error.facts["sentence"] == sentence
    facts = tuple(sorted(error.facts.items()))
    assert failure_text(error.message, error.kind, None, facts) == error.message
    assert KEY not in error.message and all(KEY not in str(value) for value in error.facts.values())


@pytest.mark.parametrize("sentence", list(CASES))
def test_in_chinese_the_sentence_is_chinese_with_its_values_kept(qapp: QApplication, failures, sentence: str) -> None:
    error = failures[sentence]
    assert install_translators(qapp, "zh_CN") == "zh_CN"
    try:
        text = failure_text(error.message, error.kind, None, tuple(sorted(error.facts.items())))
    finally:
        remove_translators(qapp)
    assert CJK.search(text), text
    values = [str(error.facts[name]) for name in ("said", "api_base", "status", "model")
              if error.facts.get(name) and str(error.facts[name]) in error.message]  # the values the sentence shows
    assert values and all(value in text for value in values), (text, values)
    shown_as_is = [str(error.facts.get("said") or ""), str(error.facts["api_base"]), "Not Found"]
    assert not still_english(text, content=shown_as_is), text


def test_a_sentence_this_version_does_not_know_falls_back_to_the_engines_text(qapp: QApplication) -> None:
    assert model_call_failure({"sentence": "from_a_newer_engine"}) is None
    english = "The endpoint did something new. Try again."
    assert failure_text(english, "server", None, (("sentence", "from_a_newer_engine"),)) == english
    assert model_call_failure({"sentence": "server_error", "said": "", "error_type": "ValueError"}) == (
        "The endpoint reported an error (ValueError). Try again in a moment.")


def test_the_chat_tells_a_rejected_key_in_chinese(qtbot, qapp: QApplication, open_window, fake_openai) -> None:
    """The whole way: the turn fails in the engine, TurnFailed carries the facts, the chat's notice is Chinese."""
    assert install_translators(qapp, "zh_CN") == "zh_CN"
    try:
        window = open_window()
        inspector = window.panel("inspector")  # built now (else after the first paint): it sees the turn from its start
        fake_openai.add_error(401, "Incorrect API key provided")
        send(qtbot, window, "hello")
        wait_idle(qtbot, window)
        notice = window.chat.model.item(window.chat.model.rowCount() - 1)
        assert isinstance(notice, Notice) and notice.level == "error"
        assert notice.text == "端点拒绝了 API 密钥（401）。请在设置中检查 API 密钥。"
        assert "端点拒绝了 API 密钥（401）" in window.notice_bar.text()  # the bar above the chat says the same
        widget = window.chat_view.widget_for_row(window.chat.model.rowCount() - 1)
        assert widget is not None and widget.label.text() == "错误：" + notice.text
        # The inspector's turn summary and its model call say it in Chinese too.
        qtbot.waitUntil(lambda: "端点拒绝了 API 密钥" in inspector.summary_label.text(), timeout=5000)
        call = inspector.model.index(0, 2).data(Qt.ItemDataRole.ToolTipRole) or ""
        assert "端点拒绝了 API 密钥" in call and "rejected" not in call, call
    finally:
        remove_translators(qapp)
