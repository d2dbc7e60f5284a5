"""The focus ring and the largest text size, looked at: screenshots in tmp_path (keep them with
--basetemp) and the pixels checked, so the ring is really drawn in the highlight colour in both
themes and no button's text is cut at the largest size."""

from __future__ import annotations

import pytest
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QAbstractButton, QApplication

from nanobot_desktop.gui.common.focus_ring import RING_WIDTH, FocusRings
from nanobot_desktop.gui.common.text_size import TEXT_SIZES, apply_text_size
from nanobot_desktop.gui.common.theme import apply_theme, current_theme_mode
from tests.gui.window.test_keyboard_paths import focused, key, type_text
from tests.gui.window_fixtures import WAIT_MS, open_window

__all__ = ["open_window"]


@pytest.fixture
def look_restored(qapp):
    style, palette, font, mode = qapp.style().name(), qapp.palette(), qapp.font(), current_theme_mode(qapp)
    yield
    qapp.setFont(font)
    apply_theme(qapp, mode, "off")
    qapp.setStyle(style)
    qapp.setPalette(palette)


def ring_pixel_color(window) -> QColor:
    ring = FocusRings.install(QApplication.instance()).ring()
    image = window.grab().toImage()
    top_left = ring.mapTo(window, ring.rect().topLeft())
    # the middle of the ring's left edge (device pixels: the grab is at the screen's ratio)
    ratio = image.devicePixelRatio()
    return image.pixelColor(round((top_left.x() + RING_WIDTH / 2) * ratio), round((top_left.y() + ring.height() / 2) * ratio))


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_the_focused_control_has_a_ring_in_the_highlight_colour(qtbot, open_window, tmp_path, look_restored, theme):
    app = QApplication.instance()
    apply_theme(app, theme)
    window = open_window()
    window.resize(1200, 780)
    window.activateWindow()
    qtbot.waitUntil(lambda: focused() is window.composer.edit, timeout=WAIT_MS)
    type_text(qtbot, "hello")
    key(qtbot, "Tab")  # to the Send button
    qtbot.waitUntil(lambda: isinstance(focused(), QAbstractButton), timeout=WAIT_MS)
    rings = FocusRings.install(app)
    qtbot.waitUntil(lambda: rings.ring() is not None and rings.ring().parentWidget() is window and rings.ring().geometry()
                    .contains(focused().mapTo(window, focused().rect().center())), timeout=WAIT_MS)
    highlight = app.palette().color(QPalette.ColorRole.Highlight)
    seen = ring_pixel_color(window)
    assert max(abs(seen.red() - highlight.red()), abs(seen.green() - highlight.green()),
               abs(seen.blue() - highlight.blue())) < 40, (seen.name(), highlight.name())
    assert window.grab().save(str(tmp_path / f"focus-ring-{theme}.png"))


def test_the_largest_text_size_cuts_no_button(qtbot, open_window, tmp_path, look_restored):
    app = QApplication.instance()
    window = open_window()
    window.resize(1400, 900)
    apply_text_size(app, TEXT_SIZES[-1])
    window.activateWindow()
    qtbot.waitUntil(lambda: focused() is window.composer.edit, timeout=WAIT_MS)
    qtbot.waitUntil(lambda: window.composer.edit.font().pointSizeF() >= app.font().pointSizeF() - 0.01, timeout=WAIT_MS)
    type_text(qtbot, "hello")
    key(qtbot, "Tab")
    qtbot.wait(50)  # one layout pass for the new font (a paint, not a condition)
    cut = [f"{type(b).__name__} {b.text()!r}: {b.width()} < {b.sizeHint().width()}"
           for b in window.findChildren(QAbstractButton)
           if b.isVisible() and not b.visibleRegion().isEmpty() and b.text() and b.width() < b.sizeHint().width()]
    assert window.grab().save(str(tmp_path / "largest-text.png"))
    assert not cut, cut


def test_the_ring_follows_the_composer_when_the_drawer_opens_beside_the_chat(qtbot, open_window):
    """The drawer opening moves the whole composer (its line edit keeps its place inside it): the ring moves too."""
    window = open_window()
    window.resize(1920, 1080)
    edit = window.composer.edit
    edit.setFocus()
    rings = FocusRings.install(QApplication.instance())

    def ring_on_edit() -> bool:
        ring = rings.ring()
        return ring is not None and ring.geometry().contains(edit.mapTo(window, edit.rect().center()))

    qtbot.waitUntil(ring_on_edit, timeout=WAIT_MS)
    before = edit.mapTo(window, edit.rect().topLeft())
    window.docking.toggle_drawer()
    qtbot.waitUntil(lambda: edit.mapTo(window, edit.rect().topLeft()) != before, timeout=WAIT_MS)
    qtbot.waitUntil(ring_on_edit, timeout=WAIT_MS)
    ring = rings.ring()
    assert abs(ring.geometry().left() + RING_WIDTH - edit.mapTo(window, edit.rect().topLeft()).x()) <= 1


def test_a_focused_tab_bar_has_the_ring_around_its_current_tab_not_the_whole_strip(qtbot, open_window):
    window = open_window()
    window.resize(1280, 800)
    window.docking.show_page("memory_view")
    bar = window.pages.tabBar()  # Chat · Memory · Agent
    bar.setFocus()
    rings = FocusRings.install(QApplication.instance())
    qtbot.waitUntil(lambda: rings.ring() is not None, timeout=WAIT_MS)
    tab = bar.tabRect(bar.currentIndex())
    qtbot.waitUntil(lambda: rings.ring().width() <= tab.width() + 2 * RING_WIDTH, timeout=WAIT_MS)
    assert bar.width() > 3 * tab.width()  # the strip is much wider than the ring
    bar.setCurrentIndex((bar.currentIndex() + 1) % bar.count())  # arrow keys do this: the ring follows
    moved = bar.tabRect(bar.currentIndex())
    qtbot.waitUntil(lambda: abs(rings.ring().x() + RING_WIDTH - bar.mapTo(window, moved.topLeft()).x()) <= 1,
                    timeout=WAIT_MS)
