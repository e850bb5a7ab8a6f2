"""``s2sgrad.utils.data``: ``TensorDataset`` and ``DataLoader`` against ``torch.utils.data``
(batches, their types and dtypes, ``len``, ``drop_last``), shuffling (each sample once per
epoch, a new order each epoch, the same orders for the same seed) and ``default_collate``."""

import collections
import subprocess
import sys

import numpy as np
import pytest

import s2sgrad

DataLoader, Dataset, TensorDataset, default_collate = (
    s2sgrad.utils.data.DataLoader, s2sgrad.utils.data.Dataset, s2sgrad.utils.data.TensorDataset,
    s2sgrad.utils.data.default_collate)

torch = pytest.importorskip("torch")
tdata = pytest.importorskip("torch.utils.data")


def fields():
    x = np.arange(14, dtype=np.float32).reshape(7, 2)
    y = np.arange(7, dtype=np.int64) * 10
    return x, y


def assert_same_batch(ours, theirs):
    assert type(ours) is type(theirs)
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs, strict=True):
        assert isinstance(a, s2sgrad.Tensor) and not a.requires_grad
        assert a.dtype == b.numpy().dtype
        np.testing.assert_array_equal(a.data, b.numpy())


def test_tensor_dataset_items_are_tuples_of_rows():
    x, y = fields()
    ds = TensorDataset(s2sgrad.tensor(x), s2sgrad.tensor(y))
    assert len(ds) == 7
    item = ds[3]
    assert type(item) is tuple and len(item) == 2
    np.testing.assert_array_equal(item[0].data, x[3])
    assert item[1].item() == 30


def test_tensor_dataset_refuses_different_first_dimensions():
    with pytest.raises(ValueError, match="Size mismatch between tensors"):
        TensorDataset(s2sgrad.zeros(3, 2), s2sgrad.zeros(4))
    with pytest.raises(AssertionError, match="Size mismatch between tensors"):
        tdata.TensorDataset(torch.zeros(3, 2), torch.zeros(4))


@pytest.mark.parametrize("batch_size", [1, 2, 3, 7, 10])
@pytest.mark.parametrize("drop_last", [False, True])
def test_unshuffled_batches_match_torch(batch_size, drop_last):
    x, y = fields()
    ours = DataLoader(TensorDataset(s2sgrad.tensor(x), s2sgrad.tensor(y)),
                      batch_size=batch_size, drop_last=drop_last)
    theirs = tdata.DataLoader(tdata.TensorDataset(torch.tensor(x), torch.tensor(y)),
                              batch_size=batch_size, drop_last=drop_last)
    assert len(ours) == len(theirs)
    ours_batches, theirs_batches = list(ours), list(theirs)
    assert len(ours_batches) == len(theirs_batches) == len(ours)
    for a, b in zip(ours_batches, theirs_batches, strict=True):
        assert_same_batch(a, b)


def test_lengths_match_torch_around_the_boundaries():
    for n in range(9):
        for batch_size in (1, 3, 4):
            for drop_last in (False, True):
                ours = DataLoader(TensorDataset(s2sgrad.zeros(n, 1)), batch_size=batch_size,
                                  drop_last=drop_last)
                theirs = tdata.DataLoader(tdata.TensorDataset(torch.zeros(n, 1)),
                                          batch_size=batch_size, drop_last=drop_last)
                assert len(ours) == len(theirs) == len(list(ours)), (n, batch_size, drop_last)


def test_batches_are_data_even_from_tensors_that_require_grad():
    w = s2sgrad.tensor(np.ones((4, 2)), requires_grad=True)
    for loader in (DataLoader(TensorDataset(w), batch_size=2),
                   DataLoader(TensorDataset(w), batch_size=2, collate_fn=default_collate)):
        (batch,) = next(iter(loader))
        assert batch.is_leaf and not batch.requires_grad
        batch.data[...] = 5.0
    assert (w.data == 1.0).all()


