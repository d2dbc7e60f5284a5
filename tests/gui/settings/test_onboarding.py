"""First-run onboarding: workspace choice, local server discovery, endpoint test, Finish."""

from __future__ import annotations

import json
import socket
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialog, QFileDialog, QLineEdit

from nanobot_desktop.engine.config import default_config_path, load_config
from nanobot_desktop.engine.llm.registry import resolve_provider
from nanobot_desktop.gui.settings.onboarding import OnboardingDialog, describe_workspace
from nanobot_desktop.gui.shell.startup import needs_onboarding

LEFT = Qt.MouseButton.LeftButton


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def make_dialog(qtbot, config_path: Path | None = None, **kwargs) -> OnboardingDialog:
    kwargs.setdefault("scan_timeout_s", 5.0)  # a loaded test machine must not make a probe time out
    dialog = OnboardingDialog(config_path, **kwargs)
    qtbot.addWidget(dialog)
    dialog.open()
    qtbot.waitExposed(dialog)
    return dialog


def retype(qtbot, edit: QLineEdit, text: str) -> None:
    edit.setFocus()
    edit.selectAll()
    qtbot.keyClick(edit, Qt.Key.Key_Delete)
    qtbot.keyClicks(edit, text)


def existing_workspace(root: Path) -> Path:
    """A workspace as the nanobot CLI leaves it: sessions, memory, skills (no AGENTS.md yet)."""
    (root / "sessions").mkdir(parents=True)
    for name in ("cli_direct", "telegram_42", "desktop_20250101"):
        (root / "sessions" / f"{name}.jsonl").write_text('{"_type": "metadata"}\n', encoding="utf-8")
    (root / "memory").mkdir()
    (root / "memory" / "MEMORY.md").write_text("# Memory\n- likes tea\n", encoding="utf-8")
    for skill in ("weather", "notes"):
        (root / "skills" / skill).mkdir(parents=True)
        (root / "skills" / skill / "SKILL.md").write_text(f"---\nname: {skill}\n---\n", encoding="utf-8")
    (root / "skills" / "half-made").mkdir()  # no SKILL.md: not a skill
    return root


def scan_on_model_page(qtbot, dialog: OnboardingDialog) -> None:
    qtbot.mouseClick(dialog.next_button, LEFT)
    assert dialog.pages.currentIndex() == 1
    qtbot.waitUntil(lambda: dialog._scan_task is not None and dialog._scan_task.done(), timeout=10_000)


# --- workspace page ------------------------------------------------------------------------------------


def test_an_empty_home_needs_onboarding_and_a_config_file_ends_it(tmp_path):
    assert needs_onboarding()
    assert needs_onboarding(tmp_path / "custom.json")
    default_config_path().parent.mkdir(parents=True)
    default_config_path().write_text("{}", encoding="utf-8")
    assert not needs_onboarding()
    assert needs_onboarding(tmp_path / "custom.json")


def test_an_existing_workspace_is_recognised_and_described(qtbot, tmp_path):
    root = existing_workspace(tmp_path / "old-ws")
    dialog = make_dialog(qtbot, tmp_path / "config.json")
    assert dialog.workspace_edit.text() == "~/.nanobot/workspace"
    assert dialog.workspace_note.text() == "A new workspace will be created in this folder."
    retype(qtbot, dialog.workspace_edit, str(root))
    assert dialog.workspace_note.text() == ("Existing nanobot workspace found: 3 sessions, memory, 2 skills "
                                            "— it will be used as is.")


def test_other_folders_get_a_plain_note_and_a_file_is_refused(qtbot, tmp_path):
    (tmp_path / "stuff").mkdir()
    (tmp_path / "stuff" / "notes.txt").write_text("x", encoding="utf-8")
    (tmp_path / "empty").mkdir()
    (tmp_path / "a-file").write_text("x", encoding="utf-8")
    assert describe_workspace(str(tmp_path / "stuff"))[0].startswith("This folder is not empty.")
    assert describe_workspace(str(tmp_path / "empty")) == ("This empty folder will become the workspace.", True)
    dialog = make_dialog(qtbot, tmp_path / "config.json")
    retype(qtbot, dialog.workspace_edit, str(tmp_path / "a-file"))
    qtbot.mouseClick(dialog.next_button, LEFT)
    assert dialog.pages.currentIndex() == 0
    assert dialog.workspace_error.isVisible() and "is a file, not a folder" in dialog.workspace_error.text()


