"""Sphinx configuration: the site is built from the Markdown pages in docs/.

Pages that start with a ``file_format: mystnb`` header are executed when the site builds, and
their outputs are what the reader sees: an example that stops working fails the build
(tests/test_docs.py builds the site with warnings as errors).
"""

import s2sgrad

project = "s2sgrad"
author = "The s2sgrad authors"
copyright = "the s2sgrad authors"
release = version = s2sgrad.__version__

extensions = ["myst_nb"]
myst_enable_extensions = ["colon_fence", "deflist"]
myst_heading_anchors = 3

# Every executable page runs on every build: nothing is cached, so nothing can go stale.
nb_execution_mode = "force"
nb_execution_raise_on_error = True
nb_execution_show_tb = True
nb_execution_timeout = 300
nb_merge_streams = True

html_theme = "furo"
html_title = f"s2sgrad {release}"
exclude_patterns = ["_build", "README.md"]


def _join_stream_pieces() -> None:
    """Join the pieces of one stream that the kernel sent apart, before myst-nb merges them.

    A kernel under load may send a printed line's text and its newline in separate
    messages; myst-nb's merge strips each piece's trailing whitespace before joining, which
    turns the split into a blank line in the page. Joined first, the text is what was printed.
    """
    from myst_nb.core import render

    merge = getattr(render, "coalesce_streams", None)
    if merge is None or getattr(merge, "joins_pieces", False):
        return

    def coalesce_streams(outputs):
        joined = []
        for output in outputs:
            last = joined[-1] if joined else None
            if (last is not None and output["output_type"] == "stream"
                    and last["output_type"] == "stream" and last["name"] == output["name"]):
                last["text"] += output["text"]
            else:
                joined.append(output)
        return merge(joined)

    coalesce_streams.joins_pieces = True
    render.coalesce_streams = coalesce_streams


_join_stream_pieces()
