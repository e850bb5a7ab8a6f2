"""What PyTorch keeps under ``torch.utils``: ``data`` (datasets and batches), imported with
the package so that ``s2sgrad.utils.data.DataLoader`` works after ``import s2sgrad``, as
``torch.utils.data.DataLoader`` does after ``import torch``."""

from . import data

__all__ = ["data"]
