"""numpy <-> Qt image helpers and the picture view (zoom with the wheel, pan by dragging,
click to pick a pixel)."""

from __future__ import annotations

import numpy as np
from PyQt6.QtCore import QPointF, Qt, pyqtSignal
from PyQt6.QtGui import QColor, QImage, QPainter, QPen, QPixmap
from PyQt6.QtWidgets import (QGraphicsPixmapItem, QGraphicsRectItem, QGraphicsScene,
                             QGraphicsView)


def qimage_rgb(arr: np.ndarray) -> QImage:
    arr = np.ascontiguousarray(arr, dtype=np.uint8)
    h, w = arr.shape[:2]
    return QImage(arr.data, w, h, 3 * w, QImage.Format.Format_RGB888).copy()


def qimage_rgba(arr: np.ndarray) -> QImage:
    arr = np.ascontiguousarray(arr, dtype=np.uint8)
    h, w = arr.shape[:2]
    return QImage(arr.data, w, h, 4 * w, QImage.Format.Format_RGBA8888).copy()


VEIL_ALPHA = 150  # the white veil that dims everything outside the heat


def heat_overlay(heat: np.ndarray, max_alpha: float = 0.9) -> np.ndarray:
    """RGBA uint8 overlay of a [0,1] map: a white veil dims the render where the map is 0;
    where it is not, 'inferno' colours (purple to orange, strong to the peak) show through."""
    from matplotlib import colormaps

    peak = float(heat.max()) if heat.size else 0.0
    norm = heat / peak if peak > 0 else np.zeros_like(heat)
    rgba = np.empty(heat.shape + (4,), np.uint8)
    rgba[...] = (255, 255, 255, VEIL_ALPHA)
    on = heat > 0
    colours = colormaps["inferno"](0.25 + 0.6 * norm[on])[:, :3] * 255
    rgba[on, :3] = colours.astype(np.uint8)
    alpha = np.clip(0.35 + norm[on] * 1.5, 0, 1) * max_alpha * 255
    rgba[on, 3] = np.maximum(alpha, VEIL_ALPHA).astype(np.uint8)
    return rgba


def nonzero_box(mask: np.ndarray):
    """(y0, y1, x0, x1), end-exclusive, of the nonzero pixels; None when there are none."""
    ys, xs = np.nonzero(mask)
    if ys.size == 0:
        return None
    return int(ys.min()), int(ys.max()) + 1, int(xs.min()), int(xs.max()) + 1


class ImageView(QGraphicsView):
    """The render with an overlay layer and an outline box."""

    pixelClicked = pyqtSignal(int, int)  # x, y in image pixels

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setScene(QGraphicsScene(self))
        self.base_item = QGraphicsPixmapItem()
        self.overlay_item = QGraphicsPixmapItem()
        self.overlay_item.setZValue(1)
        self.overlay_item.setVisible(False)
        self.box_item = QGraphicsRectItem()
        pen = QPen(QColor("#00b4ff"))
        pen.setWidthF(1.5)
        pen.setCosmetic(True)
        self.box_item.setPen(pen)
        self.box_item.setZValue(2)
        self.box_item.setVisible(False)
        for item in (self.base_item, self.overlay_item, self.box_item):
            self.scene().addItem(item)
        self.overlay_image = QImage()
        self.setDragMode(QGraphicsView.DragMode.ScrollHandDrag)
        self.setTransformationAnchor(QGraphicsView.ViewportAnchor.AnchorUnderMouse)
        self.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform, False)
        self.setBackgroundBrush(QColor("#e8e8e8"))
        self._press = None
        self._fitted = False

    def set_image(self, rgb: np.ndarray) -> None:
        self.base_item.setPixmap(QPixmap.fromImage(qimage_rgb(rgb)))
        self.scene().setSceneRect(0, 0, rgb.shape[1], rgb.shape[0])
        if not self._fitted:
            self.fit()

    def fit(self) -> None:
        if not self.base_item.pixmap().isNull():
            self.fitInView(self.base_item, Qt.AspectRatioMode.KeepAspectRatio)
            self._fitted = True

    def set_overlay(self, rgba: np.ndarray | None, box=None) -> None:
        if rgba is None:
            self.overlay_image = QImage()
            self.overlay_item.setVisible(False)
        else:
            self.overlay_image = qimage_rgba(rgba)
            self.overlay_item.setPixmap(QPixmap.fromImage(self.overlay_image))
            self.overlay_item.setVisible(True)
        if box is None:
            self.box_item.setVisible(False)
        else:
            y0, y1, x0, x1 = box
            self.box_item.setRect(x0, y0, x1 - x0, y1 - y0)
            self.box_item.setVisible(True)

    def wheelEvent(self, event) -> None:
        steps = event.angleDelta().y() / 120.0
        if steps:
            factor = 1.25 ** steps
            current = self.transform().m11()
            if 0.05 < current * factor < 64:
                self.scale(factor, factor)
        event.accept()

    def mousePressEvent(self, event) -> None:
        self._press = event.position()
        super().mousePressEvent(event)

    def mouseReleaseEvent(self, event) -> None:
        super().mouseReleaseEvent(event)
        if self._press is not None and event.button() == Qt.MouseButton.LeftButton:
            moved = (event.position() - self._press).manhattanLength()
            if moved < 4:
                p: QPointF = self.mapToScene(event.position().toPoint())
                self.pixelClicked.emit(int(p.x()), int(p.y()))
        self._press = None
