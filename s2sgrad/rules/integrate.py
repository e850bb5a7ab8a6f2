"""Rules for ``scipy.integrate``: ``odeint``, by the adjoint method in reverse mode and by the
forward sensitivity equations in forward mode.

scipy is optional: without it this module registers nothing. ``odeint(func, y0, t,
args=(...))`` is differentiated in ``y0``, in the times ``t`` and in the float entries of
``args`` (floats, float arrays, and dicts, lists and tuples of them), with ``tfirst`` either
way. ``func`` is the user's function: a module-level function, or one passed in as an
argument, that receives what it depends on through ``args``. s2sgrad differentiates it from
its source when the derivative is first computed (``runtime/odeint.py``), and refuses one it
cannot differentiate there, at its line. A lambda or a nested function is inlined where it is
called, so passing one to ``odeint`` in differentiated code is refused (``normalize``), with
the hint to pass what it reads through ``args``; ``func`` is held: a call where it depends on
a differentiated value is refused.

The derivative is itself the solution of an ODE, solved with ``odeint`` and the call's own
tolerances (``rtol``, ``atol``) and step limits (``hmax``, ``mxstep``): it is as accurate as
the solver, not exact. Its helpers have no rules, so second derivatives through ``odeint`` are
refused, and it has no form for a batch of tangents (``batched_jvp`` raises NotBatchable,
``jacobian`` takes one direction at a time). ``full_output=True`` is refused (the result is
then a pair).
"""

from ..runtime.odeint import odeint_backward, odeint_tangent
from .registry import jvp_rule, vjp_rule

try:
    import scipy.integrate
except ImportError:  # scipy is an optional dependency: without it there is nothing to register
    scipy = None


def _odeint_supported(static, ndim):
    # full_output= true, or not known when compiling, makes the result a pair
    if static.get("full_output", 0) not in (0, False):
        return ("scipy.integrate.odeint(..., full_output=...) returns the solution together "
                "with a dict of solver statistics, which is not differentiated. Leave out "
                "full_output= (or write full_output=False) in the differentiated call")
    return None


def odeint(g, ans, func, y0, t, args=(), Dfun=None, col_deriv=0, full_output=0, ml=None,
           mu=None, rtol=None, atol=None, tcrit=None, h0=0.0, hmax=0.0, hmin=0.0, ixpr=0,
           mxstep=0, mxhnil=0, mxordn=12, mxords=5, printmessg=0, tfirst=False):
    # The adjoint a = dL/dy solves a' = -a^T df/dy backwards from the last time, jumping by
    # g[i] at each time t[i]; args' cotangent gathers a^T df/dargs on the way.
    grads = odeint_backward(g, ans, func, y0, t, args, tfirst=tfirst, rtol=rtol, atol=atol,
                            hmax=hmax, mxstep=mxstep)
    return None, grads[0], grads[1], grads[2]


def odeint_jvp(g, ans, func, y0, t, args=(), Dfun=None, col_deriv=0, full_output=0, ml=None,
               mu=None, rtol=None, atol=None, tcrit=None, h0=0.0, hmax=0.0, hmin=0.0, ixpr=0,
               mxstep=0, mxhnil=0, mxordn=12, mxords=5, printmessg=0, tfirst=False):
    # The tangent d of y solves d' = df/dy d + df/dargs g from its value at t[0].
    return (None,
            odeint_tangent(ans, func, y0, t, args, dy0=g, tfirst=tfirst, rtol=rtol,
                           atol=atol, hmax=hmax, mxstep=mxstep),
            odeint_tangent(ans, func, y0, t, args, dt=g, tfirst=tfirst, rtol=rtol,
                           atol=atol, hmax=hmax, mxstep=mxstep),
            odeint_tangent(ans, func, y0, t, args, dargs=g, tfirst=tfirst, rtol=rtol,
                           atol=atol, hmax=hmax, mxstep=mxstep))


if scipy is not None:
    vjp_rule(scipy.integrate.odeint, requires=_odeint_supported, held=("func",))(odeint)
    jvp_rule(scipy.integrate.odeint)(odeint_jvp)
