"""Benchmark workloads: the functions s2sgrad differentiates and their hand-written gradients.

Each workload has

- a plain function (Python floats or NumPy), written as a user would: this is what s2sgrad
  reads and compiles, so it must stay a literal ``def`` in this file;
- a hand-written ``*_value_and_grad`` that returns ``(value, grads)``, written the way an
  expert would write it by hand: one forward sweep that keeps what the reverse sweep needs,
  no repeated work, in-place updates where they are free. This is the baseline;
- ``make_*(lib)`` factories that build the same function from a NumPy-like namespace
  (``autograd.numpy``, ``jax.numpy``, or ``math``/``numpy`` in the tests, which check that the
  factory and the literal function agree), and ``make_torch_*`` versions for PyTorch, whose
  reductions and ``maximum`` take different arguments.

For forward mode and second order (the MLP and the RNN), there are also a hand-written
``*_jvp`` (the value and the derivative along a tangent of every parameter, forward mode by
hand) and ``*_hvp`` (the Hessian-vector product, Pearlmutter's R-operator applied to the
hand-written reverse sweep): the baselines of the ``*-jvp`` and ``*-hvp`` tables.

The loop workloads (``horner``, ``index_loop``, ``ode_loop``) keep the algorithm as written:
their hand-written gradients loop in Python too, forward and back. ``closure_step`` is one
training step that differentiates a new closure, next to ``hand_step`` and ``argument_step``.

``mixture_loss`` is elementwise work on 10^6 floats (exp, sin, log1p, where, a sum): no
matrix product hides the cost of the array operations a gradient adds.

``nn_mlp_loss`` is the classifier of ``examples/pytorch_style.py`` as one NumPy function;
``make_nn_mlp`` builds the same network as an ``nn.Sequential`` from ``s2sgrad.nn`` or
``torch.nn`` (``nn_mlp_state_dict`` gives it the same parameters), and ``adamw_step`` /
``hand_training_step`` are a training step by hand, with PyTorch's AdamW formulas.

Everything is float64. Labels and data are inputs; gradients are taken with respect to the
leading arguments only (``WRT`` below).
"""

from __future__ import annotations

import itertools
import math

import numpy as np

# ---------------------------------------------------------------------------------------------
# 1. scalar: a chain of 114 operations (arithmetic and math.* calls) on four Python floats.
# Written without loops. Every log/sqrt/division has an argument bounded away from zero, so the
# function is smooth everywhere.
# ---------------------------------------------------------------------------------------------


def scalar_fn(x, y, z, w):
    a = x * y + z / (1.0 + w * w)
    b = math.sin(a) * math.cos(x - z) + y ** 2
    c = math.exp(-0.5 * b * b) + math.tanh(w * z)
    d = math.log(1.0 + c * c + a * a)
    e = math.sqrt(x * x + y * y + 1.0) - d / (2.0 + math.cos(b))
    f = (a - b) * (c + d) / (1.0 + e * e)
    g = math.tanh(f) ** 3 + 0.25 * math.sin(e * w)
    h = math.exp(math.tanh(g - a)) * (z - x) ** 2
    p = (h + 1.0) ** 0.5 * math.cos(g * c) - f / (1.0 + d * d)
    q = math.log(1.0 + math.exp(p - e)) + math.sin(h) * y
    r = (q * q + p * p + 0.5) ** -0.5 * (a + c - g)
    s = math.tanh(r * w + q) - math.exp(-(h * h)) / (3.0 + math.sin(f))
    t = (s - r) ** 2 / (1.0 + x * x) + math.cos(s * z + b) * e
    u = math.sqrt(1.0 + t * t) * math.tanh(p + s) - q / (2.0 + math.tanh(d))
    return u * math.exp(-0.1 * (x - 1.0) ** 2) + 0.5 * (r - t) ** 2 + s * y


def make_scalar_fn(lib):
    """``scalar_fn`` with ``lib.sin`` etc.: for autograd.numpy, jax.numpy and torch scalars."""
    sin, cos, exp, log, tanh, sqrt = lib.sin, lib.cos, lib.exp, lib.log, lib.tanh, lib.sqrt

    def scalar(x, y, z, w):
        a = x * y + z / (1.0 + w * w)
        b = sin(a) * cos(x - z) + y ** 2
        c = exp(-0.5 * b * b) + tanh(w * z)
        d = log(1.0 + c * c + a * a)
        e = sqrt(x * x + y * y + 1.0) - d / (2.0 + cos(b))
        f = (a - b) * (c + d) / (1.0 + e * e)
        g = tanh(f) ** 3 + 0.25 * sin(e * w)
        h = exp(tanh(g - a)) * (z - x) ** 2
        p = (h + 1.0) ** 0.5 * cos(g * c) - f / (1.0 + d * d)
        q = log(1.0 + exp(p - e)) + sin(h) * y
        r = (q * q + p * p + 0.5) ** -0.5 * (a + c - g)
        s = tanh(r * w + q) - exp(-(h * h)) / (3.0 + sin(f))
        t = (s - r) ** 2 / (1.0 + x * x) + cos(s * z + b) * e
        u = sqrt(1.0 + t * t) * tanh(p + s) - q / (2.0 + tanh(d))
        return u * exp(-0.1 * (x - 1.0) ** 2) + 0.5 * (r - t) ** 2 + s * y

    return scalar


