"""The units table: a QAbstractTableModel over svgloo.score/1 unit rows and a sort/filter
proxy (harmful / no visible effect / helpful / all)."""

from __future__ import annotations

from PyQt6.QtCore import QAbstractTableModel, QModelIndex, QSortFilterProxyModel, Qt
from PyQt6.QtGui import QBrush, QColor

from svgloo.engine.wording.describe import describe_unit

VERDICT_COLORS = {"helpful": "#1a9850", "harmful": "#d73027", "neutral": "#777777"}
SORT_ROLE = Qt.ItemDataRole.UserRole
ROW_ROLE = Qt.ItemDataRole.UserRole + 1

COLUMNS = ["#", "unit", "id", "line:col", "delta", "verdict", "pixels", "flags", "purity",
           "concept"]
CONCEPT_COLUMN = COLUMNS.index("concept")
HEADER_TIPS = ["unit index (document order)",
               "the unit, named as the CLI and the editor name it (path#outline subpath 3: "
               "its third subpath)",
               "element id", "where the unit starts in the file (line:column, 1-based)",
               "full score minus the score without the unit: > 0 the unit helps",
               "helpful / harmful / neutral by the thresholds", "pixels the unit changes",
               "findings: speck (visible on very few pixels), hidden N% (mostly covered by "
               "later elements)",
               "share of the unit's attribution going to its main concept",
               "the unit's main concept"]


class UnitTableModel(QAbstractTableModel):
    def __init__(self, parent=None):
        super().__init__(parent)
        self.rows: list[dict] = []
        # why every purity/concept cell is blank ("" once the structure analysis is in)
        self.concept_note = "no structure analysis yet"

    def set_rows(self, rows: list[dict]) -> None:
        self.beginResetModel()
        self.rows = rows
        self.endResetModel()

    def set_concepts(self, per_unit: dict[int, tuple[str | None, float | None]]) -> None:
        """``per_unit``: unit index -> (primary concept name, purity)."""
        for row in self.rows:
            row["primary"], row["purity"] = per_unit.get(row["index"], (None, None))
        if self.rows:
            self.dataChanged.emit(self.index(0, 8), self.index(len(self.rows) - 1, 9))

    def rowCount(self, parent=QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self.rows)

    def columnCount(self, parent=QModelIndex()) -> int:
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(self, section, orientation, role=Qt.ItemDataRole.DisplayRole):
        if orientation == Qt.Orientation.Horizontal:
            if role == Qt.ItemDataRole.DisplayRole:
                return COLUMNS[section]
            if role == Qt.ItemDataRole.ToolTipRole:
                return HEADER_TIPS[section]
        return None

    def data(self, index, role=Qt.ItemDataRole.DisplayRole):
        if not index.isValid():
            return None
        row = self.rows[index.row()]
        col = index.column()
        if role == ROW_ROLE:
            return row
        if role == SORT_ROLE:
            return [row["index"], describe_unit(row), row.get("id") or "", row["offsets"][0],
                    row["delta"], row["verdict"], row["footprint_pixels"], flags_text(row),
                    -1.0 if row.get("purity") is None else row["purity"],
                    row.get("primary") or ""][col]
        if role == Qt.ItemDataRole.DisplayRole:
            if col == 0:
                return str(row["index"])
            if col == 1:
                return describe_unit(row)
            if col == 2:
                return row.get("id") or ""
            if col == 3:
                return f"{row['line']}:{row['column']}"
            if col == 4:
                return f"{row['delta']:+.4f}"
            if col == 5:
                if row["visible"]:
                    return row["verdict"]
                status = (row.get("removal") or {}).get("status")
                note = {"proven": "removable", "unverified": "unverified"}.get(status,
                                                                             "no footprint")
                return f"{row['verdict']} ({note})"
            if col == 6:
                return str(row["footprint_pixels"])
            if col == 7:
                return flags_text(row)
            if col == 8:
                return "" if row.get("purity") is None else f"{row['purity']:.2f}"
            if col == 9:
                return row.get("primary") or ""
        if role == Qt.ItemDataRole.ForegroundRole and col in (4, 5):
            return QBrush(QColor(VERDICT_COLORS.get(row["verdict"], "#777777")))
        if role == Qt.ItemDataRole.ForegroundRole and col == 7:
            return QBrush(QColor(FINDING_COLOR))
        if role == Qt.ItemDataRole.TextAlignmentRole and col in (0, 3, 4, 6, 8):
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == Qt.ItemDataRole.ToolTipRole and col in (8, 9):
            blank = row.get("purity") is None if col == 8 else not row.get("primary")
            if blank:
                return blank_concept_tip(row, self.concept_note)
        if role == Qt.ItemDataRole.ToolTipRole:
            tip = (f"unit {row['index']} <{row['tag']}> at {row['line']}:{row['column']}: "
                   f"delta {row['delta']:+.6f} ({row['verdict']}), {row['footprint_pixels']} "
                   "changed pixels")
            if row.get("primary"):
                tip += f"; main concept: {row['primary']}"
            for f in row.get("findings") or []:
                tip += "\n" + f.get("message", f.get("kind", ""))
            return tip
        return None


FILTERS = {"all": "All units", "harmful": "Harmful", "findings": "Findings",
           "invisible": "No visible effect", "helpful": "Helpful"}
FINDING_COLOR = "#b5179e"


def blank_concept_tip(row: dict, note: str) -> str:
    """Why a unit's purity or concept cell is empty."""
    if note:
        return note
    if row.get("primary") is None and row.get("purity") is None:
        return ("not a concept's element: the structure analysis gave this element no "
                "concept")
    if row.get("purity") is None:
        return "no purity: the element's attribution is empty (it serves no concept)"
    return "no main concept: no concept takes a share of this element's attribution"


def flags_text(row: dict) -> str:
    """The unit's findings in a few words: 'speck', 'hidden 97%'."""
    cells = []
    for f in row.get("findings") or []:
        if f.get("kind") == "mostly_hidden" and f.get("hidden_share") is not None:
            cells.append(f"hidden {f['hidden_share']:.0%}")
        else:
            cells.append(str(f.get("kind", "?")))
    return ", ".join(cells)


class UnitFilterProxy(QSortFilterProxyModel):
    def __init__(self, parent=None):
        super().__init__(parent)
        self.mode = "all"
        self.setSortRole(SORT_ROLE)

    def set_mode(self, mode: str) -> None:
        self.mode = mode
        self.invalidateFilter()

    def filterAcceptsRow(self, source_row, source_parent) -> bool:
        if self.mode == "all":
            return True
        row = self.sourceModel().rows[source_row]
        if self.mode == "harmful":
            return row["verdict"] == "harmful"
        if self.mode == "helpful":
            return row["verdict"] == "helpful"
        if self.mode == "invisible":  # proven removable (engine/proof.py), not "no footprint"
            return (row.get("removal") or {}).get("status") == "proven"
        if self.mode == "findings":
            return bool(row.get("findings"))
        return True
