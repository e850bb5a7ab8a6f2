"""Models as classes, in PyTorch's spirit: a ``Module`` finds its parameters by itself.

    class Model(nn.Module):
        def __init__(self):
            self.W = nn.Parameter(np.random.randn(3, 1))
            self.b = nn.Parameter(np.zeros(1))

        def forward(self, x):
            return np.tanh(x @ self.W + self.b)

    model = Model()
    loss = ((model(x) - y) ** 2).mean()
    loss.backward()                      # model.W.grad, model.b.grad
    opt = optim.SGD(model.parameters(), lr=0.1)

Parameters are the attributes that are ``nn.Parameter``s (frozen ones too, as in PyTorch) or
other leaf Tensors that require grad, found in attribute order, recursively through
sub-modules and through lists, tuples and dicts of them. No registration and no
``super().__init__()`` call are needed. A plain Tensor that does not require grad is a
constant, not a parameter: to freeze a weight and unfreeze it later, make it a Parameter, so
that an optimizer built while it is frozen still holds it (optimizers skip a parameter whose
``.grad`` is None).

Buffers are the Tensors named by ``register_buffer`` (a running mean): attributes like the
others, kept in ``state_dict`` (unless registered with ``persistent=False``) and converted by
``to``/``double``/``float``/``half``, but never parameters. A module records their names in
its attribute ``_buffer_names``; assigning the attribute again keeps it a buffer.
"""

from __future__ import annotations

import math
import operator
import reprlib
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from ...autograd import grad_mode
from ...autograd.printing import dtype_name, format_tensor
from ...autograd.tensor import Size, Tensor, _dtype, check_device, device_type
from .. import functional, init

if TYPE_CHECKING:
    from typing_extensions import Self


class Parameter(Tensor):
    """A leaf Tensor that requires grad by default: a model's weight."""

    __slots__ = ()

    def __init__(self, data: Any, requires_grad: bool = True) -> None:
        super().__init__(data, requires_grad=requires_grad)

    def __repr__(self) -> str:
        suffix = ["requires_grad=True"] if self._requires_grad else []
        return "Parameter containing:\n" + format_tensor(self.data, suffix)