def scalar_value_and_grad(x, y, z, w):
    """``scalar_fn`` and its gradient with respect to (x, y, z, w), reverse mode by hand."""
    sin, cos, exp, log, tanh, sqrt = math.sin, math.cos, math.exp, math.log, math.tanh, math.sqrt
    # Forward sweep, naming every intermediate the reverse sweep reads.
    w2p1 = 1.0 + w * w
    zq = z / w2p1
    a = x * y + zq
    sa = sin(a)
    xmz = x - z
    cxz = cos(xmz)
    b = sa * cxz + y * y
    eb = exp(-0.5 * b * b)
    twz = tanh(w * z)
    c = eb + twz
    dd = 1.0 + c * c + a * a
    d = log(dd)
    sq = sqrt(x * x + y * y + 1.0)
    den_e = 2.0 + cos(b)
    e = sq - d / den_e
    amb = a - b
    cpd = c + d
    den_f = 1.0 + e * e
    f = amb * cpd / den_f
    tf = tanh(f)
    ew = e * w
    g = tf * tf * tf + 0.25 * sin(ew)
    tga = tanh(g - a)
    eh = exp(tga)
    zmx = z - x
    h = eh * zmx * zmx
    hs = sqrt(h + 1.0)
    gc = g * c
    cgc = cos(gc)
    den_p = 1.0 + d * d
    p = hs * cgc - f / den_p
    epe = exp(p - e)
    sh = sin(h)
    q = log(1.0 + epe) + sh * y
    nrm = q * q + p * p + 0.5
    inv = 1.0 / sqrt(nrm)
    acg = a + c - g
    r = inv * acg
    trq = tanh(r * w + q)
    ehh = exp(-(h * h))
    den_s = 3.0 + sin(f)
    s = trq - ehh / den_s
    smr = s - r
    den_t = 1.0 + x * x
    szb = s * z + b
    cszb = cos(szb)
    t = smr * smr / den_t + cszb * e
    st = sqrt(1.0 + t * t)
    tps = tanh(p + s)
    td = tanh(d)
    den_u = 2.0 + td
    u = st * tps - q / den_u
    xm1 = x - 1.0
    gauss = exp(-0.1 * xm1 * xm1)
    rmt = r - t
    value = u * gauss + 0.5 * rmt * rmt + s * y

    # Reverse sweep. g_v is d value / d v; each intermediate is complete before it is used.
    # value = u * gauss + 0.5 * rmt**2 + s * y
    g_u = gauss
    g_x = -0.2 * xm1 * gauss * u
    g_r = rmt
    g_t = -rmt
    g_s = y
    g_y = s
    # u = st * tps - q / den_u
    g_t += g_u * tps * t / st
    g_ps = g_u * st * (1.0 - tps * tps)
    g_p = g_ps
    g_s += g_ps
    g_q = -g_u / den_u
    g_d = g_u * q / (den_u * den_u) * (1.0 - td * td)
    # t = smr**2 / den_t + cos(szb) * e
    g_smr = g_t * 2.0 * smr / den_t
    g_x -= g_t * smr * smr / (den_t * den_t) * 2.0 * x
    g_szb = -g_t * e * sin(szb)
    g_e = g_t * cszb
    g_s += g_smr + g_szb * z
    g_z = g_szb * s
    g_b = g_szb
    g_r -= g_smr
    # s = tanh(r * w + q) - ehh / den_s, ehh = exp(-h * h), den_s = 3 + sin(f)
    g_rwq = g_s * (1.0 - trq * trq)
    g_r += g_rwq * w
    g_w = g_rwq * r
    g_q += g_rwq
    g_h = g_s * 2.0 * h * ehh / den_s
    g_f = g_s * ehh / (den_s * den_s) * cos(f)
    # r = nrm**-0.5 * acg
    g_acg = g_r * inv
    g_nrm = -0.5 * g_r * acg * inv / nrm
    g_q += g_nrm * 2.0 * q
    g_p += g_nrm * 2.0 * p
    g_a = g_acg
    g_c = g_acg
    g_g = -g_acg
    # q = log(1 + exp(p - e)) + sin(h) * y
    g_pe = g_q * epe / (1.0 + epe)
    g_p += g_pe
    g_e -= g_pe
    g_h += g_q * y * cos(h)
    g_y += g_q * sh
    # p = sqrt(h + 1) * cos(g * c) - f / den_p, den_p = 1 + d * d
    g_h += g_p * cgc * 0.5 / hs
    g_gc = -g_p * hs * sin(gc)
    g_g += g_gc * c
    g_c += g_gc * g
    g_f -= g_p / den_p
    g_d += g_p * f / (den_p * den_p) * 2.0 * d
    # h = exp(tanh(g - a)) * zmx**2
    g_ga = g_h * zmx * zmx * eh * (1.0 - tga * tga)
    g_g += g_ga
    g_a -= g_ga
    g_zmx = g_h * eh * 2.0 * zmx
    g_z += g_zmx
    g_x -= g_zmx
    # g = tanh(f)**3 + 0.25 * sin(e * w)
    g_f += g_g * 3.0 * tf * tf * (1.0 - tf * tf)
    g_ew = g_g * 0.25 * cos(ew)
    g_e += g_ew * w
    g_w += g_ew * e
    # f = amb * cpd / den_f, den_f = 1 + e * e
    g_amb = g_f * cpd / den_f
    g_cpd = g_f * amb / den_f
    g_e -= g_f * f / den_f * 2.0 * e
    g_a += g_amb
    g_b -= g_amb
    g_c += g_cpd
    g_d += g_cpd
    # e = sq - d / den_e, den_e = 2 + cos(b)
    g_x += g_e * x / sq
    g_y += g_e * y / sq
    g_d -= g_e / den_e
    g_b -= g_e * d / (den_e * den_e) * sin(b)
    # d = log(dd), dd = 1 + c * c + a * a
    g_dd = g_d / dd
    g_c += g_dd * 2.0 * c
    g_a += g_dd * 2.0 * a
    # c = exp(-0.5 * b * b) + tanh(w * z)
    g_b -= g_c * eb * b
    g_wz = g_c * (1.0 - twz * twz)
    g_w += g_wz * z
    g_z += g_wz * w
    # b = sin(a) * cos(xmz) + y * y
    g_a += g_b * cos(a) * cxz
    g_xmz = -g_b * sa * sin(xmz)
    g_x += g_xmz
    g_z -= g_xmz
    g_y += g_b * 2.0 * y
    # a = x * y + z / w2p1
    g_x += g_a * y
    g_y += g_a * x
    g_z += g_a / w2p1
    g_w -= g_a * zq / w2p1 * 2.0 * w
    return value, (g_x, g_y, g_z, g_w)


# ---------------------------------------------------------------------------------------------
# 2. logistic: mean binary cross-entropy of a linear model, in the stable form
#    log(1 + exp(z)) - y z = log1p(exp(-|z|)) + max(z, 0) - y z.
# ---------------------------------------------------------------------------------------------


def logistic_loss(w, b, X, y):
    z = X @ w + b
    return np.mean(np.log1p(np.exp(-np.abs(z))) + np.maximum(z, 0.0) - y * z)


def make_logistic_loss(lib):
    """``logistic_loss`` over a NumPy-like namespace (autograd.numpy, jax.numpy)."""

    def logistic(w, b, X, y):
        z = X @ w + b
        return lib.mean(lib.log1p(lib.exp(-lib.abs(z))) + lib.maximum(z, 0.0) - y * z)

    return logistic


def make_torch_logistic_loss(torch):
    def logistic(w, b, X, y):
        z = X @ w + b
        return torch.mean(torch.log1p(torch.exp(-torch.abs(z))) + torch.clamp_min(z, 0.0) - y * z)

    return logistic


