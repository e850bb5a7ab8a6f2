"""Optimizers over Tensors, as PyTorch's ``torch.optim``: ``SGD``, ``Adam``, ``AdamW`` and
``RMSprop``, each with PyTorch's update formula in a module of its family (``sgd``, ``adam``,
``rmsprop``) over the ``Optimizer`` they share (``optimizer``), and ``Adagrad`` (``adagrad``); learning-rate schedulers in
``optim.lr_scheduler``.

    opt = optim.Adam(model.parameters(), lr=1e-3)
    for x, y in batches:
        opt.zero_grad()
        loss_fn(model(x), y).backward()
        opt.step()
"""

from . import lr_scheduler
from .adagrad import Adagrad
from .adam import Adam, AdamW
from .optimizer import Optimizer
from .rmsprop import RMSprop
from .sgd import SGD

__all__ = ["SGD", "Adagrad", "Adam", "AdamW", "Optimizer", "RMSprop", "lr_scheduler"]
