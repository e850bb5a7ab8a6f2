"""``repr`` of a Tensor, laid out the way PyTorch prints tensors.

Users compare our output with tutorials written for PyTorch, so we follow its rules: four
decimals, integers shown as ``2.``, scientific notation when magnitudes spread over more than
three decades, summaries with ``...`` past 1000 elements, 80 columns. Data is float64 by
default here while PyTorch defaults to float32; we treat float64 as *our* default dtype and
print no ``dtype=`` for it, exactly as PyTorch prints its default dtype, while float32 shows
``dtype=torch.float32``. Other dtypes carry PyTorch's names (``dtype=torch.int32``) and are
left out where PyTorch leaves them out (int64, bool; complex128 is our default complex).

In the Tensor layer; imports nothing of s2sgrad.
"""

from __future__ import annotations

import math

import numpy as np

PRECISION = 4
THRESHOLD = 1000
EDGEITEMS = 3
LINEWIDTH = 80

DEFAULT_DTYPES = (np.dtype(np.float64), np.dtype(np.complex128), np.dtype(np.int64),
                  np.dtype(np.bool_))


def dtype_name(dtype: np.dtype) -> str:
    """PyTorch's name of a dtype, as tensors print it: ``torch.float32``."""
    return f"torch.{dtype.name}"


class _Formatter:
    """Chooses one format (int-like, fixed or scientific) and one width for all elements."""

    def __init__(self, values: np.ndarray):
        self.floating = values.dtype.kind == "f"
        self.int_mode = True
        self.sci_mode = False
        self.width = 1
        flat = values.reshape(-1)
        if not self.floating:
            self.width = max([len(str(v)) for v in flat.tolist()], default=1)
            return
        finite = flat[np.isfinite(flat) & (flat != 0)].astype(np.float64)
        if finite.size == 0:
            return
        big, small = float(np.abs(finite).max()), float(np.abs(finite).min())
        self.int_mode = bool(np.all(finite == np.ceil(finite)))
        self.sci_mode = big / small > 1000.0 or big > 1.0e8 or small < 1.0e-4
        if self.sci_mode:
            self.width = max(len(f"{v:.{PRECISION}e}") for v in finite.tolist())
        elif self.int_mode:
            self.width = max(len(f"{v:.0f}") + 1 for v in finite.tolist())
        else:
            self.width = max(len(f"{v:.{PRECISION}f}") for v in finite.tolist())

    def format(self, value) -> str:
        if not self.floating:
            text = str(value)
        elif self.sci_mode:
            text = f"{value:{self.width}.{PRECISION}e}"
        elif self.int_mode:
            text = f"{value:.0f}"
            if not (math.isinf(value) or math.isnan(value)):
                text += "."
        else:
            text = f"{value:.{PRECISION}f}"
        return " " * (self.width - len(text)) + text


def _summarized(a: np.ndarray) -> np.ndarray:
    """The elements a summary shows (for choosing the format)."""
    if a.ndim == 0:
        return a
    if a.shape[0] > 2 * EDGEITEMS:
        a = np.concatenate([a[:EDGEITEMS], a[-EDGEITEMS:]])
    if a.ndim == 1:
        return a
    return np.stack([_summarized(row) for row in a])


def _body(a: np.ndarray, indent: int, summarize: bool, fmt: _Formatter) -> str:
    if a.ndim == 0:
        return fmt.format(a.item())
    if a.ndim == 1:
        per_line = max(1, math.floor((LINEWIDTH - indent) / (fmt.width + 2)))
        if summarize and a.shape[0] > 2 * EDGEITEMS:
            items = ([fmt.format(v) for v in a[:EDGEITEMS].tolist()] + [" ..."]
                     + [fmt.format(v) for v in a[-EDGEITEMS:].tolist()])
        else:
            items = [fmt.format(v) for v in a.tolist()]
        lines = [", ".join(items[i:i + per_line]) for i in range(0, len(items), per_line)]
        return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"
    if summarize and a.shape[0] > 2 * EDGEITEMS:
        rows = ([_body(a[i], indent + 1, summarize, fmt) for i in range(EDGEITEMS)] + ["..."]
                + [_body(a[i], indent + 1, summarize, fmt)
                   for i in range(a.shape[0] - EDGEITEMS, a.shape[0])])
    else:
        rows = [_body(row, indent + 1, summarize, fmt) for row in a]
    return "[" + ("," + "\n" * (a.ndim - 1) + " " * (indent + 1)).join(rows) + "]"


def format_tensor(data: np.ndarray, suffixes: list[str], prefix: str = "tensor(") -> str:
    """``tensor([1., 2.], requires_grad=True)``: ``data`` laid out, then the suffixes."""
    data = np.asarray(data)
    indent = len(prefix)
    suffixes = list(suffixes)
    if data.size == 0:
        body = "[]"
        extra = [] if data.ndim == 1 else [f"size={data.shape}"]
        if data.dtype != np.float64:
            extra.append(f"dtype={dtype_name(data.dtype)}")
        suffixes = extra + suffixes
    else:
        summarize = data.size > THRESHOLD
        fmt = _Formatter(_summarized(data) if summarize else data)
        body = _body(data, indent, summarize, fmt)
        if data.dtype not in DEFAULT_DTYPES:
            suffixes.insert(0, f"dtype={dtype_name(data.dtype)}")
    out = [prefix + body]
    last_line = len(out[0]) - out[0].rfind("\n") + 1
    for suffix in suffixes:
        if last_line + len(suffix) + 2 > LINEWIDTH:
            out.append(",\n" + " " * indent + suffix)
            last_line = indent + len(suffix)
        else:
            out.append(", " + suffix)
            last_line += len(suffix) + 2
    return "".join(out) + ")"
