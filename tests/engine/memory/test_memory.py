import asyncio
import json
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from nanobot_desktop.engine.llm.types import LLMResponse, ProviderError, ToolCallRequest
from nanobot_desktop.engine.memory.consolidation import SAVE_MEMORY_TOOL, consolidate, consolidate_detailed
from nanobot_desktop.engine.memory.store import MemoryStore, split_history_entries
from nanobot_desktop.engine.workspace import Workspace

ENTRY = "[2026-11-22 14:40] The user asked about m0..m6; nothing decided."


@pytest.fixture
def store(tmp_path: Path) -> MemoryStore:
    return MemoryStore(Workspace.at(tmp_path / "ws"))


def _messages(count: int) -> list[dict[str, Any]]:
    return [
        {"role": "user" if i % 2 == 0 else "assistant", "content": f"m{i}", "timestamp": f"2026-11-22T14:{30 + i:02d}:00.123456"}
        for i in range(count)
    ]


class FakeChat:
    """Records each call and answers with a save_memory call carrying `arguments` (or raises)."""

    def __init__(self, arguments: Any = None, *, response: LLMResponse | None = None, error: BaseException | None = None) -> None:
        self.arguments = {"history_entry": ENTRY, "memory_update": "# Facts\n- likes tea\n"} if arguments is None else arguments
        self.response = response
        self.error = error
        self.calls: list[tuple[list[dict[str, Any]], list[dict[str, Any]]]] = []

    async def __call__(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> LLMResponse:
        self.calls.append((messages, tools))
        if self.error is not None:
            raise self.error
        if self.response is not None:
            return self.response
        return LLMResponse(content=None, tool_calls=[ToolCallRequest(id="c1", name="save_memory", arguments=self.arguments)])

    @property
    def conversation_lines(self) -> list[str]:
        user = self.calls[-1][0][1]["content"]
        return user.split("## Conversation to Process\n", 1)[1].split("\n")


# ---- MemoryStore ------------------------------------------------------------------------------


def test_missing_files_read_as_empty(store: MemoryStore) -> None:
    assert store.read_long_term() == ""
    assert store.read_history() == ""
    assert store.get_memory_context() == ""
    assert store.list_versions() == []


def test_history_entries_are_separated_by_a_blank_line_on_disk(store: MemoryStore) -> None:
    store.append_history("[2026-01-01 10:00] first\n\n\n")
    store.append_history("[2026-01-02 11:00] second line one\nsecond line two  ")
    assert store.history_file.read_bytes() == (
        b"[2026-01-01 10:00] first\n\n[2026-01-02 11:00] second line one\nsecond line two\n\n"
    )
    assert split_history_entries(store.read_history()) == [
        "[2026-01-01 10:00] first",
        "[2026-01-02 11:00] second line one\nsecond line two",
    ]


def test_append_history_keeps_a_hand_edited_last_entry_apart(store: MemoryStore) -> None:
    store.history_file.parent.mkdir(parents=True)
    store.history_file.write_bytes(b"[2026-01-01 10:00] typed by hand")
    store.append_history("[2026-01-02 10:00] new")
    assert store.history_file.read_bytes() == b"[2026-01-01 10:00] typed by hand\n\n[2026-01-02 10:00] new\n\n"
    store.append_history("   ")
    assert store.history_file.read_bytes().endswith(b"new\n\n")


def test_split_history_entries_handles_crlf_and_whitespace_lines() -> None:
    text = "[a] one\r\n  \r\n[b] two\r\ncontinued\n\n\n\n[c] three"
    assert split_history_entries(text) == ["[a] one", "[b] two\ncontinued", "[c] three"]
    assert split_history_entries("") == []


def test_memory_context_and_bom(store: MemoryStore) -> None:
    store.memory_file.parent.mkdir(parents=True)
    store.memory_file.write_bytes("\ufeff# Facts\n- x\n".encode("utf-8"))
    assert store.read_long_term() == "# Facts\n- x\n"
    assert store.get_memory_context() == "## Long-term Memory\n# Facts\n- x\n"


def test_rewrite_keeps_the_previous_content_as_a_version(store: MemoryStore) -> None:
    store.write_long_term("v1\n")  # no file yet: nothing to keep
    assert store.list_versions() == []
    assert store.memory_file.read_bytes() == b"v1\n"

    store.write_long_term("v1\n", source="agent")  # unchanged: no-op
    assert store.list_versions() == []

    store.write_long_term("v2\n", source="agent")
    store.write_long_term("v3\n", source="consolidation")
    versions = store.list_versions()
    assert [(v.source, store.read_version(v)) for v in versions] == [("consolidation", "v2\n"), ("agent", "v1\n")]
    assert versions[0].saved_at >= versions[1].saved_at
    assert versions[0].size == 3
    assert versions[0].path.parent == store.workspace.memory_dir / ".versions"
    assert versions[0].path.name.startswith("MEMORY-") and versions[0].path.name.endswith("-consolidation.md")
    assert store.memory_file.read_bytes() == b"v3\n"


def test_restore_brings_a_version_back_and_keeps_what_it_replaced(store: MemoryStore) -> None:
    store.write_long_term("original\n")
    store.write_long_term("rewritten by the agent\n", source="agent")
    (old,) = store.list_versions()
    store.restore_version(old)
    assert store.read_long_term() == "original\n"
    newest = store.list_versions()[0]
    assert newest.source == "restore"
    assert store.read_version(newest) == "rewritten by the agent\n"


def test_versions_keep_non_utf8_bytes_exactly(store: MemoryStore) -> None:
    store.memory_file.parent.mkdir(parents=True)
    store.memory_file.write_bytes(b"caf\xe9\n")
    store.write_long_term("clean\n")
    (version,) = store.list_versions()
    assert version.path.read_bytes() == b"caf\xe9\n"
    store.restore_version(version)
    assert store.memory_file.read_bytes() == b"caf\xe9\n"


def test_versions_in_the_same_clock_tick_do_not_overwrite(store: MemoryStore, monkeypatch: pytest.MonkeyPatch) -> None:
    import nanobot_desktop.engine.memory.store as memory_module

    class FrozenClock(datetime):
        @classmethod
        def now(cls, tz=None):  # type: ignore[override]
            return datetime(2026, 3, 8, 14, 35, 1, 5)

    monkeypatch.setattr(memory_module, "datetime", FrozenClock)
    for text in ("a", "b", "c"):
        store.write_long_term(text)
    names = sorted(p.name for p in (store.workspace.memory_dir / ".versions").iterdir())
    assert names == ["MEMORY-20260308-143501-000005-user.md", "MEMORY-20260308-143501-000006-user.md"]


def test_foreign_files_in_versions_are_ignored_and_bad_sources_rejected(store: MemoryStore) -> None:
    versions_dir = store.workspace.memory_dir / ".versions"
    versions_dir.mkdir(parents=True)
    (versions_dir / "notes.txt").write_text("x", encoding="utf-8")
    (versions_dir / "MEMORY-2026-bad-user.md").write_text("x", encoding="utf-8")
    assert store.list_versions() == []
    with pytest.raises(ValueError, match="source"):
        store.write_long_term("x", source="../evil")


def test_save_memory_schema() -> None:
    function = SAVE_MEMORY_TOOL["function"]
    assert SAVE_MEMORY_TOOL["type"] == "function" and function["name"] == "save_memory"
    assert set(function["parameters"]["properties"]) == {"history_entry", "memory_update"}
    assert function["parameters"]["required"] == ["history_entry", "memory_update"]


# ---- consolidation: which slice ---------------------------------------------------------------


async def test_twelve_messages_window_ten_consolidates_seven(store: MemoryStore) -> None:
    chat = FakeChat()
    offset = await consolidate(_messages(12), 0, store, chat, memory_window=10)
    assert offset == 7
    assert chat.conversation_lines == [f"[2026-11-22T14:{30 + i:02d}] {'USER' if i % 2 == 0 else 'ASSISTANT'}: m{i}" for i in range(7)]
    assert chat.calls[0][1] == [SAVE_MEMORY_TOOL]
    assert store.history_file.read_bytes() == (ENTRY + "\n\n").encode("utf-8")
    assert store.memory_file.read_bytes() == b"# Facts\n- likes tea\n"


async def test_prompt_shape(store: MemoryStore) -> None:
    store.write_long_term("# Facts\n- lives in Lyon\n")
    chat = FakeChat()
    messages = [
        {"role": "user", "content": "hi", "timestamp": "2026-11-22T14:36:00"},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "x"}], "timestamp": "2026-11-22T14:37:00"},
        {"role": "tool", "content": "file text", "timestamp": "2026-11-22T14:38:00"},
        {"role": "assistant", "content": "done", "tools_used": ["read_file", "exec"], "timestamp": "2026-11-22T14:39:00"},
        {"role": "user", "content": [{"type": "text", "text": "look"}, {"type": "image_url", "image_url": {"url": "data:image/png;base64,AA"}}]},
    ]
    assert await consolidate(messages, 0, store, chat, archive_all=True) == 0
    system, user = chat.calls[0][0]
    assert system["role"] == "system" and "save_memory" in system["content"]
    assert user["role"] == "user"
    assert "## Current Long-term Memory\n# Facts\n- lives in Lyon\n\n\n## Conversation to Process\n" in user["content"]
    assert chat.conversation_lines == [
        "[2026-11-22T14:36] USER: hi",
        "[2026-11-22T14:38] TOOL: file text",
        "[2026-11-22T14:39] ASSISTANT [tools: read_file, exec]: done",
        "[?] USER: look [image]",
    ]


