"""The base of models, ``Module``, as PyTorch's ``torch.nn.modules.module``: a ``Module`` finds
its parameters by itself.

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

import reprlib
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping
from typing import Any, NamedTuple

import numpy as np

from ...autograd import grad_mode
from ...autograd.printing import dtype_name
from ...autograd.tensor import Size, Tensor, _dtype, check_device, device_type
from ..parameter import Parameter


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


def _float_dtype(dtype: Any) -> np.dtype:
    """The dtype of a layer's parameters: ``dtype``, or float64 (the default dtype) if None."""
    return np.dtype(np.float64 if dtype is None else dtype)