class Module:
    """Base class of models: ``parameters()``, ``zero_grad()``, and ``model(x)`` calling
    ``forward``."""

    training: bool = True

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(f"{type(self).__name__} must define forward()")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.forward(*args, **kwargs)

    def named_parameters(self, prefix: str = "") -> Iterator[tuple[str, Tensor]]:
        """``(dotted name, parameter)`` pairs, each parameter once."""
        yield from _once(_walk(self, prefix, set(), _PARAMETERS))

    def named_buffers(self, prefix: str = "") -> Iterator[tuple[str, Tensor]]:
        """``(dotted name, buffer)`` pairs of this module and its sub-modules, each buffer
        once (those not persistent too)."""
        yield from _once(_walk(self, prefix, set(), _BUFFERS))

    def buffers(self) -> Iterator[Tensor]:
        """The buffers held by this module and its sub-modules (see ``register_buffer``)."""
        for _, b in self.named_buffers():
            yield b

    def register_buffer(self, name: str, tensor: Tensor | None,
                        persistent: bool = True) -> None:
        """Make ``tensor`` the attribute ``name``, as a buffer: a Tensor that is part of the
        module's state (``state_dict``, unless not ``persistent``) but not a parameter."""
        _check_name(self, name, "buffer", self._buffer_names_())
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{_type_name(tensor)}' object to buffer '{name}' "
                            "(torch Tensor or None required)")
        self._buffer_names_()[name] = persistent
        setattr(self, name, tensor)

    def register_parameter(self, name: str, param: Parameter | None) -> None:
        """Make ``param`` (a Parameter, or None) the attribute ``name``."""
        own = [key for key, value in vars(self).items() if isinstance(value, Parameter)]
        _check_name(self, name, "parameter", own)
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{_type_name(param)}' object to parameter "
                            f"'{name}' (torch.nn.Parameter or None required)")
        setattr(self, name, param)

    def add_module(self, name: str, module: Module | None) -> None:
        """Make ``module`` (a Module, or None) the sub-module ``name``."""
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{_type_name(module)} is not a Module subclass")
        own = [key for key, value in vars(self).items() if isinstance(value, Module)]
        _check_name(self, name, "module", own)
        setattr(self, name, module)

    register_module = add_module

    def _buffer_names_(self) -> dict[str, bool]:
        """The names of this module's buffers, each with whether it is persistent."""
        return vars(self).setdefault(_BUFFER_NAMES, {})

    def parameters(self) -> Iterator[Tensor]:
        """The parameters held by this module and its sub-modules: every ``Parameter``
        (whether or not it requires grad now), and other leaf Tensors that require grad."""
        for _, p in self.named_parameters():
            yield p

    def named_children(self) -> Iterator[tuple[str, Module]]:
        """The direct sub-modules, each once: the attributes that are Modules, and the Modules
        in lists, tuples and dicts held by attributes (named ``attr.index`` / ``attr.key``)."""
        seen: set[int] = set()
        for key, value in vars(self).items():
            for name, child in _submodules(value, key):
                if id(child) not in seen:
                    seen.add(id(child))
                    yield name, child

    def children(self) -> Iterator[Module]:
        for _, child in self.named_children():
            yield child

    def named_modules(self, memo: set[int] | None = None, prefix: str = "",
                      remove_duplicate: bool = True) -> Iterator[tuple[str, Module]]:
        """``(dotted name, module)`` for this module (named ``prefix``) and every sub-module,
        depth first, parents before their children; each once unless not
        ``remove_duplicate``."""
        if memo is None:
            memo = set()
        if remove_duplicate:
            if id(self) in memo:
                return
            memo.add(id(self))
        yield prefix, self
        children = (self.named_children() if remove_duplicate else
                    (pair for key, value in vars(self).items()
                     for pair in _submodules(value, key)))
        for name, child in children:
            yield from child.named_modules(memo, f"{prefix}.{name}" if prefix else name,
                                           remove_duplicate)

    def modules(self) -> Iterator[Module]:
        """This module and every sub-module, each once, in ``named_modules`` order."""
        for _, m in self.named_modules():
            yield m

    def apply(self, fn: Callable[[Module], Any]) -> Module:
        """Call ``fn`` on every child (recursively, children first) and then on this module;
        returns this module (``model.apply(init_weights)``)."""
        for child in self.children():
            child.apply(fn)
        fn(self)
        return self

    def requires_grad_(self, requires_grad: bool = True) -> Module:
        """Set ``requires_grad`` on every parameter (to freeze or unfreeze them)."""
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def state_dict(self, *, destination: Any = None, prefix: str = "",
                   keep_vars: bool = False) -> Any:
        """An ordered dict of dotted name -> copy of the value of each parameter and
        persistent buffer (a Tensor that does not require grad); with ``keep_vars``, the
        Tensors themselves. One reached under several names (a shared sub-module) appears
        under each."""
        out = OrderedDict() if destination is None else destination
        for name, p in _walk(self, "", set(), _STATE):
            out[prefix + name] = p if keep_vars else Tensor(p.data)
        return out

    def load_state_dict(self, state_dict: Mapping[str, Any],
                        strict: bool = True) -> IncompatibleKeys:
        """Copy the values of ``state_dict`` into the parameters of the same names, in place.

        Returns ``(missing_keys, unexpected_keys)``. A value whose shape differs from its
        parameter's raises RuntimeError; so do missing or unexpected keys when ``strict``. The
        values that fit are copied even when an error is raised, as in PyTorch."""
        own: dict[str, Tensor] = {}
        for name, p in _walk(self, "", set(), _STATE):
            own.setdefault(name, p)
        missing = [k for k in own if k not in state_dict]
        unexpected = [k for k in state_dict if k not in own]
        errors = []
        with grad_mode.no_grad():
            for name, p in own.items():
                if name not in state_dict:
                    continue
                value = state_dict[name]
                value = value.data if isinstance(value, Tensor) else np.asarray(value)
                if value.shape != tuple(p.shape):
                    errors.append(f"size mismatch for {name}: copying a param with shape "
                                  f"{Size(value.shape)!r} from checkpoint, the shape in current "
                                  f"model is {p.shape!r}.")
                    continue
                p.copy_(value.astype(p.dtype))
        if strict:
            if unexpected:
                errors.insert(0, "Unexpected key(s) in state_dict: "
                              + ", ".join(f'"{k}"' for k in unexpected) + ". ")
            if missing:
                errors.insert(0, "Missing key(s) in state_dict: "
                              + ", ".join(f'"{k}"' for k in missing) + ". ")
        if errors:
            raise RuntimeError(f"Error(s) in loading state_dict for {type(self).__name__}:\n\t"
                               + "\n\t".join(errors))
        return IncompatibleKeys(missing, unexpected)

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the gradients of all parameters (to None, or to zeros in place)."""
        for p in self.parameters():
            if set_to_none:
                p.grad = None
            elif p._grad is not None:
                p._grad.zero_()

    def to(self, *args: Any, **kwargs: Any) -> Module:
        """Convert the floating (and complex) parameters and buffers, in place, to a dtype:
        ``model.to(s2sgrad.float32)``, ``model.to(dtype=...)``, ``model.to(tensor)``. The
        device ``"cpu"`` changes nothing; another one raises RuntimeError. Returns this
        module; the parameters stay the same objects (an optimizer keeps them)."""
        dtype = kwargs.pop("dtype", None)
        device = kwargs.pop("device", None)
        kwargs.pop("non_blocking", None)
        if kwargs:
            raise TypeError(f"to() got an unexpected keyword argument {next(iter(kwargs))!r}")
        for arg in args:
            if isinstance(arg, Tensor):
                dtype = arg.dtype
            elif device_type(arg) is not None:
                device = arg
            elif not isinstance(arg, bool):  # non_blocking, given by position
                dtype = arg
        if device is not None:
            check_device(device)
        if dtype is not None:
            dtype = _dtype(dtype)
            if dtype.kind not in "fc":
                raise TypeError(f"nn.Module.to only accepts floating point or complex dtypes, "
                                f"but got desired dtype={dtype_name(dtype)}")
            self._cast(dtype, "fc")
        return self

    def double(self) -> Module:
        """Floating parameters and buffers to float64, in place."""
        return self._cast(np.dtype(np.float64), "f")

    def float(self) -> Module:
        """Floating parameters and buffers to float32, in place."""
        return self._cast(np.dtype(np.float32), "f")

    def half(self) -> Module:
        """Floating parameters and buffers to float16, in place."""
        return self._cast(np.dtype(np.float16), "f")

    def _cast(self, dtype: np.dtype, kinds: str) -> Module:
        """Give the parameters and buffers whose dtype is of ``kinds`` the dtype ``dtype``
        (their gradients too), keeping each Tensor object."""
        for t in [*self.parameters(), *self.buffers()]:
            if t.dtype.kind in kinds and t.dtype != dtype:
                t.data = t.data.astype(dtype)
                if t._grad is not None:
                    t.grad = Tensor(t._grad.data.astype(dtype))
        return self

    def train(self, mode: bool = True) -> Module:
        """Set ``training`` on this module and its sub-modules (for layers that care)."""
        for m in self.modules():
            m.training = mode
        return self

    def eval(self) -> Module:
        return self.train(False)

    def extra_repr(self) -> str:
        """This module's settings as ``repr`` shows them, e.g. ``in_features=4,
        out_features=32, bias=True``; empty unless a layer says otherwise (override it in a
        module of your own to show its settings)."""
        return ""

    @reprlib.recursive_repr()  # a module reached again inside itself prints as "..."
    def __repr__(self) -> str:
        """PyTorch's form: the class name, ``extra_repr()``, then each sub-module on its own
        line as ``(name): repr``, indented by two spaces per level."""
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = [f"({name}): " + repr(child).replace("\n", "\n  ")
                       for key, value in vars(self).items()
                       for name, child in _submodules(value, key)]
        lines = extra_lines + child_lines
        if not lines:
            return f"{type(self).__name__}()"
        if len(extra_lines) == 1 and not child_lines:
            return f"{type(self).__name__}({extra_lines[0]})"
        return f"{type(self).__name__}(\n  " + "\n  ".join(lines) + "\n)"


class IncompatibleKeys(NamedTuple):
    """What ``load_state_dict`` found: the model's names absent from the state dict, and the
    state dict's names the model lacks."""
    missing_keys: list[str]
    unexpected_keys: list[str]

    def __repr__(self) -> str:
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return (f"IncompatibleKeys(missing_keys={self.missing_keys!r}, "
                f"unexpected_keys={self.unexpected_keys!r})")


