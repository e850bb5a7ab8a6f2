"""Every snippet of the four seed tutorials (/work/shared/seeds) prints what PyTorch prints.

Each snippet is kept as written for PyTorch and transliterated mechanically by ``TO_S2SGRAD``
below, the table a user applies by hand: tensors come from ``sg.tensor``, and PyTorch's
module-level math (``torch.sum``, ``torch.mm``) becomes NumPy's, which accepts Tensors.

``EXPECTED`` is what torch 2.13.0 printed for the original snippets (captured by running them;
``test_torch_still_prints_expected`` re-checks that when torch is installed). Memory addresses
are compared up to the address; ``Tensor.shape`` is a ``Size``, which prints as torch's does.

The seeds state two outputs wrongly (seeds/README.md); torch's real output is expected here:
002 example 3 prints the row sums of B, and 003 "Computing gradients" prints 7 (2x + 3 at 2).
"""

from __future__ import annotations

import re
import types
import warnings

import numpy as np
import pytest

from s2sgrad import nn, optim
from s2sgrad.autograd.creators import ones_like, randn
from s2sgrad.autograd.grad_mode import enable_grad, no_grad
from s2sgrad.autograd.tensor import tensor

# What ``import s2sgrad as sg`` will provide once the package exports the Tensor layer.
sg = types.SimpleNamespace(tensor=tensor, randn=randn, ones_like=ones_like, no_grad=no_grad,
                           enable_grad=enable_grad, nn=nn, optim=optim)

TO_S2SGRAD = [
    ("torch.tensor(", "sg.tensor("),
    ("torch.randn(", "sg.randn("),
    ("torch.ones_like(", "sg.ones_like("),
    ("torch.sum(", "np.sum("),
    ("torch.mm(", "np.matmul("),
    ("torch.no_grad(", "sg.no_grad("),
    ("torch.enable_grad(", "sg.enable_grad("),
    ("torch.nn.", "sg.nn."),
    ("torch.optim.", "sg.optim."),
]


def transliterate(source: str) -> str:
    for torch_text, s2sgrad_text in TO_S2SGRAD:
        source = source.replace(torch_text, s2sgrad_text)
    assert "torch" not in source, f"untransliterated: {source}"
    return source


SNIPPETS: dict[str, str] = {}
EXPECTED: dict[str, str] = {}

# -- 000: How does PyTorch's autograd calculate the gradient... ------------------------------

SNIPPETS["000_grad_fn"] = """
x = torch.tensor([2.0], requires_grad=True)
y = x * x
z = y + 3

print(y.grad_fn)
print(z.grad_fn)
"""
EXPECTED["000_grad_fn"] = """\
<MulBackward0 object at 0x7fef3a4878b0>
<AddBackward0 object at 0x7fef3a487760>
"""

SNIPPETS["000_backward"] = """
x = torch.tensor([2.0], requires_grad=True)
y = x * x
z = y + 3
z.backward()

print(x.grad)
print(y.grad)
"""
EXPECTED["000_backward"] = """\
tensor([4.])
None
"""

SNIPPETS["000_two_paths"] = """
x = torch.tensor([2.0], requires_grad=True)
y = x * x
a = y + 1
b = y * 2
c = a + b
c.backward()

print(x.grad)
"""
EXPECTED["000_two_paths"] = """\
tensor([12.])
"""

# -- 001: the autograd engine ----------------------------------------------------------------

SNIPPETS["001_backward"] = """
w = torch.randn(5, 3, requires_grad=True)
x = torch.randn(1, 5)
y = x @ w # y depends on w through matrix multiplication
z = y.mean() # z is a scalar derived from y
z.backward()
print(w.grad.shape)
"""
EXPECTED["001_backward"] = """\
torch.Size([5, 3])
"""

