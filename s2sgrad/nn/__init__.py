"""Models as classes, in PyTorch's spirit, at the paths of ``torch.nn``: ``nn.Parameter``
(``nn.parameter``), the layers and losses (``nn.Linear``, ``nn.Sequential``,
``nn.CrossEntropyLoss``, ...) from ``nn.modules``, the same computations as functions in
``nn.functional``, weight initialisation in ``nn.init``, and gradient clipping in
``nn.utils``.

    class Model(nn.Module):
        def __init__(self):
            self.W = nn.Parameter(np.random.randn(3, 1))

        def forward(self, x):
            return np.tanh(x @ self.W)
"""

from . import functional, init, modules, parameter, utils
from .modules import (
    ELU,
    GELU,
    BCELoss,
    BCEWithLogitsLoss,
    CrossEntropyLoss,
    Dropout,
    Embedding,
    Flatten,
    HuberLoss,
    Identity,
    IncompatibleKeys,
    L1Loss,
    LayerNorm,
    LeakyReLU,
    Linear,
    LogSoftmax,
    Module,
    ModuleDict,
    ModuleList,
    MSELoss,
    NLLLoss,
    ReLU,
    Sequential,
    Sigmoid,
    SiLU,
    SmoothL1Loss,
    Softmax,
    Softplus,
    Tanh,
    Unflatten,
)
from .parameter import Parameter

__all__ = [
    "ELU", "GELU", "BCELoss", "BCEWithLogitsLoss", "CrossEntropyLoss", "Dropout", "Embedding",
    "Flatten", "HuberLoss", "Identity", "IncompatibleKeys", "L1Loss", "LayerNorm", "LeakyReLU",
    "Linear", "LogSoftmax", "MSELoss", "Module", "ModuleDict", "ModuleList", "NLLLoss",
    "Parameter", "ReLU", "Sequential", "SiLU", "Sigmoid", "SmoothL1Loss", "Softmax", "Softplus",
    "Tanh", "Unflatten", "functional", "init", "modules", "parameter", "utils",
]
