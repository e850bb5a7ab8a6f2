"""Functions for the higher-order tests (tests/compiler/test_higher_order.py): the programs users
write around derivatives of derivatives. Gradients of gradients, mixed partials, a gradient
called inside a differentiated function (made inline, a module global, an argument, read out
of a dict or a list, in a loop, in a branch, of a decorated function, of a function with a
helper, a loop and an element write), gradient penalties, Newton steps and a few steps of
gradient descent differentiated through (meta-learning). A function the compiler must refuse
marks the offending line with `# <- refused`; the test names the token the caret must sit
under."""


import numpy as np

import s2sgrad
from tests.cases.soundness import with_l2  # the decorator the soundness cases use

# --- functions whose derivatives are taken ----------------------------------------------


def cube(x):
    return x ** 3


def quartic_mix(x):
    """A scalar of a scalar with every derivative nonzero: x^4/4 + sin x."""
    return 0.25 * x ** 4 + np.sin(x)


def energy(x):
    """A scalar of an array, not separable: its Hessian is full."""
    return np.sum(np.sin(x) * x ** 2) + np.sum(x) ** 2 * 0.5 + np.log(1.0 + np.sum(x ** 2))


def coupled(a, b):
    """A scalar of two scalars: a^2 b^3 + sin(a b)."""
    return a ** 2 * b ** 3 + np.sin(a * b)


def pair_energy(x, y):
    """A scalar of two arrays, coupled: the mixed block of the Hessian is nonzero."""
    return np.sum(np.sin(x) * y ** 2 + x * y) + np.sum(np.tanh(x * y))


def vector_field(x):
    """An array of an array: the Jacobian is full (a rank-one term plus a diagonal)."""
    return np.tanh(x) * np.sum(x ** 2) + np.exp(0.5 * x)


def matrix_field(x, w):
    """An array (3,) of an array (4,) and a matrix (3, 4)."""
    return np.tanh(w @ x) + 0.1 * (w @ x) ** 2


def loss(w, x):
    """A small regression loss of weights (4,) on inputs (5, 4)."""
    return np.mean((np.tanh(x @ w) - 0.5) ** 2)


def inner(x, w):
    """What a gradient penalty differentiates: a model output, summed, of input x (4,) and
    weights w (4,)."""
    return np.sum(np.tanh(w * x) + 0.5 * w * x ** 2)


# --- a gradient called inside a differentiated function --------------------------------


def uses_inline_gradient(x):
    """slope * x with slope = 3 x^2 (made inline)."""
    slope = s2sgrad.gradient(cube)(x)
    return slope * x


DENERGY = s2sgrad.gradient(energy)
DQUARTIC = s2sgrad.gradient(quartic_mix)


def uses_global_gradient(x):
    return np.sum(DENERGY(x) * x)


def uses_global_gradient_float(x):
    return DQUARTIC(x) * np.cos(x)


def uses_gradient_argument(g, x):
    """The gradient arrives as an argument."""
    return np.sum(g(x) ** 2)


GRADIENTS = {"energy": DENERGY, "quartic": DQUARTIC}
GRADIENT_LIST = [DQUARTIC, DENERGY]


def uses_gradient_from_dict(x):
    g = GRADIENTS["energy"]
    return np.sum(g(x) * np.cos(x))


def uses_gradient_from_list(x):
    return np.sum(GRADIENT_LIST[1](x) ** 2) + GRADIENT_LIST[0](x[0])


def uses_gradient_from_dict_argument(table, x):
    return np.sum(table["energy"](x) * x)


def uses_gradient_in_branch(x):
    if np.sum(x) > 0.0:
        return np.sum(DENERGY(x) * x)
    return np.sum(x ** 3)


def uses_gradient_in_loop(x, n):
    """Sums of a gradient at moving points."""
    total = 0.0
    for k in range(n):
        total = total + np.sum(DENERGY(x * (1.0 + 0.1 * k)) ** 2)
    return total


def descend(x0, lr, steps):
    """A few steps of gradient descent on energy: the final loss, differentiated with
    respect to the starting point and to the step size (meta-learning)."""
    x = x0
    for _ in range(steps):
        x = x - lr * s2sgrad.gradient(energy)(x)
    return energy(x)


