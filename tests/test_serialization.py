"""``s2sgrad.save`` / ``s2sgrad.load``: round trips of Tensors, arrays, numbers and nested state
dicts through paths and file objects, an optimizer continuing from a loaded state, and the
refusals (unsupported types at save, foreign files at load)."""

import collections
import io
import json
import math
import pickle
import zipfile

import numpy as np
import pytest

import s2sgrad
from s2sgrad import nn, optim


def round_trip(obj, tmp_path=None):
    if tmp_path is None:
        buffer = io.BytesIO()
        s2sgrad.save(obj, buffer)
        buffer.seek(0)
        return s2sgrad.load(buffer)
    s2sgrad.save(obj, tmp_path / "obj.s2s")
    return s2sgrad.load(tmp_path / "obj.s2s")


def test_a_tensor_comes_back_as_a_leaf_tensor_with_its_flag_and_dtype(tmp_path):
    t = s2sgrad.tensor(np.arange(6, dtype=np.float32).reshape(2, 3), requires_grad=True)
    (t * 2).sum().backward()
    back = round_trip(t, tmp_path)
    assert type(back) is s2sgrad.Tensor and back.is_leaf and back.requires_grad
    assert back.dtype == np.float32 and back.grad is None
    np.testing.assert_array_equal(back.data, t.data)
    assert back.data is not t.data
    plain = round_trip(s2sgrad.tensor(np.arange(3, dtype=np.int64)))
    assert not plain.requires_grad and plain.dtype == np.int64


def test_a_non_leaf_tensor_is_saved_as_its_value():
    x = s2sgrad.tensor([1.0, 2.0], requires_grad=True)
    back = round_trip(x * 3)
    assert back.is_leaf and back.requires_grad
    np.testing.assert_array_equal(back.data, [3.0, 6.0])


def test_a_parameter_stays_a_parameter():
    p = nn.Parameter(np.ones(2))
    back = round_trip({"w": p})["w"]
    assert type(back) is nn.Parameter and back.requires_grad
    frozen = round_trip(nn.Parameter(np.ones(2), requires_grad=False))
    assert type(frozen) is nn.Parameter and not frozen.requires_grad


def test_nested_structures_with_int_keys_tuples_and_leaves_of_every_kind(tmp_path):
    obj = {
        "arrays": [np.float32(1.5) * np.ones((2, 2), np.float32), np.arange(4), np.array(7.0),
                   np.array([True, False]), np.array(["ab", "c"]), np.zeros((0, 3))],
        "numbers": (1, 2.5, True, None, 1 + 2j, math.inf, -0.0, 0.1),
        3: {0: "zero", "one": []},
        "empty": ([], (), {}),
        "scalars": [np.float32(0.25), np.int64(-3)],
        "ordered": collections.OrderedDict([("b", 1), ("a", 2)]),
    }
    back = round_trip(obj, tmp_path)
    assert list(back) == ["arrays", "numbers", 3, "empty", "scalars", "ordered"]
    for saved, loaded in zip(obj["arrays"], back["arrays"], strict=True):
        assert type(loaded) is np.ndarray
        assert loaded.dtype == saved.dtype and loaded.shape == saved.shape
        np.testing.assert_array_equal(loaded, saved)
    assert back["arrays"][2].ndim == 0
    numbers = back["numbers"]
    assert type(numbers) is tuple and numbers == obj["numbers"]
    assert [type(x) for x in numbers] == [type(x) for x in obj["numbers"]]
    assert math.copysign(1, numbers[6]) == -1
    assert back[3] == {0: "zero", "one": []} and 0 in back[3] and "0" not in back[3]
    assert back["empty"] == ([], (), {}) and type(back["empty"][1]) is tuple
    assert [type(x) for x in back["scalars"]] == [np.float32, np.int64]
    assert back["scalars"] == [0.25, -3]
    assert type(back["ordered"]) is collections.OrderedDict
    assert list(back["ordered"].items()) == [("b", 1), ("a", 2)]
    assert type(back["arrays"]) is list


def test_nan_survives():
    assert math.isnan(round_trip(math.nan))


def test_the_same_object_twice_comes_back_as_one_object():
    t = s2sgrad.tensor([1.0, 2.0])
    a = np.arange(3)
    back = round_trip([t, t, a, {"again": a}])
    assert back[0] is back[1] and back[2] is back[3]["again"]
    assert back[0] is not back[2]


def test_a_path_is_written_as_given(tmp_path):
    target = tmp_path / "weights.pt"
    s2sgrad.save([1, 2], str(target))
    assert target.exists() and list(tmp_path.iterdir()) == [target]
    assert s2sgrad.load(str(target)) == [1, 2]


def test_the_file_is_an_npz_archive_without_pickles(tmp_path):
    s2sgrad.save({"w": s2sgrad.tensor([1.0]), "n": 1}, tmp_path / "f")
    with zipfile.ZipFile(tmp_path / "f") as archive:
        names = archive.namelist()
    assert sorted(names) == ["a0.npy", "structure.npy"]
    with np.load(tmp_path / "f", allow_pickle=False) as archive:
        description = json.loads(archive["structure"].tobytes())
    assert description["format"] == "s2sgrad.save"


