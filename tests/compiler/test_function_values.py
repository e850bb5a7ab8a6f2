"""Functions as values inside differentiated code: nested functions and lambdas passed to
helpers (of this module and of another), carried in tuples, lists and dicts, returned by
factories, looped over and picked by a key. Where the function is known when compiling, the
helper is compiled for it, the variables the function closes over passed along so that
their gradients flow back; each program is checked against finite differences in both
modes (and at second order where it is twice differentiable), its value against the plain
call, its arguments unchanged. What cannot be followed is refused at the user's line."""

import inspect

import numpy as np
import pytest

import s2sgrad
from s2sgrad import TransformError
from s2sgrad.compiler.compiled import state_of
from tests.arguments import checked
from tests.cases import integrators

rng = np.random.default_rng(11)
X = rng.standard_normal(4)
LOG_RATES = np.log(np.array([0.3, 0.1]))
OBSERVED = np.array([14.0, 19.0, 26.0, 35.0, 47.0, 62.0, 80.0, 101.0, 125.0, 150.0])


def euler(rhs, y, t0, t1, n):
    h = (t1 - t0) / n
    for k in range(n):
        y = y + h * rhs(t0 + k * h, y)
    return y


def sir_fit(log_rates, observed):
    beta, gamma = np.exp(log_rates)

    def rhs(t, y):
        S, I, R = y
        new = beta * S * I / 1000.0
        return np.array([-new, new - gamma * I, gamma * I])

    y = np.array([990.0, 10.0, 0.0])
    out = []
    for day in range(10):
        y = euler(rhs, y, day, day + 1, 4)
        out.append(y[1])
    return np.sum((np.log(out) - np.log(observed)) ** 2)


def sir_fit_elsewhere(log_rates, observed):
    """The integrator in another module."""
    beta, gamma = np.exp(log_rates)

    def rhs(t, y):
        S, I, R = y
        new = beta * S * I / 1000.0
        return np.array([-new, new - gamma * I, gamma * I])

    y = np.array([990.0, 10.0, 0.0])
    out = []
    for day in range(10):
        y = integrators.euler(rhs, y, day, day + 1, 4)
        out.append(y[1])
    return np.sum((np.log(out) - np.log(observed)) ** 2)


def total_energy(x, *terms, repulsion=1.0):
    e = 0.0
    for name, fn in terms:
        e = e + (repulsion if name == "repulsion" else 1.0) * fn(x)
    return e


def composite(x):
    def harmonic(v):
        return np.sum(v ** 2)

    def repulsion(v):
        return np.sum(1.0 / (1.0 + v ** 2))

    return total_energy(x, ("harmonic", harmonic), ("repulsion", repulsion), repulsion=0.5)


def lambda_to_helper(a, x):
    return np.sum(integrators.apply_twice(lambda v: a * np.sin(v), x))


def callback_through_two_helpers(a, x):
    def scaled(v):
        return np.exp(a * v)

    return integrators.through_two(scaled, x)


def make_scaled(k):
    return lambda v: k * np.tanh(v)


def module_factory(k, x):
    f = make_scaled(k)
    return np.sum(f(x) * f(2.0 * x))


def nested_factory(k, x):
    def make(c):
        def g(v):
            return np.sum(c * v ** 2)
        return g

    f = make(k)
    h = make(2.0 * k)
    return f(x) + h(np.cos(x))


def square(v):
    return v * v


def loop_over_functions(x):
    total = 0.0
    for f in (np.sin, square, lambda v: v ** 3):
        total = total + np.sum(f(x))
    return total


def loop_over_closures(a, x):
    def first(v):
        return a * v

    def second(v):
        return np.cos(a + v)

    total = 0.0
    for f in [first, second, lambda v: a * v ** 2]:
        total = total + np.sum(f(x))
    return total


def dict_of_closures(a, x, name):
    acts = {"tanh": lambda v: np.tanh(a * v), "soft": lambda v: np.log1p(np.exp(a * v))}
    return np.sum(acts[name](x))


def tuple_unpacked(a, x):
    f, g = (lambda v: a * v, lambda v: np.sin(a * v))
    return np.sum(f(x) * g(x))


def stored_then_called(a, x):
    def step(v):
        return v + 0.1 * np.tanh(a * v)

    steps = [step, step]
    for s in steps:
        x = s(x)
    return np.sum(x ** 2)


def closure_in_a_loop(a, x):
    total = 0.0
    for k in range(3):
        total = total + integrators.summed(lambda v: a * v ** 2 + k, x)
    return total


def over_functions_passed_in(fns, x):
    total = 0.0
    for f in fns:
        total = total + np.sum(f(x))
    return total


def independent_of_one_input(a, s, x):
    """The helpers' results do not depend on s: with respect to s they are not
    differentiated, and still run as compiled (the plain helper could not call the tuple
    that stands for the closure)."""
    k = np.cos(x) * a
    y = integrators.summed(lambda v: np.tanh(v * k + 0.1), x)
    z = np.sum(integrators.euler(lambda t, v: -k * v, x, 0.0, 1.0, 3))
    f = make_scaled(a)
    return y * z + s ** 2 + np.sum(f(x))


def closure_over_a_closure(a, x):
    def inner(v):
        return a * v

    def outer(v):
        return np.sin(inner(v)) * a

    return integrators.summed(outer, x)


