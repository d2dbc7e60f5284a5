"""The background panels' shared table: rows found by key, updated in place, the selection kept by key."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QT_TRANSLATE_NOOP, Qt

from nanobot_desktop.gui.common.keyed_table import KeyedTableModel, KeyedTableView


@dataclass
class Job:
    id: str
    name: str


class JobsModel(KeyedTableModel):
    COLUMNS = (QT_TRANSLATE_NOOP("Scheduled", "Name"),)
    CONTEXT = "Scheduled"

    def key_of(self, record: Any) -> str:
        return str(record.id)

    def cell(self, record: Any, column: int, role: int) -> Any:
        return record.name if role == Qt.ItemDataRole.DisplayRole else None


def test_same_keys_update_in_place_and_the_selection_follows_its_key(qtbot, qtmodeltester) -> None:
    model = JobsModel()
    view = KeyedTableView(model, "jobs")
    qtbot.addWidget(view)
    view.show_records([Job("a", "first"), Job("b", "second")])
    qtmodeltester.check(model)
    view.select_key("b")
    assert view.selected_key() == "b"

    resets: list[bool] = []
    model.modelReset.connect(lambda: resets.append(True))
    with qtbot.waitSignal(model.dataChanged):
        view.show_records([Job("a", "first, renamed"), Job("b", "second")])
    assert resets == [] and model.index(0, 0).data() == "first, renamed"
    assert view.selected_key() == "b"

    view.show_records([Job("c", "new"), Job("b", "second"), Job("a", "first")])  # other keys: a reset
    assert resets == [True]
    assert view.selected_key() == "b" and model.row_of("b") == 1
    assert model.index(1, 0).data(KeyedTableModel.RecordRole) == Job("b", "second")
    assert model.index(1, 0).data(KeyedTableModel.KeyRole) == "b"
    assert model.headerData(0, Qt.Orientation.Horizontal) == "Name"

    view.show_records([Job("c", "new")])  # the selected key is gone: nothing is selected
    assert view.selected_key() is None
