"""The graph between compiled functions, and the engine that runs it backwards.

Inside a ``@grad`` function there is no graph: the compiler produced a forward that returns
``(out, saved)`` and a backward that maps the output cotangent to input cotangents. Between
calls the graph is dynamic, as in PyTorch: each call on Tensors that require grad makes one
``Node`` holding ``saved`` and, for each differentiated input, an edge to where its gradient
goes: the node that produced it, or the leaf Tensor that accumulates it.

``backward()`` orders the nodes reachable from the roots (reverse topological order), sums the
cotangents arriving at each node's outputs, calls its compiled backward once, and frees
``saved`` unless ``retain_graph=True``.

In the Tensor layer, above tensor.py and below ops.py: imports tensor.py, grad_mode.py and
the compiler's ``function``, with which it registers ``call_function`` (at the end), so
that a ``@grad`` Function called with Tensors records its node here.
"""

from __future__ import annotations

import inspect
import weakref
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..compiler import derivatives, sourcefile
from ..compiler.compiled import state_of
from ..compiler.function import Function, register_tensor_call
from ..compiler.normalize import GRAD, STOP, register_context
from ..errors import note_generated
from . import grad_mode
from .tensor import Tensor, _make, sync

FREED = (
    "Trying to backward through the graph a second time (or directly access saved tensors "
    "after they have already been freed). Saved intermediate values of the graph are freed "
    "when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to "
    "backward through the graph a second time or if you need to access saved tensors after "
    "calling backward."
)
LIFTED = "create_graph=True through {name}: the call it records cannot be run again"


class Node:
    """One recorded call: the compiled backward, its saved values and the input edges.

    ``edges[k]`` is where the cotangent of the k-th differentiated input goes: ``(node, i)``
    for output ``i`` of another node, or ``(tensor, 0)`` for a leaf that accumulates it.
    The edges are an arbitrary list, so inputs need not be positional arguments.
    """

    __slots__ = (
        "__weakref__",
        "call",
        "checks",
        "compiled",
        "edges",
        "freeable",
        "name",
        "outputs",
        "retained",
        "saved",
    )

    def __init__(self, name: str, compiled: Any, saved: Any, edges: tuple,
                 checks: tuple, outputs: tuple | None, call: tuple | None = None) -> None:
        self.name = name
        # (Function, args, kwargs, wrt): the call itself, which create_graph differentiates
        # again; None where the function read Tensors it was not passed
        self.call = call
        self.compiled = compiled
        self.saved = saved
        # A node that saved no array has nothing to free: it may run backward again (PyTorch
        # too lets a graph that saved no tensor be walked twice).
        self.freeable = _holds_arrays(saved)
        self.edges = edges
        self.checks = checks  # (version, expected value, array, origin) per Tensor seen
        self.outputs = outputs  # (shape, dtype) of each output when the function returns a tuple
        self.retained: dict[int, weakref.ref] | None = None

    @property
    def source(self) -> str:
        """The generated backward source of this node's function."""
        return self.compiled.adjoint_source

    @property
    def next_functions(self) -> tuple:
        """``((node, output_index), ...)`` for each differentiated input: another node, or
        for a leaf the ``AccumulateGrad`` that stands for its ``.grad``, as in PyTorch."""
        return tuple((t, i) if isinstance(t, Node) else (accumulator(t), 0)
                     for t, i in self.edges)

    def retain(self, index: int, tensor: Tensor) -> None:
        if self.retained is None:
            self.retained = {}
        self.retained[index] = weakref.ref(tensor)

    def __repr__(self) -> str:
        return f"<{self.name} object at {id(self):#x}>"

    def check_versions(self) -> None:
        """Refuse to run if a value saved for this backward was changed in place since."""
        for version, expected, array, origin in self.checks:
            if version.value != expected and _saved_uses(self.saved, array):
                raise RuntimeError(_modified_message(array, origin, self, version.value,
                                                     expected))



