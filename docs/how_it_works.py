"""How s2sgrad works, as a program you can run: ``python docs/how_it_works.py``.

s2sgrad turns a Python function into two Python functions, a *forward* that computes the
output and keeps exactly the values the derivative needs, and an *adjoint* (backward) that
turns the cotangent of the output into cotangents of the inputs. Nothing is recorded while
your code runs: the adjoint is ordinary code, generated once, that you can read.

This file walks one function through the passes of the compiler, printing what each one
produces, and checks its claims as it goes (the test suite runs it); at the end, forward
mode and second derivatives, which are the compiler applied to its own output.
"""

import numpy as np

import s2sgrad
from s2sgrad.aliasing import aliasing
from s2sgrad.analyze import abstract_of, analyze
from s2sgrad.codegen import codegen
from s2sgrad.fence import fence
from s2sgrad.normalize import normalize
from s2sgrad.optimize import optimize
from s2sgrad.parse import parse
from s2sgrad.pipeline import compile_jvp, compile_vjp
from s2sgrad.reverse import reverse
from s2sgrad.syntax import function, to_python_ast


def show(title, node_or_text):
    import astor
    text = node_or_text if isinstance(node_or_text, str) else astor.to_source(
        to_python_ast(node_or_text))
    print(f"--- {title} " + "-" * (70 - len(title)))
    print(text.rstrip())
    print()


# The function we differentiate: a one-layer regression loss, written as you would.
def loss(w, b, x, y):
    h = np.tanh(x @ w + b)
    return np.mean((h - y) ** 2)


rng = np.random.default_rng(0)
w, b = rng.standard_normal((3, 2)), np.zeros(2)
x, y = rng.standard_normal((16, 3)), rng.standard_normal((16, 2))

# 1. parse: the live function -> its syntax tree, line numbers pointing into this file, and
#    the namespace it sees (so `np.tanh` is known to be numpy's tanh at transform time).
parsed = parse(loss)
assert parsed.params == ("w", "b", "x", "y")
assert parsed.resolve(parsed.node.body[0].value.func) is np.tanh

# 2. fence: refuse what later passes do not understand, pointing at it. Straight-line code
#    passes; a `with` block would be a TransformError at its file:line:col.
fence(parsed)

# 3. normalize: one operation per statement (A-normal form), every name assigned once.
normalized = normalize(parsed)
show("after normalize", normalized.node)
assert all(len(s.targets) == 1 for s in normalized.node.body[:-1])

# 4. analyze: what each statement calls (a derivative rule, a user function, ...), what each
#    value is (kind, rank, and which axes have size 1), and which values are *active*:
#    they depend on a differentiated input and the output depends on them. The analysis is
#    specialised to the arguments: here w, b are differentiated, x, y are data.
signature = {name: abstract_of(v) for name, v in zip(parsed.params, (w, b, x, y), strict=True)}
analysis = analyze(normalized, ("w", "b"), signature, compile_callee=None)
print("abstract values:", {k: v for k, v in analysis.values.items() if not k.startswith("_")})
print("active:", sorted(analysis.active))
print()
assert "x" not in analysis.active and "h" in analysis.active

# 4b. aliasing: group the names by the memory they may share (copies, views, an array read
#    from an object), find the in-place updates (y[i] = v, h += x), and refuse those the
#    gradient cannot follow (an update of the caller's array, a read through another name
#    after an update). Reverse reads the groups to copy values a later update overwrites.
aliases = aliasing(analysis)
assert not aliases.writes  # this function updates nothing in place

# 5. reverse: walk the statements backwards; for each active one, inline its derivative rule.
#    Rules are plain Python functions (see s2sgrad/rules/), e.g. for tanh:
#        def tanh(g, ans, x): return g * (1.0 - ans * ans)
#    Their parameters are replaced by the names at the call site, and tests on static facts
#    (the rank of an operand, `axis is None`) are folded away.
reversed_ = reverse(analysis, aliases)
show("adjoint after reverse", function("adjoint", [], reversed_.adjoint))

# 6. optimize: fold constants, propagate copies, drop dead code, then decide what the
#    forward saves: exactly the primal values the adjoint still reads.
optimized = optimize(reversed_)
print("saved for the adjoint:", optimized.saved)
print()
assert "y" not in optimized.saved  # y's value is not needed to differentiate wrt w, b

# 7. codegen: render both functions with `# adjoint of:` comments and compile them. The
#    source is registered with linecache, so tracebacks and pdb show the generated lines.
generated = codegen(optimized)
show("forward", generated.forward_source)
show("adjoint", generated.adjoint_source)