def test_choose_opens_a_non_modal_folder_picker_that_fills_the_path(qtbot, tmp_path):
    root = existing_workspace(tmp_path / "picked")
    dialog = make_dialog(qtbot, tmp_path / "config.json")
    qtbot.mouseClick(dialog.choose_button, LEFT)  # returns at once: no nested event loop
    picker = dialog.folder_dialog
    assert isinstance(picker, QFileDialog) and picker.isVisible()
    assert picker.fileMode() == QFileDialog.FileMode.Directory
    assert picker.windowModality() == Qt.WindowModality.WindowModal
    picker.selectFile(str(root))
    picker.accept()
    assert dialog.workspace_edit.text() == str(root)
    assert dialog.workspace_note.text().startswith("Existing nanobot workspace found: 3 sessions")


# --- model page --------------------------------------------------------------------------------------------


def test_discovery_finds_the_local_server_and_choosing_it_fills_the_form(qtbot, qloop, fake_openai, tmp_path):
    fake_openai.models = ["fake-model", "qwen3:8b"]
    candidates = [("Ollama", f"http://127.0.0.1:{closed_port()}/v1"), ("llama.cpp", fake_openai.base_url)]
    dialog = make_dialog(qtbot, tmp_path / "config.json", candidates=candidates)
    assert dialog._scan_task is None  # nothing is probed before the model page is shown
    scan_on_model_page(qtbot, dialog)
    assert dialog.scan_status.text() == ("Found llama.cpp on this computer and selected it. "
                                         "You can enter another endpoint below instead.")
    assert dialog.server_list.count() == 1
    item = dialog.server_list.item(0)
    assert item.text() == f"llama.cpp — {fake_openai.base_url} — 2 models: fake-model, qwen3:8b"
    rect = dialog.server_list.visualItemRect(item)
    qtbot.mouseClick(dialog.server_list.viewport(), LEFT, pos=rect.center())
    choice = dialog.provider_form.choice()
    assert (choice.name, choice.base_url, choice.model) == ("llamacpp", fake_openai.base_url, "fake-model")
    assert dialog.provider_form.preset_combo.currentText() == "llama.cpp"  # saved as providers.custom
    combo = dialog.provider_form.model_combo
    assert [combo.itemText(i) for i in range(combo.count())] == ["fake-model", "qwen3:8b"]


def test_the_one_server_found_is_preselected_and_finish_uses_it_at_once(qtbot, qloop, fake_openai, tmp_path):
    fake_openai.models = ["qwen3:8b", "llama3.2:3b"]
    config_path = tmp_path / "config.json"
    candidates = [("Ollama", fake_openai.base_url), ("LM Studio", f"http://127.0.0.1:{closed_port()}/v1"),
                  ("vLLM", f"http://127.0.0.1:{closed_port()}/v1")]
    dialog = make_dialog(qtbot, config_path, workspace=tmp_path / "ws", candidates=candidates)
    form = dialog.provider_form
    assert form.choice().name == "openai" and not form.choice().api_key  # what the page shows before the scan
    scan_on_model_page(qtbot, dialog)
    assert dialog.server_list.currentRow() == 0 and dialog.server_list.currentItem().isSelected()
    choice = form.choice()
    assert (choice.name, choice.base_url, choice.model) == ("ollama", fake_openai.base_url, "qwen3:8b")
    assert form.preset_combo.currentText() == "Ollama" and choice.api_key == ""  # a local server needs no key
    with qtbot.waitSignal(dialog.finished_setup, timeout=5000):
        qtbot.mouseClick(dialog.finish_button, LEFT)  # nothing else chosen or typed
    resolved = resolve_provider(load_config(config_path))
    assert (resolved.name, resolved.api_base, resolved.model) == ("custom", fake_openai.base_url, "qwen3:8b")