class AccumulateGrad:
    """What a graph shows in place of a leaf Tensor (``next_functions``): the gradient that
    reaches it is added to ``variable.grad``. The walk itself adds to the leaf directly; this
    object is for reading the graph. One per leaf while something holds it, as in PyTorch."""

    __slots__ = ("__weakref__", "variable")

    def __init__(self, variable: Tensor) -> None:
        self.variable = variable

    @property
    def next_functions(self) -> tuple:
        return ()

    def __repr__(self) -> str:
        return f"<AccumulateGrad object at {id(self):#x}>"


# leaf id -> its AccumulateGrad, held weakly (the accumulator holds its leaf)
_accumulators: weakref.WeakValueDictionary = weakref.WeakValueDictionary()


def accumulator(leaf: Tensor) -> AccumulateGrad:
    """The ``AccumulateGrad`` of ``leaf``: the same object while one is held."""
    found = _accumulators.get(id(leaf))
    if found is None or found.variable is not leaf:
        found = _accumulators[id(leaf)] = AccumulateGrad(leaf)
    return found

def _saved_uses(saved: Any, array: np.ndarray) -> bool:
    """Whether ``saved`` holds ``array`` or a view of its memory."""
    if isinstance(saved, np.ndarray):
        return np.may_share_memory(saved, array)
    if isinstance(saved, (tuple, list)):
        return any(_saved_uses(s, array) for s in saved)
    return False


def _holds_arrays(saved: Any) -> bool:
    """Whether freeing ``saved`` releases anything (a graph that saved nothing may rerun)."""
    if isinstance(saved, (np.ndarray, np.generic)):
        return True
    if isinstance(saved, dict):
        saved = list(saved.values())
    if isinstance(saved, (tuple, list)):
        for value in saved:
            if isinstance(value, (np.ndarray, np.generic)) or (
                    isinstance(value, (tuple, list, dict)) and _holds_arrays(value)):
                return True
    return False


def _modified_message(array: np.ndarray, origin: Any, node: Node, now: int, then: int) -> str:
    which = ""
    if isinstance(origin, int):
        which = f", which is output {origin} of {_op_name(node.name)},"
    elif origin is not None and isinstance(origin[0], Node):
        which = f", which is output {origin[1]} of {_op_name(origin[0].name)},"
    return (
        "one of the variables needed for gradient computation has been modified by an inplace "
        f"operation: [{array.dtype} {list(array.shape)}]{which} is at version {now}; expected "
        f"version {then} instead. Hint: {node.name} saved this value in the forward pass; "
        "change a copy (t.clone()) instead, or make the in-place change after backward()."
    )


def _op_name(node_name: str) -> str:
    return node_name.split("Backward")[0]


# -- recording --------------------------------------------------------------------------------

def node_name(function_name: str) -> str:
    """``loss`` -> ``LossBackward``, ``my_loss`` -> ``MyLossBackward``."""
    words = [w for w in function_name.replace("<", "").replace(">", "").split("_") if w]
    return "".join(w[0].upper() + w[1:] for w in words) + "Backward"


