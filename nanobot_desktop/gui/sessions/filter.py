"""Which sessions the list shows while the person types: titles at once, message text when the search
(run by the panel in an executor) comes back; a one- or two-character query only by that search
(SHORT_QUERY: it matches nearly everything, and the engine answers with the newest matches).

Built for 20,000 sessions: the filter is plain Python applied to the listing the model holds (no Qt
calls), and the model shows the result. A proxy model in front of the list would ask the model for
every row's index and flags through Qt at every listing. Each group's searchable text (title, preview
and key, casefolded) is kept beside its rows as one list, so a keystroke is a comprehension over
20,000 strings (a few milliseconds), not 20,000 method calls (~0.1 s, twice per query: typed, then
the engine's hits).
"""

from __future__ import annotations

from nanobot_desktop.engine import SessionInfo
from nanobot_desktop.gui.sessions.rows import Arrangement

SHORT_QUERY = 3
"""A query shorter than this (one or two characters match nearly every session) is not matched
against 20,000 titles on the GUI thread: the list keeps what it shows until the engine's search (in an
executor, titles and text, the newest matches up to its limit) answers, and then shows those."""


class TextFolder:
    """Each session's searchable text (title, preview and key, casefolded), made once per SessionInfo: a
    new listing brings mostly the same objects (the session index keeps them), so after the first
    listing a column of 20,000 texts is 20,000 dict lookups."""

    def __init__(self) -> None:
        self._folded: dict[str, tuple[SessionInfo, str]] = {}  # key → (info, its text casefolded) while it is listed

    def text(self, info: SessionInfo) -> str:
        folded = self._folded.get(info.key)
        if folded is None or folded[0] is not info:
            folded = self._folded[info.key] = (info, f"{info.title}\n{info.preview}\n{info.key}".casefold())
        return folded[1]

    def column(self, rows: list[SessionInfo]) -> list[str]:
        text = self.text
        return [text(info) for info in rows]

    def forget_unlisted(self, listed: int) -> None:
        if len(self._folded) > 2 * listed + 1000:
            self._folded = {}  # sessions deleted since: forget their text


def fold_listing(listing: Arrangement, folder: TextFolder) -> Arrangement:
    """`listing` with each group's folded texts (the panel calls this in its listing's executor, so the
    first keystroke of a search does not fold 20,000 texts on the GUI thread: ~0.1 s)."""
    folder.forget_unlisted(sum(len(rows) for _channel, rows in listing.groups))
    listing.texts = {channel: folder.column(rows) for channel, rows in listing.groups}
    return listing


class SessionFilter:
    """A session shows when its title/preview/key contains the query, or when the message-text search
    found the query in it (the match then replaces the preview line). A group shows while any of its
    sessions does; a session with branches while it or one of them does."""

    def __init__(self) -> None:
        self.query = ""
        self.hits: dict[str, str] = {}  # key → snippet, for the current query
        self._answered = False  # the engine's search answered the current query
        self._folder = TextFolder()  # for rows whose texts the listing does not bring (inline renames, branches)
        self._columns: dict[int, tuple[list[SessionInfo], list[str]]] = {}  # id(rows) → (rows, their folded texts)
        self._columns_of: Arrangement | None = None  # the listing `_columns` is for

    @property
    def active(self) -> bool:
        """Whether anything is filtered out (a short query filters once the search answered)."""
        return bool(self.query) and (self._answered or not _is_short(self.query))

    def set_query(self, text: str) -> bool:
        """Take a new query (message hits of the one before are dropped); whether the rows to show are
        known now: False for a short query, which waits for the search (what is shown stays)."""
        query = text.strip().casefold()
        if query == self.query:
            return False
        self.query, self.hits, self._answered = query, {}, False
        return self.active or not self.query

    def set_hits(self, query: str, hits: list[tuple[str, str]]) -> bool:
        """(key, snippet) pairs the search found for `query`; False (ignored) when the query has
        changed since."""
        if query.strip().casefold() != self.query or not self.query:
            return False
        found: dict[str, str] = {}
        for key, snippet in hits:
            found.setdefault(key, snippet)
        self.hits, self._answered = found, True
        return True

    def rows_changed(self, listing: Arrangement) -> None:
        """A row of `listing` was replaced in place (an inline rename): its groups' texts are made again."""
        listing.texts = {}
        self._columns, self._columns_of = {}, None

    def matches(self, info: SessionInfo) -> bool:
        if info.key in self.hits:
            return True
        if _is_short(self.query):
            return False
        return self.query in self._folder.text(info)

    def _matching(self, rows: list[SessionInfo]) -> list[SessionInfo]:
        """The rows that match (`matches` for each, as comprehensions over the folded texts)."""
        query, hits = self.query, self.hits
        if _is_short(query):
            return [info for info in rows if info.key in hits]
        texts = self._texts(rows)
        if hits:
            return [info for info, text in zip(rows, texts, strict=True) if query in text or info.key in hits]
        return [info for info, text in zip(rows, texts, strict=True) if query in text]

    def _texts(self, rows: list[SessionInfo]) -> list[str]:
        """The folded texts of a group's rows, in their order (brought by the listing, or made once per listing)."""
        column = self._columns.get(id(rows))
        if column is None or column[0] is not rows:
            column = self._columns[id(rows)] = (rows, self._folder.column(rows))
        return column[1]

    def apply(self, listing: Arrangement) -> Arrangement:
        """The part of `listing` to show (`listing` itself when nothing is filtered)."""
        if not self.active:
            return listing
        self._folder.forget_unlisted(sum(len(rows) for _channel, rows in listing.groups))
        for key, snippet in list(self.hits.items()) if listing.versions else ():
            row = listing.versions.get(key)  # a hit in a version without a row: its conversation's row shows
            if row is not None:
                self.hits.setdefault(row, snippet)
        if self._columns_of is not listing:
            self._columns = {id(rows): (rows, listing.texts[channel]) for channel, rows in listing.groups
                             if len(listing.texts.get(channel, ())) == len(rows)}
            self._columns_of = listing
        groups: list[tuple[str, list[SessionInfo]]] = []
        if not listing.branches:  # the common case, one comprehension per group
            groups = [(channel, found) for channel, rows in listing.groups if (found := self._matching(rows))]
            return Arrangement(groups, {})
        matches = self.matches
        branches: dict[str, list[SessionInfo]] = {}
        for channel, rows in listing.groups:
            kept: list[SessionInfo] = []
            for info in rows:
                found = [branch for branch in listing.branches.get(info.key, ()) if matches(branch)] \
                    if listing.branches else []
                if found or matches(info):
                    kept.append(info)
                    if found:
                        branches[info.key] = found
            if kept:
                groups.append((channel, kept))
        return Arrangement(groups, branches)


def _is_short(query: str) -> bool:
    return 0 < len(query) < SHORT_QUERY
