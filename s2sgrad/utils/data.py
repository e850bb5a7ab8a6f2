"""Datasets and batches, as PyTorch's ``torch.utils.data``: ``Dataset``, ``TensorDataset``,
``Subset`` and ``random_split``, ``DataLoader`` and ``default_collate``.

    loader = DataLoader(TensorDataset(x, y), batch_size=32, shuffle=True)
    for xb, yb in loader:
        loss_fn(model(xb), yb).backward()

``TensorDataset(*tensors)`` holds Tensors with the same first dimension; item ``i`` is the
tuple of their ``i``-th rows. ``DataLoader`` yields batches of ``batch_size`` items made by
``collate_fn`` (``default_collate`` unless given): Tensors, arrays and numbers are stacked into
one Tensor (Python floats as float64, ints as int64), strings gathered in a list, dicts,
lists, tuples and named tuples collated field by field (a tuple giving a list, as in
PyTorch). The batches are data: they do not require grad, even when the dataset's Tensors do.
``len(loader)`` counts the batches: the last, short one too unless ``drop_last``.

With ``shuffle=True`` each pass over the loader draws a fresh order from ``generator`` (a
``numpy.random.Generator``, such as ``s2sgrad.Generator().manual_seed(0)``) or, without one,
from the default generator that ``s2sgrad.manual_seed(seed)`` resets (autograd/random.py), the
one ``randn``, ``nn.init`` and ``Dropout`` draw from too: so the same seed gives the same
sequence of orders, and the same training run.
"""

from __future__ import annotations

import collections.abc
import math
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from ..autograd.random import source
from ..autograd.tensor import Tensor


class Dataset:
    """A map-style dataset: ``dataset[i]`` for ``0 <= i < len(dataset)``."""

    def __getitem__(self, index: int) -> Any:
        raise NotImplementedError(f"{type(self).__name__} must define __getitem__")

    def __len__(self) -> int:
        raise NotImplementedError(f"{type(self).__name__} must define __len__")


class TensorDataset(Dataset):
    """Tensors of the same first dimension; item ``i`` is the tuple of their ``i``-th rows."""

    def __init__(self, *tensors: Tensor) -> None:
        for t in tensors:
            if not isinstance(t, Tensor):
                raise TypeError(f"TensorDataset takes Tensors, not {type(t).__name__}")
            if t.ndim == 0:
                raise ValueError("TensorDataset takes Tensors of at least one dimension")
        if not tensors:
            raise ValueError("TensorDataset takes at least one Tensor")
        if any(t.shape[0] != tensors[0].shape[0] for t in tensors):
            raise ValueError("Size mismatch between tensors: first dimensions "
                             f"{[t.shape[0] for t in tensors]}")
        self.tensors = tensors

    def __getitem__(self, index: int) -> tuple[Tensor, ...]:
        return tuple(t[index] for t in self.tensors)

    def __len__(self) -> int:
        return self.tensors[0].shape[0]


class Subset(Dataset):
    """The items of ``dataset`` at ``indices``, in that order."""

    def __init__(self, dataset: Any, indices: Sequence[int]) -> None:
        self.dataset = dataset
        self.indices = indices

    def __getitem__(self, index: int) -> Any:
        return self.dataset[self.indices[index]]

    def __len__(self) -> int:
        return len(self.indices)


def random_split(dataset: Any, lengths: Sequence[int | float],
                 generator: np.random.Generator | None = None) -> list[Subset]:
    """``dataset`` split at random into ``Subset``s of the given lengths, which sum to its
    length, or of the given fractions, which sum to 1 (each length rounded down, and what is
    left given one by one to the first subsets, as PyTorch does). The order is drawn from
    ``generator``, or from the default generator that ``s2sgrad.manual_seed`` resets."""
    n = len(dataset)
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        sizes = [math.floor(n * fraction) for fraction in lengths]
        for i in range(n - sum(sizes)):
            sizes[i % len(sizes)] += 1
        lengths = sizes
    if sum(lengths) != n:
        raise ValueError("Sum of input lengths does not equal the length of the input dataset!")
    order = source(generator).permutation(n).tolist()
    subsets, start = [], 0
    for length in lengths:
        subsets.append(Subset(dataset, order[start:start + length]))
        start += length
    return subsets


def default_collate(batch: Sequence[Any]) -> Any:
    """Stack a list of samples into a batch, as PyTorch's ``default_collate``."""
    elem = batch[0]
    if isinstance(elem, Tensor):
        return Tensor(np.stack([x.data for x in batch]))
    if isinstance(elem, (np.ndarray, np.generic)) and elem.dtype.kind in "biufc":
        return Tensor(np.stack([np.asarray(x) for x in batch]))
    if isinstance(elem, float):
        return Tensor(np.array(batch, dtype=np.float64))
    if isinstance(elem, int):  # bool too: a bool batch stays bool
        return Tensor(np.array(batch, dtype=np.bool_ if isinstance(elem, bool) else np.int64))
    if isinstance(elem, str):
        return list(batch)
    if isinstance(elem, collections.abc.Mapping):
        fields = {key: default_collate([d[key] for d in batch]) for key in elem}
        try:
            return type(elem)(fields)
        except TypeError:
            return fields
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):  # a named tuple
        return type(elem)(*(default_collate(list(s)) for s in zip(*batch, strict=True)))
    if isinstance(elem, collections.abc.Sequence):
        if any(len(x) != len(elem) for x in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        fields = [default_collate(list(s)) for s in zip(*batch, strict=True)]
        if isinstance(elem, tuple):
            return fields
        try:
            return type(elem)(fields)
        except TypeError:
            return fields
    raise TypeError(f"default_collate: batch must contain tensors, numpy arrays, numbers, "
                    f"dicts or lists; found {type(elem)}")


class DataLoader:
    """Batches of a dataset, in order or shuffled anew for each pass."""

    def __init__(self, dataset: Any, batch_size: int = 1, shuffle: bool = False,
                 drop_last: bool = False, generator: np.random.Generator | None = None,
                 collate_fn: Callable[[list[Any]], Any] | None = None) -> None:
        if type(batch_size) is not int or batch_size <= 0:
            raise ValueError(f"batch_size should be a positive integer value, but got "
                             f"batch_size={batch_size}")
        if generator is not None and not isinstance(generator, np.random.Generator):
            raise TypeError(f"generator must be a numpy.random.Generator, not "
                            f"{type(generator).__name__}")
        self.dataset = dataset
        self.batch_size = batch_size
        self.shuffle = bool(shuffle)
        self.drop_last = bool(drop_last)
        self.generator = generator
        self.collate_fn = collate_fn

    def __len__(self) -> int:
        n = len(self.dataset)
        return n // self.batch_size if self.drop_last else math.ceil(n / self.batch_size)

    def __iter__(self) -> Iterator[Any]:
        n = len(self.dataset)
        if self.shuffle:
            order = source(self.generator).permutation(n)
        else:
            order = np.arange(n)
        stop = len(self) * self.batch_size
        for start in range(0, min(stop, n), self.batch_size):
            indices = order[start:start + self.batch_size]
            if self.collate_fn is None and type(self.dataset) is TensorDataset:
                # rows gathered by one index per Tensor: the stacked rows, in one copy
                yield [Tensor(t.data[indices]) for t in self.dataset.tensors]
            else:
                collate = self.collate_fn or default_collate
                yield collate([self.dataset[int(i)] for i in indices])

