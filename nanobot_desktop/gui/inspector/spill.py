"""Older turns of the inspector, kept in a file instead of memory.

A turn's record holds what each of its model calls sent (the whole prompt, with the current message
and its runtime block) and each tool call's full arguments and result. Kept in memory for the last
100 turns of every conversation, that made a long conversation grow the window by ~2 kB a turn more
than its messages (bench/long_session_memory.py). So a conversation's newest `TURNS_IN_MEMORY`
turns stay in memory (the ones looked at most, and the only ones events still reach); an older
finished turn is written, compressed, to one anonymous temporary file and read back when a person
picks it in the turn selector or clicks a tool card of it. In memory it leaves a `SpilledTurn`: its
selector line and its call ids.

The file is made with `tempfile.TemporaryFile`: unlinked at once, readable only by this process, gone
when the app ends, even after a crash. Writes and reads run in order on the store's own worker
thread (made at the first spill), so a read always finds what was written before it. A turn that
cannot be written stays in memory, as before (`TurnSpill.put`'s callback says so).

A turn the inspector lets go of (beyond a conversation's 100) is `forget`-ten, and its record's bytes
are dead. Once the dead bytes reach COMPACT_AFTER_BYTES and outweigh the live ones, the live records
are copied, in order, to a new file and the old one is closed: a window left running for weeks keeps
a file the size of what it can still show (where /tmp is a tmpfs, that file is memory). The copy runs
on the worker thread like every read and write, so no read can meet a record half moved.
"""

from __future__ import annotations

import json
import logging
import os
import tempfile
import threading
import zlib
from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import IO, Any

from nanobot_desktop.engine import IdleExitingExecutor
from nanobot_desktop.gui.inspector.records import LLMCall, TimelineEntry, ToolCall, TurnTimeline

log = logging.getLogger(__name__)

TURNS_IN_MEMORY = 10  # per conversation: its newest turns stay in memory, older finished ones go to the file
_COMPRESSION = 1  # zlib's fastest level: a prompt repeats itself a lot, so it still shrinks ~5x
COMPACT_AFTER_BYTES = 8 << 20  # dead bytes before the file is rewritten (never while fewer than the live ones)
_FORGOTTEN = -2  # a stub's `where` once the inspector has let go of it


@dataclass(eq=False, slots=True)
class SpilledTurn:
    """What stays in memory of a turn in the file: enough to list it and to find a call in it (~0.25 kB,
    against ~1.1 kB for a turn of one model call in memory; plain strings, bytes and ints, no containers)."""

    session_key: str
    turn_id: str
    number: int
    # One UTF-8 bytes object, "<the selector's line>\n <kind>:<id> <kind>:<id> ": the line as
    # `TurnTimeline.label()` gave it when the turn was spilled (one line: it has no "\n"), then each
    # entry's kind and call id, for `find`. As a str, the line's "·" and "…" would make Python keep it at
    # two bytes a character, and a second object would add its own header (~50 bytes).
    summary: bytes
    where: int = -1  # offset << 32 | length in the file, once written (set and moved on the worker thread only)
    pending: TurnTimeline | None = None  # the turn itself until it is written

    def label(self) -> str:
        return self.summary[:self.summary.index(b"\n")].decode()

    def find(self, kind: str, call_id: str) -> int:
        """0 when the turn holds such a call (its row is known once it is read back), else -1."""
        calls = self.summary.index(b"\n")  # only there: the line may quote anything a person typed
        return 0 if self.summary.find(f" {kind}:{call_id} ".encode(), calls) >= 0 else -1


