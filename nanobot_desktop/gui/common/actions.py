"""Every QAction of the app in one registry, so menus, the tray, context menus and shortcuts share them.

One QAction per command means one enabled state, one shortcut and one tooltip: disabling "Stop"
greys it out in the menu, the tray and the chat at once, and a shortcut cannot drift from the menu
text that advertises it. The registry only creates and describes actions; the main window connects
their `triggered` signals to what they do.

Shortcut scope: Rename (F2), Delete (Del) and Undo delete (Ctrl+Z) act on the session list, so
they only fire while it has focus (the session panel adds them to itself); in a text field Del and
Ctrl+Z keep their usual editing meaning. Everything else works anywhere in the window.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QApplication, QMenu, QMenuBar, QWidget

if TYPE_CHECKING:
    # Both loaded with the icons, after the first paint: creating their Python types (and their large
    # enums) costs ~5 ms, and the frame's menus show no icons.
    from PySide6.QtGui import QIcon

from nanobot_desktop.gui.common.i18n import translate

def text_action(text: str, parent: QObject) -> QAction:
    """`QAction(text, parent)`, made without PySide matching that call against the overloads that take
    an icon: doing so creates QIcon's Python type and its large enums (~1 ms) before the first paint."""
    action = QAction(parent)
    action.setText(text)
    return action


def _icon(theme_name: str, fallback: str | None) -> QIcon:
    """The desktop theme's icon, else Qt's built-in one (offscreen and bare window managers have no
    theme); `fallback` names a QStyle.StandardPixmap ("SP_FileIcon")."""
    from PySide6.QtGui import QIcon
    from PySide6.QtWidgets import QStyle

    style = QApplication.style()
    if fallback is None or style is None:
        return QIcon.fromTheme(theme_name, QIcon())
    return QIcon.fromTheme(theme_name, style.standardIcon(getattr(QStyle.StandardPixmap, fallback)))