async def test_empty_memory_is_shown_as_empty(store: MemoryStore) -> None:
    chat = FakeChat()
    await consolidate(_messages(3), 0, store, chat, archive_all=True)
    assert "## Current Long-term Memory\n(empty)\n\n## Conversation to Process\n" in chat.calls[0][0][1]["content"]


async def test_continues_from_last_consolidated(store: MemoryStore) -> None:
    chat = FakeChat()
    assert await consolidate(_messages(20), 7, store, chat, memory_window=10) == 15
    assert [line.rsplit(": ", 1)[1] for line in chat.conversation_lines] == [f"m{i}" for i in range(7, 15)]


@pytest.mark.parametrize(("count", "last"), [(5, 0), (4, 0), (12, 12), (12, 7)])
async def test_nothing_to_do_returns_the_offset_without_a_call(store: MemoryStore, count: int, last: int) -> None:
    chat = FakeChat()
    assert await consolidate(_messages(count), last, store, chat, memory_window=10) == last
    assert chat.calls == []
    assert not store.history_file.exists()


async def test_archive_all_summarises_everything_after_the_offset(store: MemoryStore) -> None:
    chat = FakeChat()
    assert await consolidate(_messages(12), 4, store, chat, archive_all=True, memory_window=10) == 0
    assert [line.rsplit(": ", 1)[1] for line in chat.conversation_lines] == [f"m{i}" for i in range(4, 12)]


