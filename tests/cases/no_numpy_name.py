"""A module that reads NumPy's functions by their own names, with no name for NumPy itself."""

from numpy import asarray
from numpy import mean as average


def spread(x):
    return average([x[0], x[1] * x[2]])  # <- refused


def spread_of_array(x):
    return average(asarray([x[0], x[1] * x[2]]))