def descend_global(x0, lr, steps):
    x = x0
    for _ in range(steps):
        x = x - lr * DENERGY(x)
    return energy(x)


def descend_float(x0, lr):
    """Three unrolled steps on a scalar."""
    x = x0
    x = x - lr * DQUARTIC(x)
    x = x - lr * DQUARTIC(x)
    x = x - lr * DQUARTIC(x)
    return quartic_mix(x)


def descend_weights(w0, x, lr, steps):
    """Inner-loop training of a small model; the loss after training, as a function of
    the initial weights and the learning rate (MAML-style)."""
    w = w0
    for _ in range(steps):
        w = w - lr * s2sgrad.gradient(loss)(w, x)
    return loss(w, x)


DLOSS = s2sgrad.gradient(loss)


def descend_weights_global(w0, x, lr, steps):
    """The same, the gradient a module global."""
    w = w0
    for _ in range(steps):
        w = w - lr * DLOSS(w, x)
    return loss(w, x)


@with_l2(0.3)
def decorated_energy(x):
    return np.sum(np.sin(x) * x ** 2)


def uses_gradient_of_decorated(x):
    return np.sum(s2sgrad.gradient(decorated_energy)(x) * np.cos(x))


def helper(v):
    return np.exp(-v ** 2) + v ** 3


def calls_helper(x):
    return np.sum(helper(x) * x)


def uses_gradient_of_caller(x):
    return np.sum(s2sgrad.gradient(calls_helper)(x) ** 2)


def loop_and_write(x):
    """A loop and an element write: a running product written into a fresh array."""
    out = np.zeros(x.shape[0])
    acc = 1.0
    for i in range(x.shape[0]):
        acc = acc * np.cos(x[i]) + x[i] ** 2
        out[i] = acc
    return np.sum(out * x)


def uses_gradient_of_loop(x):
    return np.sum(s2sgrad.gradient(loop_and_write)(x) * x)


@s2sgrad.grad
def prepared(x):
    return np.sum(np.tanh(x) * x ** 2)


def uses_gradient_of_function(x):
    return np.sum(s2sgrad.gradient(prepared)(x) ** 2)


@s2sgrad.grad
def prepared_calls_gradient(x):
    """A @s2sgrad.grad Function that calls a gradient."""
    return np.sum(DENERGY(x) ** 2) + prepared(x)


def named_like_cotangent(x, out_bar):
    """A parameter named like the cotangent of higher.py's generated backward."""
    return x ** 2 * out_bar


def named_like_value_cotangent(x, grad_bar):
    """A parameter named like the gradient's cotangent of a value_and_grad's generated
    backward ('value_bar, grad_bar = out_bar')."""
    return x ** 3 * grad_bar


def uses_value_and_grad_of_named(x, c):
    value, g = s2sgrad.value_and_grad(named_like_value_cotangent)(x, c)
    return value + g


def named_like_its_gradient(x, grad_named_like_its_gradient):
    """A parameter named like the generated name of its own gradient ('grad_' + name)."""
    return x ** 3 * grad_named_like_its_gradient


def uses_value_and_grad(x):
    value, g = s2sgrad.value_and_grad(energy)(x)
    return value * np.sum(g * x)


def uses_gradient_of_two(x, y):
    """A gradient with respect to the second argument, inside."""
    return np.sum(s2sgrad.gradient(pair_energy, wrt=1)(x, y) * x)


def uses_two_gradients(x, y):
    """Both partial gradients at once (wrt a tuple), inside."""
    gx, gy = s2sgrad.gradient(pair_energy, wrt=(0, 1))(x, y)
    return np.sum(gx * gy)


def uses_second_derivative(x):
    """A gradient of a gradient, inside: third derivatives outside."""
    return s2sgrad.gradient(s2sgrad.gradient(quartic_mix))(x) * x


def scaled_energy(x, scale=1.0):
    return scale * np.sum(x ** 3) + np.sum(np.sin(scale * x))