class TurnSpill:
    """The temporary file of spilled turns and the one thread that writes and reads it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._executor: IdleExitingExecutor | None = None
        self._file: IO[bytes] | None = None
        # The rest belongs to the worker thread:
        self._end = 0  # the file's length
        # The stubs of the file's records in file order; a forgotten one stays (marked) until the list is
        # pruned in bulk: a list keeps 8 bytes a turn where a dict keyed by stub kept ~90.
        self._live: list[SpilledTurn] = []
        self._forgotten = 0  # marked stubs in _live
        self._dead = 0  # bytes of the file no stub needs any more
        self._compact_at = COMPACT_AFTER_BYTES  # raised after a copy that failed, so it is not tried at every turn

    def put(self, turn: TurnTimeline, written: Callable[[SpilledTurn, bool], None]) -> SpilledTurn:
        """The stub that replaces `turn`; `written(stub, ok)` is called from the worker thread when the
        write has ended (not ok: the turn could not be written and is in `stub.pending` still)."""
        calls = "".join(f" {entry.kind}:{entry.call_id}" for entry in turn.entries)
        stub = SpilledTurn(turn.session_key, turn.turn_id, turn.number, f"{turn.label()}\n{calls} ".encode(), pending=turn)
        self._worker().submit(self._store, stub, turn, written)
        return stub

    def forget(self, stub: SpilledTurn) -> None:
        """The inspector let go of `stub`: its record's bytes may be reclaimed (see the module's docstring)."""
        with self._lock:
            executor = self._executor
        if executor is not None:  # None: nothing was ever written, or the store is closed
            executor.submit(self._forget, stub)

    def get(self, stub: SpilledTurn, read: Callable[[TurnTimeline | None], None]) -> None:
        """Read the turn back; `read(turn)` is called from the worker thread (None: it could not be read)."""
        future = self._worker().submit(self._read, stub)
        future.add_done_callback(lambda done: read(None if done.exception() else done.result()))

    def close(self) -> None:
        """Close the file (it disappears with it) once the writes and reads asked for have run; returns at once."""
        with self._lock:
            executor, self._executor = self._executor, None
        if executor is not None:
            executor.submit(self._close_file)
            executor.shutdown(wait=False)

    # --- on the worker thread --------------------------------------------------------------------------

    def _worker(self) -> IdleExitingExecutor:
        with self._lock:
            if self._executor is None:
                self._executor = IdleExitingExecutor(1, name="inspector-spill")
            return self._executor

    def _store(self, stub: SpilledTurn, turn: TurnTimeline, written: Callable[[SpilledTurn, bool], None]) -> None:
        try:
            stub.where = self._write(turn)
        except Exception as error:  # noqa: BLE001 - whatever went wrong, the turn stays in memory and says why in the log
            log.warning("could not keep inspector turn %s in the temporary file (kept in memory): %s", stub.turn_id, error)
            written(stub, False)
            return
        self._live.append(stub)
        written(stub, True)

    def _forget(self, stub: SpilledTurn) -> None:
        if stub.where < 0:
            return  # never written, or forgotten already
        self._dead += stub.where & 0xFFFFFFFF
        stub.where = _FORGOTTEN
        self._forgotten += 1
        if self._dead >= max(self._compact_at, self._end - self._dead):
            self._compact()
        elif self._forgotten * 2 > len(self._live):
            self._prune()

    def _prune(self) -> None:
        self._live = [stub for stub in self._live if stub.where >= 0]
        self._forgotten = 0

    def _compact(self) -> None:
        """Copy the live records, in order, to a new file and close the old one; a copy that fails
        leaves everything as it was."""
        old = self._file
        if old is None:
            return
        self._prune()
        places: list[int] = []
        offset = 0
        new: IO[bytes] | None = None
        try:
            new = tempfile.TemporaryFile(prefix="nanobot-desktop-inspector-")  # noqa: SIM115 - open for the run
            for stub in self._live:
                start, length = stub.where >> 32, stub.where & 0xFFFFFFFF
                data = os.pread(old.fileno(), length, start)
                if len(data) != length or os.pwrite(new.fileno(), data, offset) != length:
                    raise OSError(f"moved a part of the {length:,} bytes of turn {stub.turn_id}")
                places.append(offset << 32 | length)
                offset += length
        except OSError as error:
            if new is not None:
                new.close()
            self._compact_at = self._dead * 2
            log.warning("could not rewrite the inspector's temporary file (%s of it unused; kept as it is): %s",
                        f"{self._dead:,} bytes", error)
            return
        for stub, where in zip(self._live, places, strict=True):
            stub.where = where
        old.close()
        self._file, self._end, self._dead = new, offset, 0
        self._compact_at = COMPACT_AFTER_BYTES  # a copy that failed before raised it; this one went through

    def _write(self, turn: TurnTimeline) -> int:
        data = zlib.compress(json.dumps(encode_turn(turn), ensure_ascii=False, default=str).encode(), _COMPRESSION)
        if self._file is None:
            self._file = tempfile.TemporaryFile(prefix="nanobot-desktop-inspector-")  # noqa: SIM115 - open for the run
        offset = self._end
        written = os.pwrite(self._file.fileno(), data, offset)
        if written != len(data):
            raise OSError(f"wrote {written} of {len(data)} bytes")
        if len(data) >= 1 << 32:
            raise OSError(f"a turn of {len(data):,} bytes compressed is too large to keep")
        self._end = offset + len(data)
        return offset << 32 | len(data)

    def _close_file(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None

    def _read(self, stub: SpilledTurn) -> TurnTimeline:
        if stub.where < 0 or self._file is None:
            raise LookupError(f"turn {stub.turn_id} is not in the file")
        offset, length = stub.where >> 32, stub.where & 0xFFFFFFFF
        data = os.pread(self._file.fileno(), length, offset)
        return decode_turn(json.loads(zlib.decompress(data)))


# --- the records as JSON --------------------------------------------------------------------------------

_ENTRY_TYPES: dict[str, type[LLMCall] | type[ToolCall]] = {"llm": LLMCall, "tool": ToolCall}
_TUPLES = {"tools", "media"}  # fields kept as tuples in the records


def encode_turn(turn: TurnTimeline) -> dict[str, Any]:
    """The turn as plain JSON values (its calls' messages in full, as they were sent)."""
    record = {field.name: getattr(turn, field.name) for field in fields(turn) if field.name != "entries"}
    record["entries"] = [_encode_entry(entry) for entry in turn.entries]
    return record


def _encode_entry(entry: TimelineEntry) -> dict[str, Any]:
    record = {field.name: getattr(entry, field.name) for field in fields(entry)}
    if isinstance(entry, LLMCall):
        record["messages"] = list(entry.messages)
    record["kind"] = entry.kind
    return record


def decode_turn(record: dict[str, Any]) -> TurnTimeline:
    entries = [_decode_entry(entry) for entry in record.pop("entries")]
    return TurnTimeline(**record, entries=entries)


def _decode_entry(record: dict[str, Any]) -> TimelineEntry:
    kind = record.pop("kind")
    for name in _TUPLES & record.keys():
        record[name] = tuple(record[name])
    if kind == "llm":
        record["messages"] = tuple(record["messages"])
        record["system_sections"] = tuple((name, size) for name, size in record["system_sections"])
    return _ENTRY_TYPES[kind](**record)
