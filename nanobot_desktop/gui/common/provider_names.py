"""Provider names as the GUI shows them: the engine's display names (registry.py, English) mapped to
the UI language where they are words ("Custom (OpenAI-compatible)") or where Chinese users know the
provider by a Chinese name (智谱, 月之暗面 …). Brand names (OpenAI, OpenRouter, DeepSeek, Ollama, vLLM,
LM Studio …) are shown as they are. The engine stays English: its logs and prompts name providers so.
"""

from __future__ import annotations

from PySide6.QtCore import QT_TRANSLATE_NOOP

from nanobot_desktop.gui.common.i18n import translate

PROVIDER_LABELS = {"Custom (OpenAI-compatible)": QT_TRANSLATE_NOOP("Settings", "Custom (OpenAI-compatible)"),
                   "Moonshot (Kimi)": QT_TRANSLATE_NOOP("Settings", "Moonshot (Kimi)"),
                   "Zhipu (GLM)": QT_TRANSLATE_NOOP("Settings", "Zhipu (GLM)"),
                   "DashScope (Qwen)": QT_TRANSLATE_NOOP("Settings", "DashScope (Qwen)"),
                   "SiliconFlow": QT_TRANSLATE_NOOP("Settings", "SiliconFlow"),
                   "VolcEngine": QT_TRANSLATE_NOOP("Settings", "VolcEngine")}


def provider_label(label: str) -> str:
    """The engine's display name of a provider, as the UI shows it (translated where PROVIDER_LABELS has it)."""
    return translate("Settings", PROVIDER_LABELS[label]) if label in PROVIDER_LABELS else label
