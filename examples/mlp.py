"""A two-layer neural network learns handwritten digits; its gradient is Python you can read.

What this shows:

* the loss is an ordinary NumPy function under ``@s2sgrad.grad``: forward pass of the network
  (64 -> hidden -> 10, tanh) and a numerically stable softmax cross-entropy;
* s2sgrad compiles its reverse pass to Python source, printed here from ``loss.grad_fn.source``
  after the first forward pass: compare it with the loss line by line (``# adjoint of:``);
* the model is an ``s2sgrad.nn.Module`` whose parameters are Tensor attributes, trained in
  minibatches with ``s2sgrad.optim.Adam`` exactly as in PyTorch: ``zero_grad()``,
  ``loss.backward()``, ``step()``.

The data are the 1797 8x8 UCI digits bundled in ``examples/data`` (nothing is downloaded).
A progress bar appears if ``tqdm`` is installed, and ``--save-plot loss.png`` draws the loss
curve if ``matplotlib`` is: both are optional (``pip install -e '.[examples]'``).

    python examples/mlp.py [--epochs 30] [--hidden 64] [--seed 0] [--save-plot loss.png]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from datasets import load_digits, minibatches, train_test_split

import s2sgrad
from s2sgrad import nn, optim


@s2sgrad.grad
def cross_entropy(W1, b1, W2, b2, x, y):
    """Mean cross-entropy of the network's predicted class probabilities for labels ``y``."""
    h = np.tanh(x @ W1 + b1)  # hidden layer
    z = h @ W2 + b2  # class scores (logits), one row per sample
    # log-softmax; subtracting each row's maximum keeps exp() from overflowing
    z = z - np.max(z, axis=1, keepdims=True)
    log_p = z - np.log(np.sum(np.exp(z), axis=1, keepdims=True))
    # minus the log-probability of each sample's true class, averaged over the batch
    return -np.mean(log_p[np.arange(len(y)), y])


class MLP(nn.Module):
    """A 2-layer perceptron; ``parameters()`` finds its four Tensor attributes by itself.

    Gradients flow into the arguments of a ``@grad`` function, so ``loss`` passes the
    parameters explicitly: one compiled function (one printed backward) covers the model.
    """

    def __init__(self, n_in: int, n_hidden: int, n_out: int, rng: np.random.Generator):
        # Scaled so that tanh starts in its sensitive range (Glorot/Xavier initialisation).
        self.W1 = nn.Parameter(rng.normal(0.0, 1.0 / np.sqrt(n_in), (n_in, n_hidden)))
        self.b1 = nn.Parameter(np.zeros(n_hidden))
        self.W2 = nn.Parameter(rng.normal(0.0, 1.0 / np.sqrt(n_hidden), (n_hidden, n_out)))
        self.b2 = nn.Parameter(np.zeros(n_out))

    def loss(self, x: np.ndarray, y: np.ndarray) -> s2sgrad.Tensor:
        """The loss on a batch: a Tensor whose ``grad_fn`` runs the compiled backward."""
        return cross_entropy(self.W1, self.b1, self.W2, self.b2, x, y)

    def predict(self, x: np.ndarray) -> np.ndarray:
        """The most likely class of each row of ``x`` (the network of ``cross_entropy``)."""
        with s2sgrad.no_grad():  # evaluation only: record nothing
            z = np.tanh(x @ self.W1 + self.b1) @ self.W2 + self.b2
        return np.argmax(z.numpy(), axis=1)

    def accuracy(self, x: np.ndarray, y: np.ndarray) -> float:
        return float(np.mean(self.predict(x) == y))