def ids_per_epoch(loader, epochs):
    return [np.concatenate([batch[0].data.astype(int) for batch in loader]) for _ in range(epochs)]


def test_shuffling_visits_every_sample_once_and_changes_order_across_epochs():
    ds = TensorDataset(s2sgrad.tensor(np.arange(50)))
    loader = DataLoader(ds, batch_size=8, shuffle=True, generator=np.random.default_rng(1))
    epochs = ids_per_epoch(loader, 3)
    for order in epochs:
        assert sorted(order) == list(range(50))
    assert not np.array_equal(epochs[0], epochs[1]) and not np.array_equal(epochs[1], epochs[2])
    assert not np.array_equal(epochs[0], np.arange(50))


def test_the_same_seed_gives_the_same_orders():
    ds = TensorDataset(s2sgrad.tensor(np.arange(30)))

    def run(seed):
        return ids_per_epoch(DataLoader(ds, batch_size=4, shuffle=True,
                                        generator=np.random.default_rng(seed)), 2)

    assert all(np.array_equal(a, b) for a, b in zip(run(5), run(5), strict=True))
    assert not np.array_equal(run(5)[0], run(6)[0])


def test_manual_seed_drives_loaders_without_a_generator():
    ds = TensorDataset(s2sgrad.tensor(np.arange(30)))
    loader = DataLoader(ds, batch_size=4, shuffle=True)
    s2sgrad.manual_seed(3)
    first = ids_per_epoch(loader, 2)
    s2sgrad.manual_seed(3)
    again = ids_per_epoch(loader, 2)
    s2sgrad.manual_seed(4)
    other = ids_per_epoch(loader, 1)
    assert all(np.array_equal(a, b) for a, b in zip(first, again, strict=True))
    assert not np.array_equal(first[0], first[1]) and not np.array_equal(first[0], other[0])
    assert sorted(first[0]) == list(range(30))


def test_shuffled_drop_last_batches_are_full():
    loader = DataLoader(TensorDataset(s2sgrad.tensor(np.arange(10))), batch_size=4,
                        shuffle=True, drop_last=True, generator=np.random.default_rng(0))
    sizes = [len(batch[0].data) for batch in loader]
    assert sizes == [4, 4] == [4] * len(loader)


class Samples(Dataset):
    def __init__(self, samples):
        self.samples = samples

    def __getitem__(self, i):
        return self.samples[i]

    def __len__(self):
        return len(self.samples)


Point = collections.namedtuple("Point", "x y")


def torch_form(sample):
    """The sample with its s2sgrad Tensors made torch tensors."""
    if isinstance(sample, s2sgrad.Tensor):
        return torch.tensor(sample.data)
    if isinstance(sample, dict):
        return {k: torch_form(v) for k, v in sample.items()}
    if isinstance(sample, Point):
        return Point(*map(torch_form, sample))
    if isinstance(sample, (list, tuple)):
        return type(sample)(map(torch_form, sample))
    return sample


def assert_same_structure(ours, theirs):
    if isinstance(theirs, torch.Tensor):
        assert isinstance(ours, s2sgrad.Tensor) and not ours.requires_grad
        assert ours.dtype == theirs.numpy().dtype
        np.testing.assert_array_equal(ours.data, theirs.numpy())
        return
    assert type(ours) is type(theirs)
    if isinstance(theirs, dict):
        assert list(ours) == list(theirs)
        for k in theirs:
            assert_same_structure(ours[k], theirs[k])
    elif isinstance(theirs, (list, tuple)):
        assert len(ours) == len(theirs)
        for a, b in zip(ours, theirs, strict=True):
            assert_same_structure(a, b)
    else:
        assert ours == theirs


