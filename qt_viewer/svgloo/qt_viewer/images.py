"""numpy <-> Qt image helpers and the picture view (zoom with the wheel, pan by dragging,
click to pick a pixel).

Scene coordinates are the analysis raster's pixels (384 x 384 by default): footprints,
boxes and clicks live there. What the eye sees on top of that raster is a crisp layer: the
visible part of the document re-rendered by the engine's renderer at the view's own
resolution after every zoom, pan or resize, placed back into scene coordinates. Analysis
never reads the crisp layer."""

from __future__ import annotations

import math

import numpy as np
from PyQt6.QtCore import QPointF, QRectF, Qt, QTimer, pyqtSignal
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


def heat_overlay(heat: np.ndarray, max_alpha: float = 1.0) -> np.ndarray:
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
    # translucent enough that the crisp picture's edges show through the (analysis-
    # resolution) heat when zoomed in
    alpha = (0.3 + 0.45 * np.clip(norm[on] * 1.5, 0, 1)) * max_alpha * 255
    rgba[on, 3] = alpha.astype(np.uint8)
    return rgba


def nonzero_box(mask: np.ndarray):
    """(y0, y1, x0, x1), end-exclusive, of the nonzero pixels; None when there are none."""
    ys, xs = np.nonzero(mask)
    if ys.size == 0:
        return None
    return int(ys.min()), int(ys.max()) + 1, int(xs.min()), int(xs.max()) + 1


MAX_ZOOM = 64  # view pixels per analysis pixel


