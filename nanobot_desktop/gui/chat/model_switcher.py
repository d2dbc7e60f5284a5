"""The model switcher under the message box: which model this chat uses and who serves it, and a menu of
every model the configured providers list.

The lists come from the engine's `ModelCatalog` (each endpoint's `/models`, asked on the event loop,
cached; an endpoint that cannot be reached shows why). The choice is the session's own
(`metadata["model"]`, written by the engine in an executor); "Default model" removes it, so the
chat follows the config's `agents.defaults.model` like every other session and the CLI. The menu is
opened with `popup()`, never `exec()`: a nested event loop would stall the asyncio tasks qasync runs.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

import shiboken6
from PySide6.QtCore import QPoint, Qt, Signal
from PySide6.QtGui import QAction, QActionGroup, QResizeEvent
from PySide6.QtWidgets import QHBoxLayout, QMenu, QSizePolicy, QToolButton, QWidget

from nanobot_desktop.gui.common.owned import OwnedWork
from nanobot_desktop.gui.common.i18n import translate
from nanobot_desktop.gui.common.engine_words import provider_label

if TYPE_CHECKING:
    from nanobot_desktop.engine import Engine, ModelOption, ProviderModels

log = logging.getLogger(__name__)
MAX_BUTTON_WIDTH = 320
MAX_ERROR_WIDTH = 360  # pixels; an endpoint's error can be long


class ModelSwitcher(QWidget):
    """A flat button showing "model · provider"; clicking it opens the menu of models to choose from."""

    model_changed = Signal(str, str)
    """(session key, model): the session's own model was saved ("" = back to the config's model)."""
    failed = Signal(str)
    """The choice could not be saved (the message says why); the chat keeps its previous model."""
    shown = Signal(str)
    """The model the button shows now (the chat's own, or the config's), as sent to the endpoint."""

    def __init__(self, engine: "Engine", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("modelSwitcher")
        self.engine = engine
        self._work = OwnedWork(self)
        self.session_key = ""
        self.session_model: str | None = None  # the session's own model; None: the config's
        self._shown = ("", "")  # (model, provider) the button shows
        self._loading: asyncio.Task[None] | None = None
        self.fetch_task: asyncio.Task[None] | None = None

        self.button = QToolButton(self)
        self.button.setObjectName("modelButton")
        self.button.setAutoRaise(True)
        self.button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
        self.button.setSizePolicy(QSizePolicy.Policy.Maximum, QSizePolicy.Policy.Fixed)
        self.button.clicked.connect(self.open_menu)
        self.menu = QMenu(self)
        self.menu.setObjectName("modelMenu")
        self.menu.setToolTipsVisible(True)
        self._group = QActionGroup(self.menu)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.button)
        layout.addStretch(1)
        self.show_current()

    # --- the session's choice ------------------------------------------------------------------------

    def set_session(self, key: str) -> "asyncio.Task[None]":
        """Show `key`'s model (read in an executor: only its metadata line is read)."""
        self.session_key = key
        self.session_model = None
        self.show_current()
        self._loading = self._work.spawn(self._load(key))
        return self._loading

    async def _load(self, key: str) -> None:
        loop = asyncio.get_running_loop()
        try:
            model = await loop.run_in_executor(None, self.engine.session_models.get, key)
        except (OSError, ValueError) as error:
            log.warning("could not read the model of session %s: %s", key, error)
            model = None
        if shiboken6.isValid(self) and key == self.session_key:
            self.session_model = model
            self.show_current()

    def current_option(self) -> "ModelOption":
        catalog = self.engine.session_models.catalog
        if self.session_model is None:
            return catalog.default_option()
        return catalog.option_for(self.session_model)

    def show_current(self) -> None:
        """Show the chat's model and its provider (again: e.g. after the settings changed the default)."""
        option = self.current_option()
        self._shown = (option.label, provider_label(option.served_by))
        self._elide()
        if not option.served_by:
            tip = translate("Chat", "No configured provider can serve {model}. Click to choose another model.").format(model=option.model)
        elif self.session_model is None:
            tip = translate("Chat", "This chat uses the default model, {model}, served by {provider} at {url}. Click to choose "
                                    "another model for this chat.")
            tip = tip.format(model=option.model, provider=provider_label(option.served_by), url=option.api_base)
        else:
            tip = translate("Chat", "This chat uses {model}, served by {provider} at {url}. Click to choose another model for "
                                    "this chat.").format(model=option.model, provider=provider_label(option.served_by), url=option.api_base)
        self.button.setToolTip(tip)
        self.shown.emit(option.label)

    def _elide(self) -> None:
        """The button's text, shortened in the middle to what the composer's width leaves for it."""
        room = min(MAX_BUTTON_WIDTH, max(60, self.width() - 40)) if self.isVisible() else MAX_BUTTON_WIDTH
        metrics = self.button.fontMetrics()
        model, provider = self._shown
        text = f"{model} · {provider}" if provider else model
        if provider and metrics.horizontalAdvance(text) > room:  # the model stays whole; the provider gives way
            left = room - metrics.horizontalAdvance(f"{model} · ")
            text = f"{model} · {metrics.elidedText(provider, Qt.TextElideMode.ElideRight, left)}" if left > 40 else model
        self.button.setText(metrics.elidedText(text, Qt.TextElideMode.ElideMiddle, room) + " ▾")

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802
        super().resizeEvent(event)
        self._elide()

    def choose(self, model: str | None) -> "asyncio.Task[None]":
        """Make `model` this chat's model (None: the config's); saved in an executor. A read of the chat's
        model still under way is dropped: it began before this choice, so its answer is older."""
        if self._loading is not None and not self._loading.done():
            self._loading.cancel()
        return self._work.spawn(self._save(self.session_key, model))

    async def _save(self, key: str, model: str | None) -> None:
        loop = asyncio.get_running_loop()
        try:
            await loop.run_in_executor(None, self.engine.session_models.set, key, model)
        except (OSError, ValueError) as error:  # StorageError is an OSError
            if shiboken6.isValid(self):
                self.failed.emit(translate("Chat", "The model choice was not saved: {error}").format(error=error))
            return
        if not shiboken6.isValid(self):
            return
        saved = self.engine.session_models.get(key)  # the cached session: no file read
        if key == self.session_key:
            self.session_model = saved
            self.show_current()
        self.model_changed.emit(key, saved or "")

    # --- the menu ------------------------------------------------------------------------------------

    def open_menu(self) -> QMenu:
        """Show the menu above the button at once (from the cache), asking the endpoints if needed."""
        listings = self.engine.session_models.catalog.cached()
        self._fill(listings)
        if listings is None:
            self.refresh()
        self._place_menu()
        return self.menu

    def refresh(self) -> "asyncio.Task[None]":
        """Ask every configured endpoint for its models again."""
        if self.fetch_task is None or self.fetch_task.done():
            self.fetch_task = self._work.spawn(self._fetch())
        return self.fetch_task

    async def _fetch(self) -> None:
        listings = await self.engine.session_models.catalog.providers(refresh=True)
        if shiboken6.isValid(self):
            self._fill(listings)
            if self.menu.isVisible():
                self._place_menu()

    def _place_menu(self) -> None:
        self.menu.adjustSize()
        height = self.menu.sizeHint().height()
        below = self.button.mapToGlobal(QPoint(0, self.button.height()))
        above = self.button.mapToGlobal(QPoint(0, -height))
        screen = self.screen().availableGeometry() if self.screen() is not None else None
        point = above if screen is None or above.y() >= screen.top() else below
        if self.menu.isVisible():
            self.menu.move(point)
        else:
            self.menu.popup(point)

    def _fill(self, listings: "list[ProviderModels] | None") -> None:
        self.menu.clear()
        for action in self._group.actions():
            self._group.removeAction(action)
        current = self.session_model
        default = self.engine.session_models.catalog.default_option()
        self._add_choice(translate("Chat", "Default model: {model}").format(model=default.label), None, default, current is None)
        listed = {option.model for listing in listings or [] for option in listing.options}
        if current is not None and current not in listed:  # e.g. its provider is offline just now
            self._add_choice(current, current, self.current_option(), True)
        if listings is None:
            loading = self.menu.addAction(translate("Chat", "Loading the model lists…"))
            loading.setEnabled(False)
        for listing in listings or []:
            provider = provider_label(listing.label)
            self.menu.addSection(provider)
            if listing.error is not None:  # the section names the provider; the tooltip says it all
                text = self.fontMetrics().elidedText(translate("Chat", "Cannot list its models: {error}").format(error=listing.error),
                                                     Qt.TextElideMode.ElideRight, MAX_ERROR_WIDTH)
                item = self.menu.addAction(text)
                item.setToolTip(translate("Chat", "Cannot list the models of {provider}: {error}").format(provider=provider,
                                                                                                         error=listing.error))
                item.setEnabled(False)
            elif not listing.options:
                self.menu.addAction(translate("Chat", "{provider} lists no models.").format(provider=provider)).setEnabled(False)
            for option in listing.options:
                self._add_choice(option.label, option.model, option, option.model == current)
        self.menu.addSeparator()
        refresh = self.menu.addAction(translate("Chat", "Refresh the model lists"))
        refresh.setObjectName("refreshModels")
        refresh.triggered.connect(self.refresh)

    def _add_choice(self, text: str, model: str | None, option: "ModelOption", checked: bool) -> QAction:
        action = self.menu.addAction(text)
        action.setCheckable(True)
        action.setChecked(checked)
        action.setData(model)
        provider = provider_label(option.served_by)
        action.setToolTip(translate("Chat", "Served by {provider} at {url}.").format(provider=provider, url=option.api_base)
                          if option.served_by
                          else translate("Chat", "No configured provider can serve {model}.").format(model=option.model))
        self._group.addAction(action)
        action.triggered.connect(lambda _checked=False, chosen=model: self.choose(chosen))
        return action

    def choice_actions(self) -> list[QAction]:
        """The menu's model entries (for tests and keyboard use): the default first."""
        return list(self._group.actions())

    async def shutdown(self) -> None:
        await self._work.shutdown()