def test_a_form_the_person_already_filled_is_not_overridden_by_the_scan(qtbot, qloop, fake_openai, tmp_path):
    dialog = make_dialog(qtbot, tmp_path / "config.json", candidates=[("Ollama", fake_openai.base_url)])
    qtbot.mouseClick(dialog.next_button, LEFT)
    retype(qtbot, dialog.provider_form.api_key_edit, "sk-typed-before-the-scan-ended")
    qtbot.waitUntil(lambda: dialog._scan_task is not None and dialog._scan_task.done(), timeout=10_000)
    assert dialog.server_list.count() == 1 and dialog.server_list.currentRow() == -1
    assert dialog.scan_status.text().startswith("Found 1 server.")
    assert dialog.provider_form.choice().name == "openai"
    assert dialog.provider_form.choice().api_key == "sk-typed-before-the-scan-ended"


def test_no_local_server_says_so_and_scan_again_finds_a_new_one(qtbot, qloop, fake_openai, tmp_path):
    port = closed_port()
    candidates = [("Ollama", f"http://127.0.0.1:{port}/v1")]
    dialog = make_dialog(qtbot, tmp_path / "config.json", candidates=candidates)
    scan_on_model_page(qtbot, dialog)
    assert dialog.scan_status.text().startswith(f"No local model server found (looked for Ollama ({port}))")
    assert dialog.server_list.count() == 0 and not dialog.server_list.isVisible()
    dialog._candidates = (("Ollama", fake_openai.base_url),)  # as if the person started Ollama meanwhile
    qtbot.mouseClick(dialog.scan_button, LEFT)
    qtbot.waitUntil(lambda: dialog.server_list.count() == 1, timeout=10_000)
    dialog.server_list.setCurrentRow(0)
    assert dialog.provider_form.choice().name == "ollama"


def test_test_connection_gives_specific_messages_for_bad_endpoints(qtbot, qloop, fake_openai, tmp_path):
    dialog = make_dialog(qtbot, tmp_path / "config.json", candidates=[])
    scan_on_model_page(qtbot, dialog)
    form = dialog.provider_form
    form.preset_combo.setCurrentIndex(form.preset_combo.findData("custom"))

    def test_with(url: str) -> tuple[bool, str]:
        retype(qtbot, form.base_url_edit, url)
        with qtbot.waitSignal(form.check_finished, timeout=10_000) as blocker:
            qtbot.mouseClick(form.test_button, LEFT)
        return tuple(blocker.args)

    root = fake_openai.base_url.removesuffix("/v1")
    ok, message = test_with(root)  # forgot the /v1
    assert not ok and message.startswith(f"{root} answered 404 Not Found")
    ok, message = test_with(f"http://127.0.0.1:{closed_port()}/v1")
    assert not ok and "(connection refused). Check that the server is running" in message
    assert test_with(fake_openai.base_url) == (True, "Connected: 1 model")
    assert "Traceback" not in form.status.text()


# --- finish ---------------------------------------------------------------------------------------------------


def test_finish_writes_a_config_that_resolves_to_the_found_server(qtbot, qloop, fake_openai, tmp_path):
    config_path = tmp_path / "home-config" / "config.json"
    workspace = tmp_path / "new-ws"
    dialog = make_dialog(qtbot, config_path, candidates=[("llama.cpp", fake_openai.base_url)])
    retype(qtbot, dialog.workspace_edit, str(workspace))
    scan_on_model_page(qtbot, dialog)
    dialog.server_list.setCurrentRow(0)
    with qtbot.waitSignal(dialog.finished_setup, timeout=5000) as finished:
        qtbot.mouseClick(dialog.finish_button, LEFT)
    assert finished.args == [config_path, workspace.resolve()]
    assert dialog.result() == QDialog.DialogCode.Accepted

    on_disk = json.loads(config_path.read_text(encoding="utf-8"))
    assert on_disk["agents"]["defaults"]["workspace"] == str(workspace)
    assert on_disk["agents"]["defaults"]["provider"] == "auto"  # the rules pick providers.custom: nothing forced
    assert on_disk["providers"]["custom"]["apiBase"] == fake_openai.base_url
    resolved = resolve_provider(load_config(config_path))
    assert (resolved.name, resolved.api_base, resolved.model) == ("custom", fake_openai.base_url, "fake-model")
    for name in ("AGENTS.md", "SOUL.md", "USER.md", "TOOLS.md", "HEARTBEAT.md", "memory/MEMORY.md"):
        assert (workspace / name).is_file(), name
    assert not needs_onboarding(config_path)