@pytest.mark.parametrize("samples", [
    [(1, 2.5), (3, 4.5), (5, 6.5)],
    [[1, 2], [3, 4], [5, 6]],
    [{"x": np.arange(2, dtype=np.float32), "label": "a"},
     {"x": np.arange(2, 4, dtype=np.float32), "label": "b"}],
    [Point(s2sgrad.tensor([1.0]), True), Point(s2sgrad.tensor([2.0]), False)],
    [np.float32(1.0), np.float32(2.0), np.float32(3.0)],
    [s2sgrad.tensor(np.int64(4)), s2sgrad.tensor(np.int64(5))],
], ids=["tuples", "lists", "dicts", "namedtuples", "numpy-scalars", "0-d-tensors"])
def test_default_collate_matches_torch(samples):
    ours = list(DataLoader(Samples(samples), batch_size=2))
    theirs = list(tdata.DataLoader(Samples([torch_form(s) for s in samples]), batch_size=2))
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs, strict=True):
        assert_same_structure(a, b)


def test_default_collate_refuses_what_it_cannot_stack():
    with pytest.raises(TypeError, match="found <class 'object'>"):
        default_collate([object(), object()])
    with pytest.raises(RuntimeError, match="equal size"):
        default_collate([[1, 2], [3]])


def test_a_custom_collate_fn_gets_the_samples():
    loader = DataLoader(Samples(list(range(5))), batch_size=2, collate_fn=list)
    assert list(loader) == [[0, 1], [2, 3], [4]]


@pytest.mark.parametrize("batch_size", [0, -1, 1.5])
def test_a_bad_batch_size_is_refused(batch_size):
    with pytest.raises(ValueError, match="batch_size should be a positive integer"):
        DataLoader(Samples([1]), batch_size=batch_size)


def test_a_torch_style_generator_is_refused():
    with pytest.raises(TypeError, match="numpy.random.Generator"):
        DataLoader(Samples([1]), shuffle=True, generator=torch.Generator())


def test_utils_data_is_reachable_every_way():
    code = ("import s2sgrad; import s2sgrad.utils.data as d; "
            "from s2sgrad.utils.data import DataLoader; "
            "assert s2sgrad.utils.data.DataLoader is d.DataLoader is DataLoader")
    subprocess.run([sys.executable, "-c", code], check=True)
    code = "from s2sgrad.utils.data import TensorDataset; print(TensorDataset.__module__)"
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                         text=True)
    assert out.stdout.strip() == "s2sgrad.utils.data"


# -- random_split and Subset ---------------------------------------------------------------


@pytest.mark.parametrize("n, lengths", [(10, [3, 7]), (10, [0.3, 0.7]), (11, [0.5, 0.25, 0.25]),
                                        (7, [1 / 3, 1 / 3, 1 / 3]), (5, [5])])
def test_random_split_sizes_like_torchs_and_a_partition(n, lengths):
    x = s2sgrad.tensor(np.arange(float(n)))
    parts = s2sgrad.utils.data.random_split(TensorDataset(x), lengths,
                                            generator=s2sgrad.Generator().manual_seed(0))
    seen = sorted(float(item[0]) for part in parts for item in (part[i] for i in range(len(part))))
    assert seen == list(np.arange(float(n)))  # every item once
    torch = pytest.importorskip("torch")
    theirs = torch.utils.data.random_split(torch.utils.data.TensorDataset(torch.arange(n)),
                                           lengths, generator=torch.Generator().manual_seed(0))
    assert [len(p) for p in parts] == [len(p) for p in theirs]


def test_random_split_is_reproducible_and_feeds_a_loader():
    x = s2sgrad.tensor(np.arange(20.0).reshape(10, 2))
    split = [s2sgrad.utils.data.random_split(TensorDataset(x), [0.8, 0.2],
                                             generator=s2sgrad.Generator().manual_seed(3))
             for _ in range(2)]
    assert split[0][1].indices == split[1][1].indices
    batches = list(DataLoader(split[0][0], batch_size=3))
    assert [b[0].shape[0] for b in batches] == [3, 3, 2]


def test_random_split_refuses_lengths_that_do_not_add_up():
    x = s2sgrad.tensor(np.arange(4.0))
    with pytest.raises(ValueError, match="Sum of input lengths does not equal"):
        s2sgrad.utils.data.random_split(TensorDataset(x), [1, 2])
