"""The image sizes deploy/images/test_images.py records, one results/images/NAME.json per
entry: {"entry": NAME, "base_bytes": B, "image_bytes": I} (bytes, podman's image sizes; B is
0 for an image on scratch)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path


class ImagesError(ValueError):
    """A size file that is not what test_images.py writes; the message names file and key."""


@dataclass(frozen=True)
class ImageSize:
    entry: str
    base_bytes: int  # the base image (0: scratch)
    image_bytes: int  # the whole image: base and application

    @property
    def app_bytes(self) -> int:
        return self.image_bytes - self.base_bytes

    @property
    def app_share(self) -> float:
        """The application's part of the whole image, 0-1 (the seed's "App on top of Base image")."""
        return self.app_bytes / self.image_bytes


def read(folder: Path) -> dict[str, ImageSize]:
    """Entry name -> its image size, from every *.json in folder ({} when there is none).
    Raises ImagesError (a file that is not a size record), OSError."""
    sizes = {}
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        try:
            doc = json.loads(path.read_text())
        except json.JSONDecodeError as err:
            raise ImagesError(f"{path}: not JSON: {err}") from None
        size = _load(doc, path)
        sizes[size.entry] = size
    return sizes


def _load(doc: object, path: Path) -> ImageSize:
    if not isinstance(doc, dict):
        raise ImagesError(f"{path}: not a JSON object")
    for key, kind in (("entry", str), ("base_bytes", int), ("image_bytes", int)):
        if not isinstance(doc.get(key), kind) or isinstance(doc.get(key), bool):
            raise ImagesError(f"{path}: {key}: missing or not a{'n integer' if kind is int else ' string'}")
    size = ImageSize(doc["entry"], doc["base_bytes"], doc["image_bytes"])
    if not 0 <= size.base_bytes < size.image_bytes:
        raise ImagesError(f"{path}: base_bytes: {size.base_bytes} is not within 0 and image_bytes ({size.image_bytes})")
    return size
