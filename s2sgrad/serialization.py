"""Saving and loading Tensors, arrays and state dicts: ``save`` and ``load``, as PyTorch's, in a
format that never runs code when read.

    s2sgrad.save({"model": weights, "optimizer": opt.state_dict()}, "checkpoint.s2s")
    checkpoint = s2sgrad.load("checkpoint.s2s")
    opt.load_state_dict(checkpoint["optimizer"])

The object is a Tensor, a NumPy array or scalar, a Python number (bool, int, float, complex),
a string, None, or dicts (with string or int keys), lists and tuples of these, nested. The
file is a NumPy ``.npz`` archive: each Tensor and array is one ``.npy`` entry, and one more
entry holds a JSON description of the structure (which leaves are Tensors, with their
``requires_grad`` and whether they are ``nn.Parameter``s, arrays, numbers, strings, None; dict
keys with their types; lists apart from tuples; ``OrderedDict`` apart from ``dict``). Nothing is
pickled, and ``load`` reads with ``allow_pickle=False``.

``load`` gives Tensors back as leaf Tensors (Parameters as Parameters) with the saved dtype,
shape and ``requires_grad`` and without ``.grad``; arrays as arrays, NumPy scalars as NumPy
scalars. An object saved twice in one structure (the same Tensor or array, by identity) comes
back as one object. Any other type raises ``TypeError`` at save time, naming the type and
where it stands (``obj['model']['layer']``); a structure that contains itself raises
``ValueError``. A file that ``save`` did not write raises ``ValueError`` at load time.

``f`` is a path (``str`` or ``os.PathLike``, written as given: no suffix is added) or a binary
file object (seekable, for ``load``).

``load`` takes PyTorch's ``map_location`` and ``weights_only`` too. Every Tensor is loaded on
the CPU, so ``map_location`` may be None or the CPU (``"cpu"``); any other value raises
``ValueError``. The format holds data only and is never unpickled, so ``load`` is always as
safe as PyTorch's ``weights_only=True``, and ``weights_only`` changes nothing.
"""

from __future__ import annotations

import collections
import json
import os
import zipfile
from typing import IO, Any

import numpy as np

from .autograd.tensor import Tensor, device_type
from .nn import Parameter

FORMAT = "s2sgrad.save"
VERSION = 1
STRUCTURE = "structure"  # the archive entry holding the JSON description

_NUMBERS = (bool, int, float, complex)


def save(obj: Any, f: str | os.PathLike | IO[bytes]) -> None:
    """Write ``obj`` to ``f`` (a path or a binary file object)."""
    arrays: list[np.ndarray] = []
    root = _Encoder(arrays).encode(obj, "obj")
    description = json.dumps({"format": FORMAT, "version": VERSION, "root": root})
    entries = {f"a{k}": array for k, array in enumerate(arrays)}
    entries[STRUCTURE] = np.frombuffer(description.encode(), dtype=np.uint8)
    if isinstance(f, (str, os.PathLike)):
        with open(f, "wb") as file:
            np.savez(file, **entries)
    else:
        np.savez(f, **entries)


def load(f: str | os.PathLike | IO[bytes], map_location: Any = None, *,
         weights_only: bool | None = True) -> Any:
    """Read an object written by ``save`` from ``f`` (a path or a binary file object).
    ``map_location`` may be None or ``"cpu"``; ``weights_only`` changes nothing (nothing is
    unpickled either way)."""
    if map_location is not None and device_type(map_location) != "cpu":
        raise ValueError(f"load: map_location={map_location!r} is not supported: s2sgrad loads "
                         f"every Tensor on the CPU, so map_location may be None or 'cpu'")
    if isinstance(f, (str, os.PathLike)):
        with open(f, "rb") as file:
            return _load(file, repr(os.fspath(f)))
    return _load(f, "the file")


class _Encoder:
    """Turns an object into its JSON description, appending arrays to ``arrays``."""

    def __init__(self, arrays: list[np.ndarray]) -> None:
        self.arrays = arrays
        self.slots: dict[int, int] = {}  # id(Tensor or array) -> its index in arrays
        self.keep: list[Any] = []  # the objects behind the ids, kept alive until saved
        self.open: set[int] = set()  # ids of the containers being encoded

    def slot(self, obj: Any, array: np.ndarray) -> int:
        if id(obj) not in self.slots:
            self.slots[id(obj)] = len(self.arrays)
            self.arrays.append(array)
            self.keep.append(obj)
        return self.slots[id(obj)]

    def encode(self, obj: Any, where: str) -> dict[str, Any]:
        if obj is None:
            return {"t": "none"}
        if type(obj) in _NUMBERS:
            return _number(obj)
        if type(obj) is str:
            return {"t": "str", "v": obj}
        if isinstance(obj, Tensor) and type(obj) in (Tensor, Parameter):
            return {"t": "tensor", "i": self.slot(obj, _storable(obj.data, where)),
                    "requires_grad": obj.requires_grad, "parameter": type(obj) is Parameter}
        if type(obj) is np.ndarray:
            return {"t": "array", "i": self.slot(obj, _storable(obj, where))}
        if isinstance(obj, np.generic):
            return {"t": "scalar", "i": self.slot(obj, _storable(np.asarray(obj), where))}
        if type(obj) in (list, tuple, dict, collections.OrderedDict):
            if id(obj) in self.open:
                raise ValueError(f"save: the object contains itself (at {where})")
            self.open.add(id(obj))
            try:
                return self.container(obj, where)
            finally:
                self.open.discard(id(obj))
        raise TypeError(f"save: cannot store an object of type {_name(obj)} (at {where}); "
                        f"supported are Tensors, NumPy arrays and scalars, numbers, strings, "
                        f"None, and dicts, lists and tuples of them")

    def container(self, obj: Any, where: str) -> dict[str, Any]:
        if isinstance(obj, (list, tuple)):
            return {"t": type(obj).__name__,
                    "items": [self.encode(x, f"{where}[{k}]") for k, x in enumerate(obj)]}
        keys = []
        for key in obj:
            if type(key) not in (str, int):
                raise TypeError(f"save: cannot store a dict key of type {_name(key)} (at "
                                f"{where}, key {key!r}); keys must be strings or ints")
            keys.append([type(key).__name__, key])
        return {"t": "ordereddict" if type(obj) is collections.OrderedDict else "dict",
                "keys": keys,
                "values": [self.encode(value, f"{where}[{key!r}]") for key, value in obj.items()]}