def uses_gradient_with_keyword(x, s):
    """A keyword argument to the gradient, differentiated outside (a mixed partial)."""
    return np.sum(s2sgrad.gradient(scaled_energy)(x, scale=s) * x)


def uses_gradient_negative_wrt(x, s):
    return np.sum(s2sgrad.gradient(scaled_energy, wrt=-1)(x, s) * x)


def uses_value_and_two_gradients(x, s):
    value, grads = s2sgrad.value_and_grad(scaled_energy, wrt=(0, 1))(x, s)
    gx, gs = grads
    return value * gs + np.sum(gx ** 2)


def descend_made_before_loop(x0, lr, steps):
    """The gradient made once, before the loop."""
    g = s2sgrad.gradient(energy)
    x = x0
    for _ in range(steps):
        x = x - lr * g(x)
    return energy(x)


def descend_unrolled(x0, lr):
    """Made inline, twice, without a loop."""
    x = x0 - lr * s2sgrad.gradient(energy)(x0)
    x = x - lr * s2sgrad.gradient(energy)(x)
    return energy(x)


def step(x, lr):
    return x - lr * DENERGY(x)


def descend_by_helper(x0, lr, steps):
    """The step in a helper that calls the gradient."""
    x = x0
    for _ in range(steps):
        x = step(x, lr)
    return energy(x)


def descend_with(g, x0, lr, steps):
    """The gradient passed as an argument, called in the loop."""
    x = x0
    for _ in range(steps):
        x = x - lr * g(x)
    return energy(x)


# --- helpers to differentiate a derivative of an array-valued gradient ------------------


GRAD_PAIR_Y = s2sgrad.gradient(pair_energy, wrt=1)


def mixed_along(x, y, u):
    """<d pair_energy / dy, u>: its gradient in x is the mixed block H_xy applied to u."""
    return np.sum(GRAD_PAIR_Y(x, y) * u)


def energy_gradient_along(x, u):
    """<grad energy, u>: its gradient in x is the Hessian applied to u."""
    return np.sum(DENERGY(x) * u)


def newton_derivative_closed_form(x):
    """d/dx (x - f'(x) / f''(x)) = f'(x) f'''(x) / f''(x)^2 for f = quartic_mix."""
    g = x ** 3 + np.cos(x)
    h = 3.0 * x ** 2 - np.sin(x)
    return g * (6.0 * x - np.cos(x)) / h ** 2


# --- gradient penalties, Newton steps --------------------------------------------------


def penalised_loss(w, x, data, lam):
    """loss(w) + lam * |d inner / dx|^2: a gradient penalty (as in WGAN-GP), differentiated
    with respect to the weights."""
    return loss(w, data) + lam * np.sum(s2sgrad.gradient(inner, wrt=0)(x, w) ** 2)


def newton_step(x):
    """One Newton step on quartic_mix' = 0, as a function of the starting point."""
    g = s2sgrad.gradient(quartic_mix)(x)
    h = s2sgrad.gradient(s2sgrad.gradient(quartic_mix))(x)
    return x - g / h


def newton_steps(x):
    """Two Newton steps on (x^3 - 2 = 0) written with the derivative taken inside."""
    for _ in range(2):
        x = x - (x ** 3 - 2.0) / s2sgrad.gradient(cube)(x)
    return x


# --- refused: what must stay a refusal ---------------------------------------------------


def make_pullback_user(pullback):
    def through_pullback(s):
        return pullback(s)[0] * s  # <- refused
    return through_pullback


def closure_over_input(w):
    """A gradient of a function that closes over a differentiated value: never taken as a
    constant."""
    def inner_loss(x):
        return np.sum((x - w) ** 2 * x)
    return np.sum(s2sgrad.gradient(inner_loss)(w * 0.5) ** 2)  # <- refused


# --- the step size alone moving -----------------------------------------------------------


def step_size_through_cos(x0, lr):
    x = x0
    for _ in range(2):
        x = x - lr * np.cos(x)
    return x


def step_size_through_helper(x0, lr):
    x = x0
    for _ in range(2):
        x = x - lr * cube(x)
    return x
