"""A background result that arrives after its widget is gone is dropped, never delivered to it.

This is what made a full run end with "Internal C++ object (MessageBar) already deleted": an
editor's worker finished after the test had closed the editor, and its queued callback ran anyway.
"""

from __future__ import annotations

import asyncio
import threading

import shiboken6
from PySide6.QtCore import QCoreApplication, QEvent
from PySide6.QtWidgets import QLabel, QWidget

from nanobot_desktop.gui.common.owned import OwnedWork
from nanobot_desktop.gui.editor.editor import MarkdownEditor
from nanobot_desktop.gui.editor.file_io import BackgroundRunner


def _delete_now(widget: QWidget) -> None:
    widget.deleteLater()
    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)


def test_a_callback_posted_by_a_thread_after_its_widget_was_deleted_is_dropped(qtbot):
    label = QLabel("waiting")
    work = OwnedWork(label)
    release = threading.Event()
    delivered: list[str] = []

    def worker() -> None:
        release.wait(5)
        work.post(lambda: (delivered.append("late"), label.setText("done")))

    thread = threading.Thread(target=worker)
    thread.start()
    _delete_now(label)
    assert not shiboken6.isValid(label)
    release.set()
    thread.join(5)
    QCoreApplication.processEvents()
    assert delivered == []


def test_a_callback_queued_before_the_widget_was_deleted_does_not_run(qtbot):
    label = QLabel("waiting")
    work = OwnedWork(label)
    delivered: list[str] = []
    thread = threading.Thread(target=lambda: work.post(lambda: delivered.append(label.text())))
    thread.start()
    thread.join(5)  # the callback is now queued for the GUI thread
    _delete_now(label)
    QCoreApplication.processEvents()
    assert delivered == []


def test_a_callback_for_a_living_widget_runs_on_the_gui_thread(qtbot):
    label = QLabel("waiting")
    qtbot.addWidget(label)
    work = OwnedWork(label)
    threads: list[threading.Thread] = []

    def set_text() -> None:
        threads.append(threading.current_thread())
        label.setText("done")

    worker = threading.Thread(target=lambda: work.post(set_text))
    worker.start()
    worker.join(5)
    qtbot.waitUntil(lambda: label.text() == "done", timeout=2000)
    assert threads == [threading.main_thread()]


def test_a_task_is_cancelled_when_its_widget_is_deleted(qtbot, qloop):
    label = QLabel("waiting")
    work = OwnedWork(label)
    gate: asyncio.Future[str] = qloop.create_future()
    reached: list[str] = []

    async def load() -> None:
        text = await gate
        reached.append(text)
        label.setText(text)

    task = work.spawn(load())
    qtbot.waitUntil(lambda: work.pending == [task], timeout=2000)
    _delete_now(label)
    gate.set_result("late result")
    qtbot.waitUntil(task.done, timeout=2000)
    assert task.cancelled()
    assert reached == []


def test_work_that_is_not_the_widgets_goes_on_and_reports_only_while_the_widget_lives(qtbot, qloop):
    """when_done: a job the engine runs is neither cancelled with the panel nor reported to a deleted one."""
    living, doomed = QLabel("waiting"), QLabel("waiting")
    qtbot.addWidget(living)
    job: asyncio.Future[str] = qloop.create_future()
    reports: list[str] = []
    OwnedWork(living).when_done(job, lambda f: (reports.append("living"), living.setText(f.result())))
    OwnedWork(doomed).when_done(job, lambda f: (reports.append("doomed"), doomed.setText(f.result())))
    _delete_now(doomed)
    assert not job.cancelled()
    job.set_result("ran")
    qtbot.waitUntil(lambda: living.text() == "ran", timeout=2000)
    assert reports == ["living"]


def test_an_editors_read_finishing_after_the_editor_is_gone_touches_nothing(qtbot, tmp_path):
    """The real case: MarkdownEditor's worker completes once the editor (and its bars) are deleted."""
    target = tmp_path / "MEMORY.md"
    target.write_bytes(b"# Memory\n")
    editor = MarkdownEditor()
    release = threading.Event()
    results: list[object] = []
    runner: BackgroundRunner = editor._runner
    runner.submit(lambda: (release.wait(5), target.read_bytes())[1],
                  lambda result, error: results.append((result, error)))
    _delete_now(editor)
    release.set()
    assert runner.wait_idle(5)
    QCoreApplication.processEvents()
    assert results == []
    runner.shutdown()
