"""A digit classifier written the way a PyTorch user writes one, next to the same model as one
NumPy function whose backward is Python you can read.

What this shows:

* the PyTorch way, end to end: an ``nn.Sequential`` of ``nn.Linear`` layers with ``nn.ReLU``
  and ``nn.Dropout``, ``nn.CrossEntropyLoss``, ``optim.AdamW`` under a ``CosineAnnealingLR``
  schedule, minibatches from ``s2sgrad.utils.data.DataLoader(TensorDataset(...),
  shuffle=True)``, ``model.train()`` / ``model.eval()``, validation under
  ``s2sgrad.no_grad()``, accuracy from ``argmax(dim=1)``, gradients clipped with
  ``nn.utils.clip_grad_norm_``, and a checkpoint of the model's and the optimizer's
  ``state_dict()`` written with ``s2sgrad.save`` to a temporary directory, read back with
  ``s2sgrad.load`` into a fresh model that predicts the same;
* the same network and loss as one ``@s2sgrad.grad`` NumPy function, ``mlp_loss``: its
  compiled backward is printed (from ``loss.grad_fn.source``), and before training the two
  formulations are checked to give the same loss and the same gradients on the same weights
  and batch. ``nn.Linear`` keeps its weight as (out_features, in_features), as in PyTorch, so
  the NumPy function computes ``x @ W.T + b``.

``--seed`` goes to ``s2sgrad.manual_seed``, which seeds every random draw of the run: the
layers' initial weights, the dropout masks and the order of the batches; the same seed gives
the same run. The data are the 1797 8x8 UCI digits bundled in ``examples/data`` (nothing is
downloaded).

    python examples/pytorch_style.py [--epochs 15] [--hidden 128] [--seed 0]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time

import numpy as np
from datasets import load_digits, train_test_split

import s2sgrad
from s2sgrad import nn, optim

N_PIXELS, N_CLASSES = 64, 10


def build_model(hidden: int, dropout: float = 0.2) -> nn.Sequential:
    """64 pixels -> ``hidden`` -> ``hidden // 2`` -> 10 class scores (logits), ReLU between."""
    return nn.Sequential(
        nn.Linear(N_PIXELS, hidden), nn.ReLU(), nn.Dropout(dropout),
        nn.Linear(hidden, hidden // 2), nn.ReLU(),
        nn.Linear(hidden // 2, N_CLASSES),
    )


@s2sgrad.grad
def mlp_loss(W1, b1, W2, b2, W3, b3, x, y):
    """``build_model``'s network followed by ``nn.CrossEntropyLoss()``, in NumPy. Dropout is
    left out: this is the model in eval mode, where ``nn.Dropout`` passes its input through."""
    h = np.maximum(x @ W1.T + b1, 0.0)  # nn.Linear(64, hidden), nn.ReLU()
    h = np.maximum(h @ W2.T + b2, 0.0)  # nn.Linear(hidden, hidden // 2), nn.ReLU()
    z = h @ W3.T + b3  # nn.Linear(hidden // 2, 10): the logits
    # log-softmax; subtracting each row's maximum keeps exp() from overflowing
    z = z - np.max(z, axis=1, keepdims=True)
    log_p = z - np.log(np.sum(np.exp(z), axis=1, keepdims=True))
    return -np.mean(log_p[np.arange(len(y)), y])


def two_ways(model: nn.Sequential, criterion: nn.CrossEntropyLoss, x: s2sgrad.Tensor,
             y: s2sgrad.Tensor) -> dict:
    """The loss and gradients of ``model`` (in eval mode) and of ``mlp_loss`` on copies of its
    weights, on the batch ``(x, y)``: how far apart they are, and ``mlp_loss``'s backward."""
    model.eval()  # no dropout, as in mlp_loss
    model.zero_grad()
    loss = criterion(model(x), y)
    loss.backward()
    weights = [s2sgrad.tensor(p.detach().numpy(), requires_grad=True)  # copies
               for p in model.parameters()]
    numpy_loss = mlp_loss(*weights, x.numpy(), y.numpy())
    numpy_loss.backward()  # runs the compiled backward: grad_fn.source
    grads = [(p.grad.numpy(), w.grad.numpy()) for p, w in zip(model.parameters(), weights,
                                                               strict=True)]
    model.zero_grad()
    return {"loss": loss.item(), "loss_difference": abs(loss.item() - numpy_loss.item()),
            "grad_difference": max(float(np.max(np.abs(a - b))) for a, b in grads),
            "grad_norms": [float(np.linalg.norm(a)) for a, _ in grads],
            "backward_source": numpy_loss.grad_fn.source}


def evaluate(model: nn.Module, criterion: nn.Module, x: s2sgrad.Tensor,
             y: s2sgrad.Tensor) -> tuple[float, float]:
    """(mean loss, accuracy) of ``model`` in eval mode on ``(x, y)``, recording nothing."""
    model.eval()
    with s2sgrad.no_grad():
        logits = model(x)
        loss = criterion(logits, y).item()
        accuracy = (logits.argmax(dim=1) == y).float().mean().item()
    return loss, accuracy


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=15, help="passes over the training set")
    parser.add_argument("--hidden", type=int, default=128, help="width of the first hidden layer")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--lr", type=float, default=3e-3, help="AdamW's initial learning rate")
    parser.add_argument("--seed", type=int, default=0,
                        help="seed of the initial weights, the dropout masks and the batches")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> dict:
    """Train, validate, checkpoint and reload; returns what tests check."""
    args = parse_args(argv)
    s2sgrad.manual_seed(args.seed)  # initial weights, dropout masks, order of the batches

    X, y = load_digits()
    # The split does not depend on --seed: every run is judged on the same 449 digits.
    X_train, X_val, y_train, y_val = (s2sgrad.tensor(a) for a in train_test_split(X, y))
    loader = s2sgrad.utils.data.DataLoader(s2sgrad.utils.data.TensorDataset(X_train, y_train),
                                           batch_size=args.batch_size, shuffle=True)
    print(f"{len(X_train)} training and {len(X_val)} validation digits, "
          f"{X_train.shape[1]} pixels each, batches of {args.batch_size}")

    model = build_model(args.hidden)
    print(model)
    criterion = nn.CrossEntropyLoss()
    optimizer = optim.AdamW(model.parameters(), lr=args.lr, weight_decay=1e-2)
    scheduler = optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.epochs)

    # The same model written as one NumPy function: same loss, same gradients.
    two = two_ways(model, criterion, X_train[:args.batch_size], y_train[:args.batch_size])
    print(f"\nThe same model as one NumPy function; generated backward of "
          f"{mlp_loss.__name__}() (from loss.grad_fn.source):\n")
    print(two["backward_source"])
    print(f"nn.Sequential + nn.CrossEntropyLoss against {mlp_loss.__name__}() on one batch: "
          f"loss {two['loss']:.6f}, the losses differ by {two['loss_difference']:.1e}, "
          f"the gradients by at most {two['grad_difference']:.1e}\n")

    history: dict[str, list[float]] = {"train_loss": [], "val_loss": [], "val_accuracy": []}
    start = time.perf_counter()
    for epoch in range(1, args.epochs + 1):
        model.train()
        total, count = 0.0, 0
        for xb, yb in loader:
            optimizer.zero_grad()
            loss = criterion(model(xb), yb)
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
            optimizer.step()
            total += loss.item() * len(xb)
            count += len(xb)
        scheduler.step()
        val_loss, val_accuracy = evaluate(model, criterion, X_val, y_val)
        history["train_loss"].append(total / count)
        history["val_loss"].append(val_loss)
        history["val_accuracy"].append(val_accuracy)
        if epoch % max(1, args.epochs // 10) == 0 or epoch == args.epochs:
            print(f"epoch {epoch:3d}/{args.epochs}  train loss {total / count:.4f}  "
                  f"validation loss {val_loss:.4f}  accuracy {val_accuracy:.1%}  "
                  f"lr {scheduler.get_last_lr()[0]:.2e}", flush=True)
    seconds = time.perf_counter() - start
    accuracy = history["val_accuracy"][-1]
    print(f"trained {args.epochs} epochs ({args.epochs * len(loader)} AdamW steps) in "
          f"{seconds:.1f} s")
    print(f"validation accuracy: {accuracy:.1%} ({round(accuracy * len(y_val))}/{len(y_val)})")

    # Checkpoint, then resume from it in a fresh model and optimizer.
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "checkpoint.s2s")
        s2sgrad.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                      "epoch": epoch}, path)
        size = os.path.getsize(path)
        checkpoint = s2sgrad.load(path)
    restored = build_model(args.hidden)  # fresh random weights, replaced by the checkpoint's
    restored.load_state_dict(checkpoint["model"])
    restored_optimizer = optim.AdamW(restored.parameters(), lr=args.lr, weight_decay=1e-2)
    restored_optimizer.load_state_dict(checkpoint["optimizer"])  # to train on from here
    model.eval()
    restored.eval()
    with s2sgrad.no_grad():
        logits, restored_logits = model(X_val), restored(X_val)
    same = bool((restored_logits.argmax(dim=1) == logits.argmax(dim=1)).all())
    print(f"checkpoint of epoch {checkpoint['epoch']} ({size / 1024:.0f} kB) reloaded into a "
          f"fresh model: {'same predictions' if same else 'DIFFERENT predictions'} on the "
          f"{len(y_val)} validation digits")
    return {"val_accuracy": accuracy, "history": history, "two_ways": two,
            "backward_source": two["backward_source"], "model": model,
            "checkpoint_epoch": checkpoint["epoch"], "reloaded_same_predictions": same,
            "reloaded_logits_equal": bool(np.array_equal(logits.numpy(),
                                                         restored_logits.numpy()))}


if __name__ == "__main__":
    main()
