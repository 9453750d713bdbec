"""Every code block of README.md and docs/**/*.rst runs as written and finishes.

* python blocks: a reader runs a page's blocks one after the other, so all python blocks of a page run in order in
  one fresh interpreter (one namespace), in a temporary folder;
* bash blocks (and the ``$`` lines of console blocks): each with ``bash -e``, in order, in one temporary folder
  per page, this environment's ``odtmip`` first on PATH. They run outside the repository: a command that needs
  its files is a setup block (below);
* not code: ``text`` blocks and README fences without a language (usage synopses);
* setup blocks, which create a virtual environment (``python3 -m venv``) and install the project at the root of a
  checkout: the suite cannot install or run itself, so ``.ci/run`` runs each of them verbatim on a clean clone,
  and a test here checks that it does. The benchmarks' setup (docs/benchmarks.rst: it installs the peer solvers
  and runs long benchmarks) runs in its own test, marked ``bench``, on a copy of the checkout.

Every run has a generous outer timeout, so that a snippet that hangs fails; nothing here asserts on time.
"""

import os
import re
import shutil
import signal
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
PAGES = [ROOT / "README.md"] + sorted(
    p for p in DOCS.rglob("*.rst") if not {"_build", "auto_examples"} & set(p.relative_to(DOCS).parts))
CI = ROOT / ".ci" / "run"
TIMEOUT = 600  # seconds for a page's python blocks, or for one bash block
CODE = {"python", "bash", "console"}
#: pages whose blocks run for more than a few seconds (MIP solves under time limits, comparisons, cross-checks)
SLOW = {"README.md", "docs/quickstart.rst", "docs/compare.rst", "docs/sensitivity.rst", "docs/solvers/contree.rst"}

FENCE = re.compile(r"^```(\w*)\n(.*?)^```$", re.MULTILINE | re.DOTALL)
DIRECTIVE = re.compile(r"^(\s*)\.\. code-block::\s*(\w+)\s*$")


@dataclass(frozen=True)
class Block:
    page: str  # relative to the repository
    line: int  # of the block's first line of code
    language: str
    text: str

    def __str__(self):
        return f"{self.page}:{self.line}"

    def shell(self) -> str:
        """The commands: the text of a bash block, the ``$`` lines of a console block without their prompt."""
        if self.language == "console":
            return "\n".join(line[2:] for line in self.text.splitlines() if line.startswith("$ "))
        return self.text

    def is_setup(self) -> bool:
        return self.language in ("bash", "console") and self.shell().startswith("python3 -m venv ")


def blocks(page: Path) -> list[Block]:
    """The code and text blocks of a Markdown (fenced) or reStructuredText (``code-block``) page, in order."""
    name = page.relative_to(ROOT).as_posix()
    text = page.read_text()
    if page.suffix == ".md":
        return [Block(name, text.count("\n", 0, m.start(2)) + 1, m[1], m[2].strip("\n")) for m in FENCE.finditer(text)]
    found, lines = [], text.splitlines()
    for i, line in enumerate(lines):
        match = DIRECTIVE.match(line)
        if not match:
            continue
        start = i + 1
        while start < len(lines) and (not lines[start].strip() or lines[start].strip().startswith(":")):
            start += 1  # the directive's options and the blank line after them
        end = start
        while end < len(lines) and (not lines[end].strip() or
                                    len(lines[end]) - len(lines[end].lstrip()) > len(match[1])):
            end += 1
        found.append(Block(name, start + 1, match[2], textwrap.dedent("\n".join(lines[start:end])).strip("\n")))
    return found


BLOCKS = [block for page in PAGES for block in blocks(page)]
PYTHON_PAGES = sorted({b.page for b in BLOCKS if b.language == "python"})
SHELL_PAGES = sorted({b.page for b in BLOCKS if b.language in ("bash", "console") and not b.is_setup()})
SETUP = [b for b in BLOCKS if b.is_setup()]


def pages(names):
    return [pytest.param(name, id=name, marks=[pytest.mark.slow] if name in SLOW else []) for name in names]


def run(command: list[str], cwd: Path, timeout: float = TIMEOUT, **env) -> subprocess.CompletedProcess:
    """``command`` in ``cwd`` with this environment's scripts (``odtmip``) first on PATH; after ``timeout`` seconds
    it and everything it started are stopped, and the test fails."""
    env = {**os.environ, "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ["PATH"]]), **env}
    with subprocess.Popen(command, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          start_new_session=True) as process:
        try:
            out, err = process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            out, err = process.communicate()
            pytest.fail(f"{command[-1][:200]!r} did not finish within {timeout:g} s\n{err[-3000:]}")
    return subprocess.CompletedProcess(command, process.returncode, out, err)


def test_every_block_is_code_or_text():
    """A block in another language (``sh``, ``shell``, ``pycon``, ...) would silently escape these tests."""
    assert PYTHON_PAGES and SHELL_PAGES and SETUP  # the parsers find blocks
    for block in BLOCKS:
        assert block.language in CODE | {"text"} or (block.language == "" and block.page == "README.md"), block
        assert block.text.strip(), f"{block}: empty block"


@pytest.mark.parametrize("page", pages(PYTHON_PAGES))
def test_python_blocks(page, tmp_path):
    """The page's python blocks, in order, in one fresh interpreter. Each block keeps its line number, so a
    traceback points into the page."""
    lines = [""] * (1 + max(b.line + b.text.count("\n") for b in BLOCKS if b.page == page))
    for block in (b for b in BLOCKS if b.page == page and b.language == "python"):
        lines[block.line - 1: block.line - 1 + block.text.count("\n") + 1] = block.text.splitlines()
    script = tmp_path / Path(page).name
    script.write_text("\n".join(lines))
    done = run([sys.executable, script.name], tmp_path)
    assert done.returncode == 0, f"{page}:\n{done.stderr[-5000:]}"


@pytest.mark.parametrize("page", pages(SHELL_PAGES))
def test_shell_blocks(page, tmp_path):
    """The page's bash and console blocks, each with ``bash -e``, in order, in one temporary folder."""
    for block in (b for b in BLOCKS if b.page == page and b.language in ("bash", "console") and not b.is_setup()):
        done = run(["bash", "-e", "-c", block.shell()], tmp_path)
        assert done.returncode == 0, f"{block} exited with {done.returncode}:\n{done.stderr[-5000:]}"


@pytest.mark.parametrize("block", [b for b in SETUP if '".[bench]"' not in b.text], ids=str)
def test_setup_blocks_run_in_ci(block):
    """A setup block installs the project from a checkout, which the suite cannot do to itself: .ci/run runs it,
    verbatim, on a clean clone."""
    assert block.shell() in CI.read_text(), f"{block}: .ci/run does not run\n{block.shell()}"


@pytest.mark.bench
def test_benchmarks_setup(tmp_path, data_dir):
    """docs/benchmarks.rst's setup block, at the root of a copy of the checkout (it creates ``.venv`` there and
    installs the ``bench`` extra, the peer solvers, from the package index) with the benchmark data folder in
    ODTMIP_DATA. It runs the benchmarks it shows: several minutes."""
    (block,) = [b for b in SETUP if '".[bench]"' in b.text]
    files = run(["git", "ls-files", "-z"], ROOT).stdout.split("\0")
    for name in filter(None, files):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, tmp_path / name)
    done = run(["bash", "-e", "-c", block.shell()], tmp_path, timeout=4 * 3600, ODTMIP_DATA=str(data_dir))
    assert done.returncode == 0, f"{block} exited with {done.returncode}:\n{done.stderr[-5000:]}"
