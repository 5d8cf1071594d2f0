"""The app's list tables: read-only, one row selected at a time, one column taking the spare width."""

from __future__ import annotations

from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableWidget, QWidget


def read_only_table(parent: QWidget, name: str, headers: tuple[str, ...], stretch: int) -> QTableWidget:
    """A read-only, row-selecting table named ``name`` whose column ``stretch`` takes the spare
    width (the others fit their contents); long cells are cut, not wrapped."""
    table = QTableWidget(0, len(headers), parent)
    table.setObjectName(name)
    table.setHorizontalHeaderLabels(list(headers))
    table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
    table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    table.verticalHeader().setVisible(False)
    header = table.horizontalHeader()
    header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
    header.setSectionResizeMode(stretch, QHeaderView.ResizeMode.Stretch)
    table.setWordWrap(False)
    return table
