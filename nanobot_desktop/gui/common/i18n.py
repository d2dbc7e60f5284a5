"""The UI language: which one (desktop.json's `language`, or the system's), and Qt's translators for it.

Why it is built this way:
- Strings are wrapped as `translate("Context", "Whole sentence")` (this module's `translate`, the same
  call as `QCoreApplication.translate`) with a fixed context per module or class, never `self.tr()`:
  `tr()` needs a QObject and takes its context from the runtime class, so it cannot be used in
  module-level tables or plain functions, and renaming or subclassing a widget silently moves its
  strings. pyside6-lupdate extracts `translate(...)` and `QT_TRANSLATE_NOOP(...)` calls by name.
  Counts use Qt's plural forms: `translate("Ctx", "%n tool call(s)", None, n)`.
- The translators are installed before any widget exists (gui/shell/app.py), so every string is
  looked up once, when its widget is built; a change of language in Settings applies after a restart.
- The saved language is read by the engine's `saved_language` (config/peek.py) with `json` alone:
  start-up cannot spend the time to build the validated settings models (pydantic) before the first
  paint. Anything unreadable means "system"; the full read that follows reports a broken file.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QCoreApplication, QLocale

from nanobot_desktop.data import resources_dir

if TYPE_CHECKING:
    from PySide6.QtCore import QTranslator

log = logging.getLogger(__name__)

LANGUAGES = ("system", "en", "zh_CN")  # the values of AppSettings.language (tests check they agree)
TRANSLATED = ("zh_CN",)  # languages that have a .qm in resources/i18n
CATALOG = "nanobot_desktop"  # resources/i18n/nanobot_desktop_<lang>.qm
_installed: list[QTranslator] = []  # installed ones (QTranslator is imported when one is: English needs none)
_ENGLISH_PLURAL = re.compile(r"(\w)\((s|es)\)")


def translate(context: str, source: object, disambiguation: str | None = None, n: int = -1) -> str:
    """`QCoreApplication.translate` under the name pyside6-lupdate looks for; `%n` in `source` is `n`.

    English needs no catalog: a plural source untranslated (English, or a string not translated yet)
    gets English plurals from its "(s)"/"(es)" suffixes: "%n model(s)" is "1 model" or "3 models".
    `source` is a str; typed `object` because that is what PySide6's stubs give QT_TRANSLATE_NOOP.
    """
    source = str(source)
    text = QCoreApplication.translate(context, source, disambiguation, n)
    if n >= 0 and text == source.replace("%n", str(n)):
        text = _ENGLISH_PLURAL.sub(r"\1" if n == 1 else r"\1\2", text)
    return text


def language_names() -> dict[str, str]:
    """The choices for Settings: each language in its own name, "system" in the current language."""
    return {"system": translate("Language", "Follow the system"), "en": "English", "zh_CN": "简体中文"}


def saved_language(config_path: str | Path | None = None) -> str:
    """The language saved in desktop.json beside this config ("system" when none is saved or readable)."""
    from nanobot_desktop.engine import saved_language as peek  # the engine's json-only read (config/peek.py)

    return peek(config_path)


def resolve_language(choice: str, system: QLocale | None = None) -> str:
    """The language the UI uses for a choice: "system" becomes zh_CN for a Chinese system, else en."""
    if choice in ("en", "zh_CN"):
        return choice
    locale = system or QLocale.system()
    if locale.language() == QLocale.Language.Chinese:
        return "zh_CN"  # Simplified is the closest we have, also for Traditional Chinese systems
    return "en"


def translations_dir() -> Path:
    """resources/i18n: the .ts sources, the glossary and the compiled .qm files."""
    return resources_dir() / "i18n"


def install_translators(app: QCoreApplication, choice: str) -> str:
    """Install the translators of `choice` (replacing earlier ones); returns the language in use.

    Also sets the default QLocale, so numbers and dates formatted with `QLocale()` match the language.
    A missing .qm is logged and leaves the UI in English.
    """
    remove_translators(app)
    language = resolve_language(choice)
    if choice != "system" or language != "en":  # "system" in English keeps the system's number formats
        QLocale.setDefault(QLocale(language))
    if language == "en":
        return language
    from PySide6.QtCore import QLibraryInfo, QTranslator

    ours = QTranslator(app)
    if not ours.load(f"{CATALOG}_{language}", str(translations_dir())):
        log.warning("no translation for %s in %s: the UI stays in English", language, translations_dir())
        return "en"
    qt_own = QTranslator(app)  # Qt's own strings: standard dialog buttons, context menus of text fields
    if qt_own.load(f"qtbase_{language}", QLibraryInfo.path(QLibraryInfo.LibraryPath.TranslationsPath)):
        app.installTranslator(qt_own)
        _installed.append(qt_own)
    app.installTranslator(ours)
    _installed.append(ours)
    return language


def remove_translators(app: QCoreApplication) -> None:
    """Back to the English source strings and the system's locale (tests switch languages with this)."""
    while _installed:
        app.removeTranslator(_installed.pop())
    QLocale.setDefault(QLocale.system())


def install_saved_language(app: QCoreApplication, config_path: str | Path | None) -> str:
    """At start, before any widget exists: the language saved beside this config, or the system's."""
    return install_translators(app, saved_language(config_path))


def ui_locale() -> QLocale:
    """The locale numbers and dates are written in: the UI's; the "C" locale (no locale set) reads as English."""
    locale = QLocale()
    if locale.language() == QLocale.Language.C:
        return QLocale("en_US")
    return locale


def format_number(value: int) -> str:
    """A count or size with the locale's digit grouping (1,234 / 1.234)."""
    return ui_locale().toString(value)