def logistic_value_and_grad(w, b, X, y):
    """``logistic_loss`` and its gradient with respect to (w, b)."""
    n = X.shape[0]
    z = X @ w
    z += b
    e = np.abs(z)
    np.negative(e, out=e)
    np.exp(e, out=e)  # e = exp(-|z|), in (0, 1]
    acc = np.maximum(z, 0.0)
    acc += np.log1p(e)
    value = (acc.sum() - y @ z) / n
    # d loss / dz = (sigmoid(z) - y) / n, with sigmoid(z) read off e: 1 / (1 + e) for z >= 0,
    # e / (1 + e) for z < 0. No second exp, no overflow.
    r = 1.0 + e
    np.divide(1.0, r, out=r)
    gz = np.where(z >= 0.0, r, e * r)
    gz -= y
    gz /= n
    return value, (gz @ X, gz.sum())


# ---------------------------------------------------------------------------------------------
# 3. mlp: 784 -> 256 (tanh) -> 10, softmax cross-entropy with one-hot labels, mean over a batch.
# ---------------------------------------------------------------------------------------------


def mlp_loss(W1, b1, W2, b2, X, Y):
    h = np.tanh(X @ W1 + b1)
    logits = h @ W2 + b2
    shifted = logits - np.max(logits, axis=1, keepdims=True)
    logp = shifted - np.log(np.sum(np.exp(shifted), axis=1, keepdims=True))
    return -np.mean(np.sum(Y * logp, axis=1))


def make_mlp_loss(lib):
    """``mlp_loss`` over a NumPy-like namespace (autograd.numpy, jax.numpy)."""

    def mlp(W1, b1, W2, b2, X, Y):
        h = lib.tanh(X @ W1 + b1)
        logits = h @ W2 + b2
        shifted = logits - lib.max(logits, axis=1, keepdims=True)
        logp = shifted - lib.log(lib.sum(lib.exp(shifted), axis=1, keepdims=True))
        return -lib.mean(lib.sum(Y * logp, axis=1))

    return mlp


def make_torch_mlp_loss(torch):
    def mlp(W1, b1, W2, b2, X, Y):
        h = torch.tanh(X @ W1 + b1)
        logits = h @ W2 + b2
        shifted = logits - torch.amax(logits, dim=1, keepdim=True)
        logp = shifted - torch.log(torch.sum(torch.exp(shifted), dim=1, keepdim=True))
        return -torch.mean(torch.sum(Y * logp, dim=1))

    return mlp


def mlp_value_and_grad(W1, b1, W2, b2, X, Y):
    """``mlp_loss`` and its gradient with respect to (W1, b1, W2, b2).

    Uses that the rows of ``Y`` are one-hot (sum to one): the loss is then
    mean(log(sum(exp(shifted)))) - sum(Y * shifted) / n, and its gradient with respect to the
    logits is (softmax - Y) / n; the max subtracted for stability contributes nothing.
    """
    n = X.shape[0]
    h = X @ W1
    h += b1
    np.tanh(h, out=h)
    s = h @ W2
    s += b2
    s -= s.max(axis=1, keepdims=True)
    p = np.exp(s)
    se = p.sum(axis=1, keepdims=True)
    value = (np.log(se).sum() - np.vdot(Y, s)) / n
    se *= n
    p /= se
    p -= Y * (1.0 / n)  # p = d loss / d logits
    gW2 = h.T @ p
    gb2 = p.sum(axis=0)
    gh = p @ W2.T
    h *= h
    np.subtract(1.0, h, out=h)
    gh *= h  # d loss / d (X @ W1 + b1)
    gW1 = X.T @ gh
    gb1 = gh.sum(axis=0)
    return value, (gW1, gb1, gW2, gb2)


# ---------------------------------------------------------------------------------------------
# Forward mode and second order for the MLP: a hand-written jvp (value and directional
# derivative) and a hand-written Hessian-vector product.
# ---------------------------------------------------------------------------------------------


def mlp_jvp(W1, b1, W2, b2, X, Y, dW1, db1, dW2, db2):
    """``mlp_loss`` and its derivative along the tangent ``(dW1, db1, dW2, db2)`` of the
    parameters (X and Y fixed): ``(value, value_dot)``, forward mode by hand.

    Each intermediate ``v`` travels with its tangent ``dv`` (its derivative along the
    tangent). As in ``mlp_value_and_grad``, one-hot rows of ``Y`` make the loss
    mean(logsumexp(logits)) - sum(Y * logits) / n, whose derivative along ``dlogits`` is
    sum((softmax - Y) * dlogits) / n; the max subtracted for stability cancels.
    """
    n = X.shape[0]
    a = X @ W1
    a += b1
    da = X @ dW1  # tangent of the pre-activation a = X @ W1 + b1
    da += db1
    h = np.tanh(a, out=a)
    d = h * h
    np.subtract(1.0, d, out=d)  # d = tanh'(a) = 1 - h**2
    dh = da
    dh *= d  # tangent of h
    s = h @ W2
    s += b2
    ds = dh @ W2  # tangent of the logits: dh @ W2 + h @ dW2 + db2
    ds += h @ dW2
    ds += db2
    s -= s.max(axis=1, keepdims=True)
    p = np.exp(s)
    se = p.sum(axis=1, keepdims=True)
    value = (np.log(se).sum() - np.vdot(Y, s)) / n
    p /= se  # softmax
    p -= Y
    return value, np.vdot(p, ds) / n


def mlp_hvp(W1, b1, W2, b2, X, Y, vW1, vb1, vW2, vb2):
    """The Hessian of ``mlp_loss`` with respect to (W1, b1, W2, b2), times the vector
    ``(vW1, vb1, vW2, vb2)``: a tuple of four arrays shaped like the parameters.

    Pearlmutter's R-operator: R{x} is the derivative of x along the parameters moving by v
    (so R{W1} = vW1, R{X} = 0). Applying R to every line of the hand-written reverse sweep
    (``mlp_value_and_grad``) gives R{gradient} = H v, by the product rule line by line; the
    forward sweep carries R of its intermediates (the jvp above) for the reverse sweep to read.
    """
    n = X.shape[0]
    # Forward sweep and its R (the jvp).
    h = X @ W1
    h += b1
    np.tanh(h, out=h)
    Rh = X @ vW1  # R{a}, a = X @ W1 + b1
    Rh += vb1
    d = h * h
    np.subtract(1.0, d, out=d)  # d = tanh'(a) = 1 - h**2
    Rh *= d  # R{h} = d * R{a}
    s = h @ W2
    s += b2
    Rs = Rh @ W2  # R{logits} = R{h} @ W2 + h @ vW2 + vb2
    Rs += h @ vW2
    Rs += vb2
    s -= s.max(axis=1, keepdims=True)
    p = np.exp(s)
    p /= p.sum(axis=1, keepdims=True)  # softmax
    # Reverse sweep (as in mlp_value_and_grad) and its R.
    # G = (p - Y) / n is d loss / d logits; R{G} = R{p} / n, with the softmax's jvp
    # R{p} = p * (R{logits} - sum(p * R{logits}, axis=1)).
    RG = Rs
    RG -= (p * Rs).sum(axis=1, keepdims=True)
    RG *= p
    RG /= n
    G = p
    G -= Y
    G /= n
    # gW2 = h.T @ G, gb2 = sum(G)  ->  R{gW2} = R{h}.T @ G + h.T @ R{G}, R{gb2} = sum(R{G})
    hW2 = Rh.T @ G
    hW2 += h.T @ RG
    hb2 = RG.sum(axis=0)
    # gh = G @ W2.T  ->  R{gh} = R{G} @ W2.T + G @ vW2.T
    gh = G @ W2.T
    Rgh = RG @ W2.T
    Rgh += G @ vW2.T
    # ga = gh * d, d = 1 - h**2  ->  R{ga} = R{gh} * d + gh * R{d}, R{d} = -2 h R{h}
    Rga = Rgh
    Rga *= d
    h *= Rh
    h *= gh
    h *= 2.0
    Rga -= h  # (h is no longer needed)
    # gW1 = X.T @ ga, gb1 = sum(ga)  ->  R{gW1} = X.T @ R{ga}, R{gb1} = sum(R{ga})
    hW1 = X.T @ Rga
    hb1 = Rga.sum(axis=0)
    return hW1, hb1, hW2, hb2


