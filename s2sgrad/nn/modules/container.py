"""Modules that hold modules, as PyTorch's ``torch.nn.modules.container``: ``Sequential``
(called in order, each on the previous one's output), ``ModuleList`` and ``ModuleDict``
(held for their owner to call). Each holds its modules as attributes named by position
(``"0"``, ``"1"``, ...) or by key, so that the owner's ``parameters()``, ``state_dict()`` and
``repr`` find them as they find any sub-module."""

from __future__ import annotations

import operator
import reprlib
from collections import OrderedDict
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from .module import Module

if TYPE_CHECKING:
    from typing_extensions import Self


class Sequential(Module):
    """Modules called in order, each on the previous one's output. Built from modules (named
    ``"0"``, ``"1"``, ...) or from one ordered dict of name -> module; indexed (an int gives a
    module, a slice a Sequential), measured with ``len``, iterated, extended with
    ``append``."""

    def __init__(self, *args: Any) -> None:
        if len(args) == 1 and isinstance(args[0], Mapping):
            for name, module in args[0].items():
                setattr(self, name, module)
        else:
            for i, module in enumerate(args):
                setattr(self, str(i), module)

    def _items(self) -> list[tuple[str, Module]]:
        return [(k, v) for k, v in vars(self).items() if isinstance(v, Module)]

    def __getitem__(self, index: Any) -> Any:
        items = self._items()
        if isinstance(index, slice):
            return Sequential(OrderedDict(items[index]))
        i = int(index)
        if not -len(items) <= i < len(items):
            raise IndexError(f"index {i} is out of range")
        return items[i][1]

    def __len__(self) -> int:
        return len(self._items())

    def __iter__(self) -> Iterator[Module]:
        return iter([m for _, m in self._items()])

    def append(self, module: Module) -> Sequential:
        setattr(self, str(len(self)), module)
        return self

    def extend(self, modules: Any) -> Sequential:
        for module in modules:
            self.append(module)
        return self

    def forward(self, input: Any) -> Any:
        for module in self:
            input = module(input)
        return input


class ModuleList(Module):
    """A list of modules, each a sub-module (named ``"0"``, ``"1"``, ...) whose parameters
    the list's owner finds: indexed (a slice gives a ModuleList), measured, iterated, changed
    with ``append``, ``extend``, ``insert``, ``pop``, ``del`` and item assignment (the names
    follow the positions). It has no ``forward``: the owner calls its modules."""

    def __init__(self, modules: Any = None) -> None:
        if modules is not None:
            self.extend(modules)

    def _items(self) -> list[Module]:
        return [v for v in vars(self).values() if isinstance(v, Module)]

    def _renumber(self, modules: list[Module]) -> None:
        for key in [k for k, v in vars(self).items() if isinstance(v, Module)]:
            delattr(self, key)
        for i, module in enumerate(modules):
            self.add_module(str(i), module)

    def _position(self, index: Any) -> int:
        i, n = operator.index(index), len(self)
        if not -n <= i < n:
            raise IndexError(f"index {i} is out of range")
        return i % n

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return ModuleList(self._items()[index])
        return self._items()[self._position(index)]

    def __setitem__(self, index: Any, module: Module) -> None:
        self.add_module(str(self._position(index)), module)

    def __delitem__(self, index: Any) -> None:
        items = self._items()
        del items[index if isinstance(index, slice) else self._position(index)]
        self._renumber(items)

    def __len__(self) -> int:
        return len(self._items())

    def __iter__(self) -> Iterator[Module]:
        return iter(self._items())

    def __iadd__(self, modules: Any) -> Self:
        return self.extend(modules)

    def __add__(self, other: Any) -> ModuleList:
        return ModuleList([*self, *other])

    def append(self, module: Module) -> Self:
        self.add_module(str(len(self)), module)
        return self

    def extend(self, modules: Any) -> Self:
        for module in modules:
            self.append(module)
        return self

    def insert(self, index: int, module: Module) -> None:
        items = self._items()
        items.insert(index, module)
        self._renumber(items)

    def pop(self, index: int = -1) -> Module:
        module = self[index]
        del self[index]
        return module

    @reprlib.recursive_repr()
    def __repr__(self) -> str:
        """PyTorch's form, where a run of modules that print alike is one line:
        ``(0-2): 3 x Linear(...)``."""
        texts = [repr(m) for m in self]
        if not texts:
            return f"{type(self).__name__}()"
        runs: list[list[Any]] = []  # [first, last, text]
        for i, text in enumerate(texts):
            if runs and runs[-1][2] == text:
                runs[-1][1] = i
            else:
                runs.append([i, i, text])
        lines = [(f"({a}): " if a == b else f"({a}-{b}): {b - a + 1} x ") + t.replace("\n", "\n  ")
                 for a, b, t in runs]
        return f"{type(self).__name__}(\n  " + "\n  ".join(lines) + "\n)"


class ModuleDict(Module):
    """An ordered dict of name -> module, each a sub-module under its name, whose parameters
    the dict's owner finds: ``d[name]``, ``d[name] = module``, ``del d[name]``, ``in``,
    ``len``, iteration over the names, ``keys``, ``values``, ``items``, ``update``, ``pop``,
    ``clear``. A name that is an attribute of modules (``"train"``) is refused, as in
    PyTorch."""

    def __init__(self, modules: Any = None) -> None:
        if modules is not None:
            self.update(modules)

    def _pairs(self) -> list[tuple[str, Module]]:
        return [(k, v) for k, v in vars(self).items() if isinstance(v, Module)]

    def __getitem__(self, key: str) -> Module:
        value = vars(self).get(key)
        if not isinstance(value, Module):
            raise KeyError(key)
        return value

    def __setitem__(self, key: str, module: Module) -> None:
        self.add_module(key, module)

    def __delitem__(self, key: str) -> None:
        if key not in self:
            raise KeyError(key)
        delattr(self, key)

    def __len__(self) -> int:
        return len(self._pairs())

    def __iter__(self) -> Iterator[str]:
        return iter(self.keys())

    def __contains__(self, key: object) -> bool:
        return isinstance(vars(self).get(key), Module)  # type: ignore[call-overload]

    def keys(self) -> list[str]:
        return [k for k, _ in self._pairs()]

    def values(self) -> list[Module]:
        return [v for _, v in self._pairs()]

    def items(self) -> list[tuple[str, Module]]:
        return self._pairs()

    def pop(self, key: str) -> Module:
        module = self[key]
        del self[key]
        return module

    def clear(self) -> None:
        for key in self.keys():
            delattr(self, key)

    def update(self, modules: Any) -> None:
        """Add the modules of a mapping (or ModuleDict), or of pairs ``(name, module)``."""
        pairs = modules.items() if isinstance(modules, (Mapping, ModuleDict)) else modules
        for i, pair in enumerate(pairs):
            if len(pair) != 2:
                raise ValueError(f"ModuleDict update sequence element #{i} has length "
                                 f"{len(pair)}; 2 is required")
            self[pair[0]] = pair[1]
