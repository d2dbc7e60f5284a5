"""The real app as a screen reader sees it: the AT-SPI tree read from another process, keys from X.

One app run (it takes a while to start on a busy machine) walks the states the issue names: the
window at rest, the chat with a conversation, an approval waiting (reached and answered with keys
alone), and Settings with each of its pages. In each, no object a keyboard can reach may have an
empty name; and a screen reader must hear a finished reply and a waiting approval announced.
"""

from __future__ import annotations

import time

import pytest

from tests.gui.atspi_support import (atspi_missing, focused, start_atspi_desktop, unnamed_focusable,
                                     window_path)

pytestmark = [pytest.mark.slow, pytest.mark.xvfb,
              pytest.mark.skipif(atspi_missing() is not None, reason=str(atspi_missing()))]


@pytest.fixture
def desktop(tmp_path):
    yield from start_atspi_desktop(tmp_path)


def _shown(obj: dict) -> str:
    return f"{obj['role']} at {obj['extents']} ({obj['path']}, description {obj['description']!r})"


def assert_all_named(objects: list[dict], under: str, where: str) -> None:
    missing = unnamed_focusable(objects, under=under)
    assert not missing, f"{where}: {len(missing)} focusable objects without a name:\n" + "\n".join(map(_shown, missing))


def test_every_focusable_object_is_named_and_the_agent_is_heard(desktop, fake_openai):
    started = time.monotonic()
    desktop.launch(fake_openai.base_url)
    objects = desktop.wait_tree(lambda tree: any(o["name"] == "Message to nanobot" and "focused" in o["states"]
                                                 for o in tree), "the composer to have focus", timeout=30)
    main = window_path(objects, "^nanobot — ")
    assert_all_named(objects, main, "the main window at rest")
    timings = {"launch": time.monotonic() - started}

    # A conversation, typed and sent with keys; a screen reader hears the reply start and finish.
    fake_openai.add_text("Here is the plan.\n\nFirst, check.\n\n```\necho hi\n```\n", chunk_size=5)
    listener = desktop.listen(300)  # stopped once both announcements are due
    desktop.type("Plan my day")
    desktop.keys("Return")
    objects = desktop.wait_tree(lambda tree: any(o["name"] == "Reply from nanobot" for o in tree), "the reply")
    reply = next(o for o in objects if o["name"] == "Reply from nanobot")
    assert reply["description"] == "2 paragraphs, 1 code block"
    assert_all_named(objects, main, "the chat with a conversation")

    # An approval: announced, reached with Ctrl+Shift+A and answered with one key.
    fake_openai.add_tool_calls([("exec", {"command": "echo hi"})])
    fake_openai.add_text("The command printed hi.")
    desktop.type("Run echo hi")
    desktop.keys("Return")
    objects = desktop.wait_tree(lambda tree: any(o["name"].startswith("Approval needed") for o in tree),
                                "the approval card")
    assert_all_named(objects, main, "an approval waiting")
    card = next(o for o in objects if o["name"].startswith("Approval needed"))
    assert "exec" in card["name"] and "echo hi" in card["description"]
    desktop.keys("ctrl+shift+a")
    objects = desktop.wait_tree(lambda tree: (focused(tree) or {}).get("name") == "Allow once",
                                "Ctrl+Shift+A to focus the card's Allow once")
    assert focused(objects)["path"].startswith(card["path"]), "the focus is in the card"
    desktop.keys("a")
    objects = desktop.wait_tree(lambda tree: any(o["name"].startswith("Allowed once: exec") for o in tree),
                                "the card to fold to its answer")
    desktop.wait_tree(lambda tree: any(o["name"].startswith("Tool call exec: ok") for o in tree),
                      "the allowed command to run")
    heard = listener.heard()
    assert any(text.startswith("Reply finished: 2 paragraphs, 1 code block") for text in heard), heard
    assert any(text.startswith("Approval needed") and "exec" in text for text in heard), heard

    # Settings (Ctrl+,) and every page of it, turned with Ctrl+Tab.
    desktop.keys("ctrl+comma")
    try:
        objects = desktop.wait_tree(lambda tree: any(o["name"].startswith("Settings") and o["path"].count("/") == 1
                                                     for o in tree), "the Settings dialog")
    except BaseException:
        print("WINDOWS", [(o["role"], o["name"]) for o in desktop.tree() if o["path"].count("/") == 1], focused(desktop.tree()))
        raise
    dialog = window_path(objects, "^Settings")
    tabs = next(o for o in objects if o["path"].startswith(dialog) and o["role"] == "page tab list")
    pages = [o["name"] for o in objects if o["path"].startswith(tabs["path"] + "/") and o["role"] == "page tab"]
    assert len(pages) >= 5, pages
    for page in pages:
        objects = desktop.wait_tree(
            lambda tree, page=page: any(o["role"] == "page tab" and o["name"] == page and "selected" in o["states"]
                                        and o["path"].startswith(dialog) for o in tree), f"the {page} page")
        assert_all_named(objects, dialog, f"Settings, page {page}")
        desktop.keys("ctrl+Tab")
    timings["total"] = time.monotonic() - started
    print("timings: " + ", ".join(f"{label} {seconds:.1f} s" for label, seconds in timings.items()))