# ---------------------------------------------------------------------------------------------
# 4. rnn: a tanh recurrent network over a sequence, h_t = tanh(W h_{t-1} + U x_t + b), loss the
#    mean over the steps of |h_t|^2. A plain Python loop, as a user would write it.
# ---------------------------------------------------------------------------------------------


def rnn_loss(W, U, b, h0, xs):
    h = h0
    total = 0.0
    for t in range(xs.shape[0]):
        h = np.tanh(W @ h + U @ xs[t] + b)
        total = total + np.sum(h * h)
    return total / xs.shape[0]


def make_rnn_loss(lib):
    """``rnn_loss`` over a NumPy-like namespace (jax.numpy, torch, numpy in the tests)."""

    def rnn(W, U, b, h0, xs):
        h = h0
        total = 0.0
        for t in range(xs.shape[0]):
            h = lib.tanh(W @ h + U @ xs[t] + b)
            total = total + lib.sum(h * h)
        return total / xs.shape[0]

    return rnn


def _rnn_states(W, U, b, h0, xs):
    """All the states: ``hs[0] = h0`` and ``hs[t + 1] = h_t``, an array (T + 1, H)."""
    T, H = xs.shape[0], W.shape[0]
    hs = np.empty((T + 1, H))
    hs[0] = h0
    XU = xs @ U.T  # U x_t + b for every step at once: no state needed
    XU += b
    for t in range(T):
        a = W @ hs[t]
        a += XU[t]
        np.tanh(a, out=hs[t + 1])
    return hs


def rnn_value_and_grad(W, U, b, h0, xs):
    """``rnn_loss`` and its gradient with respect to (W, U, b): back-propagation through time.

    The reverse loop carries gh = d loss / d h_t; the weight gradients are sums over the steps
    of outer products, formed after the loop as one matrix product each.
    """
    T = xs.shape[0]
    hs = _rnn_states(W, U, b, h0, xs)
    Hs = hs[1:]  # h_1 .. h_T
    value = np.vdot(Hs, Hs) / T
    D = Hs * Hs
    np.subtract(1.0, D, out=D)  # tanh' at every step
    E = Hs * (2.0 / T)  # d loss / d h_t from the loss's own term
    GA = np.empty_like(Hs)  # GA[t] = d loss / d a_t, a_t the pre-activation of step t
    gh = E[T - 1].copy()
    for t in range(T - 1, -1, -1):
        np.multiply(gh, D[t], out=GA[t])
        if t:
            gh = W.T @ GA[t]  # back through a_t = W h_{t-1} + ...
            gh += E[t - 1]
    return value, (GA.T @ hs[:-1], GA.T @ xs, GA.sum(axis=0))


def rnn_jvp(W, U, b, h0, xs, dW, dU, db):
    """``rnn_loss`` and its derivative along the tangent ``(dW, dU, db)`` (h0, xs fixed).

    The tangent of the state obeys dh_t = tanh'(a_t) * (W dh_{t-1} + C_t), dh_0 = 0, where
    C_t = dW h_{t-1} + dU x_t + db is the tangent of a_t from the parameters moving: once the
    states are known (first loop), every C_t comes from two matrix products, and the second
    loop carries only dh.
    """
    T = xs.shape[0]
    hs = _rnn_states(W, U, b, h0, xs)
    Hs = hs[1:]
    value = np.vdot(Hs, Hs) / T
    D = Hs * Hs
    np.subtract(1.0, D, out=D)  # tanh' at every step
    C = hs[:-1] @ dW.T
    C += xs @ dU.T
    C += db
    DH = C  # DH[t] = dh_t, computed in place of C[t]
    for t in range(T):
        if t:
            DH[t] += W @ DH[t - 1]
        DH[t] *= D[t]
    # loss = sum_t |h_t|^2 / T  ->  d loss = 2 sum_t <h_t, dh_t> / T
    return value, 2.0 * np.vdot(Hs, DH) / T


def rnn_hvp(W, U, b, h0, xs, vW, vU, vb):
    """The Hessian of ``rnn_loss`` with respect to (W, U, b) times ``(vW, vU, vb)``.

    Pearlmutter's R-operator over the reverse sweep of ``rnn_value_and_grad``: the forward
    sweep also computes R{h_t} (the jvp's dh_t, here Rh), and the reverse loop carries
    R{gh} next to gh, applying the product rule to each of its lines.
    """
    T = xs.shape[0]
    hs = _rnn_states(W, U, b, h0, xs)
    Hs = hs[1:]
    D = Hs * Hs
    np.subtract(1.0, D, out=D)  # tanh' at every step
    # R of the forward sweep, as in rnn_jvp: Rh[t + 1] = R{h_t}, Rh[0] = R{h0} = 0.
    Rh = np.empty_like(hs)
    Rh[0] = 0.0
    RH = Rh[1:]
    np.matmul(hs[:-1], vW.T, out=RH)
    RH += xs @ vU.T
    RH += vb
    for t in range(T):
        if t:
            RH[t] += W @ RH[t - 1]
        RH[t] *= D[t]
    # R{D} = -2 h R{h}: the tanh' moves with the state.
    RD = Hs * RH
    RD *= -2.0
    E = Hs * (2.0 / T)  # d loss / d h_t
    RE = RH * (2.0 / T)  # its R
    # Reverse loop: ga_t = gh_t * D_t  ->  R{ga_t} = R{gh_t} * D_t + gh_t * R{D_t};
    # gh_{t-1} = W.T ga_t + E_{t-1}  ->  R{gh_{t-1}} = vW.T ga_t + W.T R{ga_t} + R{E_{t-1}}.
    GA = np.empty_like(Hs)
    RGA = np.empty_like(Hs)
    gh = E[T - 1].copy()
    Rgh = RE[T - 1].copy()
    for t in range(T - 1, -1, -1):
        ga = np.multiply(gh, D[t], out=GA[t])
        Rga = np.multiply(Rgh, D[t], out=RGA[t])
        Rga += gh * RD[t]
        if t:
            gh = W.T @ ga
            gh += E[t - 1]
            Rgh = vW.T @ ga
            Rgh += W.T @ Rga
            Rgh += RE[t - 1]
    # gW = GA.T @ h_{t-1}, gU = GA.T @ xs, gb = sum(GA)  ->  their R
    hW = RGA.T @ hs[:-1]
    hW += GA.T @ Rh[:-1]
    return hW, RGA.T @ xs, RGA.sum(axis=0)


