"""Classes and factories of a module other than the tests' that use them: their methods read
this module's own names (``softplus``, ``SCALE``, ``np``), which the compiler must resolve
here, not in the module of the function being differentiated (which binds ``SCALE`` and
``softplus`` to other values on purpose)."""

import dataclasses
import statistics

import numpy as np

SCALE = 0.5


def softplus(v):
    return np.log1p(np.exp(v))


class Integrator:
    def __init__(self, rhs, dt):
        self.rhs, self.dt = rhs, dt

    def step(self, y, k):
        return y + self.dt * self.rhs(y, k)


class Dense:
    def __init__(self, W, b):
        self.W, self.b = W, b

    def apply(self, h):
        return np.tanh(h @ self.W + self.b)


class Base:
    def __init__(self, W):
        self.W = W

    def apply(self, h):
        return h @ self.W * SCALE


class Softplus(Base):
    """Through super(), across modules: Base is not a name of the tests' module."""

    def __init__(self, W, b):
        super().__init__(W)
        self.b = b

    def apply(self, h):
        return softplus(super().apply(h) + self.b)


class Net:
    def __init__(self, layers):
        self.layers = layers

    def layer(self, i):
        return self.layers[i]

    @property
    def depth(self):
        return len(self.layers)

    @property
    def first(self):
        return self.layers[0]

    @staticmethod
    def act(v):
        return np.sin(v) * SCALE

    def forward(self, x):
        h = x
        for layer in self.layers:
            h = layer.apply(h)
        return h


def build_model(params):
    W, b = params
    return Dense(W, b)


def build_scaled(W, b, scale=SCALE):
    model = Softplus(W * scale, b)
    return model


@dataclasses.dataclass
class Affine:
    W: np.ndarray
    b: np.ndarray

    def __call__(self, h):
        return h @ self.W + self.b


class Averaged:
    """A method calling a function without a derivative rule (of the standard library)."""

    def __init__(self, W):
        self.W = W

    def apply(self, h):
        return statistics.fmean(h @ self.W)