def call_function(function: Any, args: tuple, kwargs: dict, name: str | None = None) -> Any:
    """Call a ``@grad`` Function on arguments of which some are Tensors.

    With grad mode on and a Tensor argument that requires grad, run the compiled forward on
    the raw values, record a node, and return Tensors whose ``grad_fn`` is that node.
    Otherwise run the original function and wrap its result in Tensors.
    """
    if kwargs:
        args, kwargs = _bind_keyword_tensors(function, args, kwargs)
    raw = []
    wrt = []
    objects = False  # an argument that may hold Tensors in its attributes (self)
    enabled = grad_mode._enabled.get()
    for i, a in enumerate(args):
        if isinstance(a, Tensor):
            if a._base is not None and enabled and a._base._grad_fn is not a._seen:
                sync(a)  # a view whose base was changed in place since
            raw.append(a._data)
            if a._requires_grad:
                wrt.append(i)
        else:
            kind = type(a)
            if kind in (list, tuple, dict):
                _plain_arg(a)
            elif kind not in _RAW:
                objects = True
            raw.append(a)
    # Tensors read through attributes (self.W) or globals are inputs too: the compiled
    # pair takes them as keyword-only parameters after the positional ones.
    lifted = function.implicit_inputs(args) if (objects or hasattr(function, "_spec")) else {}
    lifted_grad = [t for t in lifted.values() if t.requires_grad]
    if (not wrt and not lifted_grad) or not enabled:
        return wrap_plain(function.fn(*raw, **kwargs), args)
    _refuse_complex_leaves([args[i] for i in wrt] + lifted_grad, function)
    if lifted:
        compiled, extra = function.lifted_compiled(tuple(wrt), tuple(raw), kwargs, lifted)
        out, saved = compiled.forward(*raw, **kwargs, **extra)
        inputs = list(args) + list(lifted.values())
        wrt = list(wrt) + [len(args) + k for k, t in enumerate(lifted.values())
                           if t.requires_grad]
    else:
        compiled = function.compiled_for(tuple(wrt), tuple(raw), kwargs)
        out, saved = compiled.forward(*raw, **kwargs)
        inputs = args
        extra = {}
    if compiled.external:  # backward runs later: keep the forward's values of what is shared
        params = function._spec.params
        tensors = {params[i] for i, a in enumerate(args)
                   if i < len(params) and isinstance(a, Tensor)}
        saved = compiled.own_saved(saved, tensors | set(extra))
    if name is None:
        name = node_name(compiled.name)
    call = (function, args, kwargs, tuple(wrt), lifted)
    return record(name, compiled, saved, out, inputs, wrt, call)


_RAW = frozenset([np.ndarray, float, int, bool, complex, str, type(None), np.float64,
                  np.float32, np.int64, slice])


def _refuse_complex_leaves(tensors: list, function: Any) -> None:
    """A complex Tensor that requires grad: PyTorch's gradient of it is the conjugate of
    the one the compiler gives (JAX's convention), so it is refused rather than given in
    the other convention. Real Tensors through complex values inside are differentiated."""
    for t in tensors:
        if t.dtype.is_complex:
            name = getattr(function, "__name__", None) or getattr(function.fn, "__name__", "?")
            raise RuntimeError(
                f"{name}(): a complex Tensor that requires grad is not differentiated here: "
                "PyTorch's gradient of a complex input is the conjugate of the one s2sgrad's "
                "functional transforms give (JAX's convention). Pass the real and imaginary "
                "parts as real Tensors (and build the complex value inside), or use "
                "s2sgrad.gradient on arrays.")


def _holds_tensors(value: Any, depth: int = 3) -> bool:
    """Whether an object's attributes (or their items, a few levels down) hold a Tensor."""
    if isinstance(value, Tensor):
        return True
    if depth == 0 or type(value) in _RAW or isinstance(value, np.ndarray):
        return False
    if isinstance(value, (list, tuple)):
        items = value
    elif isinstance(value, dict):
        items = value.values()
    else:
        items = getattr(value, "__dict__", {}).values()
    return any(_holds_tensors(v, depth - 1) for v in items)


def _plain_arg(a: list | tuple | dict) -> Any:
    """Refuse a container argument holding a Tensor (at any depth): the compiled function
    takes arrays, and a Tensor's gradient cannot flow out of a container argument."""
    if _holds_tensor(a):
        kind = "dict" if isinstance(a, dict) else "list or tuple"
        raise TypeError(
            f"a Tensor inside a {kind} argument cannot be differentiated; "
            "pass each Tensor as its own argument"
        )
    return a


def _holds_tensor(a: list | tuple | dict, depth: int = 8) -> bool:
    for x in (a.values() if isinstance(a, dict) else a):
        if isinstance(x, Tensor):
            return True
        if depth and type(x) in (list, tuple, dict) and _holds_tensor(x, depth - 1):
            return True
    return False