class ActionRegistry(QObject):
    """Creates the app's actions (parented to `parent`, normally the main window).

    `icons=False` leaves the icons out until `load_icons()`: the window's frame paints before them
    (its menus show no icons), which keeps ~30 icon look-ups off the path to the first paint.
    """

    def __init__(self, parent: QWidget, *, icons: bool = True) -> None:
        super().__init__(parent)
        self._window = parent
        self._all: dict[str, QAction] = {}
        self._icons: dict[str, tuple[str, str | None]] = {}
        self._icons_loaded = False
        self.dock_toggles: dict[str, QAction] = {}
        """objectName of a dock -> its toggleViewAction (added by the main window with `add_dock_toggle`)."""

        self.new_chat = self._make("new_chat", translate("Actions", "&New chat"), [QKeySequence.StandardKey.New],
                                   "document-new", "SP_FileIcon", translate("Actions", "Start a new conversation"))
        self.stop = self._make("stop", translate("Actions", "&Stop"), [QKeySequence(Qt.Key.Key_Escape)], "process-stop",
                               "SP_BrowserStop", translate("Actions", "Stop the running reply, its tool and its subagents (Esc)"))
        self.stop.setEnabled(False)
        self.rename_session = self._make("rename_session", translate("Actions", "&Rename session…"), [QKeySequence(Qt.Key.Key_F2)],
                                         "edit-rename", None, translate("Actions", "Give the selected session a title (F2)"),
                                         scope=Qt.ShortcutContext.WidgetWithChildrenShortcut)
        self.delete_session = self._make("delete_session", translate("Actions", "&Delete session"), [QKeySequence.StandardKey.Delete],
                                         "edit-delete", "SP_TrashIcon",
                                         translate("Actions", "Move the selected session to the trash (it can be restored)"),
                                         scope=Qt.ShortcutContext.WidgetWithChildrenShortcut)
        self.undo_delete = self._make("undo_delete", translate("Actions", "&Undo delete"), [QKeySequence.StandardKey.Undo],
                                      "edit-undo", "SP_ArrowBack", translate("Actions", "Restore the session deleted last"),
                                      scope=Qt.ShortcutContext.WidgetWithChildrenShortcut)
        self.undo_delete.setEnabled(False)
        self.export_markdown = self._make("export_markdown", translate("Actions", "Export as &Markdown…"), [],
                                          "document-save-as", "SP_DialogSaveButton",
                                          translate("Actions", "Save the session as a readable Markdown transcript"))
        self.export_json = self._make("export_json", translate("Actions", "Export as &JSON…"), [], "document-save-as", None,
                                      translate("Actions", "Save the session's metadata and messages as JSON"))
        self.reveal_file = self._make("reveal_file", translate("Actions", "Re&veal session file"), [], "folder-open", "SP_DirOpenIcon",
                                      translate("Actions", "Open the folder holding the session's .jsonl file"))
        self.search_sessions = self._make("search_sessions", translate("Actions", "Searc&h sessions…"), [QKeySequence("Ctrl+K")],
                                          "edit-find", "SP_FileDialogContentsView",
                                          translate("Actions", "Search session titles and message text (Ctrl+K)"))
        self.settings = self._make("settings", translate("Actions", "&Settings…"),
                                   [QKeySequence.StandardKey.Preferences, QKeySequence("Ctrl+,")],
                                   "preferences-system", "SP_FileDialogDetailedView",
                                   translate("Actions", "Model endpoint, agent, tool approvals, heartbeat, theme"),
                                   role=QAction.MenuRole.PreferencesRole)
        self.run_heartbeat = self._make("run_heartbeat", translate("Actions", "&Run heartbeat now"), [], "media-playback-start",
                                        "SP_MediaPlay", translate("Actions", "Check HEARTBEAT.md for tasks now"))
        self.pause_heartbeat = self._make("pause_heartbeat", translate("Actions", "&Pause heartbeat"), [], "media-playback-pause",
                                          "SP_MediaPause", translate("Actions", "Stop the periodic heartbeat until resumed"))
        self.pause_heartbeat.setCheckable(True)
        self.show_hide = self._make("show_hide", translate("Actions", "Show / &hide window"), [], "window", None,
                                    translate("Actions", "Show the window, or hide it to the tray"))
        self.quit = self._make("quit", translate("Actions", "&Quit"), [QKeySequence.StandardKey.Quit, QKeySequence("Ctrl+Q")],
                               "application-exit", "SP_DialogCloseButton",
                               translate("Actions", "Stop the agent, save everything and quit"), role=QAction.MenuRole.QuitRole)
        self.open_log_folder = self._make("open_log_folder", translate("Actions", "Open &log folder"), [], "folder", "SP_DirIcon",
                                          translate("Actions", "Open the folder with the app's log files"))
        self.reset_layout = self._make("reset_layout", translate("Actions", "&Reset layout"), [], "view-restore", None,
                                       translate("Actions", "Put every panel back where it is on a first start"))
        self.check_updates = self._make("check_updates", translate("Actions", "Check for &updates…"), [],
                                        "system-software-update", None,
                                        translate("Actions", "Ask the update server whether a newer version exists"))
        self.roll_back = self._make("roll_back", translate("Actions", "Roll &back to the previous version…"), [],
                                    "edit-undo", None,
                                    translate("Actions", "Start the version kept before the last update next time"))
        self.about = self._make("about", translate("Actions", "&About nanobot Desktop"), [], "help-about", "SP_MessageBoxInformation",
                                translate("Actions", "Version and licence"), role=QAction.MenuRole.AboutRole)
        # Keyboard and screen-reader paths (window/access.py; README "Accessibility").
        self.go_to_approval = self._make("go_to_approval", translate("Actions", "Go to waiting &approval"),
                                         [QKeySequence("Ctrl+Shift+A")], "dialog-question", None,
                                         translate("Actions", "Focus the approval the agent is waiting for; then A allows once, "
                                                              "W always allows, D denies (with the reason typed), R types a reason"))
        self.next_region = self._make("next_region", translate("Actions", "Next &region"), [QKeySequence(Qt.Key.Key_F6)],
                                      "go-next", None, translate("Actions", "Move focus to the next part of the window: "
                                                                            "sessions, chat, panels (F6)"))
        self.previous_region = self._make("previous_region", translate("Actions", "Previous re&gion"),
                                          [QKeySequence("Shift+F6")], "go-previous", None,
                                          translate("Actions", "Move focus to the previous part of the window (Shift+F6)"))
        self.larger_text = self._make("larger_text", translate("Actions", "&Larger text"),
                                      [QKeySequence.StandardKey.ZoomIn, QKeySequence("Ctrl+=")], "zoom-in", None,
                                      translate("Actions", "Make all text larger (Ctrl++)"))
        self.smaller_text = self._make("smaller_text", translate("Actions", "S&maller text"), [QKeySequence.StandardKey.ZoomOut],
                                       "zoom-out", None, translate("Actions", "Make all text smaller (Ctrl+-)"))
        self.default_text = self._make("default_text", translate("Actions", "&Default text size"), [QKeySequence("Ctrl+0")],
                                       "zoom-original", None, translate("Actions", "Text at the system's size (Ctrl+0)"))
        self.keyboard_shortcuts = self._make("keyboard_shortcuts", translate("Actions", "&Keyboard shortcuts"),
                                             [QKeySequence("Ctrl+/")], "help-keyboard-shortcuts", None,
                                             translate("Actions", "Every shortcut of the app, searchable (Ctrl+/)"))
        if icons:
            self.load_icons()

    def load_icons(self) -> None:
        """Give every action its icon (once): the desktop theme's, else Qt's built-in one."""
        if self._icons_loaded:
            return
        self._icons_loaded = True
        for name, (theme_icon, fallback) in self._icons.items():
            self._all[name].setIcon(_icon(theme_icon, fallback))

    def _make(self, name: str, text: str, shortcuts: list[QKeySequence | QKeySequence.StandardKey],
              theme_icon: str, fallback: str | None, tooltip: str, *,
              scope: Qt.ShortcutContext = Qt.ShortcutContext.WindowShortcut,
              role: QAction.MenuRole = QAction.MenuRole.NoRole) -> QAction:
        action = text_action(text, self._window)
        action.setObjectName(f"action_{name}")
        self._icons[name] = (theme_icon, fallback)
        if self._icons_loaded:
            action.setIcon(_icon(theme_icon, fallback))
        keys: list[QKeySequence] = []
        for shortcut in shortcuts:
            for key in (QKeySequence.keyBindings(shortcut) if isinstance(shortcut, QKeySequence.StandardKey)
                        else [shortcut]):
                if not key.isEmpty() and key not in keys:
                    keys.append(key)
        action.setShortcuts(keys)
        action.setShortcutContext(scope)
        action.setToolTip(tooltip)
        action.setStatusTip(tooltip)
        action.setMenuRole(role)
        action.setIconVisibleInMenu(False)
        if scope == Qt.ShortcutContext.WindowShortcut:
            self._window.addAction(action)  # shortcuts work even while the menu bar is hidden
        self._all[name] = action
        return action

    def add_dock_toggle(self, name: str, action: QAction, shortcut: str | None = None) -> None:
        """Register a dock's show/hide action (from `QDockWidget.toggleViewAction()`)."""
        if shortcut:
            action.setShortcut(QKeySequence(shortcut))
            self._window.addAction(action)
        self.dock_toggles[name] = action
        self._all[f"toggle_{name}"] = action

    def get(self, name: str) -> QAction:
        return self._all[name]

    def all(self) -> dict[str, QAction]:
        """Every action by name (the dock toggles as `toggle_<dock objectName>`)."""
        return dict(self._all)

    @property
    def session_actions(self) -> list[QAction]:
        """What the session list's context menu shows, in order (None-free; separators are the menu's job)."""
        return [self.rename_session, self.delete_session, self.export_markdown, self.export_json, self.reveal_file]


