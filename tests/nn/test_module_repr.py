"""``repr`` of modules in PyTorch's form: the class name, ``extra_repr()`` (the built-in
layers' settings, in PyTorch's words), then one ``(name): repr`` line per sub-module, indented
two spaces per level. Each structure is built in both libraries and the texts compared."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from s2sgrad import nn


def user_model(nn_module: Any) -> Any:
    """A model of one's own with settings and nested sub-modules, in either library."""

    class Net(nn_module.Module):
        def __init__(self) -> None:
            nn_module.Module.__init__(self)  # needed by PyTorch only
            self.encoder = nn_module.Sequential(nn_module.Linear(4, 8), nn_module.GELU())
            self.scale = nn_module.Parameter(nn_module.Linear(1, 1).weight.data)  # not shown
            self.head = nn_module.Linear(8, 2, bias=False)
            self.drop = nn_module.Dropout(0.25)

        def extra_repr(self) -> str:
            return "hidden=8"

    return Net()


def blocks(nn_module: Any) -> Any:
    """Settings on several lines, and sub-modules, and one module under two names."""

    class Block(nn_module.Module):
        def __init__(self) -> None:
            nn_module.Module.__init__(self)
            shared = nn_module.Tanh()
            self.first, self.again = shared, shared
            self.norm = nn_module.LayerNorm(3)

        def extra_repr(self) -> str:
            return "depth=2\nwidth=3"

    class Leaf(nn_module.Module):
        def extra_repr(self) -> str:
            return "one line"

    class Bare(nn_module.Module):
        pass

    return nn_module.Sequential(Block(), Leaf(), Bare(), nn_module.Sequential())


# name -> function of torch.nn or s2sgrad.nn
STRUCTURES: dict[str, Callable[[Any], Any]] = {
    "the_usual_mlp": lambda m: m.Sequential(m.Linear(4, 32), m.ReLU(), m.Dropout(p=0.1),
                                            m.Linear(32, 3)),
    "nested": lambda m: m.Sequential(m.Linear(2, 3), m.Sequential(m.Tanh(), m.Sequential(
        m.Sigmoid(), m.Linear(3, 3, bias=False))), m.Softmax(dim=-1)),
    "named": lambda m: m.Sequential(OrderedDict([("fc", m.Linear(3, 3)), ("act", m.ReLU()),
                                                 ("out", m.LogSoftmax(1))])),
    "activations": lambda m: m.Sequential(m.ReLU(), m.ReLU(inplace=True), m.Tanh(),
                                          m.Sigmoid(), m.GELU(), m.GELU(approximate="tanh"),
                                          m.Softmax(), m.Softmax(dim=0), m.LogSoftmax(dim=1),
                                          m.LogSoftmax()),
    "dropout": lambda m: m.Sequential(m.Dropout(), m.Dropout(0.0), m.Dropout(1.0, inplace=True)),
    "embedding": lambda m: m.Sequential(m.Embedding(10, 3), m.Embedding(5, 2, padding_idx=0),
                                        m.Embedding(5, 2, padding_idx=-1)),
    "layer_norm": lambda m: m.Sequential(m.LayerNorm(5), m.LayerNorm((2, 3), eps=1e-3),
                                         m.LayerNorm([4], elementwise_affine=False),
                                         m.LayerNorm(4, bias=False)),
    "losses": lambda m: m.Sequential(m.MSELoss(), m.MSELoss(reduction="sum"), m.NLLLoss(),
                                     m.CrossEntropyLoss(label_smoothing=0.1),
                                     m.BCEWithLogitsLoss()),
    "linear": lambda m: m.Linear(7, 1),
    "linear_no_bias": lambda m: m.Linear(1, 7, bias=False),
    "empty_sequential": lambda m: m.Sequential(),
    "user_model": user_model,
    "blocks": blocks,
}


@pytest.mark.parametrize("name", sorted(STRUCTURES))
def test_repr_as_torch(name: str) -> None:
    torch = pytest.importorskip("torch")
    ours, theirs = STRUCTURES[name](nn), STRUCTURES[name](torch.nn)
    assert repr(ours) == repr(theirs)
    assert str(ours) == str(theirs)


def test_the_usual_mlp() -> None:
    model = nn.Sequential(nn.Linear(4, 32), nn.ReLU(), nn.Dropout(0.1))
    assert repr(model) == (
        "Sequential(\n"
        "  (0): Linear(in_features=4, out_features=32, bias=True)\n"
        "  (1): ReLU()\n"
        "  (2): Dropout(p=0.1, inplace=False)\n"
        ")")


def test_modules_in_lists_and_dicts_are_named_by_their_place() -> None:
    class Tower(nn.Module):
        def __init__(self) -> None:
            self.layers = [nn.Linear(2, 2), nn.ReLU()]
            self.heads = {"a": nn.Tanh()}
            self.weight = nn.Parameter(np.ones(2))

    tower = Tower()
    assert repr(tower) == ("Tower(\n"
                           f"  (layers.0): {tower.layers[0]!r}\n"
                           f"  (layers.1): {tower.layers[1]!r}\n"
                           f"  (heads.a): {tower.heads['a']!r}\n"
                           ")")


def test_a_module_reached_again_inside_itself_prints_as_an_ellipsis() -> None:
    class Pair(nn.Module):
        pass

    a, b = Pair(), Pair()
    a.peer, b.peer = b, a
    assert repr(a) == "Pair(\n  (peer): Pair(\n    (peer): ...\n  )\n)"