# ---------------------------------------------------------------------------------------------
# A ~20-line function used to measure s2sgrad's first-call cost (transform + compile).
# ---------------------------------------------------------------------------------------------


def compile_probe(w, x):
    a = x @ w
    b = np.tanh(a)
    c = b * b + 1.0
    d = np.log(c)
    e = np.exp(-0.5 * a * a)
    f = d * e - b / c
    g = np.sqrt(c) * f
    h = g + 0.1 * a ** 2
    k = np.sin(h) * np.cos(a)
    m = np.mean(k, axis=0)
    n = np.sum(m * m)
    o = np.maximum(h, 0.0)
    q = np.sum(o * b) / (1.0 + n)
    r = np.exp(-q) + np.log1p(n)
    s = np.sum(np.abs(k - d))
    t = r * s + q
    u = t / (1.0 + t * t)
    return u + np.sum(e * f) - np.mean(g)


# ---------------------------------------------------------------------------------------------
# Inputs
# ---------------------------------------------------------------------------------------------

# Which arguments each workload differentiates with respect to (the leading ones).
WRT = {"scalar": (0, 1, 2, 3), "logistic": (0, 1), "mlp": (0, 1, 2, 3), "rnn": (0, 1, 2)}


def scalar_inputs():
    return (0.7, -1.3, 2.1, 0.4)


def logistic_inputs(seed=0, n=1000, d=100):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    w_true = rng.standard_normal(d) / np.sqrt(d)
    y = (rng.random(n) < 1.0 / (1.0 + np.exp(-(X @ w_true)))).astype(np.float64)
    w = 0.1 * rng.standard_normal(d)
    b = 0.1
    return (w, b, X, y)


def mlp_inputs(seed=0, batch=128, d_in=784, d_hidden=256, d_out=10):
    rng = np.random.default_rng(seed)
    X = rng.random((batch, d_in))
    labels = rng.integers(0, d_out, size=batch)
    Y = np.zeros((batch, d_out))
    Y[np.arange(batch), labels] = 1.0
    W1 = rng.standard_normal((d_in, d_hidden)) / np.sqrt(d_in)
    b1 = 0.01 * rng.standard_normal(d_hidden)
    W2 = rng.standard_normal((d_hidden, d_out)) / np.sqrt(d_hidden)
    b2 = 0.01 * rng.standard_normal(d_out)
    return (W1, b1, W2, b2, X, Y)


def compile_probe_inputs(seed=0):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((8, 4)), rng.standard_normal((16, 8)))


def rnn_inputs(seed=0, steps=50, d_hidden=64, d_in=32):
    """(W, U, b, h0, xs): weights scaled so that the state neither dies out nor saturates."""
    rng = np.random.default_rng(seed)
    W = 0.9 * rng.standard_normal((d_hidden, d_hidden)) / np.sqrt(d_hidden)
    U = rng.standard_normal((d_hidden, d_in)) / np.sqrt(d_in)
    b = 0.1 * rng.standard_normal(d_hidden)
    h0 = 0.1 * rng.standard_normal(d_hidden)
    xs = rng.standard_normal((steps, d_in))
    return (W, U, b, h0, xs)


def tangents_for(inputs, wrt, seed=1):
    """A direction for each differentiated input, standard normal scaled like the input
    (by its RMS), and None for the others: the tangents of a jvp, the vector of an hvp."""
    rng = np.random.default_rng(seed)
    out = []
    for i, a in enumerate(inputs):
        if i not in wrt:
            out.append(None)
            continue
        scale = float(np.sqrt(np.mean(np.square(a)))) or 1.0
        out.append(scale * rng.standard_normal(np.shape(a)))
    return tuple(out)


# --- Jacobians: a vector field (as square as Jacobians get) and a network's logits ----------


def field(x, A):
    """A vector field on R^n: the right-hand side of an ODE."""
    return np.tanh(A @ x) + x * np.sin(x)


def make_field(lib):
    def field(x, A):
        return lib.tanh(A @ x) + x * lib.sin(x)
    return field


def field_jacobian(x, A):
    h = np.tanh(A @ x)
    J = (1.0 - h * h)[:, None] * A
    J[np.diag_indices_from(J)] += np.sin(x) + x * np.cos(x)
    return J


def field_inputs(seed=0, n=200):
    rng = np.random.default_rng(seed)
    return rng.standard_normal(n), rng.standard_normal((n, n)) / np.sqrt(n)


def logits(x, W1, b1, W2, b2):
    """One example's logits (784 -> 256 tanh -> 10), whose Jacobian in x is 10 rows."""
    return W2 @ np.tanh(W1 @ x + b1) + b2


def make_logits(lib):
    def logits(x, W1, b1, W2, b2):
        return W2 @ lib.tanh(W1 @ x + b1) + b2
    return logits


def logits_jacobian(x, W1, b1, W2, b2):
    h = np.tanh(W1 @ x + b1)
    return W2 @ ((1.0 - h * h)[:, None] * W1)


def logits_inputs(seed=0, d_in=784, d_hidden=256, d_out=10):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(d_in), rng.standard_normal((d_hidden, d_in)) / 28.0,
            rng.standard_normal(d_hidden) * 0.1, rng.standard_normal((d_out, d_hidden)) / 16.0,
            rng.standard_normal(d_out) * 0.1)


def potential(x, A):
    """A scalar energy on R^n, whose Hessian is dense: sum(log cosh(A x)) + sum(x^4) / 4."""
    return np.sum(np.log(np.cosh(A @ x))) + np.sum(x ** 4) / 4.0


def make_potential(lib):
    def potential(x, A):
        return lib.sum(lib.log(lib.cosh(A @ x))) + lib.sum(x ** 4) / 4.0
    return potential