class ImageView(QGraphicsView):
    """The render with a crisp layer, an overlay layer and an outline box."""

    pixelClicked = pyqtSignal(int, int)  # x, y in image pixels
    crispReady = pyqtSignal()            # the crisp layer was re-rendered
    crispFailed = pyqtSignal(str)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setScene(QGraphicsScene(self))
        self.base_item = QGraphicsPixmapItem()
        self.crisp_item = QGraphicsPixmapItem()
        self.crisp_item.setZValue(0.5)
        self.crisp_item.setVisible(False)
        self.overlay_item = QGraphicsPixmapItem()
        self.overlay_item.setZValue(1)
        self.overlay_item.setVisible(False)
        # the heat is analysis-resolution data; smooth scaling keeps it from drawing
        # stair steps over the crisp picture at high zoom
        self.overlay_item.setTransformationMode(Qt.TransformationMode.SmoothTransformation)
        self.box_item = QGraphicsRectItem()
        pen = QPen(QColor("#00b4ff"))
        pen.setWidthF(1.5)
        pen.setCosmetic(True)
        self.box_item.setPen(pen)
        self.box_item.setZValue(2)
        self.box_item.setVisible(False)
        for item in (self.base_item, self.crisp_item, self.overlay_item, self.box_item):
            self.scene().addItem(item)
        self.marker_items: list[QGraphicsRectItem] = []
        self.density_item = QGraphicsPixmapItem()  # "mark findings" with many findings
        self.density_item.setZValue(1.4)
        self.density_item.setVisible(False)
        self.scene().addItem(self.density_item)
        self.density_image = QImage()
        self.overlay_image = QImage()
        self.crisp_image = QImage()
        self.crisp_request = None   # (canvas, (y0, y1, x0, x1)) of the crisp layer shown
        self._source = None         # (svg text, name, limits) the crisp layer renders
        self._crisp_timer = QTimer(self)
        self._crisp_timer.setSingleShot(True)
        self._crisp_timer.setInterval(60)
        self._crisp_timer.timeout.connect(self.render_crisp)
        self.setDragMode(QGraphicsView.DragMode.ScrollHandDrag)
        self.setTransformationAnchor(QGraphicsView.ViewportAnchor.AnchorUnderMouse)
        self.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform, False)
        self.setBackgroundBrush(QColor("#e8e8e8"))
        self._press = None
        self._fitted = False
        self._fit_on_resize = True

    def image_size(self) -> int:
        return self.base_item.pixmap().width()

    def set_image(self, rgb: np.ndarray, source=None) -> None:
        """``rgb``: the analysis raster; ``source``: (svg text, name, limits) to draw
        crisply at the view's resolution (None: show the raster itself)."""
        self.base_item.setPixmap(QPixmap.fromImage(qimage_rgb(rgb)))
        self.scene().setSceneRect(0, 0, rgb.shape[1], rgb.shape[0])
        self._source = source
        self.crisp_request = None
        if source is None:
            self.crisp_item.setVisible(False)
        if not self._fitted:
            self.fit()
        self.schedule_crisp()

    def fit(self) -> None:
        if not self.base_item.pixmap().isNull():
            self.fitInView(self.base_item, Qt.AspectRatioMode.KeepAspectRatio)
            self._fitted = True
            self.schedule_crisp()

    def zoom(self) -> float:
        """View pixels per analysis pixel."""
        return self.transform().m11()

    def zoom_by(self, factor: float) -> None:
        if 0.05 < self.zoom() * factor < MAX_ZOOM:
            self.scale(factor, factor)
            self._fit_on_resize = False  # the reviewer chose a zoom: keep it
            self.schedule_crisp()

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

    def set_markers(self, boxes: list, color: str = "#b5179e") -> None:
        """Dashed outlines (cosmetic: one screen pixel at any zoom) around ``boxes``
        (y0, y1, x0, x1 in image pixels): where the findings are."""
        for item in self.marker_items:
            self.scene().removeItem(item)
        self.marker_items = []
        pen = QPen(QColor(color))
        pen.setWidthF(1.5)
        pen.setCosmetic(True)
        pen.setStyle(Qt.PenStyle.DashLine)
        for y0, y1, x0, x1 in boxes:
            pad = 2  # a speck's box is a few pixels: keep the outline off its edge
            item = QGraphicsRectItem(x0 - pad, y0 - pad, x1 - x0 + 2 * pad, y1 - y0 + 2 * pad)
            item.setPen(pen)
            item.setZValue(1.5)
            self.scene().addItem(item)
            self.marker_items.append(item)

    def set_density(self, rgba: np.ndarray | None) -> None:
        """A translucent map of where many findings are (marks.density_rgba), or none."""
        if rgba is None:
            self.density_image = QImage()
            self.density_item.setVisible(False)
            return
        self.density_image = qimage_rgba(rgba)
        self.density_item.setPixmap(QPixmap.fromImage(self.density_image))
        self.density_item.setVisible(True)

    # ---------------------------------------------------------------- crisp layer
    def schedule_crisp(self) -> None:
        if self._source is not None:
            self._crisp_timer.start()

    def crisp_target(self):
        """(canvas, box): the canvas size that puts one rendered pixel on each device
        pixel at the current zoom, and the canvas pixels the viewport shows."""
        size = self.image_size()
        if size <= 0:
            return None
        scale = self.zoom() * self.devicePixelRatioF()
        canvas = max(1, round(size * scale))
        k = canvas / size
        seen = self.mapToScene(self.viewport().rect()).boundingRect() & QRectF(0, 0, size, size)
        if seen.isEmpty():
            return None
        x0 = max(0, math.floor(seen.left() * k))
        y0 = max(0, math.floor(seen.top() * k))
        x1 = min(canvas, math.ceil(seen.right() * k))
        y1 = min(canvas, math.ceil(seen.bottom() * k))
        limit = self._source[2].max_render_size if self._source else 2048
        x1, y1 = min(x1, x0 + limit), min(y1, y0 + limit)
        if x1 <= x0 or y1 <= y0:
            return None
        return canvas, (y0, y1, x0, x1)

    def render_crisp(self) -> bool:
        """Re-render the visible part at the view's resolution (through the engine's safe
        renderer, on the document the analysis read). False when nothing was drawn."""
        if self._source is None:
            return False
        target = self.crisp_target()
        if target is None:
            return False
        if target == self.crisp_request and self.crisp_item.isVisible():
            return True
        from svgloo.engine.errors import SvglooError
        from svgloo.engine.rendering.render import over_white, render_region_rgba

        text, name, limits = self._source
        canvas, box = target
        try:
            rgb = over_white(render_region_rgba(text, canvas, box, limits, name))
        except SvglooError as exc:  # keep the analysis raster; say why
            self.crisp_item.setVisible(False)
            self.crispFailed.emit(str(exc))
            return False
        y0, y1, x0, x1 = box
        size = self.image_size()
        self.crisp_image = qimage_rgb(rgb)
        self.crisp_item.setPixmap(QPixmap.fromImage(self.crisp_image))
        self.crisp_item.setScale(size / canvas)
        self.crisp_item.setPos(x0 * size / canvas, y0 * size / canvas)
        self.crisp_item.setVisible(True)
        self.crisp_request = target
        self.crispReady.emit()
        return True

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        if self._fit_on_resize:
            self.fit()  # until the reviewer zooms, the whole picture stays in view
        self.schedule_crisp()

    def scrollContentsBy(self, dx: int, dy: int) -> None:
        super().scrollContentsBy(dx, dy)
        self.schedule_crisp()

    # ---------------------------------------------------------------- mouse
    def wheelEvent(self, event) -> None:
        steps = event.angleDelta().y() / 120.0
        if steps:
            self.zoom_by(1.25 ** steps)
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