SNIPPETS["001_grad_fn"] = """
w = torch.randn(5, 3, requires_grad=True)
x = torch.randn(1, 5)
y = x @ w
z = y.mean()
print(f"y originated from: {y.grad_fn}")
print(f"z originated from: {z.grad_fn}")
print(f"w.grad_fn: {w.grad_fn}")
print(f"x.grad_fn: {x.grad_fn}")
"""
EXPECTED["001_grad_fn"] = """\
y originated from: <MmBackward0 object at 0x7fef191acaf0>
z originated from: <MeanBackward0 object at 0x7fef191ac8b0>
w.grad_fn: None
x.grad_fn: None
"""

# The training loop "assumes model, optimizer, criterion, dataloader are defined": here they
# are, with fixed initial weights so that both libraries take the same steps. The loop body
# is the seed's; the print shows the effect the seed describes in prose.
SNIPPETS["001_training_loop"] = """
class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.W = torch.nn.Parameter(torch.tensor([[0.5], [-0.3]]))
        self.b = torch.nn.Parameter(torch.tensor([0.1]))

    def forward(self, x):
        return x @ self.W + self.b

def criterion(outputs, targets):
    return ((outputs - targets) ** 2).mean()

model = Model()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
dataloader = [(torch.tensor([[1.0, 2.0], [0.5, -1.0]]), torch.tensor([[1.0], [0.0]])),
              (torch.tensor([[-1.0, 0.5], [2.0, 1.0]]), torch.tensor([[-0.5], [2.0]]))] * 3
for inputs, targets in dataloader:
    # 1. Reset gradients from the previous iteration
    optimizer.zero_grad()
    # 2. Perform forward pass
    outputs = model(inputs)
    loss = criterion(outputs, targets)
    # 3. Perform backward pass to compute gradients
    loss.backward()
    # 4. Update model parameters using computed gradients
    optimizer.step()
    print(f"{loss.item():.4f}")
print(model.W.detach(), model.b.detach())

with torch.no_grad():
    # Operations here won't be tracked
    predictions = model(torch.tensor([[1.0, 1.0]]))
print(predictions.requires_grad, predictions.grad_fn)
with torch.no_grad():
    with torch.enable_grad():
        tracked = model(torch.tensor([[1.0, 1.0]]))
print(tracked.requires_grad)
print(tracked.detach().requires_grad)
"""
EXPECTED["001_training_loop"] = """\
0.7113
0.2939
0.2303
0.1432
0.8445
0.0036
tensor([[0.6694],
        [0.3276]]) tensor([-0.1757])
False None
True
False
"""

# -- 002: How is a single PyTorch tensor's gradient calculated? ----------------------------

SNIPPETS["002_scalar"] = """
x = torch.tensor(2.0, requires_grad=True)
y = x**2
z = 2*y + 1
z.backward()
print(x.grad) # Output: tensor(8.)
"""
EXPECTED["002_scalar"] = """\
tensor(8.)
"""

SNIPPETS["002_vector"] = """
x = torch.tensor([2.0, 3.0], requires_grad=True)
y = x**2
z = torch.sum(y)
z.backward()
print(x.grad) # Output: tensor([4., 6.])
"""
EXPECTED["002_vector"] = """\
tensor([4., 6.])
"""

SNIPPETS["002_matmul"] = """
A = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
B = torch.tensor([[5.0, 6.0], [7.0, 8.0]])
C = torch.mm(A, B)
loss = torch.sum(C)
loss.backward()
print(A.grad)
"""
EXPECTED["002_matmul"] = """\
tensor([[11., 15.],
        [11., 15.]])
"""

# -- 003: Autograd in PyTorch: Computing Gradients -------------------------------------------

SNIPPETS["003_tracking"] = """
x = torch.tensor([2.0, 3.0], requires_grad=True)
print(f"Requires grad: {x.requires_grad}") # True
print(f"Gradient attribute: {x.grad}") # None (no gradient yet)

y = torch.tensor([4.0, 5.0])
y.requires_grad_(True) # In-place operation
print(f"After enabling: {y.requires_grad}") # True

z = torch.tensor([1.0, 2.0], requires_grad=False)
print(f"No grad tracking: {z.requires_grad}") # False
"""
EXPECTED["003_tracking"] = """\
Requires grad: True
Gradient attribute: None
After enabling: True
No grad tracking: False
"""

