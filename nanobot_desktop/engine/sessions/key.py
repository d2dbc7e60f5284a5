"""A session key as a value: the channel and the chat id nanobot writes as one string, "telegram:123".

nanobot names every session by that string (the file name, the metadata line's `key`, the gateway's
routing), so the string form stays exactly what it is on disk and in events; this type only parses it
once, where code needs its parts, instead of each place splitting on ":" its own way. A key with no
":" ("heartbeat", what some CLI runs use) has no chat id and prints back unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass

# characters no key may hold: a key is one line of a file name and of a JSON metadata line
_FORBIDDEN = {"\n": "a line break", "\r": "a line break", "\0": "a NUL character"}


class SessionKeyError(ValueError):
    """A string that cannot be a session key, with the reason in words."""


@dataclass(frozen=True, slots=True)
class SessionKey:
    """`channel:chat_id`; `chat_id` is None for a key with no ":" at all."""

    channel: str
    chat_id: str | None = None

    @classmethod
    def parse(cls, text: str) -> SessionKey:
        """The key `text` names; SessionKeyError when it is empty or holds a line break or NUL."""
        if not isinstance(text, str):
            raise SessionKeyError(f"a session key is a string like 'cli:direct', not {type(text).__name__}")
        if not text.strip():
            raise SessionKeyError("the session key is empty: use one like cli:direct")
        for char, what in _FORBIDDEN.items():
            if char in text:
                raise SessionKeyError(f"the session key {text!r} holds {what}: use one like cli:direct")
        return cls.found(text)

    @classmethod
    def found(cls, text: str) -> SessionKey:
        """The key another program wrote (a file's metadata line or name), never refused: a file is
        listed as it is, whatever its key holds."""
        channel, sep, chat_id = text.partition(":")
        return cls(channel, chat_id if sep else None)

    def __str__(self) -> str:
        return self.channel if self.chat_id is None else f"{self.channel}:{self.chat_id}"

    def moved_to(self, channel: str) -> SessionKey:
        """The same conversation id under `channel` (a key with no chat id gives its whole text as the id)."""
        return SessionKey(channel, self.chat_id if self.chat_id is not None else self.channel)

    def route(self, default_channel: str, default_chat: str) -> tuple[str, str]:
        """(channel, chat id) for a message sent in this session, as the CLI routes `-s KEY`: a part
        the key leaves empty takes the default."""
        return self.channel or default_channel, self.chat_id or default_chat
