"""The images users may boot: a read-only catalog the operator writes in a YAML file.

    catalog = ImageCatalog('/etc/cellplane/images.yaml')
    catalog.get(image_id)      # an Image, or None
    catalog.images()           # every Image, newest first

cellplane runs no image service: an instance records the ``imageRef`` it
was booted with, and the fake virt driver never reads an image. But the
tools users have (``openstack server create --image NAME``, openstacksdk's
``create_server(image=...)``) turn an image name into an id by asking the
``image`` service of the Keystone catalog. This module is what
``cellplane-api`` answers them from (``cellplane_api/images_app.py``, a
read-only subset of Glance v2), and what ``POST /servers`` checks an
``imageRef`` against and takes the image properties from (for the
scheduler's ImagePropertiesFilter) when a catalog is configured.

The file (``[image_catalog] images_file``)::

    images:
      - id: 7f1c4a8e-2b3d-4c5e-9f60-718293a4b5c6   # required, a UUID
        name: cirros-0.6.3                         # required
        disk_format: qcow2                         # default raw
        container_format: bare                     # default bare
        min_disk: 1                                # GiB, default 0
        min_ram: 64                                # MiB, default 0
        size: 21692416                             # bytes, default null
        properties: {hw_architecture: x86_64}      # image properties, strings

It is read again when its modification time changes, so an edit needs no
restart. A file that cannot be read or does not match is an error naming
the entry at fault (``CatalogError``), raised when the API starts, and
logged (the last good catalog kept) when a later edit breaks it.
"""
from __future__ import annotations

import dataclasses
import datetime
import logging
import os
import threading
import uuid
from pathlib import Path

import fastjsonschema
import yaml

LOG = logging.getLogger(__name__)

DISK_FORMATS = ('ami', 'ari', 'aki', 'vhd', 'vhdx', 'vmdk', 'raw', 'qcow2', 'vdi', 'iso',
                'ploop')
CONTAINER_FORMATS = ('ami', 'ari', 'aki', 'bare', 'ovf', 'ova', 'docker', 'compressed')
# Glance's own attributes: a property may not take one of these names.
RESERVED = frozenset((
    'id', 'name', 'status', 'visibility', 'protected', 'os_hidden', 'checksum', 'os_hash_algo',
    'os_hash_value', 'owner', 'size', 'virtual_size', 'min_ram', 'min_disk', 'disk_format',
    'container_format', 'created_at', 'updated_at', 'tags', 'self', 'file', 'schema',
    'direct_url', 'locations'))

_UUID = r'^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$'
_VALIDATE = fastjsonschema.compile({
    'type': 'object',
    'properties': {
        'images': {
            'type': 'array',
            'items': {
                'type': 'object',
                'properties': {
                    'id': {'type': 'string', 'pattern': _UUID},
                    'name': {'type': 'string', 'minLength': 1, 'maxLength': 255},
                    'disk_format': {'enum': list(DISK_FORMATS)},
                    'container_format': {'enum': list(CONTAINER_FORMATS)},
                    'min_disk': {'type': 'integer', 'minimum': 0},
                    'min_ram': {'type': 'integer', 'minimum': 0},
                    'size': {'type': 'integer', 'minimum': 0},
                    'properties': {'type': 'object', 'additionalProperties': {
                        'type': 'string', 'maxLength': 255}},
                },
                'required': ['id', 'name'],
                'additionalProperties': False,
            },
        },
    },
    'required': ['images'],
    'additionalProperties': False,
})


class CatalogError(Exception):
    """The catalog file cannot be read, or an entry is wrong; the message names it."""


@dataclasses.dataclass(frozen=True)
class Image:
    """One image as the catalog file describes it."""

    id: str
    name: str
    disk_format: str = 'raw'
    container_format: str = 'bare'
    min_disk: int = 0
    min_ram: int = 0
    size: int | None = None
    properties: dict[str, str] = dataclasses.field(default_factory=dict)
    # The file's modification time: when the operator last changed the catalog.
    updated_at: datetime.datetime = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)


def parse(text: str, *, where: str = 'the image catalog',
          updated_at: datetime.datetime | None = None) -> list[Image]:
    """The images of a catalog file's text; ``CatalogError`` naming the entry at fault."""
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise CatalogError(f'{where} is not YAML: {exc}'.replace('\n', ' ')) from None
    try:
        _VALIDATE(data)
    except fastjsonschema.JsonSchemaValueException as exc:
        field = (exc.name or 'data').removeprefix('data').lstrip('.') or 'the file'
        raise CatalogError(f'{where}: {field} {exc.message.removeprefix(exc.name or "").strip()}'
                           ) from None
    images, seen = [], set()
    for n, entry in enumerate(data['images']):
        image_id = str(uuid.UUID(entry['id']))
        if image_id in seen:
            raise CatalogError(f'{where}: images[{n}] repeats the id {image_id}')
        clash = sorted(RESERVED & set(entry.get('properties', {})))
        if clash:
            raise CatalogError(f'{where}: images[{n}].properties uses the reserved name '
                               f'{clash[0]}')
        seen.add(image_id)
        images.append(Image(**{**entry, 'id': image_id},
                            **({'updated_at': updated_at} if updated_at else {})))
    return images


class ImageCatalog:
    """The catalog file's images, read again when the file changes. Thread-safe."""

    def __init__(self, path: str | os.PathLike | None):
        self.path = Path(path) if path else None
        self._lock = threading.Lock()
        self._stamp: int | None = None
        self._images: dict[str, Image] = {}
        if self.path is not None:
            self._load(self._mtime())

    @property
    def configured(self) -> bool:
        return self.path is not None

    def _mtime(self) -> int:
        try:
            return self.path.stat().st_mtime_ns
        except OSError as exc:
            raise CatalogError(f'the image catalog {self.path} cannot be read: '
                               f'{exc.strerror}') from None

    def _load(self, stamp: int) -> None:
        try:
            text = self.path.read_text()
        except OSError as exc:
            raise CatalogError(f'the image catalog {self.path} cannot be read: '
                               f'{exc.strerror}') from None
        updated = datetime.datetime.fromtimestamp(stamp / 1e9, datetime.UTC).replace(
            microsecond=0)
        images = parse(text, where=f'the image catalog {self.path}', updated_at=updated)
        self._images = {image.id: image for image in images}
        self._stamp = stamp

    def _fresh(self) -> dict[str, Image]:
        if self.path is None:
            return {}
        with self._lock:
            stamp = None
            try:
                stamp = self._mtime()
                if stamp != self._stamp:
                    self._load(stamp)
            except CatalogError as exc:
                # A half-written or broken edit: keep serving what was good,
                # and say so once per change of the file.
                LOG.error('%s; still serving the %d images read before', exc, len(self._images))
                self._stamp = stamp
            return self._images

    def images(self) -> list[Image]:
        """Every image, sorted as Glance lists by default (newest first, then id)."""
        return sorted(self._fresh().values(), key=lambda i: i.id, reverse=True)

    def get(self, image_id: str) -> Image | None:
        """The image of ``image_id`` (a UUID in any of its spellings), or None."""
        try:
            image_id = str(uuid.UUID(image_id))
        except ValueError:
            return None
        return self._fresh().get(image_id)
