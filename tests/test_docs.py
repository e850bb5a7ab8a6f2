"""The documentation site builds, with every executable page run and no warning.

docs/ is a Sphinx site (MyST Markdown, executed by myst-nb): a page's examples run when it
builds, so an example that stops working, an output that raises, a broken cross-reference or
a page missing from the table of contents fails here. The checks after the build read the
rendered pages for what only running them produces: the generated code.
"""

from __future__ import annotations

import html
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """The built site's directory (one build for the module's tests)."""
    out = tmp_path_factory.mktemp("site")
    env = dict(os.environ)
    # the pages' kernel is this interpreter, whichever way the tests were started
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
    env["PYDEVD_DISABLE_FILE_VALIDATION"] = "1"
    run = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html",
         str(DOCS), str(out)], check=False, capture_output=True, text=True, env=env,
        timeout=900)
    messages = "\n".join(line for line in (run.stdout + run.stderr).splitlines()
                         if "WARNING" in line or "ERROR" in line or "rror" in line)
    assert run.returncode == 0, f"the docs do not build:\n{messages or run.stderr[-3000:]}"
    return out


def text_of(site: Path, page: str) -> str:
    """A rendered page as text: tags dropped, entities decoded."""
    return html.unescape(re.sub(r"<[^>]+>", "", (site / f"{page}.html").read_text()))


def test_getting_started_shows_the_generated_backward(site):
    text = text_of(site, "index")
    assert "def loss_backward(saved, out_bar):" in text
    assert "# adjoint of: h = np.tanh(x @ w + b)" in text


def test_how_it_works_shows_every_pass(site):
    text = text_of(site, "how_it_works")
    for title in ("parse", "fence", "normalize", "analyze", "aliasing", "reverse", "optimize",
                  "codegen", "Forward mode", "Second order"):
        assert title in text, title
    assert "b_bar = _t2_bar.sum(axis=0)" in text


def test_every_page_is_in_the_table_of_contents(site):
    pages = {str(p.relative_to(DOCS).with_suffix("")) for p in DOCS.rglob("*.md")}
    built = {str(p.relative_to(site).with_suffix("")) for p in site.rglob("*.html")}
    assert pages <= built, pages - built
    index = (site / "index.html").read_text()
    for page in pages - {"index"}:
        assert f'href="{page}.html' in index, page


def test_the_rule_table_is_in_the_site(site):
    assert "Supported primitives" in text_of(site, "rules")


def test_the_readme_links_to_the_docs():
    readme = (ROOT / "README.md").read_text()
    assert "docs/index.md" in readme