_BUFFER_NAMES = "_buffer_names"
_PARAMETERS, _BUFFERS, _STATE = "parameters", "buffers", "state"  # what _walk finds


def _once(pairs: Iterator[tuple[str, Tensor]]) -> Iterator[tuple[str, Tensor]]:
    """The pairs whose Tensor was not met before."""
    seen: set[int] = set()
    for name, value in pairs:
        if id(value) not in seen:
            seen.add(id(value))
            yield name, value


def _type_name(value: Any) -> str:
    kind = type(value)
    return kind.__qualname__ if kind.__module__ == "builtins" else \
        f"{kind.__module__}.{kind.__qualname__}"


def _check_name(module: Module, name: Any, kind: str, own: Any) -> None:
    """Refuse, as PyTorch does, a name that cannot be an attribute of ``module`` holding a
    ``kind`` (``own``: the names already holding one, which may be replaced)."""
    if not isinstance(name, str):
        raise TypeError(f"{kind} name should be a string. Got {_type_name(name)}")
    if name == "":
        raise KeyError(f'{kind} name can\'t be empty string ""')
    if "." in name:
        got = f", got: {name}" if kind == "module" else ""  # PyTorch's words
        raise KeyError(f'{kind} name can\'t contain "."{got}')
    if hasattr(module, name) and name not in own:
        raise KeyError(f"attribute '{name}' already exists")


