"""Models whose @grad methods read their parameters through self (implicit inputs)."""

import numpy as np

import s2sgrad as sg


class Linear(sg.nn.Module):
    def __init__(self, n_in, n_out, rng):
        self.W = sg.tensor(rng.standard_normal((n_in, n_out)) * 0.5, requires_grad=True)
        self.b = sg.tensor(rng.standard_normal(n_out) * 0.1, requires_grad=True)
        self.scale = 2.0  # a plain attribute: a constant

    @sg.grad
    def forward(self, x):
        return self.scale * np.tanh(x @ self.W + self.b)


class TwoLayer(sg.nn.Module):
    def __init__(self, rng):
        self.first = Linear(3, 4, rng)
        self.V = sg.tensor(rng.standard_normal((4, 2)), requires_grad=True)

    @sg.grad
    def forward(self, x):
        h = np.tanh(x @ self.first.W + self.first.b)
        return np.sum((h @ self.V) ** 2)


TEMPERATURE = sg.tensor(1.5, requires_grad=True)


@sg.grad
def tempered(y):
    return np.sum(np.exp(y / TEMPERATURE))


def make_penalty(weight):
    @sg.grad
    def penalty(y):
        return weight * np.sum(y * y)
    return penalty