def _bind_keyword_tensors(function: Any, args: tuple, kwargs: dict) -> tuple[tuple, dict]:
    """Move Tensor keyword arguments to their positions: only positions can be differentiated."""
    if not any(isinstance(v, Tensor) for v in kwargs.values()):
        return args, kwargs
    import inspect

    bound = inspect.signature(function.fn, follow_wrapped=False).bind(*args, **kwargs)
    args, kwargs = bound.args, bound.kwargs
    for key, value in kwargs.items():
        if isinstance(value, Tensor):
            if value._requires_grad:
                raise TypeError(
                    f"keyword-only argument {key!r} is a Tensor that requires grad; "
                    "make it a positional parameter to differentiate it"
                )
            kwargs[key] = value._data
    return args, kwargs


def record(name: str, compiled: Any, saved: Any, out: Any, args: Sequence[Any],
           wrt: Sequence[int], call: tuple | None = None) -> Any:
    """Make the node of one call and the output Tensors that point at it.

    ``args`` are the call's arguments; ``wrt`` the positions of those differentiated, in
    increasing order (the order of the backward's results). Every Tensor argument's version
    is noted, to detect later in-place changes of saved values.
    """
    edges = []
    checks = []
    for i, a in enumerate(args):
        if isinstance(a, Tensor):
            edge = (a, 0) if a._grad_fn is None else (a._grad_fn, a._out)
            if i in wrt:
                edges.append(edge)
            checks.append((a._version, a._version.value, a._data,
                           edge if a._requires_grad else None))
    edges = tuple(edges)
    if isinstance(out, (tuple, list)):  # several outputs (np.split gives a list of them)
        arrays = [np.asarray(o) for o in out]
        node = Node(name, compiled, saved, edges, (), tuple((a.shape, a.dtype) for a in arrays),
                    call)
        outs = []
        for i, a in enumerate(arrays):
            if a.dtype.kind in "fc":
                t = _output(a, node, i, args)
                checks.append((t._version, t._version.value, a, i))
            else:
                t = _output(a, None, 0, args)
            outs.append(t)
        node.checks = tuple(checks)
        return outs if isinstance(out, list) else tuple(outs)
    array = out if type(out) is np.ndarray else np.asarray(out)
    if array.dtype.kind not in "fc":
        return _output(array, None, 0, args)  # not differentiable
    node = Node(name, compiled, saved, edges, (), None, call)
    t = _output(array, node, 0, args)
    checks.append((t._version, t._version.value, array, 0))
    node.checks = tuple(checks)
    return t


def _output(array: np.ndarray, node: Node | None, out: int, args: Sequence[Any]) -> Tensor:
    """The Tensor of a result. One that aliases an argument's memory is a view of it: it
    shares its version counter and knows its base (the argument's base if it is a view)."""
    view = array.base is not None
    for a in args:
        if isinstance(a, Tensor) and (array is a._data or (
                view and np.may_share_memory(array, a._data))):
            t = _make(array, node, out, a._version)
            base = a if a._base is None else a._base
            t._base = base
            t._seen = base._grad_fn
            t._nograd_view = a._nograd_view or not grad_mode._enabled.get()
            return t
    return _make(array, node, out)


def wrap_plain(out: Any, args: Sequence[Any] = (), numbers: bool = True) -> Any:
    """Wrap a result computed without recording: arrays (and Python numbers, with
    ``numbers``) become Tensors; anything else is returned as it is."""
    if isinstance(out, tuple):
        return tuple(wrap_plain(o, args, numbers) for o in out)
    if isinstance(out, list) and out and all(isinstance(o, np.ndarray) for o in out):
        return [wrap_plain(o, args, numbers) for o in out]  # np.split's pieces
    if isinstance(out, (np.ndarray, np.generic)) or (
            numbers and isinstance(out, (float, int, complex))):
        return _output(np.asarray(out), None, 0, args)
    return out


# -- the engine -------------------------------------------------------------------------------

