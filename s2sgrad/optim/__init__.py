"""Optimizers over Tensors, as PyTorch's ``torch.optim``: ``SGD``, ``Adam``, ``AdamW`` and
``RMSprop``, and learning-rate schedulers in ``optim.lr_scheduler``."""

from . import lr_scheduler
from .optimizer import SGD, Adam, AdamW, Optimizer, RMSprop

__all__ = ["SGD", "Adam", "AdamW", "Optimizer", "RMSprop", "lr_scheduler"]