def build_menus(menu_bar: QMenuBar, actions: ActionRegistry, agent_toggles: Sequence[str]) -> dict[str, QMenu]:
    """The menu bar, from the registry's actions (None is a separator); returns the menus by name.
    `agent_toggles` names the dock toggles the Agent menu lists (the Agent area's, in its order)."""
    a = actions
    layout: dict[str, tuple[str, list[QAction | None]]] = {
        "file": (translate("Actions", "&File"), [a.new_chat, a.search_sessions, None, a.export_markdown, a.export_json, a.reveal_file,
                           None, a.settings, None, a.show_hide, a.quit]),
        "session": (translate("Actions", "&Session"), [a.stop, None, a.rename_session, a.delete_session, a.undo_delete]),
        "agent": (translate("Actions", "&Agent"), [a.run_heartbeat, a.pause_heartbeat, None]
                  + [a.dock_toggles[name] for name in agent_toggles if name in a.dock_toggles]),
        "view": (translate("Actions", "&View"), [*a.dock_toggles.values(), None, a.next_region, a.previous_region,
                                                 a.go_to_approval, None, a.larger_text, a.smaller_text, a.default_text,
                                                 None, a.reset_layout]),
        "help": (translate("Actions", "&Help"), [a.keyboard_shortcuts, a.open_log_folder, a.check_updates, a.roll_back, a.about]),
    }
    menus: dict[str, QMenu] = {}
    for name, (title, entries) in layout.items():
        menu = menu_bar.addMenu(title)
        menu.setObjectName(f"menu_{name}")
        for entry in entries:
            if entry is None:
                menu.addSeparator()
            else:
                menu.addAction(entry)
        menus[name] = menu
    return menus