def test_an_optimizer_state_dict_round_trips_and_the_run_continues_identically(tmp_path):
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((8, 3)), rng.standard_normal((8, 1))
    w0 = rng.standard_normal((3, 1))

    def step(w, opt):
        opt.zero_grad()
        ((s2sgrad.tensor(x) @ w - s2sgrad.tensor(y)) ** 2).mean().backward()
        opt.step()

    w = nn.Parameter(w0.copy())
    opt = optim.Adam([w], lr=0.1, betas=(0.8, 0.9), amsgrad=True)
    for _ in range(3):
        step(w, opt)
    s2sgrad.save({"w": w, "opt": opt.state_dict()}, tmp_path / "ckpt")
    checkpoint = s2sgrad.load(tmp_path / "ckpt")
    saved = opt.state_dict()
    assert checkpoint["opt"]["state"].keys() == {0}
    assert checkpoint["opt"]["param_groups"][0]["betas"] == (0.8, 0.9)
    assert checkpoint["opt"]["param_groups"][0]["params"] == [0]
    assert checkpoint["opt"]["state"][0]["step"] == saved["state"][0]["step"] == 3

    w2 = nn.Parameter(checkpoint["w"].data)
    opt2 = optim.Adam([w2], lr=1.0)
    opt2.load_state_dict(checkpoint["opt"])
    for _ in range(3):
        step(w, opt)
        step(w2, opt2)
    np.testing.assert_array_equal(w2.data, w.data)


def test_an_sgd_momentum_state_round_trips():
    w = nn.Parameter(np.ones(2))
    opt = optim.SGD([w], lr=0.1, momentum=0.9)
    (w * w).sum().backward()
    opt.step()
    back = round_trip(opt.state_dict())
    np.testing.assert_array_equal(back["state"][0]["momentum_buffer"],
                                  opt.state_dict()["state"][0]["momentum_buffer"])


class Layer:
    pass


@pytest.mark.parametrize(("obj", "kind", "where"), [
    ({"model": {"layer": Layer()}}, "test_serialization.Layer", "obj['model']['layer']"),
    ([1, {2: (3, {4})}], "set", "obj[1][2][1]"),
    ({"x": b"bytes"}, "bytes", "obj['x']"),
    ({"x": np.array([object()])}, "dtype object", "obj['x']"),
])
def test_an_unsupported_object_is_named_with_its_place(obj, kind, where):
    with pytest.raises(TypeError) as error:
        s2sgrad.save(obj, io.BytesIO())
    assert kind in str(error.value) and f"at {where}" in str(error.value)


def test_an_unsupported_key_is_refused():
    with pytest.raises(TypeError, match=r"key of type tuple \(at obj\['a'\]"):
        s2sgrad.save({"a": {(1, 2): 3}}, io.BytesIO())


def test_a_structure_containing_itself_is_refused():
    loop: list = [1]
    loop.append({"again": loop})
    with pytest.raises(ValueError, match=r"contains itself \(at obj\[1\]\['again'\]\)"):
        s2sgrad.save(loop, io.BytesIO())


def test_the_same_list_twice_is_not_a_cycle():
    shared = [1, 2]
    assert round_trip([shared, shared]) == [[1, 2], [1, 2]]


@pytest.mark.parametrize("content", [
    pickle.dumps({"a": 1}),
    b"not a file of ours at all",
    b"",
])
def test_a_foreign_file_is_refused_at_load(tmp_path, content):
    (tmp_path / "f").write_bytes(content)
    with pytest.raises(ValueError, match="was not written by s2sgrad.save"):
        s2sgrad.load(tmp_path / "f")


def test_plain_numpy_files_are_refused_at_load(tmp_path):
    np.save(tmp_path / "a.npy", np.arange(3))
    with pytest.raises(ValueError, match="single NumPy array"):
        s2sgrad.load(tmp_path / "a.npy")
    np.savez(tmp_path / "b.npz", x=np.arange(3))
    with pytest.raises(ValueError, match="no structure entry"):
        s2sgrad.load(tmp_path / "b.npz")


def test_a_pickled_array_inside_an_archive_is_not_unpickled(tmp_path):
    buffer = io.BytesIO()
    s2sgrad.save(np.arange(2), buffer)
    with zipfile.ZipFile(tmp_path / "f", "w") as out, zipfile.ZipFile(buffer) as original:
        out.writestr("structure.npy", original.read("structure.npy"))
        payload = io.BytesIO()
        np.save(payload, np.array([{"evil": 1}], dtype=object), allow_pickle=True)
        out.writestr("a0.npy", payload.getvalue())
    with pytest.raises(ValueError, match="damaged"):
        s2sgrad.load(tmp_path / "f")


def test_a_torch_file_is_refused_with_a_reason(tmp_path):
    torch = pytest.importorskip("torch")
    torch.save({"w": torch.ones(2)}, tmp_path / "t.pt")
    with pytest.raises(ValueError, match="torch.save holds pickled data"):
        s2sgrad.load(tmp_path / "t.pt")
