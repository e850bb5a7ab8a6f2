"""Programs that use the rules of rules/arrays.py as people write them: a smoothness penalty
with diff, a zero-padded filter in a loop, a triangular factor, an augmentation loop of
rotations and flips, block features with repeat and tile, top-k gathers, sorted
statistics, feature vectors stacked with a bias, and the calls the rules refuse. Each is
checked against finite differences in both modes, and to second order where the function is
smooth there.
"""

from __future__ import annotations

import numpy as np
import pytest

import s2sgrad
from s2sgrad.testing import check_grads, numeric_gradient

rng = np.random.default_rng(11)


# --- diff and pad: a smoothing spline's penalty, a filter over a zero-padded signal ----------


def spline_objective(values, data, weight):
    # fit the data, with a penalty on the second differences (curvature) and on the jumps
    # across the boundary, where the curve is continued by zeros
    curvature = np.diff(values, 2)
    jumps = np.diff(np.pad(values, 1), axis=0)
    return np.sum((values - data) ** 2) + weight * np.sum(curvature ** 2) + np.sum(jumps ** 4)


def test_smoothing_penalty_with_diff_and_pad():
    data = np.sin(np.linspace(0.0, 3.0, 9))
    check_grads(spline_objective, rng.standard_normal(9), data, 0.7, order=2,
                modes=("rev", "fwd"))


def padded_filter(signal, taps, edge):
    # a "same" convolution: pad by the filter's half width with a learned edge value
    padded = np.pad(signal, (1, 1), constant_values=edge)
    out = np.zeros(np.shape(signal))
    for k in range(3):
        out = out + taps[k] * padded[k:k + np.shape(signal)[0]]
    return np.sum(np.tanh(out) * np.linspace(-1.0, 1.0, np.shape(signal)[0]))


def reflected_filter(signal, taps):
    # a "same" convolution over a signal reflected (or wrapped, repeated) at its ends
    out = 0.0
    for padded in (np.pad(signal, (2, 3), mode="reflect"), np.pad(signal, 2, "symmetric"),
                   np.pad(signal, (0, 2), mode="edge"), np.pad(signal, 7, mode="wrap")):
        for k in range(3):
            out = out + np.sum((taps[k] * padded[k:k + np.shape(signal)[0]]) ** 2)
    return out


def test_filter_over_a_reflected_signal():
    check_grads(reflected_filter, rng.standard_normal(5), rng.standard_normal(3), order=2,
                modes=("rev", "fwd"))


def test_filter_over_a_padded_signal_in_a_loop():
    check_grads(padded_filter, rng.standard_normal(7), rng.standard_normal(3), 0.3, order=2,
                modes=("rev", "fwd"))


def padded_image_energy(image, border):
    # different values on each side of each axis, a per-axis array as np.pad takes it
    framed = np.pad(image, ((1, 2), (2, 0)), constant_values=border)
    return np.sum(np.cos(framed) * np.arange(np.size(framed)).reshape(np.shape(framed)))


def test_pad_with_a_value_per_side():
    check_grads(padded_image_energy, rng.standard_normal((2, 3)), rng.standard_normal((2, 2)),
                order=2, modes=("rev", "fwd"))


# --- tril and diagonal: a Gaussian log-likelihood with a triangular factor --------------------


def factor_from(params):
    # lower triangle of the parameters, with a positive diagonal
    lower = np.tril(params, -1)
    return lower + np.diag(np.exp(np.diagonal(params)))


def gaussian_log_likelihood(params, points):
    factor = factor_from(params)
    solved = np.linalg.inv(factor) @ points.T
    log_det = np.sum(np.log(factor.diagonal()))
    return -0.5 * np.sum(solved ** 2) - np.shape(points)[0] * log_det


def test_triangular_factor_through_a_helper():
    params = rng.standard_normal((3, 3)) * 0.3
    check_grads(gaussian_log_likelihood, params, rng.standard_normal((5, 3)), order=2,
                modes=("rev", "fwd"))


def upper_band_energy(stack):
    # the first superdiagonal of each matrix of a stack, and the strictly upper triangles
    band = np.diagonal(stack, 1, axis1=1, axis2=2)
    return np.sum(band ** 3) + np.sum(np.triu(stack, 1) * stack[::-1])


def test_band_of_a_stack_of_matrices():
    check_grads(upper_band_energy, rng.standard_normal((2, 3, 4)), order=2, modes=("rev", "fwd"))


# --- rot90, fliplr, flipud, rollaxis: a loss averaged over the symmetries of an image ---------


@s2sgrad.grad
def symmetric_match(image, template):
    total = 0.0
    for k in range(4):
        turned = np.rot90(image, k)
        total = total + np.sum(turned * template) ** 2
    mirrored = np.fliplr(image) + np.flipud(image)
    channels_first = np.rollaxis(np.stack([image, mirrored], axis=-1), 2)
    return total + np.sum(np.sin(channels_first[1]) * template)


def test_augmentation_loop_of_rotations_and_flips():
    check_grads(symmetric_match, rng.standard_normal((3, 3)), rng.standard_normal((3, 3)),
                order=2, modes=("rev", "fwd"))