def potential_hessian(x, A):
    t = np.tanh(A @ x)
    H = (A.T * (1.0 - t * t)) @ A
    H[np.diag_indices_from(H)] += 3.0 * x * x
    return H


# ---------------------------------------------------------------------------------------------
# 5. horner: a polynomial by Horner's rule, a Python loop over a list of Python floats.
# ---------------------------------------------------------------------------------------------


def horner(x, coeffs):
    y = 0.0
    for c in coeffs:
        y = y * x + c
    return y


def make_horner(lib=None):
    """``horner`` for any library: it calls no library function, so the same code runs on
    autograd's boxes, on torch tensors (iterating a 1-d tensor gives its 0-d elements) and on
    JAX arrays. ``lib`` is accepted for the factories' common signature."""

    def horner(x, coeffs):
        y = 0.0
        for c in coeffs:
            y = y * x + c
        return y

    return horner


def horner_value_and_grad(x, coeffs):
    """``horner`` and its gradient with respect to ``(x, coeffs)``, the latter a list.

    The forward loop keeps the value before each step (the step's derivative in x); the
    reverse loop carries g = d value / d y_k, which each step back multiplies by x.
    """
    ys = []
    keep = ys.append
    y = 0.0
    for c in coeffs:
        keep(y)
        y = y * x + c
    n = len(ys)
    g_coeffs = [0.0] * n
    g_x = 0.0
    g = 1.0
    for k in range(n - 1, -1, -1):
        g_coeffs[k] = g
        g_x += g * ys[k]
        g *= x
    return y, (g_x, g_coeffs)


def horner_inputs(seed=0, n=100, x=0.95):
    """``(x, coeffs)``: x a float, coeffs a list of n floats in [-1, 1]. With x = 0.95 every
    coefficient weighs at least 0.95 ** 99 ~ 0.006 in the value."""
    rng = np.random.default_rng(seed)
    return x, [float(c) for c in rng.uniform(-1.0, 1.0, n)]


def tiny(x):
    return x * x


def tiny_value_and_grad(x):
    return x * x, (2.0 * x,)


# ---------------------------------------------------------------------------------------------
# 6. index_loop: an element-by-element Python loop writing into an array, y[i] += v * x[i].
# ---------------------------------------------------------------------------------------------


def index_loop(x, v):
    y = np.zeros_like(x)
    for i in range(x.shape[0]):
        y[i] += v * x[i]
    return np.sum(y * y)


def make_index_loop(lib):
    """``index_loop`` for array libraries without item assignment (autograd.numpy): the same
    element-by-element loop, each element collected in a list and stacked. y starts at zero,
    so ``y[i] += v * x[i]`` writes ``v * x[i]``."""

    def index_loop(x, v):
        items = []
        for i in range(x.shape[0]):
            items.append(v * x[i])
        y = lib.stack(items)
        return lib.sum(y * y)

    return index_loop


def make_torch_index_loop(torch):
    def index_loop(x, v):
        y = torch.zeros_like(x)
        for i in range(x.shape[0]):
            y[i] += v * x[i]
        return torch.sum(y * y)

    return index_loop


def make_jax_index_loop(jax):
    """``index_loop`` as a JAX user writes it: the loop a ``lax.fori_loop``, the write an
    ``.at[i].add`` (a Python loop under ``jax.jit`` would be unrolled n times)."""
    jnp = jax.numpy

    def index_loop(x, v):
        def body(i, y):
            return y.at[i].add(v * x[i])

        y = jax.lax.fori_loop(0, x.shape[0], body, jnp.zeros_like(x))
        return jnp.sum(y * y)

    return index_loop


def index_loop_value_and_grad(x, v):
    """``index_loop`` and its gradient with respect to ``(x, v)``, by the same algorithm: an
    element-by-element loop forward, and one backward (d value / d y = 2 y)."""
    n = x.shape[0]
    y = np.zeros_like(x)
    for i in range(n):
        y[i] += v * x[i]
    value = np.sum(y * y)
    g_y = 2.0 * y
    g_x = np.zeros_like(x)
    g_v = 0.0
    for i in range(n - 1, -1, -1):
        g = g_y[i]
        g_v += g * x[i]
        g_x[i] += g * v
    return value, (g_x, float(g_v))


def index_loop_inputs(seed=0, n=2000):
    rng = np.random.default_rng(seed)
    return rng.standard_normal(n), 0.3


# ---------------------------------------------------------------------------------------------
# 7. ode_loop: a long time loop, explicit Euler steps of a 4-dimensional ODE.
# ---------------------------------------------------------------------------------------------


def ode_loop(A, b, h0, dt, steps):
    h = h0
    for _ in range(steps):
        h = h + dt * np.tanh(A @ h + b)
    return np.sum(h * h)


def ode_chunk(A, b, h, dt, n):
    """``n`` steps of ``ode_loop``: the unit ``ode_loop_chunked`` checkpoints."""
    for _ in range(n):
        h = h + dt * np.tanh(A @ h + b)
    return h