def test_finish_on_an_existing_workspace_changes_none_of_its_files(qtbot, qloop, fake_openai, tmp_path):
    root = existing_workspace(tmp_path / "old-ws")
    before = {p: p.read_bytes() for p in root.rglob("*") if p.is_file()}
    config_path = tmp_path / "config.json"
    dialog = make_dialog(qtbot, config_path, workspace=root, candidates=[])
    assert dialog.workspace_edit.text() == str(root)
    scan_on_model_page(qtbot, dialog)
    form = dialog.provider_form
    form.set_choice("openrouter")
    retype(qtbot, form.api_key_edit, "sk-or-123")
    form.model_combo.setEditText("anthropic/claude-sonnet-4")
    with qtbot.waitSignal(dialog.finished_setup, timeout=5000):
        qtbot.mouseClick(dialog.finish_button, LEFT)
    assert {p: p.read_bytes() for p in before} == before
    assert (root / "AGENTS.md").is_file()  # only what was missing is added
    resolved = resolve_provider(load_config(config_path))
    assert (resolved.name, resolved.api_key, resolved.api_base) == ("openrouter", "sk-or-123",
                                                                    "https://openrouter.ai/api/v1")
    assert json.loads(config_path.read_text())["providers"]["openrouter"]["apiBase"] is None  # default not copied in


def test_a_config_that_appeared_meanwhile_is_updated_not_replaced(qtbot, qloop, fake_openai, tmp_path):
    config_path = tmp_path / "config.json"
    dialog = make_dialog(qtbot, config_path, workspace=tmp_path / "ws", candidates=[])
    scan_on_model_page(qtbot, dialog)
    config_path.write_text(json.dumps({"agents": {"defaults": {"maxTokens": 1234}}, "mine": [1, 2]}), encoding="utf-8")
    dialog.provider_form.set_choice("custom", base_url=fake_openai.base_url, model="fake-model")
    qtbot.mouseClick(dialog.finish_button, LEFT)
    on_disk = json.loads(config_path.read_text())
    assert on_disk["mine"] == [1, 2] and on_disk["agents"]["defaults"]["maxTokens"] == 1234
    assert on_disk["agents"]["defaults"]["model"] == "fake-model"


def test_finish_with_a_bad_endpoint_or_no_model_writes_nothing(qtbot, qloop, tmp_path):
    config_path = tmp_path / "config.json"
    dialog = make_dialog(qtbot, config_path, workspace=tmp_path / "ws", candidates=[])
    scan_on_model_page(qtbot, dialog)
    form = dialog.provider_form
    form.set_choice("custom")
    retype(qtbot, form.base_url_edit, "127.0.0.1:8000")
    with qtbot.assertNotEmitted(dialog.finished_setup):
        qtbot.mouseClick(dialog.finish_button, LEFT)
    assert form.base_url_error.text() == "The base URL must start with http:// or https://"
    assert form.model_error.isVisible()
    assert not config_path.exists() and not (tmp_path / "ws").exists()
    assert dialog.isVisible()


def test_back_returns_to_the_workspace_page(qtbot, qloop, tmp_path):
    dialog = make_dialog(qtbot, tmp_path / "config.json", candidates=[])
    assert dialog.next_button.isVisible() and not dialog.finish_button.isVisible()
    scan_on_model_page(qtbot, dialog)
    assert dialog.finish_button.isVisible() and dialog.back_button.isVisible()
    qtbot.mouseClick(dialog.back_button, LEFT)
    assert dialog.pages.currentIndex() == 0 and "Step 1 of 2" in dialog.step_label.text()