SNIPPETS["003_graph"] = """
x = torch.tensor([3.0], requires_grad=True)
y = x ** 2 # y = x^2
z = y * 2 + 1 # z = 2*y + 1 = 2*x^2 + 1

print(f"x: {x}")
print(f"y: {y}")
print(f"z: {z}")

print(f"y.grad_fn: {y.grad_fn}") # Output: PowBackward0
print(f"z.grad_fn: {z.grad_fn}") # Output: AddBackward0
"""
EXPECTED["003_graph"] = """\
x: tensor([3.], requires_grad=True)
y: tensor([9.], grad_fn=<PowBackward0>)
z: tensor([19.], grad_fn=<AddBackward0>)
y.grad_fn: <PowBackward0 object at 0x7fef191ac9a0>
z.grad_fn: <AddBackward0 object at 0x7fef191aca30>
"""

SNIPPETS["003_gradients"] = """
x = torch.tensor([2.0], requires_grad=True)
y = x ** 2 + 3 * x + 2
y.backward()
print(f"dy/dx = {x.grad}") # Expected: 4*x + 3 = 4*2 + 3 = 11

x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
y = (x ** 2).sum() # Sum reduces to scalar
y.backward()
print(f"Gradients for vector: {x.grad}") # [2, 4, 6] (d/dx of x^2)
"""
EXPECTED["003_gradients"] = """\
dy/dx = tensor([7.])
Gradients for vector: tensor([2., 4., 6.])
"""

# The FAQ of 003: "Use create_graph=True in backward() ... to enable second-order gradients".
SNIPPETS["003_faq_second_order"] = """
x = torch.tensor([2.0], requires_grad=True)
loss = x ** 3
loss.backward(create_graph=True)
print(f"first derivative: {x.grad.detach()}") # 3 * 2**2 = 12
print(f"it can be differentiated: {x.grad.requires_grad}")
first = x.grad
x.grad = None
first.backward()
print(f"second derivative: {x.grad}") # 6 * 2 = 12
"""
EXPECTED["003_faq_second_order"] = """\
first derivative: tensor([12.])
it can be differentiated: True
second derivative: tensor([12.])
"""

SNIPPETS["003_accumulation"] = """
x = torch.tensor([2.0], requires_grad=True)

y = x ** 2
y.backward()
print(f"First gradient: {x.grad}") # 4.0

z = x ** 3
z.backward()
print(f"After second backward: {x.grad}") # 4.0 + 12.0 = 16.0

x.grad.zero_()
print(f"After zero: {x.grad}") # 0.0
"""
EXPECTED["003_accumulation"] = """\
First gradient: tensor([4.])
After second backward: tensor([16.])
After zero: tensor([0.])
"""

SNIPPETS["003_non_scalar"] = """
x = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
y = x ** 2 # Vector output, shape (2, 2)

y.backward(torch.ones_like(y))
print(f"Gradients from vector backward:\\n{x.grad}")

x.grad.zero_()

y = x ** 2
loss1 = y.sum()
loss1.backward(retain_graph=True) # Keep graph for another backward
print(f"After first backward: {x.grad}")

loss2 = (y * 2).sum()
loss2.backward() # This time we don't need retain_graph
print(f"After second backward: {x.grad}")
"""
EXPECTED["003_non_scalar"] = """\
Gradients from vector backward:
tensor([[2., 4.],
        [6., 8.]])
After first backward: tensor([[2., 4.],
        [6., 8.]])
After second backward: tensor([[ 6., 12.],
        [18., 24.]])
"""

SNIPPETS["003_detach"] = """
x = torch.tensor([2.0], requires_grad=True)
y = x ** 2

y_detached = y.detach()
print(f"Original y requires grad: {y.requires_grad}") # True
print(f"Detached y requires grad: {y_detached.requires_grad}") # False

z = y_detached + 1
print(f"z.grad_fn: {z.grad_fn}") # None (no backward possible)

with torch.no_grad():
    predictions = []
    for input_batch in range(5):
        logits = input_batch ** 2 # Won't track gradients
        predictions.append(logits)

print(f"Predictions computed without tracking gradients")

@torch.no_grad()
def inference_function(x):
    return x ** 2 + 1

result = inference_function(torch.tensor([3.0], requires_grad=True))
print(f"Result from decorated function requires grad: {result.requires_grad}") # False
"""
EXPECTED["003_detach"] = """\
Original y requires grad: True
Detached y requires grad: False
z.grad_fn: None
Predictions computed without tracking gradients
Result from decorated function requires grad: False
"""

