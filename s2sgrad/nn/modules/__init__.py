"""The layers and losses as classes, at the paths of PyTorch's ``torch.nn.modules``: the base
``Module`` (``module``), the modules that hold modules (``container``), ``Linear`` and
``Identity`` (``linear``), the activations (``activation``), ``Flatten`` and ``Unflatten``
(``flatten``), ``Dropout`` (``dropout``), ``Embedding`` (``sparse``), ``LayerNorm``
(``normalization``) and the losses (``loss``). ``s2sgrad.nn`` exports them all."""

from .activation import (
    ELU,
    GELU,
    LeakyReLU,
    LogSoftmax,
    ReLU,
    Sigmoid,
    SiLU,
    Softmax,
    Softplus,
    Tanh,
)
from .container import ModuleDict, ModuleList, Sequential
from .dropout import Dropout
from .flatten import Flatten, Unflatten
from .linear import Identity, Linear
from .loss import (
    BCELoss,
    BCEWithLogitsLoss,
    CrossEntropyLoss,
    HuberLoss,
    L1Loss,
    MSELoss,
    NLLLoss,
    SmoothL1Loss,
)
from .module import IncompatibleKeys, Module
from .normalization import LayerNorm
from .sparse import Embedding

__all__ = [
    "ELU", "GELU", "BCELoss", "BCEWithLogitsLoss", "CrossEntropyLoss", "Dropout", "Embedding",
    "Flatten", "HuberLoss", "Identity", "IncompatibleKeys", "L1Loss", "LayerNorm", "LeakyReLU",
    "Linear", "LogSoftmax", "MSELoss", "Module", "ModuleDict", "ModuleList", "NLLLoss", "ReLU",
    "Sequential", "SiLU", "Sigmoid", "SmoothL1Loss", "Softmax", "Softplus", "Tanh", "Unflatten",
]