def backward(tensors: Sequence[Tensor], grad_tensors: Sequence[Any] | None = None,
             retain_graph: bool | None = None, create_graph: bool = False,
             inputs: Sequence[Tensor] | None = None) -> None:
    """Accumulate into the leaves' ``.grad`` the gradients of ``tensors`` (PyTorch's
    ``torch.autograd.backward``)."""
    tensors = [tensors] if isinstance(tensors, Tensor) else list(tensors)
    only = None if inputs is None else ([inputs] if isinstance(inputs, Tensor) else
                                        list(inputs))
    if only is not None and not only:
        raise RuntimeError("`inputs` argument to `backward()` cannot be empty.")
    roots = _seeds(tensors, grad_tensors, create_graph)
    retain = create_graph if retain_graph is None else retain_graph
    grads = run(roots, bool(retain), only, accumulate=True, create_graph=create_graph)
    for t, g in zip(only or (), grads or (), strict=True):
        if g is not None:
            _accumulate(t, g)  # a leaf, or a non-leaf named in inputs (as in PyTorch)


def grad(outputs: Tensor | Sequence[Tensor], inputs: Tensor | Sequence[Tensor],
         grad_outputs: Any = None, retain_graph: bool | None = None,
         create_graph: bool = False, allow_unused: bool | None = None) -> tuple:
    """The gradients of ``outputs`` with respect to ``inputs``, without touching ``.grad``.

    Returns a tuple with one Tensor per input (None for an unused input when
    ``allow_unused=True``).
    """
    outputs = [outputs] if isinstance(outputs, Tensor) else list(outputs)
    inputs = [inputs] if isinstance(inputs, Tensor) else list(inputs)
    if not inputs:
        raise RuntimeError("`inputs` argument to `grad()` cannot be empty.")
    for t in inputs:
        if not t.requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
    roots = _seeds(outputs, grad_outputs, create_graph)
    retain = create_graph if retain_graph is None else retain_graph
    grads = run(roots, bool(retain), inputs, accumulate=False, create_graph=create_graph)
    result = []
    for k, (t, g) in enumerate(zip(inputs, grads, strict=True)):
        if g is None:
            if not allow_unused:
                raise RuntimeError(
                    f"The differentiated Tensor at index {k} appears to not have been used in "
                    "the graph. Set allow_unused=True if this is the desired behavior."
                )
            result.append(None)
        elif isinstance(g, Tensor):  # create_graph: a Tensor with its own grad_fn
            result.append(g)
        else:
            result.append(_make(np.array(g, dtype=t._data.dtype)))
    return tuple(result)


def _seeds(tensors: list[Tensor], grads: Sequence[Any] | None, keep: bool = False
           ) -> list[tuple[Tensor, Any]]:
    """Pair each root with its cotangent, checking what PyTorch checks; with ``keep``
    (create_graph), a seed that requires grad stays a Tensor."""
    if grads is None:
        grads = [None] * len(tensors)
    elif isinstance(grads, (Tensor, np.ndarray, np.generic, float, int, complex)):
        grads = [grads]
    if len(grads) != len(tensors):
        raise RuntimeError(
            f"grad_tensors should have the same length as tensors: got {len(grads)} and "
            f"{len(tensors)}"
        )
    roots = []
    for k, (t, g) in enumerate(zip(tensors, grads, strict=True)):
        if t._base is not None:
            sync(t)
        if not t._requires_grad:
            raise RuntimeError(
                f"element {k} of tensors does not require grad and does not have a grad_fn"
            )
        if g is None:
            if t._data.size != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            g = np.ones_like(t._data)
        else:
            given = g
            g = _seed_array(k, g, t._data.dtype)
            if keep and isinstance(given, Tensor) and given._requires_grad:
                g = given  # create_graph: the gradient is differentiated in the seed too
            if g.shape != t._data.shape:
                raise RuntimeError(
                    f"Mismatch in shape: grad_output[{k}] has a shape of {g.shape} and "
                    f"output[{k}] has a shape of {t._data.shape}."
                )
        roots.append((t, g))
    return roots