# --- repeat and tile: block features -----------------------------------------------------------


def block_features(x, counts):
    # every feature paired with every other: x_i * x_j laid out as repeat times tile
    pairs = np.repeat(x, np.size(x)) * np.tile(x, np.size(x))
    upsampled = np.repeat(x.reshape(2, 2), 2, axis=1)
    weighted = np.repeat(x, counts)
    return np.sum(pairs * np.arange(16.0)) + np.sum(np.exp(upsampled)) + np.sum(weighted ** 3)


def test_block_features_with_repeat_and_tile():
    x = rng.standard_normal(4)
    check_grads(block_features, x, np.array([1, 0, 3, 2]), order=2, modes=("rev", "fwd"))
    # the same gradient through a tensor's backward()
    t = s2sgrad.tensor(x, requires_grad=True)
    s2sgrad.grad(block_features)(t, np.array([1, 0, 3, 2])).backward()
    np.testing.assert_allclose(t.grad, numeric_gradient(block_features,
                                                        [x, np.array([1, 0, 3, 2])], 0),
                               rtol=1e-6, atol=1e-8)


# --- take_along_axis and sort: top-k scores, trimmed statistics --------------------------------


def top_two_softmax(scores, values):
    # per row, the two best scores, their softmax, and the values they point to
    best = np.argsort(scores, axis=1)[:, -2:]
    picked = np.take_along_axis(scores, best, axis=1)
    weights = np.exp(picked) / np.sum(np.exp(picked), axis=1, keepdims=True)
    return np.sum(weights * np.take_along_axis(values, best, axis=1))


def test_top_k_gather_with_take_along_axis():
    check_grads(top_two_softmax, rng.standard_normal((3, 5)), rng.standard_normal((3, 5)),
                order=2, modes=("rev", "fwd"))


def trimmed_spread(samples):
    # the mean of each column without its extremes, and a quantile-like sorted weighting
    ordered = np.sort(samples, axis=0)
    trimmed = np.mean(ordered[1:-1], axis=0)
    ranks = np.sort(np.ravel(samples)) * np.linspace(0.0, 1.0, np.size(samples))
    return np.sum(trimmed ** 2) + np.sum(ranks)


def test_trimmed_statistics_with_sort():
    check_grads(trimmed_spread, rng.standard_normal((6, 2)), order=2, modes=("rev", "fwd"))


# --- append and the stacking functions: features with a bias, image channels -----------------


def logistic_with_bias(weights, inputs):
    features = np.hstack([inputs, np.ones((np.shape(inputs)[0], 1))])
    rows = np.vstack([features, np.append(inputs[0], 1.0)])
    logits = rows @ weights
    return np.sum(np.log1p(np.exp(-logits)))


def test_features_with_a_bias_column():
    check_grads(logistic_with_bias, rng.standard_normal(3), rng.standard_normal((4, 2)),
                order=2, modes=("rev", "fwd"))


def channel_mix(red, green, mix):
    image = np.dstack([red, green])
    columns = np.column_stack([np.ravel(red), np.ravel(green)])
    stretched = np.append(red, green * mix[0], axis=1)
    return np.sum(np.tanh(image @ mix)) + np.sum(columns ** 2 * mix) + np.sum(stretched ** 3)


def test_channels_with_dstack_column_stack_and_append():
    check_grads(channel_mix, rng.standard_normal((2, 3)), rng.standard_normal((2, 3)),
                np.array([0.7, -0.4]), order=2, modes=("rev", "fwd"))


# --- real, imag and conj of real arrays --------------------------------------------------------


def real_parts(x):
    return np.sum(np.real(x) ** 2 + np.conj(x) * np.imag(x) + np.conjugate(np.sin(x)))


def test_real_imag_and_conj_of_a_real_array():
    check_grads(real_parts, rng.standard_normal(4), order=2, modes=("rev", "fwd"))


# --- what the rules refuse ----------------------------------------------------------------------


def mean_padded(x):
    return np.sum(np.pad(x, 1, mode="mean") ** 2)


def diff_with_prepend(x):
    return np.sum(np.diff(x, prepend=0.0) ** 2)


def sort_flattened(x):
    return np.sum(np.sort(x, axis=None) * np.arange(6.0))


def tril_of_a_vector(x):
    return np.sum(np.tril(x) ** 2)


@pytest.mark.parametrize("fn, shape, message", [
    (mean_padded, (4,), r"mode='mean'\) is not differentiated: the modes with a rule are"),
    (diff_with_prepend, (4,), r"prepend=\.\.\.\) is not differentiated: concatenate"),
    (sort_flattened, (2, 3), r"axis=None\) .* flattens it.*np\.sort\(np\.ravel\(a\)\)"),
    (tril_of_a_vector, (3,), r"np\.tril of a 1-d array builds a matrix"),
], ids=["pad-mean", "diff-prepend", "sort-axis-None", "tril-1d"])
def test_unsupported_variants_are_refused(fn, shape, message):
    with pytest.raises(s2sgrad.TransformError, match=message):
        s2sgrad.gradient(fn)(rng.standard_normal(shape))