class Progress:
    """A tqdm bar over the training steps if tqdm is installed, else a line now and then."""

    def __init__(self, epochs: int, steps_per_epoch: int):
        self.epochs = epochs
        try:
            from tqdm import tqdm
        except ImportError:
            self.bar = None
        else:
            self.bar = tqdm(total=epochs * steps_per_epoch, desc="training", unit="step")

    def step(self) -> None:
        if self.bar is not None:
            self.bar.update(1)

    def epoch(self, epoch: int, loss: float, accuracy: float) -> None:
        if self.bar is not None:
            self.bar.set_postfix(epoch=epoch, loss=f"{loss:.4f}", test_acc=f"{accuracy:.1%}")
        elif epoch % max(1, self.epochs // 10) == 0 or epoch == self.epochs:
            print(f"epoch {epoch:3d}/{self.epochs}  loss {loss:.4f}  "
                  f"test accuracy {accuracy:.1%}", flush=True)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def save_plot(path: str, history: dict[str, list[float]]) -> bool:
    """Write the loss curves to ``path`` with matplotlib, if it is installed."""
    try:
        from matplotlib.figure import Figure  # no pyplot: no GUI backend, no global state
    except ImportError:
        print(f"matplotlib is not installed: no plot written to {path} "
              "(pip install matplotlib, or pip install -e '.[examples]')")
        return False
    steps, epochs = len(history["step_loss"]), len(history["train_loss"])
    fig = Figure(figsize=(6.4, 4), layout="tight")
    ax = fig.subplots()
    ax.plot(np.arange(1, steps + 1) * epochs / steps, history["step_loss"], linewidth=0.6,
            alpha=0.35, label="minibatch")
    ax.plot(np.arange(1, epochs + 1) - 0.5, history["train_loss"], marker=".",
            label="training (epoch mean)")
    ax.plot(np.arange(1, epochs + 1), history["test_loss"], marker=".", label="test")
    ax.set_xlabel("epoch")
    ax.set_ylabel("cross-entropy")
    ax.set_yscale("log")
    ax.set_title("MLP on the UCI digits, gradients compiled by s2sgrad")
    ax.legend()
    fig.savefig(path, dpi=120)
    print(f"loss curves written to {path}")
    return True


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=30, help="passes over the training set")
    parser.add_argument("--hidden", type=int, default=64, help="width of the hidden layer")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--lr", type=float, default=0.01, help="Adam's learning rate")
    parser.add_argument("--seed", type=int, default=0,
                        help="seed of the initial weights and of the minibatch order")
    parser.add_argument("--save-plot", metavar="PATH", help="write the loss curve (PNG)")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> dict:
    """Train and evaluate; returns what tests check (accuracy, losses, backward source)."""
    args = parse_args(argv)
    rng = np.random.default_rng(args.seed)
    X, y = load_digits()
    # The split does not depend on --seed: every run is judged on the same 449 test digits.
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_fraction=0.25, seed=0)
    print(f"{len(X_train)} training and {len(X_test)} test digits, {X.shape[1]} pixels each")

    model = MLP(X.shape[1], args.hidden, 10, rng)
    optimizer = optim.Adam(model.parameters(), lr=args.lr)

    # The first forward pass compiles the loss (once per argument shape): show its backward.
    first = model.loss(X_train[:args.batch_size], y_train[:args.batch_size])
    source = first.grad_fn.source
    print(f"\nGenerated backward of {cross_entropy.__name__}() (from loss.grad_fn.source):\n")
    print(source)
    print(f"initial loss {first.item():.4f} (log 10 = {np.log(10):.4f} for a uniform guess)\n")

    history: dict[str, list[float]] = {"step_loss": [], "train_loss": [], "test_loss": [],
                                        "test_accuracy": []}
    steps_per_epoch = -(-len(X_train) // args.batch_size)
    progress = Progress(args.epochs, steps_per_epoch)
    start = time.perf_counter()
    for epoch in range(1, args.epochs + 1):
        epoch_losses = []
        for xb, yb in minibatches(X_train, y_train, args.batch_size, rng):
            optimizer.zero_grad()
            loss = model.loss(xb, yb)
            loss.backward()  # runs the compiled backward printed above
            optimizer.step()
            epoch_losses.append(loss.item())
            progress.step()
        history["step_loss"] += epoch_losses
        history["train_loss"].append(float(np.mean(epoch_losses)))
        with s2sgrad.no_grad():  # plain forward pass: nothing is saved for a backward
            history["test_loss"].append(model.loss(X_test, y_test).item())
        history["test_accuracy"].append(model.accuracy(X_test, y_test))
        progress.epoch(epoch, history["train_loss"][-1], history["test_accuracy"][-1])
    progress.close()
    seconds = time.perf_counter() - start

    accuracy = history["test_accuracy"][-1]
    print(f"trained {args.epochs} epochs ({args.epochs * steps_per_epoch} Adam steps of "
          f"{args.batch_size} digits) in {seconds:.1f} s")
    print(f"test accuracy: {accuracy:.1%} ({round(accuracy * len(y_test))}/{len(y_test)})")
    if args.save_plot:
        save_plot(args.save_plot, history)
    return {"test_accuracy": accuracy, "history": history, "backward_source": source,
            "model": model}

if __name__ == "__main__":
    main()
