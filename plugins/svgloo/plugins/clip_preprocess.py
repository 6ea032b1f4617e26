"""CLIP's input made on the device: the uint8 batch is copied as uint8 (a quarter of the
bytes of float32), then resized, cropped and normalised where the model runs, instead of
one PIL transform per image on host threads (``ClipBackbone._pixels``'s host path).

The steps are read from the model's own open_clip transform (its ``Resize``,
``CenterCrop`` and ``Normalize``), never written here: ``device_steps_of`` accepts only
the shapes of transform it can reproduce and names what it cannot, so that the caller
keeps the host path for anything else.

Faithful, not bit-identical: torch's antialiased bicubic follows PIL's kernel (a = -0.5)
but computes in float where PIL uses fixed-point 8-bit arithmetic, so after the rounding
to 8 bits that PIL's 8-bit resize implies (reproduced here) a few pixels differ by one
level. docs/backbones.md gives the measured difference; tests/plugins/
test_clip_preprocess.py asserts it.

torch and torchvision are imported lazily, as in the other torch plugins.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

_INTERPOLATIONS = ("bicubic", "bilinear")  # PIL antialiases both; torch can follow


@dataclass(frozen=True)
class DeviceSteps:
    """What open_clip's eval transform does, as numbers: ``resize`` is torchvision's
    Resize size (one int: the shortest side; two: height and width, "squash"), ``crop``
    the centre crop's (height, width) or None."""

    resize: tuple[int, ...]
    interpolation: str
    crop: tuple[int, int] | None
    mean: tuple[float, float, float]
    std: tuple[float, float, float]
    _constants: dict = field(default_factory=dict, compare=False, repr=False)

    def __call__(self, batch: Any, dtype: Any) -> Any:
        """(N, 3, h, w) model input in ``dtype`` from an (N, H, W, 3) uint8 tensor,
        computed on the tensor's device."""
        import torch
        import torchvision.transforms.functional as TF

        x = batch.permute(0, 3, 1, 2).to(torch.float32)
        height, width = self.output_size(x.shape[-2], x.shape[-1])
        # PIL resamples an 8-bit image in two passes, the width first, each rounded and
        # clipped to 8 bits (libImaging/Resample.c), and skips a pass whose side stays;
        # one 2-D float pass differed from it by up to 12 levels on noise, these by 1.
        if width != x.shape[-1]:
            x = self._resample(x, (x.shape[-2], width))
        if height != x.shape[-2]:
            x = self._resample(x, (height, width))
        if self.crop is not None:
            x = TF.center_crop(x, list(self.crop))
        mean, std = self._mean_std(x.device)
        # the operations of ToTensor (/ 255) and Normalize, in their order and in float32
        x = x.div_(255).sub_(mean).div_(std)
        return x.to(dtype)

    def output_size(self, height: int, width: int) -> tuple[int, int]:
        """The resized (height, width), as torchvision's Resize computes it: the shortest
        side to the one size given, the other scaled and truncated; or both given."""
        if len(self.resize) == 2:
            return self.resize[0], self.resize[1]
        short, long = sorted((height, width))
        new_short, new_long = self.resize[0], int(self.resize[0] * long / short)
        return (new_short, new_long) if height <= width else (new_long, new_short)

    def _resample(self, x: Any, size: tuple[int, int]) -> Any:
        import torch

        x = torch.nn.functional.interpolate(x, size=size, mode=self.interpolation,
                                            align_corners=False, antialias=True)
        return x.round_().clamp_(0, 255)

    def _mean_std(self, device: Any) -> tuple[Any, Any]:
        import torch

        key = str(device)
        if key not in self._constants:  # one small copy per device, not one per batch
            as_tensor = lambda v: torch.tensor(v, dtype=torch.float32, device=device).view(1, 3, 1, 1)  # noqa: E731
            self._constants[key] = (as_tensor(self.mean), as_tensor(self.std))
        return self._constants[key]


def device_steps_of(transform: Any) -> tuple[DeviceSteps | None, str]:
    """The device steps reproducing ``transform`` (open_clip's eval preprocess), or None
    and why not. Accepted: Resize (bicubic or bilinear, no max_size), an optional
    CenterCrop, open_clip's MaybeConvertMode (the images are RGB already), ToTensor and
    Normalize, in that order; anything else (ResizeKeepRatio, CenterCropOrPad, another
    interpolation, a user's own step) is the host's."""
    from torchvision import transforms as T

    steps = list(getattr(transform, "transforms", None) or [])
    if not steps:
        return None, "the preprocess transform is not a torchvision Compose"
    names = [type(s).__name__ for s in steps]
    steps = [s for s in steps if type(s).__name__ != "MaybeConvertMode"]
    resize, rest = steps[0], steps[1:]
    crop = None
    if rest and isinstance(rest[0], T.CenterCrop):
        crop, rest = rest[0], rest[1:]
    if not (type(resize) is T.Resize and len(rest) == 2 and isinstance(rest[0], T.ToTensor)
            and type(rest[1]) is T.Normalize):
        return None, f"preprocess steps {', '.join(names)} are not Resize, CenterCrop, " \
                     "ToTensor, Normalize"
    interpolation = resize.interpolation.value
    if interpolation not in _INTERPOLATIONS or resize.max_size is not None:
        return None, f"Resize with {interpolation} interpolation and max_size " \
                     f"{resize.max_size} has no faithful torch equivalent here"
    size = resize.size if isinstance(resize.size, (list, tuple)) else [resize.size]
    mean, std = tuple(float(v) for v in rest[1].mean), tuple(float(v) for v in rest[1].std)
    if len(mean) != 3 or len(std) != 3:
        return None, "Normalize does not have one mean and std per RGB channel"
    crop_size = None if crop is None else (int(crop.size[0]), int(crop.size[-1]))
    return DeviceSteps(tuple(int(v) for v in size), interpolation, crop_size,
                       mean, std), ""