# Broadcasting is reduced where it happened, and only there: b (shape (2,)) was broadcast
# over the 16 rows, so its cotangent is a sum over axis 0, written as a NumPy user would.
assert "b_bar = _t2_bar.sum(axis=0)" in generated.adjoint_source
assert "unbroadcast" not in generated.adjoint_source

# The pipeline in one call (cached per function, differentiated inputs and signature):
compiled = compile_vjp(loss, ("w", "b"), signature)
out, saved = compiled.forward(w, b, x, y)
w_bar, b_bar = compiled.backward(saved, 1.0)

# Every gradient is checked against central finite differences in random directions.
s2sgrad.testing.check_grads(loss, w, b, x, y, wrt=(0, 1))

# The public API wraps the same pair:
value, (gw, gb) = s2sgrad.value_and_grad(loss, wrt=(0, 1))(w, b, x, y)
assert np.allclose(gw, w_bar) and np.allclose(gb, b_bar) and value == out
print("value", round(float(value), 6), "| gradients check against finite differences")

# Forward mode runs the same passes up to aliasing, then `tangent` in place of reverse and
# optimize: every primal statement as written, and after each active one the statement of
# its tangent (elementwise rules are their own forward-mode templates, with g the tangent).
tangent_fn = compile_jvp(loss, ("w",), signature, "tangent")
show("tangent function (jvp in w)", tangent_fn.source)
v = np.ones_like(w)
assert np.isclose(tangent_fn.jvp(w, b, x, y, w_dot=v), np.sum(gw * v))

# Batched, every tangent gets a leading axis of directions (s2sgrad/batching.py): with the
# identity as w's tangent, one call gives every column of the Jacobian. Elementwise terms
# broadcast once the tangent's rows have the output's rank; what names axes moves them one
# place right (np.sum(x, axis=0) becomes np.sum(x_dot, axis=1)).
rows_fn = compile_jvp(loss, ("w",), signature, "tangent", batched=True)
show("tangent function for a batch of directions", rows_fn.source)
eye = np.eye(w.size).reshape((w.size,) + w.shape)
assert np.allclose(rows_fn.jvp(w, b, x, y, w_dot=eye, batch=w.size), gw.ravel())

# That function is linear in its rows of tangents, so reverse mode over it, in the rows, is
# the adjoint for a batch of cotangents: one pullback gives a Jacobian's rows, all at once
# (s2sgrad.batched_vjp; jacobian uses it when there are fewer outputs than inputs). Its
# adjoint reads the primal values the batched forward kept, and moves the rows.
rows_t = compile_vjp(rows_fn.jvp, ("w_dot",), {
    **signature, "w_dot": abstract_of(eye), "batch": abstract_of(w.size)})
show("adjoint of the batched tangent function: rows of cotangents", rows_t.adjoint_source)
weights = np.array([1.0, -2.0, 0.5])
pulled = s2sgrad.batched_vjp(loss, (w, b, x, y), weights, wrt=0)[0]
assert np.allclose(pulled, weights[:, None, None] * gw)

# Higher order: the derivative of gradient(loss) is not found by differentiating the adjoint.
# Its Hessian-vector product is the gradient of the tangent function above (the symmetry of
# second derivatives), so the compiler differentiates its own generated tangent function,
# in reverse mode, like any user function (s2sgrad/higher.py).
second = compile_vjp(tangent_fn.jvp, ("w",), {**signature, "w_dot": signature["w"]})
show("adjoint of the tangent function: a Hessian-vector product", second.adjoint_source)
out, saved = second.forward(w, b, x, y, w_dot=v)
(hv,) = second.backward(saved, 1.0)
assert np.allclose(hv, s2sgrad.hvp(loss, (w, b, x, y), (v, None, None, None)))
s2sgrad.testing.check_grads(loss, w, b, x, y, wrt=(0, 1), order=2, modes=("rev", "fwd"))
print("second derivatives check against finite differences of the gradient")

# A whole Hessian is a batch of columns. Forward mode reads the generated forward and
# backward again, as the gradient they are, and gives their tangent function for a batch
# of directions (forward over reverse): with the identity as the directions, every column
# in one call, each costing about what a gradient costs.
columns = compile_jvp(s2sgrad.gradient(loss), ("w",), signature, "tangent", batched=True)
show("the gradient's tangent function for a batch of directions", columns.source)
H = columns.jvp(w, b, x, y, w_dot=eye, batch=w.size)
assert np.allclose(H[0], s2sgrad.hvp(loss, (w, b, x, y), (eye[0], None, None, None)))