async def test_archive_all_with_nothing_left_makes_no_call(store: MemoryStore) -> None:
    chat = FakeChat()
    assert await consolidate(_messages(3), 3, store, chat, archive_all=True) == 0
    assert chat.calls == []


async def test_contentless_slice_advances_without_a_call(store: MemoryStore) -> None:
    chat = FakeChat()
    messages = [{"role": "assistant", "content": None, "tool_calls": [{"id": str(i)}]} for i in range(12)]
    assert await consolidate(messages, 0, store, chat, memory_window=10) == 7
    assert chat.calls == []


async def test_messages_appended_during_the_call_are_not_marked_consolidated(store: MemoryStore) -> None:
    messages = _messages(12)

    class AppendingChat(FakeChat):
        async def __call__(self, msgs: list[dict[str, Any]], tools: list[dict[str, Any]]) -> LLMResponse:
            messages.extend(_messages(3))  # the concurrent turn keeps going while the model thinks
            await asyncio.sleep(0)
            return await super().__call__(msgs, tools)

    chat = AppendingChat()
    assert await consolidate(messages, 0, store, chat, memory_window=10) == 7
    assert len(messages) == 15
    assert len(chat.conversation_lines) == 7


# ---- consolidation: applying the result -------------------------------------------------------


@pytest.mark.parametrize(
    "arguments",
    [
        {"history_entry": ENTRY, "memory_update": "new facts"},
        json.dumps({"history_entry": ENTRY, "memory_update": "new facts"}),
        [{"history_entry": ENTRY, "memory_update": "new facts"}, {"history_entry": "ignored"}],
    ],
    ids=["dict", "json-string", "list"],
)
async def test_argument_forms_are_accepted(store: MemoryStore, arguments: Any) -> None:
    assert await consolidate(_messages(12), 0, store, FakeChat(arguments), memory_window=10) == 7
    assert store.history_file.read_bytes() == (ENTRY + "\n\n").encode("utf-8")
    assert store.memory_file.read_bytes() == b"new facts"


async def test_raw_arguments_are_used_when_the_dict_is_empty(store: MemoryStore) -> None:
    call = ToolCallRequest(id="c", name="save_memory", arguments={}, raw_arguments=json.dumps({"history_entry": ENTRY}))
    chat = FakeChat(response=LLMResponse(content=None, tool_calls=[call]))
    assert await consolidate(_messages(12), 0, store, chat, memory_window=10) == 7
    assert store.read_history() == ENTRY + "\n\n"