def ode_loop_chunked(A, b, h0, dt, steps, chunk_fn, chunk=100):
    """``ode_loop`` as ``steps // chunk`` calls of ``chunk_fn`` (``ode_chunk``, or
    ``s2sgrad.checkpoint(ode_chunk)``: then the forward keeps one state per chunk, and the
    adjoint runs each chunk's forward again before its backward)."""
    h = h0
    for _ in range(steps // chunk):
        h = chunk_fn(A, b, h, dt, chunk)
    return np.sum(h * h)


def make_ode_loop(lib):
    """``ode_loop`` over a NumPy-like namespace (autograd.numpy, torch, numpy in the tests)."""

    def ode(A, b, h0, dt, steps):
        h = h0
        for _ in range(steps):
            h = h + dt * lib.tanh(A @ h + b)
        return lib.sum(h * h)

    return ode


def make_jax_ode_loop(jax):
    """``ode_loop`` with the time loop a ``lax.fori_loop`` (``steps`` must be static under
    ``jax.jit`` for reverse mode: the loop is then a scan)."""
    jnp = jax.numpy

    def ode(A, b, h0, dt, steps):
        def body(_, h):
            return h + dt * jnp.tanh(A @ h + b)

        h = jax.lax.fori_loop(0, steps, body, h0)
        return jnp.sum(h * h)

    return ode


def ode_forward(A, b, h0, dt, steps):
    """The forward sweep of ``ode_loop_value_and_grad``: the value, and what the reverse
    sweep needs, the states ``H[k] = h_k`` (k = 0..steps) and ``Tn[k] = tanh(A h_k + b)``."""
    H = np.empty((steps + 1, h0.shape[0]))
    Tn = np.empty((steps, h0.shape[0]))
    H[0] = h0
    h = h0
    for k in range(steps):
        t = np.tanh(A @ h + b)
        Tn[k] = t
        h = h + dt * t
        H[k + 1] = h
    return np.sum(h * h), (A, dt, H, Tn)


def ode_backward(saved):
    """The reverse sweep: the gradient with respect to ``(A, b, h0)`` from the saved states.

    With a_k = A h_k + b and h_{k+1} = h_k + dt tanh(a_k), the loop carries gh = d value /
    d h_k; d value / d a_k = dt (1 - tanh(a_k)^2) gh_{k+1} is written in place of its
    factor, and the parameters' gradients are formed after the loop as one matrix product
    and one sum.
    """
    A, dt, H, Tn = saved
    G = Tn * Tn
    np.subtract(1.0, G, out=G)
    G *= dt  # G[k] = dt * tanh'(a_k), then d value / d a_k
    gh = 2.0 * H[-1]  # d value / d h_steps
    for k in range(G.shape[0] - 1, -1, -1):
        ga = G[k]
        ga *= gh
        gh = gh + ga @ A
    return G.T @ H[:-1], G.sum(axis=0), gh


def ode_loop_value_and_grad(A, b, h0, dt, steps):
    """``ode_loop`` and its gradient with respect to ``(A, b, h0)``."""
    value, saved = ode_forward(A, b, h0, dt, steps)
    return value, ode_backward(saved)


def ode_inputs(seed=0, steps=10_000, dt=1e-3, d=4):
    """``(A, b, h0, dt, steps)``: a 4x4 matrix, a bias and a start state, Euler steps of dt."""
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((d, d)) / np.sqrt(d)
    b = 0.1 * rng.standard_normal(d)
    h0 = rng.standard_normal(d)
    return A, b, h0, dt, steps


# ---------------------------------------------------------------------------------------------
# 8. closure_step: a gradient step written functionally, the objective a new closure over the
#    step's batch (least squares).
# ---------------------------------------------------------------------------------------------


def lsq_loss(w, X, y):
    r = X @ w - y
    return np.mean(r * r)


def lsq_grad(w, X, y):
    """The gradient of ``lsq_loss`` with respect to w: 2 X^T (X w - y) / n."""
    r = X @ w
    r -= y
    g = r @ X
    g *= 2.0 / X.shape[0]
    return g


def closure_step(w, X, y, lr, gradient):
    """One step of gradient descent: ``gradient`` (``s2sgrad.gradient``) of an objective that
    is a new closure over this step's batch, as functional training code is often written."""

    def objective(w):
        return lsq_loss(w, X, y)

    g = gradient(objective)(w)
    return w - lr * g


def hand_step(w, X, y, lr):
    return w - lr * lsq_grad(w, X, y)


def lsq_batches(seed=0, count=10, batch=32, d=8):
    """``count`` batches ``(X, y)`` of a least-squares problem, X of ``batch x d``."""
    rng = np.random.default_rng(seed)
    w_true = rng.standard_normal(d)
    out = []
    for _ in range(count):
        X = rng.standard_normal((batch, d))
        out.append((X, X @ w_true + 0.1 * rng.standard_normal(batch)))
    return out


WRT.update({"horner": (0, 1), "tiny": (0,), "index_loop": (0, 1), "ode_loop": (0, 1, 2)})


def argument_step(w, X, y, lr, gradient):
    """The same step with the batch passed as arguments: ``gradient(lsq_loss)`` is built for
    the same function every step."""
    g = gradient(lsq_loss)(w, X, y)
    return w - lr * g


# ---------------------------------------------------------------------------------------------
# 9. mixture: an elementwise mixture over 10^6 elements (exp, sin, log1p, where), summed.
# ---------------------------------------------------------------------------------------------


def mixture_loss(x, y):
    a = np.exp(-x * x) * np.sin(3.0 * y)
    b = np.log1p(x * x + y * y)
    return np.sum(np.where(x > 0.0, a, b) + 0.5 * a * b)


def make_mixture_loss(lib):
    """``mixture_loss`` over a NumPy-like namespace (autograd.numpy, jax.numpy, torch: the
    names and the semantics of ``where`` and ``sum`` are the same in all of them)."""

    def mixture(x, y):
        a = lib.exp(-x * x) * lib.sin(3.0 * y)
        b = lib.log1p(x * x + y * y)
        return lib.sum(lib.where(x > 0.0, a, b) + 0.5 * a * b)

    return mixture


def mixture_value_and_grad(x, y):
    """``mixture_loss`` and its gradient with respect to (x, y).

    With m = [x > 0], a = exp(-x²) sin(3y), b = log1p(r), r = x² + y², the summand is
    m a + (1 - m) b + a b / 2, so d value / d a = m + b / 2 =: ga and d value / d b =
    (1 - m) + a / 2 =: gb, and

        gx = x (gb 2 / (1 + r) - 2 ga a),    gy = y gb 2 / (1 + r) + 3 ga exp(-x²) cos(3y).

    The mask enters as arithmetic (a bool array added to a float one): ``np.where`` on a
    random mask costs several times an arithmetic pass. Five arrays of n floats are
    allocated, two of which are returned; each transcendental is computed once; the value
    is three dot products of arrays the gradient needs anyway.
    """
    A = np.multiply(x, x)
    B = np.multiply(y, y)
    B += A  # r = x² + y²
    np.negative(A, out=A)
    np.exp(A, out=A)  # e = exp(-x²)
    C = np.multiply(y, 3.0)
    D = np.sin(C)
    np.cos(C, out=C)
    D *= A  # a = e sin(3y)
    C *= A  # e cos(3y)
    np.log1p(B, out=A)  # b
    G = np.multiply(D, 0.5)
    G += x <= 0.0  # gb
    # value = sum(m a + (1 - m) b + a b / 2) = <gb, b> + <ga, a> - <a, b> / 2
    gb_b = np.vdot(G, A)
    ab = np.vdot(D, A)
    A *= 0.5
    A += x > 0.0  # ga
    value = gb_b + np.vdot(A, D) - 0.5 * ab
    B += 1.0
    np.divide(2.0, B, out=B)
    B *= G  # p = gb 2 / (1 + r)
    gy = np.multiply(y, B, out=G)
    C *= A
    C *= 3.0
    gy += C  # y p + 3 ga e cos(3y)
    D *= A
    D += D
    np.subtract(B, D, out=D)
    gx = np.multiply(D, x, out=D)  # x (p - 2 ga a)
    return value, (gx, gy)


def mixture_inputs(seed=0, n=1_000_000):
    """``(x, y)``: two standard normal arrays of n elements."""
    rng = np.random.default_rng(seed)
    return rng.standard_normal(n), rng.standard_normal(n)


WRT["mixture"] = (0, 1)


# ---------------------------------------------------------------------------------------------
# 10. nn_mlp: the classifier of examples/pytorch_style.py (three Linear layers, ReLU between,
#     cross-entropy over integer labels), once as a NumPy function and once as an
#     ``nn.Sequential`` of s2sgrad's or PyTorch's layers; a training step adds AdamW.
# ---------------------------------------------------------------------------------------------


def nn_mlp_loss(W1, b1, W2, b2, W3, b3, X, y):
    h = np.maximum(X @ W1.T + b1, 0.0)
    h = np.maximum(h @ W2.T + b2, 0.0)
    logits = h @ W3.T + b3
    shifted = logits - np.max(logits, axis=1, keepdims=True)
    logp = shifted - np.log(np.sum(np.exp(shifted), axis=1, keepdims=True))
    return -np.mean(logp[np.arange(len(y)), y])


def nn_mlp_value_and_grad(W1, b1, W2, b2, W3, b3, X, y):
    """``nn_mlp_loss`` and its gradient with respect to (W1, b1, W2, b2, W3, b3).

    The weights are (out, in), as ``nn.Linear``'s: a layer is ``h @ W.T + b``, its weight's
    gradient ``g.T @ h``. The logits' gradient is (softmax - onehot(y)) / n, the label's
    entry of each row lowered by one in place; ReLU passes the gradient where its output is
    positive (zero at zero, as PyTorch's).
    """
    n = X.shape[0]
    rows = np.arange(n)
    h1 = X @ W1.T
    h1 += b1
    np.maximum(h1, 0.0, out=h1)
    h2 = h1 @ W2.T
    h2 += b2
    np.maximum(h2, 0.0, out=h2)
    s = h2 @ W3.T
    s += b3
    s -= s.max(axis=1, keepdims=True)
    p = np.exp(s)
    se = p.sum(axis=1, keepdims=True)
    value = (np.log(se).sum() - s[rows, y].sum()) / n
    se *= n
    p /= se
    p[rows, y] -= 1.0 / n  # p = d loss / d logits
    gW3 = p.T @ h2
    gb3 = p.sum(axis=0)
    g = p @ W3
    g *= h2 > 0.0  # d loss / d (h1 @ W2.T + b2)
    gW2 = g.T @ h1
    gb2 = g.sum(axis=0)
    g = g @ W2
    g *= h1 > 0.0  # d loss / d (X @ W1.T + b1)
    gW1 = g.T @ X
    gb1 = g.sum(axis=0)
    return value, (gW1, gb1, gW2, gb2, gW3, gb3)


def make_torch_nn_mlp_loss(torch):
    """``nn_mlp_loss`` on PyTorch tensors (``clamp`` for ``maximum``, ``dim`` for ``axis``)."""

    def nn_mlp(W1, b1, W2, b2, W3, b3, X, y):
        h = torch.clamp(X @ W1.T + b1, min=0.0)
        h = torch.clamp(h @ W2.T + b2, min=0.0)
        logits = h @ W3.T + b3
        shifted = logits - torch.amax(logits, dim=1, keepdim=True)
        logp = shifted - torch.log(torch.sum(torch.exp(shifted), dim=1, keepdim=True))
        return -torch.mean(logp[torch.arange(len(y)), y])

    return nn_mlp


def make_nn_mlp(nn, widths, dtype=None):
    """The network as ``nn.Sequential(Linear, ReLU, Linear, ReLU, Linear)`` of ``nn``
    (``s2sgrad.nn`` or ``torch.nn``; the same code builds both), ``widths`` the sizes from the
    input to the logits, the layers initialised as each library does."""
    layers = []
    for k, (n_in, n_out) in enumerate(itertools.pairwise(widths)):
        if k:
            layers.append(nn.ReLU())
        layers.append(nn.Linear(n_in, n_out, dtype=dtype))
    return nn.Sequential(*layers)


def nn_mlp_state_dict(params, tensor):
    """``make_nn_mlp``'s state dict holding ``params`` (W1, b1, W2, b2, ...), each through
    ``tensor`` (``s2sgrad.tensor``, ``torch.tensor``)."""
    names = [f"{2 * k}.{kind}" for k in range(len(params) // 2) for kind in ("weight", "bias")]
    return {name: tensor(p) for name, p in zip(names, params)}


ADAMW = {"lr": 1e-3, "betas": (0.9, 0.999), "eps": 1e-8, "weight_decay": 1e-2}


def adamw_step(params, grads, state, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2):
    """One AdamW step (decoupled weight decay, bias-corrected moments: PyTorch's formulas) on
    the arrays ``params``, in place. ``state`` is a dict, empty before the first step."""
    beta1, beta2 = betas
    if not state:
        state["step"] = 0
        state["m"] = [np.zeros_like(p) for p in params]
        state["v"] = [np.zeros_like(p) for p in params]
    state["step"] += 1
    step = state["step"]
    step_size = lr / (1.0 - beta1 ** step)
    bias2_sqrt = math.sqrt(1.0 - beta2 ** step)
    for p, g, m, v in zip(params, grads, state["m"], state["v"]):
        p *= 1.0 - lr * weight_decay
        m *= beta1
        m += (1.0 - beta1) * g
        v *= beta2
        v += (1.0 - beta2) * g * g
        denom = np.sqrt(v)
        denom /= bias2_sqrt
        denom += eps
        p -= step_size * (m / denom)


def hand_training_step(params, X, y, state):
    """A training step by hand: ``nn_mlp_value_and_grad``, then ``adamw_step`` with ``ADAMW``;
    returns the loss."""
    value, grads = nn_mlp_value_and_grad(*params, X, y)
    adamw_step(params, grads, state, **ADAMW)
    return value


NN_MLP_SIZES = {"digits": (64, (64, 128, 64, 10)), "mnist": (128, (784, 256, 256, 10))}


def nn_mlp_inputs(seed=0, batch=64, widths=(64, 128, 64, 10)):
    """(W1, b1, W2, b2, W3, b3, X, y): weights (out, in) and biases drawn as ``nn.Linear``
    draws them, U(-1/sqrt(in), 1/sqrt(in)); X uniform in [0, 1) as the digits' pixels; y
    integer labels."""
    rng = np.random.default_rng(seed)
    params = []
    for n_in, n_out in itertools.pairwise(widths):
        bound = 1.0 / math.sqrt(n_in)
        params += [rng.uniform(-bound, bound, (n_out, n_in)), rng.uniform(-bound, bound, n_out)]
    X = rng.random((batch, widths[0]))
    y = rng.integers(0, widths[-1], size=batch)
    return (*params, X, y)


WRT["nn_mlp"] = (0, 1, 2, 3, 4, 5)
