"""Settings → Workspace: which nanobot layout the workspace has and, for 0.3, its own settings.

The layout comes from the engine (engine/layout.py decides it from the disk); this page only says it.
For a nanobot 0.3 workspace it also edits the 0.3 keys of `agents.defaults` the app honours or shows:
the token window (`contextWindowTokens`) and Dream (`dream.enabled`, `dream.intervalH`,
`dream.modelOverride`). They are written under the CLI's own key names, and keys of `dream` this page
does not know (e.g. a legacy `cron`) stay as they are.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from PySide6.QtWidgets import (
    QCheckBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from nanobot_desktop.engine import DEFAULT_CONTEXT_WINDOW_TOKENS, Config, dream_settings
from nanobot_desktop.gui.common.engine_words import layout_label, layout_reason
from nanobot_desktop.gui.common.i18n import translate

if TYPE_CHECKING:  # only for annotations: the engine's modules load when it is created
    from nanobot_desktop.engine import Engine

FieldAdder = Callable[[str, Callable[[], Any], Callable[[Any], dict[str, Any]]], None]


def _dream_patch(values: tuple[bool, int, str]) -> dict[str, Any]:
    """Dream's keys under the CLI's own names (agents.defaults.dream.*); its other keys stay as they are."""
    enabled, hours, model = values
    return {"agents.defaults.dream.enabled": enabled, "agents.defaults.dream.intervalH": hours,
            "agents.defaults.dream.modelOverride": model.strip() or None}


def workspace_page(engine: Engine, config: Config, add_field: FieldAdder, parent: QWidget) -> QWidget:
    """The page; `add_field(name, read, patch)` registers what Save sends (only when changed)."""
    page = QWidget(parent)
    layout = getattr(engine, "layout", None)
    page_layout = QVBoxLayout(page)
    label = layout_label(layout)
    title = QLabel(f"<b>{label}</b>", page)
    title.setObjectName("layoutTitle")
    page_layout.addWidget(title)
    explain = QLabel(page)
    explain.setWordWrap(True)
    page_layout.addWidget(explain)
    if layout is None or not layout.is_v03:
        explain.setText(translate("Settings", "Sessions are kept in the workspace's sessions/ folder and the history "
                                  "log in memory/HISTORY.md, as nanobot 0.1.4 keeps them.")
                        + (" " + translate("Settings", "(Decided because {reason}.)").format(reason=layout_reason(layout.reason))
                           if layout else ""))
        page_layout.addStretch(1)
        return page
    explain.setText(translate("Settings", "Sessions are kept in {folder}, the history log in memory/history.jsonl, "
                              "and Dream's versions of MEMORY.md, SOUL.md and USER.md in the workspace's git "
                              "repository, as nanobot 0.3 keeps them. (Decided because {reason}.)").format(
        folder=engine.sessions.sessions_dir, reason=layout_reason(layout.reason)))
    form = QFormLayout()
    form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.FieldsStayAtSizeHint)
    page_layout.addLayout(form)
    extra = config.agents.defaults.model_extra or {}
    window = extra.get("contextWindowTokens", DEFAULT_CONTEXT_WINDOW_TOKENS)
    window_spin = QSpinBox(page)
    window_spin.setObjectName("contextWindowSpin")
    window_spin.setRange(1024, max(10_000_000, window if isinstance(window, int) else 0))
    window_spin.setSingleStep(1024)
    window_spin.setSuffix(translate("Settings", " tokens"))
    window_spin.setValue(window if isinstance(window, int) and not isinstance(window, bool)
                         else DEFAULT_CONTEXT_WINDOW_TOKENS)
    window_spin.setToolTip(translate("Settings", "How much of the model's context the conversation may fill before older "
                           "messages are summarised into history.jsonl"))
    form.addRow(translate("Settings", "Context window:"), window_spin)

    dream = dream_settings(extra)
    dream_check = QCheckBox(translate("Settings", "Dream rewrites MEMORY.md, SOUL.md and USER.md from the history log"), page)
    dream_check.setObjectName("dreamEnabled")
    dream_check.setChecked(bool(dream.get("enabled", True)))
    hours = dream.get("intervalH")
    hours_spin = QSpinBox(page)
    hours_spin.setObjectName("dreamInterval")
    hours_spin.setRange(1, max(24 * 365, hours if isinstance(hours, int) else 0))
    hours_spin.setSuffix(translate("Settings", " h"))
    hours_spin.setValue(hours if isinstance(hours, int) and not isinstance(hours, bool) and hours >= 1 else 2)
    model_edit = QLineEdit(str(dream.get("modelOverride") or ""), page)
    model_edit.setObjectName("dreamModel")
    model_edit.setPlaceholderText(translate("Settings", "the agent's model"))
    model_edit.setToolTip(translate("Settings", "A model preset name for Dream runs (agents.defaults.dream.modelOverride)"))
    form.addRow(translate("Settings", "Dream:"), dream_check)
    form.addRow(translate("Settings", "Dream every:"), hours_spin)
    form.addRow(translate("Settings", "Dream model:"), model_edit)
    note = QLabel(translate("Settings", "Dream itself runs in the nanobot 0.3 gateway; each of its edits appears as a version "
                  "in the Memory view, and your own saves there are committed the same way."), page)
    note.setWordWrap(True)
    page_layout.addWidget(note)
    page_layout.addStretch(1)

    add_field("context_window_tokens", window_spin.value, lambda v: {"agents.defaults.contextWindowTokens": v})
    add_field("dream", lambda: (dream_check.isChecked(), hours_spin.value(), model_edit.text()), _dream_patch)
    page.setProperty("v03", True)
    return page