async def test_first_save_memory_call_is_used_even_after_another_tool(store: MemoryStore) -> None:
    calls = [
        ToolCallRequest(id="a", name="read_file", arguments={"path": "x"}),
        ToolCallRequest(id="b", name="save_memory", arguments={"history_entry": "first"}),
        ToolCallRequest(id="c", name="save_memory", arguments={"history_entry": "second"}),
    ]
    chat = FakeChat(response=LLMResponse(content=None, tool_calls=calls))
    assert await consolidate(_messages(12), 0, store, chat, memory_window=10) == 7
    assert store.read_history() == "first\n\n"


async def test_non_string_values_are_json_encoded(store: MemoryStore) -> None:
    chat = FakeChat({"history_entry": {"when": "2026", "what": "tea"}, "memory_update": ["a", "b"]})
    assert await consolidate(_messages(12), 0, store, chat, memory_window=10) == 7
    assert store.read_history() == '{"when": "2026", "what": "tea"}\n\n'
    assert store.read_long_term() == '["a", "b"]'


async def test_unchanged_or_empty_memory_update_does_not_rewrite(store: MemoryStore) -> None:
    store.write_long_term("same\n")
    for update in ("same\n", ""):
        chat = FakeChat({"history_entry": ENTRY, "memory_update": update})
        assert await consolidate(_messages(12), 0, store, chat, memory_window=10) == 7
    assert store.read_long_term() == "same\n"
    assert store.list_versions() == []
    assert split_history_entries(store.read_history()) == [ENTRY, ENTRY]


async def test_memory_rewrite_by_consolidation_is_versioned(store: MemoryStore) -> None:
    store.write_long_term("before\n")
    assert await consolidate(_messages(12), 0, store, FakeChat(), memory_window=10) == 7
    (version,) = store.list_versions()
    assert (version.source, store.read_version(version)) == ("consolidation", "before\n")


@pytest.mark.parametrize(
    "chat",
    [
        FakeChat(response=LLMResponse(content="I summarised it for you.")),
        FakeChat(response=LLMResponse(content="Error calling LLM", finish_reason="error")),
        FakeChat([]),
        FakeChat(["not a dict"]),
        FakeChat("not json {"),
        FakeChat(json.dumps("a string")),
        FakeChat({}),
        FakeChat({"history_entry": "", "memory_update": ""}),
        FakeChat(response=LLMResponse(content=None, tool_calls=[ToolCallRequest(id="x", name="other_tool", arguments={"history_entry": "x"})])),
        FakeChat(response=LLMResponse(content=None, tool_calls=[ToolCallRequest(id="x", name="save_memory", arguments={}, raw_arguments="{bad", parse_error="Expecting value")])),
        FakeChat(error=ProviderError("The endpoint refused the API key.", kind="auth")),
        FakeChat(error=RuntimeError("boom")),
    ],
    ids=[
        "no-tool-call", "error-response", "empty-list", "list-of-non-dict", "bad-json", "json-non-object",
        "empty-dict", "empty-values", "other-tool", "parse-error", "provider-error", "exception",
    ],
)
async def test_failure_returns_none_and_writes_nothing(store: MemoryStore, chat: FakeChat) -> None:
    store.write_long_term("keep me\n")
    store.append_history("[2026-01-01 00:00] old")
    before = (store.memory_file.read_bytes(), store.history_file.read_bytes())
    assert await consolidate(_messages(12), 3, store, chat, memory_window=10) is None
    assert (store.memory_file.read_bytes(), store.history_file.read_bytes()) == before
    assert store.list_versions() == []
    result = await consolidate_detailed(_messages(12), 3, store, chat, memory_window=10)
    assert result.offset is None and not result.ok and result.error


async def test_detailed_result_reports_what_was_done(store: MemoryStore) -> None:
    result = await consolidate_detailed(_messages(12), 0, store, FakeChat(), memory_window=10)
    assert (result.offset, result.summarised, result.history_entry, result.memory_changed) == (7, 7, ENTRY, True)
    failed = await consolidate_detailed(_messages(12), 0, store, FakeChat(error=ProviderError("unreachable", kind="unreachable")), memory_window=10)
    assert failed.error is not None and failed.error.startswith("the model call failed: unreachable;")


async def test_consolidation_can_be_cancelled(store: MemoryStore) -> None:
    started = asyncio.Event()

    async def slow_chat(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> LLMResponse:
        started.set()
        await asyncio.Event().wait()  # never answers
        raise AssertionError("unreachable")

    task = asyncio.create_task(consolidate(_messages(12), 0, store, slow_chat, memory_window=10))
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert not store.history_file.exists()
