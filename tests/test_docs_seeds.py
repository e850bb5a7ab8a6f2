"""The pages in docs/seeds/ run every snippet of the seed tutorials, each exactly once.

Every snippet of tests/autograd/test_seeds.py (``SNIPPETS``), transliterated by its ``transliterate``,
is the whole of one ``{code-cell}`` on one page; a snippet that runs a backward pass is followed
by a cell that prints a node's ``.source``. Every page is listed in the toctree of
docs/seeds/index.md and starts with the front matter that makes the site build execute it.
That the pages build and print what torch prints is the site build's concern.
"""

from __future__ import annotations

import pathlib
import re

import pytest

from tests.autograd.test_seeds import SNIPPETS, transliterate

DOCS = pathlib.Path(__file__).parent.parent / "docs"
SEEDS = DOCS / "seeds"

LINES = re.MULTILINE
BLOCK = re.MULTILINE | re.DOTALL
CODE_CELL = re.compile(r"^(`{3,})\{code-cell\}[^\n]*\n(.*?)^\1[ \t]*$", BLOCK)
TOCTREE = re.compile(r"^(`{3,})\{toctree\}[^\n]*\n(.*?)^\1[ \t]*$", BLOCK)
FORMAT = re.compile(r"^file_format:[ \t]*mystnb[ \t]*$", LINES)
KERNEL = re.compile(r"^kernelspec:[ \t]*\n(?:[ \t]+.*\n)*?[ \t]+name:[ \t]*python3[ \t]*$", LINES)


def code_cells(text: str) -> list[str]:
    """The code of each ``{code-cell}`` of a MyST page, without the cell's options."""
    cells = []
    for _, body in CODE_CELL.findall(text):
        lines = body.splitlines()
        if lines and lines[0].strip() == "---":  # a YAML block of options
            lines = lines[lines.index("---", 1) + 1:]
        while lines and re.match(r":\w[\w-]*:", lines[0]):  # :option: value lines
            lines.pop(0)
        cells.append("\n".join(lines).strip())
    return cells


def toctree(text: str) -> list[str]:
    """The entries of the ``{toctree}`` directives of a page."""
    return [line.strip() for _, body in TOCTREE.findall(text) for line in body.splitlines()
            if line.strip() and not line.strip().startswith(":")]


def is_executable(text: str) -> bool:
    """The page opens with front matter naming the mystnb format and the python3 kernel."""
    if not text.startswith("---\n") or "\n---\n" not in text[3:]:
        return False
    header = text[4:text.index("\n---\n", 3) + 1]
    return FORMAT.search(header) is not None and KERNEL.search(header) is not None


def pages() -> dict[str, str]:
    """Each tutorial page of docs/seeds/ (all but the index), by name."""
    return {path.stem: path.read_text() for path in sorted(SEEDS.glob("*.md"))
            if path.stem != "index"}


def test_there_is_a_page_per_seed_tutorial() -> None:
    tutorials = {key.split("_")[0] for key in SNIPPETS}
    assert len(pages()) == len(tutorials) == 4


@pytest.mark.parametrize("key", list(SNIPPETS))
def test_snippet_is_a_cell_of_exactly_one_page(key: str) -> None:
    snippet = transliterate(SNIPPETS[key]).strip()
    holders = [name for name, text in pages().items() if snippet in code_cells(text)]
    assert len(holders) == 1, f"{key} is a code cell of {holders or 'no page'}"


def test_each_tutorial_is_on_one_page_in_its_order() -> None:
    """``SNIPPETS`` lists each tutorial's snippets in its order, except 003's answer on second
    derivatives, which closes its page as it closes the tutorial."""
    order = list(SNIPPETS)
    order.append(order.pop(order.index("003_faq_second_order")))
    for tutorial in sorted({key.split("_")[0] for key in SNIPPETS}):
        keys = [key for key in order if key.startswith(f"{tutorial}_")]
        snippets = {transliterate(SNIPPETS[key]).strip(): key for key in keys}
        found = {name: [snippets[cell] for cell in code_cells(text) if cell in snippets]
                 for name, text in pages().items()}
        assert [keys] == [on_page for on_page in found.values() if on_page], found


@pytest.mark.parametrize("key", [k for k in SNIPPETS if ".backward(" in SNIPPETS[k]])
def test_a_backward_pass_is_followed_by_its_source(key: str) -> None:
    snippet = transliterate(SNIPPETS[key]).strip()
    for text in pages().values():
        cells = code_cells(text)
        if snippet in cells:
            following = cells[cells.index(snippet) + 1:cells.index(snippet) + 2]
            assert following and ".source" in following[0], f"{key}: no .source cell after it"
            return
    pytest.fail(f"{key} is on no page")


def test_every_page_is_in_the_seeds_toctree() -> None:
    entries = toctree((SEEDS / "index.md").read_text())
    assert sorted(entries) == sorted(pages())
    assert "seeds/index" in toctree((DOCS / "index.md").read_text())


@pytest.mark.parametrize("name", sorted(pages()))
def test_page_is_executed_by_the_build(name: str) -> None:
    assert is_executable(pages()[name])


def test_the_parsers_read_only_what_the_build_reads() -> None:
    page = ("---\nfile_format: mystnb\nkernelspec:\n  display_name: Python 3\n  name: python3\n"
            "---\n\n# Title\n\n```python\nnot_a_cell()\n```\n\n"
            "````{code-cell} python\n:tags: [hide-input]\nx = 1\n\n```\ninside\n```\n````\n\n"
            "```{toctree}\n:maxdepth: 1\n\nfirst\nsecond\n```\n")
    assert code_cells(page) == ["x = 1\n\n```\ninside\n```"]
    assert toctree(page) == ["first", "second"]
    assert is_executable(page)
    assert not is_executable(page.replace("mystnb", "myst"))
    assert not is_executable(page.replace("name: python3", "name: julia"))
    assert not is_executable("# Title\n\n" + page)
