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

Everything is float64. Labels and data are inputs; gradients are taken with respect to the
leading arguments only (``WRT`` below).
"""

from __future__ import annotations

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
WRT = {"scalar": (0, 1, 2, 3), "logistic": (0, 1), "mlp": (0, 1, 2, 3)}


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