def _submodules(value: Any, name: str) -> Iterator[tuple[str, Module]]:
    """Modules in ``value``, looking through lists, tuples and dicts but not into Modules."""
    if isinstance(value, Module):
        yield name, value
    elif isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            yield from _submodules(item, f"{name}.{i}")
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _submodules(item, f"{name}.{key}")


def _walk(value: Any, name: str, active: set[int],
          kind: str = _PARAMETERS) -> Iterator[tuple[str, Tensor]]:
    """Parameters (``kind`` _PARAMETERS), buffers (_BUFFERS), or parameters and persistent
    buffers (_STATE) reachable from ``value``, depth first, in attribute order."""
    if isinstance(value, Tensor):
        if kind != _BUFFERS and (isinstance(value, Parameter) or (value.requires_grad and
                                                                 value.is_leaf)):
            yield name, value
        return
    if id(value) in active:  # a cycle of references between modules
        return
    buffers: dict[str, bool] = {}
    if isinstance(value, Module):
        buffers = vars(value).get(_BUFFER_NAMES, {})
        items = ((k, v) for k, v in vars(value).items() if k != _BUFFER_NAMES)
    elif isinstance(value, (list, tuple)):
        items = ((str(i), v) for i, v in enumerate(value))
    elif isinstance(value, dict):
        items = ((str(k), v) for k, v in value.items())
    else:
        return
    active.add(id(value))
    for key, item in items:
        full = f"{name}.{key}" if name else key
        if key not in buffers:
            yield from _walk(item, full, active, kind)
        elif isinstance(item, Tensor) and (kind == _BUFFERS or (kind == _STATE and buffers[key])):
            yield full, item
    active.discard(id(value))