SNIPPETS["003_training"] = """
w = torch.tensor([0.5], requires_grad=True)
b = torch.tensor([0.1], requires_grad=True)

x_data = torch.tensor([1.0, 2.0, 3.0])
y_true = torch.tensor([2.0, 4.0, 6.0])

learning_rate = 0.01

for epoch in range(3):
    y_pred = w * x_data + b
    loss = ((y_pred - y_true) ** 2).mean()
    print(f"Epoch {epoch}: Loss = {loss.item():.4f}")
    loss.backward()
    print(f" w.grad = {w.grad.item():.4f}, b.grad = {b.grad.item():.4f}")
    with torch.no_grad():
        w -= learning_rate * w.grad
        b -= learning_rate * b.grad
    w.grad.zero_()
    b.grad.zero_()
"""
EXPECTED["003_training"] = """\
Epoch 0: Loss = 9.9100
 w.grad = -13.6000, b.grad = -5.8000
Epoch 1: Loss = 7.8452
 w.grad = -12.0987, b.grad = -5.1400
Epoch 2: Loss = 6.2131
 w.grad = -10.7639, b.grad = -4.5533
"""

SNIPPETS["003_leaves"] = """
x = torch.tensor([2.0], requires_grad=True)
print(f"x.is_leaf: {x.is_leaf}") # True
print(f"x.grad_fn: {x.grad_fn}") # None (leaf tensors have no grad_fn)

y = x ** 2
print(f"y.is_leaf: {y.is_leaf}") # False
print(f"y.grad_fn: {y.grad_fn}") # PowBackward0

y.backward()
print(f"x.grad: {x.grad}") # 4.0
print(f"y.grad: {y.grad}") # AttributeError: non-leaf tensor has no grad attribute
"""
EXPECTED["003_leaves"] = """\
x.is_leaf: True
x.grad_fn: None
y.is_leaf: False
y.grad_fn: <PowBackward0 object at 0x7fef191ac2e0>
x.grad: tensor([4.])
y.grad: None
"""


def normalize(text: str) -> str:
    """Compare up to memory addresses."""
    return re.sub(r"0x[0-9a-f]+", "0x...", text)


def run(source: str, namespace: dict) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # 003_leaves reads y.grad, which warns (as in torch)
        exec(compile(source, "<seed>", "exec"), namespace)


@pytest.mark.parametrize("name", sorted(SNIPPETS))
def test_seed_prints_what_torch_prints(name: str, capsys: pytest.CaptureFixture) -> None:
    run(transliterate(SNIPPETS[name]), {"sg": sg, "np": np})
    assert normalize(capsys.readouterr().out) == normalize(EXPECTED[name])


def test_every_seed_snippet_has_an_expectation() -> None:
    assert sorted(SNIPPETS) == sorted(EXPECTED)
    assert len(SNIPPETS) == 18  # 3 + 3 + 3 + 8 snippets in seeds 000-003, and 003's FAQ


def test_nonleaf_grad_in_seed_003_warns_like_torch() -> None:
    namespace = {"sg": sg, "np": np}
    with pytest.warns(UserWarning, match="is not a leaf Tensor is being accessed"):
        exec(compile(transliterate(SNIPPETS["003_leaves"]), "<seed>", "exec"),
             namespace)


@pytest.mark.parametrize("name", sorted(SNIPPETS))
def test_torch_still_prints_expected(name: str, capsys: pytest.CaptureFixture) -> None:
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    run(SNIPPETS[name], {"torch": torch})
    assert normalize(capsys.readouterr().out) == normalize(EXPECTED[name])