def _number(x: complex) -> dict[str, Any]:
    if type(x) is complex:
        return {"t": "complex", "re": x.real.hex(), "im": x.imag.hex()}
    if type(x) is float:  # as hex: exact, and inf and nan stay valid JSON
        return {"t": "float", "v": x.hex()}
    return {"t": type(x).__name__, "v": x}


def _storable(array: np.ndarray, where: str) -> np.ndarray:
    if array.dtype.hasobject:
        raise TypeError(f"save: cannot store an array of dtype object (at {where}); only "
                        f"arrays of numbers, booleans and fixed-size strings can be stored "
                        f"without pickling")
    return array


def _name(obj: Any) -> str:
    kind = type(obj)
    return kind.__qualname__ if kind.__module__ == "builtins" else \
        f"{kind.__module__}.{kind.__qualname__}"


def _load(file: IO[bytes], name: str) -> Any:
    def refuse(why: str) -> ValueError:
        return ValueError(f"load: {name} was not written by s2sgrad.save ({why})")

    try:
        archive = np.load(file, allow_pickle=False)
    except ValueError as error:  # pickled data, or not a NumPy file at all
        raise refuse(str(error)) from None
    except (OSError, EOFError, zipfile.BadZipFile) as error:
        raise refuse(f"{type(error).__name__}: {error}") from None
    if not isinstance(archive, np.lib.npyio.NpzFile):
        raise refuse("it holds a single NumPy array; read it with numpy.load")
    with archive:
        if STRUCTURE not in archive.files:
            detail = ("a file written by torch.save holds pickled data, which s2sgrad does "
                      "not read" if any(n.endswith("data.pkl") for n in archive.zip.namelist())
                      else "it has no structure entry")
            raise refuse(detail)
        try:
            description = json.loads(archive[STRUCTURE].tobytes().decode())
        except (ValueError, UnicodeDecodeError) as error:
            raise refuse(f"its structure entry is not JSON: {error}") from None
        if not isinstance(description, dict) or description.get("format") != FORMAT:
            raise refuse("its structure entry does not name the format")
        if description.get("version") != VERSION:
            raise ValueError(f"load: {name} has format version {description.get('version')!r}; "
                             f"this s2sgrad reads version {VERSION}")
        try:
            return _Decoder(archive).decode(description["root"])
        except (KeyError, IndexError, TypeError, ValueError) as error:
            raise ValueError(f"load: {name} is damaged: its structure does not match its "
                             f"entries ({type(error).__name__}: {error})") from None


class _Decoder:
    """Builds the object back from its description, reading arrays from the archive."""

    def __init__(self, archive: Any) -> None:
        self.archive = archive
        self.made: dict[tuple[str, int], Any] = {}  # (kind, index) -> the object made

    def entry(self, node: dict[str, Any]) -> np.ndarray:
        return self.archive[f"a{int(node['i'])}"]

    def decode(self, node: dict[str, Any]) -> Any:
        kind = node["t"]
        if kind in ("tensor", "array", "scalar"):
            key = (kind, int(node["i"]))
            if key not in self.made:
                self.made[key] = self.leaf(kind, node)
            return self.made[key]
        if kind == "none":
            return None
        if kind in ("bool", "int", "str"):
            value = node["v"]
            if type(value) is not {"bool": bool, "int": int, "str": str}[kind]:
                raise TypeError(f"a {kind} node holds {value!r}")
            return value
        if kind == "float":
            return float.fromhex(node["v"])
        if kind == "complex":
            return complex(float.fromhex(node["re"]), float.fromhex(node["im"]))
        if kind == "list":
            return [self.decode(x) for x in node["items"]]
        if kind == "tuple":
            return tuple(self.decode(x) for x in node["items"])
        if kind in ("dict", "ordereddict"):
            keys = [self.key(k) for k in node["keys"]]
            values = [self.decode(x) for x in node["values"]]
            pairs = zip(keys, values, strict=True)
            return collections.OrderedDict(pairs) if kind == "ordereddict" else dict(pairs)
        raise ValueError(f"unknown node kind {kind!r}")

    def leaf(self, kind: str, node: dict[str, Any]) -> Any:
        array = self.entry(node)
        if kind == "array":
            return array
        if kind == "scalar":
            return array[()]
        if node["parameter"]:
            return Parameter(array, requires_grad=bool(node["requires_grad"]))
        return Tensor(array, requires_grad=bool(node["requires_grad"]))

    @staticmethod
    def key(pair: list[Any]) -> str | int:
        kind, value = pair
        if type(value) is not {"str": str, "int": int}[kind]:
            raise TypeError(f"a {kind} key holds {value!r}")
        return value