# -- layers ----------------------------------------------------------------------------------

def _float_dtype(dtype: Any) -> np.dtype:
    return np.dtype(np.float64 if dtype is None else dtype)


class Linear(Module):
    """``y = x @ weight.T + bias``; ``weight`` has shape ``(out_features, in_features)``.

    Initialised as PyTorch does: ``weight`` by ``init.kaiming_uniform_(a=sqrt(5))``, that is
    U(-1/sqrt(in_features), 1/sqrt(in_features)), and ``bias`` from the same range."""

    def __init__(self, in_features: int, out_features: int, bias: bool = True,
                 dtype: Any = None) -> None:
        self.in_features = in_features
        self.out_features = out_features
        dtype = _float_dtype(dtype)
        self.weight = Parameter(np.empty((out_features, in_features), dtype=dtype))
        self.bias = Parameter(np.empty(out_features, dtype=dtype)) if bias else None
        self.reset_parameters()

    def reset_parameters(self) -> None:
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in = self.in_features
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def extra_repr(self) -> str:
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}")

    def forward(self, input: Any) -> Tensor:
        return functional.linear(input, self.weight, self.bias)


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


class Identity(Module):
    """The input itself; takes (and ignores) any arguments, as PyTorch's does."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass

    def forward(self, input: Any) -> Any:
        return input


class Flatten(Module):
    """``input.flatten(start_dim, end_dim)``: by default every dimension but the first (the
    batch) made one."""

    def __init__(self, start_dim: int = 1, end_dim: int = -1) -> None:
        self.start_dim = start_dim
        self.end_dim = end_dim

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"

    def forward(self, input: Any) -> Tensor:
        return functional._t(input).flatten(self.start_dim, self.end_dim)


class Unflatten(Module):
    """``input.unflatten(dim, unflattened_size)``: the dimension ``dim`` split in several."""

    def __init__(self, dim: int, unflattened_size: Any) -> None:
        self.dim = dim
        self.unflattened_size = unflattened_size

    def extra_repr(self) -> str:
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"

    def forward(self, input: Any) -> Tensor:
        return functional._t(input).unflatten(self.dim, self.unflattened_size)


class ReLU(Module):
    def __init__(self, inplace: bool = False) -> None:
        self.inplace = inplace

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""

    def forward(self, input: Any) -> Tensor:
        return functional.relu(input)


class LeakyReLU(Module):
    def __init__(self, negative_slope: float = 0.01, inplace: bool = False) -> None:
        self.negative_slope = negative_slope
        self.inplace = inplace

    def extra_repr(self) -> str:
        return f"negative_slope={self.negative_slope}" + (", inplace=True" if self.inplace
                                                         else "")

    def forward(self, input: Any) -> Tensor:
        return functional.leaky_relu(input, self.negative_slope)


class ELU(Module):
    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        self.alpha = alpha
        self.inplace = inplace

    def extra_repr(self) -> str:
        return f"alpha={self.alpha}" + (", inplace=True" if self.inplace else "")

    def forward(self, input: Any) -> Tensor:
        return functional.elu(input, self.alpha)


class Softplus(Module):
    def __init__(self, beta: float = 1.0, threshold: float = 20.0) -> None:
        self.beta = beta
        self.threshold = threshold

    def extra_repr(self) -> str:
        return f"beta={self.beta}, threshold={self.threshold}"

    def forward(self, input: Any) -> Tensor:
        return functional.softplus(input, self.beta, self.threshold)


class SiLU(Module):
    def __init__(self, inplace: bool = False) -> None:
        self.inplace = inplace

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""

    def forward(self, input: Any) -> Tensor:
        return functional.silu(input)


class Tanh(Module):
    def forward(self, input: Any) -> Tensor:
        return functional.tanh(input)


class Sigmoid(Module):
    def forward(self, input: Any) -> Tensor:
        return functional.sigmoid(input)


class GELU(Module):
    """``x * Phi(x)`` (exact, through erf); ``approximate="tanh"`` for the tanh form."""

    def __init__(self, approximate: str = "none") -> None:
        self.approximate = approximate

    def extra_repr(self) -> str:
        return f"approximate={self.approximate!r}"

    def forward(self, input: Any) -> Tensor:
        return functional.gelu(input, approximate=self.approximate)


class Softmax(Module):
    def __init__(self, dim: int | None = None) -> None:
        self.dim = dim

    def extra_repr(self) -> str:
        return f"dim={self.dim}"

    def forward(self, input: Any) -> Tensor:
        return functional.softmax(input, self.dim)


class LogSoftmax(Module):
    def __init__(self, dim: int | None = None) -> None:
        self.dim = dim

    def extra_repr(self) -> str:
        return f"dim={self.dim}"

    def forward(self, input: Any) -> Tensor:
        return functional.log_softmax(input, self.dim)


class Dropout(Module):
    """In training mode, zero each element with probability ``p`` (drawn from the default
    generator, which ``s2sgrad.manual_seed`` resets) and scale the rest by ``1 / (1 - p)``; in
    eval mode, the identity."""

    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        if p < 0.0 or p > 1.0:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p = p
        self.inplace = inplace

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"

    def forward(self, input: Any) -> Tensor:
        return functional.dropout(input, self.p, self.training)


class Embedding(Module):
    """A table of ``num_embeddings`` vectors of size ``embedding_dim``, initialised N(0, 1),
    looked up by integer indices. The row ``padding_idx`` starts at zero and gets no
    gradient."""

    def __init__(self, num_embeddings: int, embedding_dim: int, padding_idx: int | None = None,
                 _weight: Any = None, _freeze: bool = False, dtype: Any = None) -> None:
        if padding_idx is not None:
            if not -num_embeddings <= padding_idx < num_embeddings:
                raise AssertionError("Padding_idx must be within num_embeddings")
            if padding_idx < 0:
                padding_idx += num_embeddings
        self.num_embeddings = num_embeddings
        self.embedding_dim = embedding_dim
        self.padding_idx = padding_idx
        if _weight is None:
            self.weight = Parameter(np.empty((num_embeddings, embedding_dim),
                                             dtype=_float_dtype(dtype)),
                                    requires_grad=not _freeze)
            self.reset_parameters()
        else:
            data = _weight.data if isinstance(_weight, Tensor) else np.asarray(_weight)
            if data.shape != (num_embeddings, embedding_dim):
                raise AssertionError("Shape of weight does not match num_embeddings and "
                                     "embedding_dim")
            self.weight = Parameter(data, requires_grad=not _freeze)

    def reset_parameters(self) -> None:
        init.normal_(self.weight)
        if self.padding_idx is not None:
            with grad_mode.no_grad():
                self.weight[self.padding_idx] = 0.0

    @classmethod
    def from_pretrained(cls, embeddings: Any, freeze: bool = True,
                        padding_idx: int | None = None) -> Embedding:
        rows, cols = np.shape(embeddings.data if isinstance(embeddings, Tensor) else embeddings)
        return cls(rows, cols, padding_idx, _weight=embeddings, _freeze=freeze)

    def extra_repr(self) -> str:
        text = f"{self.num_embeddings}, {self.embedding_dim}"
        return text if self.padding_idx is None else f"{text}, padding_idx={self.padding_idx}"

    def forward(self, input: Any) -> Tensor:
        return functional.embedding(input, self.weight, self.padding_idx)


class LayerNorm(Module):
    """Normalise over the trailing ``normalized_shape`` dimensions, then scale by ``weight``
    (ones) and shift by ``bias`` (zeros) when ``elementwise_affine``."""

    def __init__(self, normalized_shape: Any, eps: float = 1e-5,
                 elementwise_affine: bool = True, bias: bool = True, dtype: Any = None) -> None:
        shape = ((normalized_shape,) if isinstance(normalized_shape, int)
                 else tuple(normalized_shape))
        self.normalized_shape = shape
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        dtype = _float_dtype(dtype)
        if elementwise_affine:
            self.weight = Parameter(np.ones(shape, dtype=dtype))
            self.bias = Parameter(np.zeros(shape, dtype=dtype)) if bias else None
        else:
            self.weight = self.bias = None

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}, bias={self.bias is not None}")

    def forward(self, input: Any) -> Tensor:
        return functional.layer_norm(input, self.normalized_shape, self.weight, self.bias,
                                     self.eps)


# -- losses ----------------------------------------------------------------------------------

class MSELoss(Module):
    def __init__(self, reduction: str = "mean") -> None:
        self.reduction = reduction

    def forward(self, input: Any, target: Any) -> Tensor:
        return functional.mse_loss(input, target, self.reduction)


class L1Loss(Module):
    def __init__(self, size_average: bool | None = None, reduce: bool | None = None,
                 reduction: str = "mean") -> None:
        self.reduction = functional._legacy_reduction(size_average, reduce, reduction)

    def forward(self, input: Any, target: Any) -> Tensor:
        return functional.l1_loss(input, target, reduction=self.reduction)


class SmoothL1Loss(Module):
    def __init__(self, size_average: bool | None = None, reduce: bool | None = None,
                 reduction: str = "mean", beta: float = 1.0) -> None:
        self.reduction = functional._legacy_reduction(size_average, reduce, reduction)
        self.beta = beta

    def forward(self, input: Any, target: Any) -> Tensor:
        return functional.smooth_l1_loss(input, target, reduction=self.reduction,
                                         beta=self.beta)


class HuberLoss(Module):
    def __init__(self, reduction: str = "mean", delta: float = 1.0) -> None:
        self.reduction = reduction
        self.delta = delta

    def forward(self, input: Any, target: Any) -> Tensor:
        return functional.huber_loss(input, target, reduction=self.reduction, delta=self.delta)


class BCELoss(Module):
    """``functional.binary_cross_entropy``; ``weight`` is a buffer, as in PyTorch."""

    def __init__(self, weight: Any = None, size_average: bool | None = None,
                 reduce: bool | None = None, reduction: str = "mean") -> None:
        self.register_buffer("weight", None if weight is None else functional._t(weight))
        self.reduction = functional._legacy_reduction(size_average, reduce, reduction)

    def forward(self, input: Any, target: Any) -> Tensor:
        return functional.binary_cross_entropy(input, target, self.weight,
                                               reduction=self.reduction)


class NLLLoss(Module):
    def __init__(self, weight: Any = None, ignore_index: int = -100,
                 reduction: str = "mean") -> None:
        self.weight = weight
        self.ignore_index = ignore_index
        self.reduction = reduction

    def forward(self, input: Any, target: Any) -> Tensor:
        return functional.nll_loss(input, target, self.weight, self.ignore_index,
                                   self.reduction)


class CrossEntropyLoss(Module):
    def __init__(self, weight: Any = None, ignore_index: int = -100, reduction: str = "mean",
                 label_smoothing: float = 0.0) -> None:
        self.weight = weight
        self.ignore_index = ignore_index
        self.reduction = reduction
        self.label_smoothing = label_smoothing

    def forward(self, input: Any, target: Any) -> Tensor:
        return functional.cross_entropy(input, target, self.weight, self.ignore_index,
                                        self.reduction, self.label_smoothing)


class BCEWithLogitsLoss(Module):
    def __init__(self, weight: Any = None, reduction: str = "mean",
                 pos_weight: Any = None) -> None:
        self.weight = weight
        self.reduction = reduction
        self.pos_weight = pos_weight

    def forward(self, input: Any, target: Any) -> Tensor:
        return functional.binary_cross_entropy_with_logits(input, target, self.weight,
                                                           self.reduction, self.pos_weight)