def _seed_array(k: int, seed: Any, dtype: np.dtype) -> np.ndarray:
    """The cotangent ``seed`` given for output ``k`` (of ``dtype``) as an array; a Tensor
    keeps its floating dtype, anything else takes the output's. A complex seed for a real
    output (or a real one for a complex output) is refused: casting would drop a part."""
    g = seed._data if isinstance(seed, Tensor) else np.asarray(seed)
    if g.dtype.kind not in "biufc":
        raise TypeError(f"gradients can be either Tensors or None, but got "
                        f"{type(seed).__name__}")
    if (g.dtype.kind == "c") != (dtype.kind == "c"):
        raise RuntimeError(
            "For complex Tensors, both grad_output and output are required to have the same "
            f"dtype. Mismatch in dtype: grad_output[{k}] has a dtype of {g.dtype} and "
            f"output[{k}] has a dtype of {dtype}."
        )
    if g.dtype != dtype and not (isinstance(seed, Tensor) and g.dtype.kind in "fc"):
        g = g.astype(dtype)  # an integer or bool seed of a float output, a float list...
    return g


def _topological(roots: list[Node]) -> list[Node]:
    """Nodes reachable from ``roots``, each before every node its edges lead to."""
    order: list[Node] = []
    seen: set[int] = set()
    stack: list[tuple[Node, bool]] = [(n, False) for n in roots]
    while stack:
        node, expanded = stack.pop()
        if expanded:
            order.append(node)
            continue
        if id(node) in seen:
            continue
        seen.add(id(node))
        stack.append((node, True))
        for target, _ in node.edges:
            if isinstance(target, Node) and id(target) not in seen:
                stack.append((target, False))
    order.reverse()
    return order


def run(roots: list[tuple[Tensor, Any]], retain_graph: bool,
        inputs: Sequence[Tensor] | None, accumulate: bool, create_graph: bool = False
        ) -> list | None:
    """Propagate the root cotangents backwards.

    With ``accumulate``, leaves' ``.grad`` receive their gradients (all leaves, or only
    ``inputs`` when given: the caller stores them). Returns the gradient of each of
    ``inputs`` (None where none arrived), or None when ``inputs`` is None.

    With ``create_graph`` the cotangents are Tensors, and each node's backward is itself a
    recorded call (``backward_graph``), so the gradients can be differentiated again.

    An exception raised in a compiled backward leaves with a note naming the user's lines
    (``errors.note_generated``).
    """
    try:
        if create_graph:
            with grad_mode.enable_grad():
                roots = [(t, g if isinstance(g, Tensor) else _make(g)) for t, g in roots]
                return _run(roots, retain_graph, inputs, accumulate, True)
        return _run(roots, retain_graph, inputs, accumulate, False)
    except BaseException as exc:
        note_generated(exc)
        raise


def _run(roots: list[tuple[Tensor, Any]], retain_graph: bool,
         inputs: Sequence[Tensor] | None, accumulate: bool, create_graph: bool
         ) -> list | None:
    pending: dict[Node, list] = {}  # cotangents arriving at each node's outputs
    root_nodes = []
    leaf_slot: dict[int, int] = {}  # id(leaf) -> index in inputs
    node_slot: dict[tuple[int, int], int] = {}  # (id(node), output) -> index in inputs
    found: list = [None] * len(inputs) if inputs is not None else []
    for k, t in enumerate(inputs or ()):
        if t._base is not None:
            sync(t)
        if t._grad_fn is None:
            leaf_slot[id(t)] = k
        else:
            node_slot[(id(t._grad_fn), t._out)] = k

    def deliver(target: Any, index: int, g: Any) -> None:
        if isinstance(target, Node):
            slots = pending.get(target)
            if slots is None:
                slots = pending[target] = [None] * (len(target.outputs or ()) or 1)
            slots[index] = g if slots[index] is None else slots[index] + g
        elif inputs is not None:
            k = leaf_slot.get(id(target))
            if k is not None:
                found[k] = g if found[k] is None else found[k] + g
        elif accumulate:
            _accumulate(target, g, create_graph)

    for t, g in roots:
        if t._grad_fn is None:
            deliver(t, 0, g)
        else:
            deliver(t._grad_fn, t._out, g)
            root_nodes.append(t._grad_fn)

    order = _topological(root_nodes)
    needed = _needed(order, leaf_slot, node_slot) if inputs is not None else None
    for node in order:
        slots = pending.pop(node, None)
        if slots is None:
            continue
        if node_slot:
            for i, g in enumerate(slots):
                k = node_slot.get((id(node), i))
                if k is not None and g is not None:
                    found[k] = g
        if node.retained and accumulate and inputs is None:
            for i, ref in node.retained.items():
                t = ref()
                if t is not None and slots[i] is not None:
                    _accumulate(t, slots[i])
        if needed is not None and id(node) not in needed:
            continue
        if node.saved is None:
            raise RuntimeError(FREED)
        node.check_versions()
        if node.outputs is None:
            out_bar = slots[0]
        else:
            out_bar = tuple(np.zeros(shape, dtype) if g is None else g
                            for g, (shape, dtype) in zip(slots, node.outputs, strict=True))
        if create_graph:
            in_bars = backward_graph(node, out_bar)
        else:
            in_bars = _by_position(node, node.compiled.backward(node.saved, out_bar))
        if len(node.edges) == 1 and not isinstance(in_bars, tuple):
            in_bars = (in_bars,)
        if not retain_graph and node.freeable:
            node.saved = None
        for (target, index), g in zip(node.edges, in_bars, strict=True):
            if g is not None:
                deliver(target, index, g)
    return found if inputs is not None else None