PROGRAMS = {
    "sir_fit": (sir_fit, (LOG_RATES, OBSERVED)),
    "sir_fit with the integrator elsewhere": (sir_fit_elsewhere, (LOG_RATES, OBSERVED)),
    "functions carried in tuples": (composite, (X,)),
    "a lambda passed to a helper": (lambda_to_helper, (0.7, X)),
    "a callback through two helpers": (callback_through_two_helpers, (0.3, X)),
    "a module-level factory": (module_factory, (1.3, X)),
    "a nested factory": (nested_factory, (1.3, X)),
    "a loop over a tuple of functions": (loop_over_functions, (X,)),
    "a loop over a list of closures": (loop_over_closures, (0.4, X)),
    "a tuple of lambdas unpacked": (tuple_unpacked, (0.6, X)),
    "a list of closures called in a loop": (stored_then_called, (0.9, X)),
    "a closure made in a loop": (closure_in_a_loop, (0.5, X)),
    "a closure over a closure": (closure_over_a_closure, (0.5, X)),
    "helpers not differentiated": (independent_of_one_input, (0.5, 0.3, X)),
}


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_function_values_match_finite_differences(name):
    fn, args = PROGRAMS[name]
    checked(fn, *args)


@pytest.mark.parametrize("wrt", [0, 1, 2])
def test_helpers_given_closures_run_compiled_where_not_differentiated(wrt):
    s2sgrad.testing.check_grads(independent_of_one_input, 0.5, 0.3, X, wrt=wrt,
                                modes=("rev", "fwd"))


@pytest.mark.parametrize("fns", [(np.sin, square), (square, np.tanh, np.sin)],
                         ids=["two", "three"])
def test_a_loop_over_a_tuple_of_functions_passed_in(fns):
    """Unrolled, as the analysis asks where the tuple's functions differ."""
    checked(lambda x: over_functions_passed_in(fns, x), X)


@pytest.mark.parametrize("key", ["tanh", "soft"])
def test_a_closure_picked_by_a_string_argument(key):
    checked(lambda a, x: dict_of_closures(a, x, key), 0.8, X)


def test_the_gradient_reaches_the_captured_variables():
    """d sir_fit / d log_rates flows only through beta and gamma, which rhs closes over."""
    g = s2sgrad.gradient(sir_fit)(LOG_RATES, OBSERVED)
    assert np.all(np.abs(g) > 1e-3)
    np.testing.assert_allclose(g, s2sgrad.gradient(sir_fit_elsewhere)(LOG_RATES, OBSERVED))


def test_on_tensors_with_backward():
    loss = s2sgrad.grad(sir_fit)
    rates = s2sgrad.tensor(LOG_RATES.copy(), requires_grad=True)
    out = loss(rates, OBSERVED)
    out.backward()
    np.testing.assert_allclose(out.item(), sir_fit(LOG_RATES, OBSERVED))
    np.testing.assert_allclose(rates.grad.numpy(),
                               s2sgrad.gradient(sir_fit)(LOG_RATES, OBSERVED))


def test_the_helper_compiles_once_per_closure_code():
    """Calls of euler with rhs at other rates reuse its compiles: what rhs closes over is
    an argument, not part of what the compile is specialised on."""
    s2sgrad.gradient(sir_fit)(LOG_RATES, OBSERVED)
    compiles = len(state_of(euler).vjp)
    s2sgrad.gradient(sir_fit)(LOG_RATES + 0.1, OBSERVED)
    s2sgrad.gradient(sir_fit)(LOG_RATES - 0.2, OBSERVED * 1.1)
    assert len(state_of(euler).vjp) == compiles


def test_the_helper_reads_as_written():
    """euler compiled for rhs calls rhs's own compiled forward, the tuple of what rhs
    closes over first; rhs's forward reads its variables out of it."""
    s2sgrad.gradient(sir_fit)(LOG_RATES, OBSERVED)
    sources = [c.forward_source for c in state_of(euler).vjp.values()]
    assert any("rhs_forward(rhs, " in text for text in sources), sources
    assert all(text.startswith("def euler_forward(rhs, y, t0, t1, n") for text in sources)
    adjoints = [c.adjoint_source for c in state_of(euler).vjp.values()]
    assert any("rhs_backward(rhs_saved, " in text for text in adjoints), adjoints


# --- refused: what the compiled code could not compute as Python does -------------------


def rebound_after_use(a, x):
    def f(v):
        return a * v

    y = integrators.summed(f, x)
    a = 2.0 * a
    return y + integrators.summed(f, x)  # <- f reads the new a here


def returns_a_function(a, x):
    return lambda v: a * v


def measures_a_function(a, x):
    f = lambda v: a * v
    return integrators.summed(f, x) * len(f)


def gradient_of_a_lambda(a, x):
    """autograd's test_enclosing_scope_ref: a derivative of a closure over a
    differentiated value, taken inside."""
    inner = lambda y: a * y
    return a * s2sgrad.gradient(inner)(2.0) * np.sum(x)


def picked_by_a_branch(a, x):
    def square(v):
        return a * v ** 2

    def cube(v):
        return a * v ** 3

    f = square if np.sum(x) > 0 else cube
    return np.sum(f(x))  # <- which function is known at run time only


@pytest.mark.parametrize("fn, words", [
    (picked_by_a_branch, ["function value", "chosen at run time"]),
    (gradient_of_a_lambda, ["gradient()", "made inside"]),
    (rebound_after_use, ["'a'", "assigned"]),
    (returns_a_function, ["function", "return"]),
    (measures_a_function, ["function", "calling it"]),
])
def test_uses_that_cannot_be_followed_are_refused_at_the_line(fn, words):
    with pytest.raises(TransformError) as info:
        s2sgrad.gradient(fn)(0.5, X)
    err = info.value
    assert err.filename == __file__, err
    assert all(w in str(err) for w in words), str(err)
    lines, first = inspect.getsourcelines(fn)
    assert first <= err.lineno < first + len(lines), err