def _by_position(node: Node, in_bars: Any) -> Any:
    """A compiled backward gives one cotangent per differentiated parameter, the tuple of
    values ``*args`` received as one: one per differentiated argument, as the node's edges
    are (the Tensors read through attributes, lifted, after them)."""
    if node.call is None:
        return in_bars
    function, args, _, wrt, _ = node.call
    spec = function._spec
    if spec.star is None or not any(len(spec.params) <= i < len(args) for i in wrt):
        return in_bars
    in_bars = in_bars if isinstance(in_bars, tuple) else (in_bars,)
    positions = tuple(i for i in wrt if i < len(args))
    count = len({spec.params[i] if i < len(spec.params) else spec.star for i in positions})
    return spec.by_position(in_bars[:count], positions, len(args)) + in_bars[count:]


def _needed(order: list[Node], leaf_slot: dict, node_slot: dict) -> set[int]:
    """Ids of the nodes whose backward leads to one of the requested inputs."""
    needed: set[int] = set()
    for node in reversed(order):  # every node after the nodes its edges lead to
        for target, index in node.edges:
            if isinstance(target, Node):
                if id(target) in needed or (id(target), index) in node_slot:
                    needed.add(id(node))
                    break
            elif id(target) in leaf_slot:
                needed.add(id(node))
                break
    return needed


def _accumulate(leaf: Tensor, g: Any, create_graph: bool = False) -> None:
    """Add ``g`` into ``leaf.grad``: a fresh copy the first time, then in place; a Tensor
    that keeps its graph (``create_graph``) as it is, then added out of place."""
    if create_graph and isinstance(g, Tensor):
        if g.shape != leaf._data.shape:
            raise RuntimeError(f"internal error: a gradient of shape {g.shape} reached a "
                               f"Tensor of shape {leaf._data.shape}")
        if leaf._grad is None:
            leaf._grad = g if g._requires_grad else _make(np.array(g._data,
                                                                   dtype=leaf._data.dtype))
        else:
            leaf._grad = leaf._grad + g
        return
    g = np.asarray(g._data if isinstance(g, Tensor) else g)
    if g.shape != leaf._data.shape:
        raise RuntimeError(
            f"internal error: a gradient of shape {g.shape} reached a Tensor of shape "
            f"{leaf._data.shape}"
        )
    if leaf._grad is None:
        leaf._grad = _make(np.array(g, dtype=leaf._data.dtype))  # a copy: g may alias the seed
    else:
        leaf._grad._data += g
        leaf._grad._version.value += 1



# -- create_graph: a node's backward as a recorded call ------------------------------------

def backward_graph(node: Node, out_bar: Any) -> tuple:
    """The node's input cotangents, computed by a recorded call that can be differentiated
    again: the gradient, in the differentiated inputs, of ``<f(inputs), out_bar>`` (a
    Derivative, whose own derivatives higher.py derives)."""
    if node.call is None:
        why = getattr(node.compiled, "not_again", None)  # a hand-written backward says why
        raise RuntimeError(why or LIFTED.format(name=node.name))
    function, args, kwargs, wrt, lifted = node.call
    for a in list(args) + list(lifted.values()):
        expected = _version_seen(node, a) if isinstance(a, Tensor) else None
        if expected is not None and expected != a._version.value:
            raise RuntimeError(_modified_message(a._data, None, node, a._version.value,
                                                 expected))
    seeds = out_bar if node.outputs is not None else (out_bar,)
    seeds = tuple(g if isinstance(g, Tensor) else _make(np.asarray(g)) for g in seeds)
    count = len(seeds)
    fn, names = (function.lifted_function(tuple(lifted)) if lifted else (function.fn, {}))
    positions = [count + len(names) + i for i in wrt if i < len(args)]
    positions += [count + i - len(args) for i in wrt if i >= len(args)]
    seeded = _seeded(fn, tuple(positions), count, node.outputs, tuple(names.values()))
    grads = call_function(seeded, seeds + tuple(lifted.values()) + tuple(args), kwargs,
                          f"{node.name}Backward")
    return grads if isinstance(grads, tuple) else (grads,)


def _version_seen(node: Node, tensor: Tensor) -> int | None:
    """The version of an input when the call was recorded."""
    return next((expected for version, expected, _, _ in node.checks
                 if version is tensor._version), None)


def _seeded(fn: Any, positions: tuple[int, ...], count: int, outputs: tuple | None,
            lifted: tuple[str, ...] = ()) -> Any:
    """``gradient(q, positions)`` as a Function, for ``q(seed..., *lifted, *args) =
    <fn(*args, **lifted), seed>``: the lifted values (``self.W``, read from keyword-only
    parameters of ``fn``) are positional in ``q``, so that they can be differentiated."""
    kinds = None if outputs is None else tuple(dtype.kind for _, dtype in outputs)
    key = (positions, count, kinds, lifted)
    seeded = state_of(fn).seeded  # kept on fn, freed with it
    found = seeded.get(key)
    if found is not None:
        return found
    signature = inspect.signature(fn, follow_wrapped=False)
    signature = signature.replace(parameters=[p for p in signature.parameters.values()
                                              if p.name not in lifted])
    taken = set(signature.parameters) | set(lifted)
    seeds = []
    for k in range(count):
        name = f"seed{k}_"
        while name in taken:
            name += "_"
        seeds.append(name)
    bindings: dict[str, Any] = {"fn_": fn}
    params, call = sourcefile.parameters(signature, bindings)
    value = f"fn_({', '.join(call + [f'{n}={n}' for n in lifted])})"
    if outputs is None:
        body, expression = (), f"np.sum({value} * {seeds[0]})"
    else:
        body = (f"out_ = {value}",)
        expression = " + ".join(f"np.sum(out_[{i}] * {seed})" for i, seed in enumerate(seeds)
                                if kinds[i] in "fc")
    name = sourcefile.identifier(f"{getattr(fn, '__name__', 'f')}_seeded", "seeded")
    q = sourcefile.define(name, seeds + list(lifted) + params, expression, body, bindings)
    q.__s2sgrad_calls__ = fn  # its parameters are fn's: a refusal of one names fn's line
    found = seeded[key] = Function(derivatives.make(q, positions, False))
    return found


register_tensor_call(Tensor, call_function)
# Inside a differentiated function, ``with no_grad():`` makes the values of its block carry
# no gradient, and ``enable_grad()`` inside it lets them carry one again, as in PyTorch.
register_context(grad_mode.no_grad, lambda: STOP)
register_context(grad_mode.enable_grad, lambda: GRAD)
register_context(grad_mode.set_grad_enabled, lambda mode: GRAD if mode else STOP)
register_context(grad_mode.inference_mode, lambda mode=True: STOP if mode else GRAD)
