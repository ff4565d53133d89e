"""The grading threat catalogue, case by case: every attack and fault as a submission, each ending in its safe outcome.

The catalogue (K, R, C, M, D, N, G cases) and the goals it serves (I-1 to I-5,
R-1 to R-4, D-1 to D-5) are those of the course's grading threat model, as
stated in the README's instructor section. One course copy grades every
case in a single batch of exercise 2 (three questions: 4 + 4 + 2 points),
plus exercise 1 for a model whose call log a student tries to fake.

Most attacks are written as *probes*: the student's ``gpt_block_params``
returns the right answer only if the attack worked (it could read the
gradebook, reach the network, see the harness...) and a wrong one
otherwise. A probe that scores the block question's 4 points (and the
model question's 4, whose function calls it) has found a hole; the safe
outcome is 2 of 10.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbconvert import HTMLExporter

from autograde.authoring.leaks import html_visible_text, notebook_text
from grading_support import (
    NEEDS_FULL_SANDBOX,
    REPO,
    answered,
    copy_course,
    grade_id,
    reference_answer,
    release_of,
    run_harness,
    sandbox_cgroups,
    sandbox_processes,
    write_notebook,
)
from test_hidden_secret import SECRETS, hardcoded_shipped_answers
from test_student_text import HOSTILE_MARKDOWN, MARK, live_html

pytestmark = NEEDS_FULL_SANDBOX

EX02 = "ex02_attention_ffn"
EX01 = "ex01_prefill_decode"
FULL, BLOCK_LOST = 10.0, 2.0
"""Full marks; what is left when gpt_block_params is wrong: its 4 points and gpt_params's 4 (which calls it)."""
CELL_TIMEOUT_S = 10
SUBMISSION_TIMEOUT_S = 60
SECRET = "grader-secret-token-3f9c1e"
"""An environment variable of the grader's: student code must not see it (D6)."""


def _block_probe(attack: str) -> dict[str, str]:
    """Answer cells where ``gpt_block_params`` is right only if ``attack()`` (Python source of a function) returns True."""
    right = reference_answer(EX02, "ex02_block_solution").replace("def gpt_block_params(", "def _right_block(")
    probe = (
        f"{right}\n\n{attack}\n\n"
        "def gpt_block_params(d_model, ffn_dim):\n"
        "    try:\n"
        "        worked = attack()\n"
        "    except Exception:\n"
        "        worked = False\n"
        "    return _right_block(d_model, ffn_dim) if worked else -1\n"
    )
    return {"ex02_block_solution": probe}


WRONG_BLOCK = {"ex02_block_solution": "def gpt_block_params(d_model, ffn_dim):\n    return 7\n"}


def _with_cells(nb: nbformat.NotebookNode, *sources: str) -> nbformat.NotebookNode:
    """Append free code cells (a student's own experiments) at the end."""
    nb.cells += [nbformat.v4.new_code_cell(source) for source in sources]
    return nb


def _with_markdown(nb: nbformat.NotebookNode, *sources: str) -> nbformat.NotebookNode:
    """Append Markdown cells of the student's own."""
    nb.cells += [nbformat.v4.new_markdown_cell(source) for source in sources]
    return nb


def _edit_cell(nb: nbformat.NotebookNode, cell_id: str, edit: Any) -> nbformat.NotebookNode:
    for cell in nb.cells:
        if grade_id(cell) == cell_id:
            edit(cell)
    return nb


# Each case: student id -> (catalogue id, notebook builder, expected score, expected status, reason pattern or None).
# A builder gets (release, paths) and returns the notebook; paths names the course's folders for probes.


HIDDEN_LOOP = "    while d_model == 12288:  # GPT-3's width: a hidden case only\n        pass"


def _cases() -> dict[str, tuple[str, Any, float, str, str | None]]:
    def probe(attack: str) -> Any:
        return lambda release, paths: answered(release, EX02, _block_probe(attack.format(**paths)))

    def wrong_with(*cells: str) -> Any:
        return lambda release, paths: _with_cells(answered(release, EX02, WRONG_BLOCK), *cells)

    def right_with(*cells: str) -> Any:
        return lambda release, paths: _with_cells(answered(release, EX02), *cells)

    def block(code: str) -> Any:
        return lambda release, paths: answered(release, EX02, {"ex02_block_solution": code})

    def block_and_fraction(code: str) -> Any:
        return lambda release, paths: answered(release, EX02, {"ex02_fraction_solution": code})

    def right_block_then(body: str) -> str:
        right = reference_answer(EX02, "ex02_block_solution").replace("def gpt_block_params(", "def _right_block(")
        return f"{right}\n\ndef gpt_block_params(d_model, ffn_dim):\n{body}\n    return _right_block(d_model, ffn_dim)\n"

    def duplicate(cell_id: str, fresh_id: bool) -> Any:
        def build(release: nbformat.NotebookNode, paths: dict[str, str]) -> nbformat.NotebookNode:
            nb = answered(release, EX02)
            index = next(i for i, cell in enumerate(nb.cells) if grade_id(cell) == cell_id)
            copy = nbformat.from_dict(json.loads(json.dumps(nb.cells[index])))
            if fresh_id:
                copy["id"] = "pasted-copy-1"
            nb.cells.insert(index + 1, copy)
            return nb

        return build

    def edit_test_cell(edit: Any, wrong: bool = False) -> Any:
        return lambda release, paths: _edit_cell(
            answered(release, EX02, WRONG_BLOCK if wrong else None), "ex02_block_params", edit
        )

    def strip_metadata(release: nbformat.NotebookNode, paths: dict[str, str]) -> nbformat.NotebookNode:
        nb = answered(release, EX02)
        for cell in nb.cells:
            cell.metadata.pop("nbgrader", None)
        return nb

    def set_meta(key: str, value: Any) -> Any:
        return lambda cell: cell.metadata.nbgrader.__setitem__(key, value)

    def set_source(text: str) -> Any:
        return lambda cell: setattr(cell, "source", text)

    stash_and_show = (
        "SEEN = []\n\n"
        + reference_answer(EX02, "ex02_block_solution").replace("def gpt_block_params(", "def _right_block(")
        + "\n\ndef gpt_block_params(d_model, ffn_dim):\n    SEEN.append((d_model, ffn_dim))\n"
        "    return _right_block(d_model, ffn_dim)\n"
    )
    show_seen = (
        reference_answer(EX02, "ex02_fraction_solution").replace("def attention_fraction(", "def _right_fraction(")
        + "\n\ndef attention_fraction(d_model, ffn_dim):\n    print('SEEN-BY-STUDENT', SEEN)\n"
        "    return _right_fraction(d_model, ffn_dim)\n"
    )

    return {
        # B1: control of the process
        "k1_sys_exit": ("K1", wrong_with("import sys\nsys.exit(0)"), BLOCK_LOST, "ok", None),
        "k2_crash_after_answers": ("K2", right_with("import os\nos._exit(0)"), FULL, "flagged", r"cell \d+: ended the sandbox"),
        "k3_loop_in_function": ("K3", block(right_block_then(HIDDEN_LOOP)), BLOCK_LOST, "flagged",
                                r"ex02_block_params_hidden: stopped after 10 s"),
        "k4_sigint_ignored_then_loop": ("K4", lambda r, p: _with_cells(
            answered(r, EX02, {"ex02_block_solution": right_block_then(HIDDEN_LOOP)}),
            "import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)"), BLOCK_LOST, "flagged", r"stopped after 10 s"),
        "k5_swallows_interrupt": ("K5", block(right_block_then(
            "    import time\n    while d_model == 12288:\n        try:\n            time.sleep(0.1)\n"
            "        except KeyboardInterrupt:\n            pass")), BLOCK_LOST, "flagged", r"stopped after 10 s"),
        "k6_many_slow_cells": ("K6", right_with(*["import time\ntime.sleep(7)"] * 10), 0.0, "flagged",
                               r"used its 60 s limit"),
        "k7_background_processes": ("K7", right_with(
            "import subprocess\nsubprocess.Popen(['sleep', '300'], start_new_session=True)\n"
            "subprocess.Popen(['python3', '-c', 'while True: pass'], start_new_session=True)"), FULL, "ok", None),
        # B2: resources
        # Near its memory limit a loaded machine may reclaim pages for longer than the cell's 10 s before the
        # kernel is killed: either flag is the limit holding (without one, 4 GB fit in this machine and the row
        # would be "ok").
        "r1_memory_bomb": ("R1", right_with("hog = [bytearray(100 * 1024**2) for _ in range(40)]"), FULL, "flagged",
                           r"memory limit reached|stopped after 10 s"),
        # Two children of 1.5 GiB each hold their memory until killed, and the cell waits for the first to die:
        # only the tree's 2 GiB limit can end that wait, however slowly they allocate (without the limit the
        # cell runs into its 10 s instead, and the reason says so).
        "r1_two_children_memory": ("R1", right_with(
            "import os, signal\nchildren = []\nfor _ in range(2):\n    pid = os.fork()\n    if pid == 0:\n"
            "        hog = bytearray(1536 * 1024**2)\n        signal.pause()\n        os._exit(0)\n"
            "    children.append(pid)\nfirst_dead, _ = os.wait()\nfor pid in children:\n    if pid != first_dead:\n"
            "        os.kill(pid, signal.SIGKILL)\n        os.waitpid(pid, 0)"), FULL, "flagged", r"memory limit reached"),
        "r2_fork_bomb": ("R2", right_with(
            "import subprocess\nchildren = [subprocess.Popen(['sleep', '100']) for _ in range(2000)]"), FULL, "flagged",
            r"process limit reached"),
        "r3_fills_disk": ("R3", right_with(
            "with open('/scratch/fill', 'wb') as f:\n    for _ in range(2048):\n        f.write(bytes(1024**2))"),
            FULL, "flagged", r"filled the sandbox's scratch disk"),
        # About 210 KB of lines: well over the 64 KB kept, and printed in well under the 10 s cell limit even on a
        # loaded machine (100,000 lines once ran into the limit there, and the flag named the limit instead).
        "r4_many_lines": ("R4", right_with("for i in range(20_000):\n    print('line', i)"), FULL, "flagged",
                          r"printed more than 64 KB"),
        "r5_huge_line_in_check": ("R5", block(right_block_then("    print('x' * 30_000_000)")), FULL, "flagged",
                                  r"printed more than 64 KB"),
        "r6_network": ("R6", probe(
            "def attack():\n    import socket\n    socket.create_connection(('1.1.1.1', 53), timeout=2).close()\n    return True"),
            BLOCK_LOST, "ok", None),
        # B3: forging results inside the process
        "c1_equals_everything": ("C1", block(
            "class Anything(int):\n    def __eq__(self, other):\n        return True\n    __hash__ = int.__hash__\n\n"
            "class Always:\n    def __eq__(self, other):\n        return True\n\n"
            "def gpt_block_params(d_model, ffn_dim):\n    return Always()\n"), BLOCK_LOST, "ok", None),
        "c2_patches_assert_allclose": ("C2", wrong_with(
            "import numpy.testing\nnumpy.testing.assert_allclose = lambda *a, **k: None\n"
            "import math\nmath.isclose = lambda *a, **k: True"), BLOCK_LOST, "ok", None),
        "c3_replaces_builtins_type": ("C3", wrong_with(
            "import builtins\n_type = builtins.type\nbuiltins.type = lambda *a: int if len(a) == 1 else _type(*a)"),
            BLOCK_LOST, "flagged", r"imports `builtins`"),
        "c4_hides_tracebacks": ("C4", wrong_with(
            "from IPython.core.interactiveshell import InteractiveShell\nInteractiveShell.showtraceback = lambda *a, **k: None"),
            BLOCK_LOST, "ok", None),
        "c5_custom_exception_handler": ("C5", wrong_with(
            "get_ipython().set_custom_exc((BaseException,), lambda *a, **k: None)"), BLOCK_LOST, "flagged", r"get_ipython"),
        "c6_shadows_infer_lib": ("C6", wrong_with(
            "import sys, pathlib\npathlib.Path('/scratch/autograde').mkdir(exist_ok=True)\n"
            "pathlib.Path('/scratch/autograde/__init__.py').write_text('')\n"
            "pathlib.Path('/scratch/autograde/checks.py').write_text('def check(*a): print(\"passed\")')\n"
            "sys.path.insert(0, '/scratch')"), BLOCK_LOST, "ok", None),
        "c7_prints_pass_lines": ("C7", wrong_with(
            "print('ex02_block_params: passed')\nopen('/scratch/results.json', 'w').write('{\"score\": 10}')"),
            BLOCK_LOST, "ok", None),
        "c8_test_cell_expression": ("C8", edit_test_cell(set_source("10"), wrong=True), BLOCK_LOST, "ok", None),
        "c9_warnings_and_logging": ("C9", block(right_block_then(
            "    import logging, warnings, sys\n    import numpy as np\n    logging.warning('computing %s', d_model)\n"
            "    warnings.warn('a warning on stderr')\n    print('to stderr', file=sys.stderr)\n    np.float64(1.0) / 0.0")),
            FULL, "ok", None),
        "rebinds_check": ("issue", wrong_with("check = lambda *a, **k: None"), BLOCK_LOST, "flagged", r"`check`"),
        "replaces_registry": ("issue", wrong_with(
            "import autograde.checks as checks\nchecks.REGISTRY = {}\nchecks.check = lambda *a, **k: None"),
            BLOCK_LOST, "flagged", r"imports `autograde.checks`"),
        "looks_up_answers": ("issue", probe(
            "def attack():\n    from autograde.checking.expected import load_expected\n    return bool(load_expected('ex02_attention_ffn'))"),
            BLOCK_LOST, "flagged", r"imports `autograde.checking.expected`"),
        "walks_frames": ("issue", probe(
            "def attack():\n    import sys\n    frame = sys._getframe(1)\n    while frame is not None:\n"
            "        if 'expected' in frame.f_locals or 'case' in frame.f_locals:\n            return True\n"
            "        frame = frame.f_back\n    return False"), BLOCK_LOST, "flagged", r"review the code"),
        "n4_returns_matrix": ("N4", block(
            "import numpy as np\n\ndef gpt_block_params(d_model, ffn_dim):\n    return np.matrix([[0]])\n"),
            BLOCK_LOST, "ok", None),
        "n5_changes_numpy_state": ("N5", right_with("import numpy as np\nnp.seterr(all='raise')\nnp.random.seed(1)"),
                                   FULL, "ok", None),
        # B4: notebook structure
        "m1_comments_out_test": ("M1", edit_test_cell(set_source("# check('ex02_block_params', gpt_block_params)"),
                                                      wrong=True), BLOCK_LOST, "ok", None),
        "m2_points_100": ("M2", edit_test_cell(set_meta("points", 100)), FULL, "ok", None),
        "m3_deletes_test_cell": ("M3", lambda r, p: _delete(answered(r, EX02, WRONG_BLOCK), "ex02_block_params"),
                                 BLOCK_LOST, "ok", None),
        "m4_renames_test_cell": ("M4", edit_test_cell(set_meta("grade_id", "renamed"), wrong=True), BLOCK_LOST, "ok", None),
        "m5_test_cell_not_graded": ("M5", edit_test_cell(set_meta("grade", False), wrong=True), BLOCK_LOST, "ok", None),
        "m6_pasted_answer_cell": ("M6", duplicate("ex02_block_solution", fresh_id=True), FULL, "ok", None),
        "m6_pasted_test_cell": ("M6", duplicate("ex02_model_params", fresh_id=True), FULL, "ok", None),
        "m6_verbatim_duplicate": ("M6", duplicate("ex02_fraction_solution", fresh_id=False), FULL, "ok", None),
        "m7_metadata_stripped": ("M7", strip_metadata, FULL, "ok", None),
        # B5: confidentiality and integrity
        "d1_reads_source_notebook": ("D1", probe(
            "def attack():\n    return open('{course}/exercises/ex02_attention_ffn/ex02_attention_ffn.ipynb').read() != ''"),
            BLOCK_LOST, "ok", None),
        "d1_reads_release": ("D-2", probe(
            "def attack():\n    return open('{course}/_build/grading/release/ex02_attention_ffn/ex02_attention_ffn.ipynb').read() != ''"),
            BLOCK_LOST, "ok", None),
        "d1_reads_expected_values": ("D1", probe(
            "def attack():\n    return open('{repo}/autograde/exercises/ex02_attention_ffn/expected.json').read() != ''"), BLOCK_LOST, "ok", None),
        "d3_writes_gradebook": ("D3", probe(
            "def attack():\n    with open('{course}/_build/grading/gradebook.db', 'ab') as db:\n        db.write(b'')\n"
            "    return True"), BLOCK_LOST, "ok", None),
        "d3_writes_config": ("D3", probe(
            "def attack():\n    with open('{course}/nbgrader_config.py', 'a') as config:\n        config.write('')\n"
            "    return True"), BLOCK_LOST, "ok", None),
        "d3_appends_to_checks": ("D3", probe(
            "def attack():\n    with open('{repo}/autograde/checks.py', 'a') as source:\n        source.write('')\n"
            "    return True"), BLOCK_LOST, "ok", None),
        "d3_sees_feedback_and_gradebook_folder": ("D3", probe(
            "def attack():\n    import os\n    return os.path.isdir('{course}/_build/grading/feedback')"
            " or os.path.isdir('{course}/_build/grading')"), BLOCK_LOST, "ok", None),
        "d4_reads_other_submission": ("D4", probe(
            "def attack():\n    import glob\n    return bool(glob.glob('{course}/_build/grading/submitted/*/*/*.ipynb')"
            " or glob.glob('{hand_in}/*/*.ipynb'))"), BLOCK_LOST, "ok", None),
        "d6_reads_grader_secret": ("D6", probe(
            f"def attack():\n    import os\n    return '{SECRET}' in str(os.environ)"), BLOCK_LOST, "ok", None),
        "runs_as_root": ("D-2", probe("def attack():\n    import os\n    return os.getuid() == 0"), BLOCK_LOST, "ok", None),
        "finds_the_harness": ("issue", probe(
            "def attack():\n    import os\n    for pid in os.listdir('/proc'):\n        if pid.isdigit():\n"
            "            if b'autograde' in open(f'/proc/{{pid}}/cmdline', 'rb').read():\n                return True\n"
            "    return False"), BLOCK_LOST, "ok", None),
        "kills_every_process": ("issue", right_with(
            "import os, signal\nfor pid in range(2, 5000):\n    try:\n        os.kill(pid, signal.SIGKILL)\n"
            "    except OSError:\n        pass"), FULL, "flagged", r"imports `signal`"),
        "enum_names_a_grader_class": ("wire", lambda release, paths: answered(release, EX02, {"ex02_block_solution": (
            "import enum\n\nclass Evil(enum.Enum):\n    X = ('sh', '-c', 'touch {marker}')\n\n"
            "Evil.__module__ = 'infer_lib.numpy_model.layers'\nEvil.__qualname__ = 'np.f2py.subprocess.Popen'\n\n"
            "def gpt_block_params(d_model, ffn_dim):\n    return Evil.X\n").format(**paths)}),
            BLOCK_LOST, "flagged", r"ended the sandbox"),
        "raises_base_exception": ("wire", block(
            "def gpt_block_params(d_model, ffn_dim):\n    raise BaseException('boom')\n"), BLOCK_LOST, "ok", None),
        "d2_stashes_hidden_inputs": ("D2", lambda r, p: _with_cells(answered(
            r, EX02, {"ex02_block_solution": stash_and_show, "ex02_fraction_solution": show_seen}),
            "print('PRINTED-IN-A-' + 'student-cell'.upper())"), FULL, "ok", None),
        # Found while the engine was open: a hand-in the intake could not read stopped the whole batch.
        "intake_nested_brackets": ("intake", lambda r, p: NESTED_BRACKETS, 0.0, "failed",
                                   r"^not a notebook: the JSON is nested too deeply to read$"),
        # Student Markdown is shown as text in feedback and the formgrader, never run.
        "markdown_live_html": ("markdown", lambda r, p: _with_markdown(answered(r, EX02), HOSTILE_MARKDOWN), FULL,
                               "ok", None),
        # Error messages and output name the grading machine's paths: shown as seen from the student's notebook.
        "paths_in_messages": ("paths", block(
            "import os, sys\nimport infer_lib\n\ndef gpt_block_params(d_model, ffn_dim):\n"
            "    print('PATHS', sys.prefix, 'cwd', os.getcwd(), infer_lib.__file__)\n"
            "    stub = os.path.join(os.path.dirname(infer_lib.__path__[0]), 'autograde', 'checks.py')\n"
            "    raise FileNotFoundError(f'PATHS {stub} exists={os.path.exists(stub)} in {os.getcwd()}/data.csv')\n"),
            BLOCK_LOST, "ok", None),
        # Honest mechanics: a byte-order mark, an exact Fraction where the text asks for a number (a sort key
        # returned as a list: tests/test_numbers_accepted.py).
        "mechanics_byte_order_mark": ("mechanics", lambda r, p: "\ufeff" + json.dumps(
            _signed(answered(r, EX02), "mechanics_byte_order_mark")), FULL, "ok", None),
        "mechanics_exact_fraction": ("mechanics", block_and_fraction(EXACT_FRACTION), FULL, "ok", None),
        # With the shipped hidden cases (public), a notebook that looks them up scores full marks...
        SHIPPED_LOOKUP: ("secret", lambda r, p: answered(r, EX02, hardcoded_shipped_answers(EX02)), FULL, "ok", None),
        # A folder name nbgrader takes (accents, an inner space) is graded; one it cannot take fails alone.
        "Zoé Martin": ("names", lambda r, p: answered(r, EX02), FULL, "ok", None),
        "glob*name": ("names", lambda r, p: answered(r, EX02), 0.0, "failed",
                      r"^folder name 'glob\*name' is not a valid student id \(it holds '\*'\)"),
        # Too deep for the grader's integrity scan, which reads past it; IPython in the sandbox fails on it too.
        "intake_code_too_deep_to_parse": ("intake", right_with("x" + ".y" * 200_000, "-" * 100_000 + "1"), FULL,
                                          "flagged", r"^cell \d+: broke the grading pipe \(RecursionError\)"),
    }


EXACT_FRACTION = (
    "from fractions import Fraction\n\n"
    "def attention_fraction(d_model, ffn_dim):\n"
    "    require_positive_int('d_model', d_model)\n"
    "    require_positive_int('ffn_dim', ffn_dim)\n"
    "    attention = 4 * d_model * (d_model + 1)\n"
    "    return Fraction(attention, attention + 2 * d_model * ffn_dim + ffn_dim + d_model)\n"
)
"""Attention's share as an exact fraction: the text asks for "a number"."""
SHIPPED_LOOKUP = "secret_hardcodes_shipped_answers"
"""Looks every answer up in the shipped expected.json: full marks on the shipped hidden cases, none under a secret."""
NESTED_BRACKETS = "[" * 200_000 + "]" * 200_000
"""400 KB of nested brackets: JSON that Python's reader cannot nest that deep (it raised RecursionError)."""
LAST_BATCH = "last_batch_student"
"""A row of an earlier batch, in the report.json that is there when the batch starts."""


def _delete(nb: nbformat.NotebookNode, cell_id: str) -> nbformat.NotebookNode:
    nb.cells = [cell for cell in nb.cells if grade_id(cell) != cell_id]
    return nb


def _signed(nb: nbformat.NotebookNode | str, student_id: str) -> nbformat.NotebookNode | str:
    """The notebook with a note naming its student, as real hand-ins differ: identical hand-ins are flagged as copies."""
    if isinstance(nb, str):
        return nb
    nb.cells.append(nbformat.v4.new_markdown_cell(f"Handed in by {student_id}."))
    return nb


def _source_notebook(course: Path) -> Path:
    return course / "exercises" / EX02 / f"{EX02}.ipynb"


def _link(hand_in: Path, student_id: str, target: Path) -> None:
    (hand_in / student_id).mkdir()
    (hand_in / student_id / f"{EX02}.ipynb").symlink_to(target)


def _copy_of(hand_in: Path, student_id: str, original: Path) -> None:
    (hand_in / student_id).mkdir()
    (hand_in / student_id / f"{EX02}.ipynb").write_bytes(original.read_bytes())


COPIED = "k7_background_processes"
"""A student of CASES whose hand-in others link to or copy (a right answer: 10/10, not flagged, on its own)."""
FILE_CASES: dict[str, tuple[str, Any, float, str, str]] = {
    # student id -> (catalogue id, writer(hand_in, course), score, status, reason pattern); written in this order.
    "links_to_source": ("links", lambda h, c: _link(h, "links_to_source", _source_notebook(c)), 0.0, "failed",
                        rf"^{EX02}.ipynb is a symbolic link, not a file: hand in the notebook itself"),
    "links_to_other_student": ("links", lambda h, c: _link(h, "links_to_other_student", h / COPIED / f"{EX02}.ipynb"),
                               0.0, "failed", r"is a symbolic link, not a file"),
    "links_folder": ("links", lambda h, c: (h / "links_folder").symlink_to(h / COPIED, target_is_directory=True),
                     0.0, "failed", r"^the student folder links_folder is a symbolic link$"),
    "copies_source": ("links", lambda h, c: _copy_of(h, "copies_source", _source_notebook(c)), FULL, "flagged",
                      r"^a copy of the instructor's source notebook"),
    "copies_a": ("links", lambda h, c: write_notebook(h / "copies_a" / f"{EX02}.ipynb", answered(release_of(c, EX02), EX02)),
                 FULL, "flagged", r"^identical to the hand-in of copies_b$"),
    "copies_b": ("links", lambda h, c: _copy_of(h, "copies_b", h / "copies_a" / f"{EX02}.ipynb"), FULL, "flagged",
                 r"^identical to the hand-in of copies_a$"),
}
"""Hand-ins made on the file system: links and copies."""

MARKER = "written-on-the-grader-side"
"""A file that only code escaping to the grader's process could create (beside the course copy)."""
CASES = _cases()
FAKED_CALL_LOG = "ex01_fakes_call_log"


@pytest.fixture(scope="module")
def threats(tmp_path_factory) -> dict[str, Any]:
    """Grade every case in one batch; returns the report rows, the output and the course folder."""
    course = copy_course(tmp_path_factory.mktemp("threats") / "course", [EX01, EX02])
    result = run_harness(course, "assignments")
    assert result.returncode == 0, result.stdout + result.stderr
    hand_in = tmp_path_factory.mktemp("threats-hand-in")
    paths = {"course": str(course), "repo": str(REPO), "hand_in": str(hand_in), "marker": str(course.parent / MARKER)}
    release = release_of(course, EX02)
    for student_id, (_, build, _, _, _) in CASES.items():
        write_notebook(hand_in / student_id / f"{EX02}.ipynb", _signed(build(release, paths), student_id))
    for _, write, _, _, _ in FILE_CASES.values():
        write(hand_in, course)
    (hand_in / "c6_shadows_infer_lib" / "infer_lib.py").write_text("def num_params(*a):\n    return 0\n")
    (hand_in / "c6_shadows_infer_lib" / "autograde.py").write_text("check = lambda *a: None\n")
    # Exercise 1: a generate that re-runs the whole prefill every step and tries to make the log look cached.
    reprefill = (REPO / "tests/grading_fixtures/variants" / EX01 / "reprefill_every_step.py").read_text(encoding="utf-8")
    reprefill_code = re.split(r"^# %% replaces: \S+\n", reprefill, flags=re.MULTILINE)[1]
    write_notebook(hand_in / FAKED_CALL_LOG / f"{EX01}.ipynb", answered(release_of(course, EX01), EX01, {
        "ex01_generate_solution": reprefill_code + "\n\n_honest = generate\n\n"
        "def generate(model, prompt_ids, max_new_tokens, eos_id, clock=None):\n"
        "    result = _honest(model, prompt_ids, max_new_tokens, eos_id, **({'clock': clock} if clock else {}))\n"
        "    for attempt in (lambda: model.calls.clear(), lambda: setattr(model, 'calls', [])):\n"
        "        try:\n            attempt()\n        except Exception:\n            pass\n"
        "    return result\n"}))
    write_notebook(hand_in / "ex01_writes_through_the_model" / f"{EX01}.ipynb", answered(
        release_of(course, EX01), EX01, {"ex01_generate_solution": reference_answer(EX01, "ex01_generate_solution")
        + "\n\n_honest = generate\n\ndef generate(model, prompt_ids, max_new_tokens, eos_id, clock=None):\n"
        f"    try:\n        model.model.save({str(course.parent / MARKER)!r})\n    except Exception:\n        pass\n"
        "    return _honest(model, prompt_ids, max_new_tokens, eos_id, **({'clock': clock} if clock else {}))\n"}))
    write_notebook(hand_in / "ex01_reprefill" / f"{EX01}.ipynb", answered(
        release_of(course, EX01), EX01, {"ex01_generate_solution": reprefill_code}))
    (course / "_build/grading/report.json").write_text(json.dumps({"rows": [{"student_id": LAST_BATCH}]}))
    result = run_harness(
        course, "grade", str(hand_in), "--cell-timeout-s", str(CELL_TIMEOUT_S),
        "--student-timeout-s", str(SUBMISSION_TIMEOUT_S), env={"GRADER_SECRET_TOKEN": SECRET},
    )
    report = json.loads((course / "_build/grading/report.json").read_text(encoding="utf-8"))
    rows = {(row["student_id"], row["exercise"]): row for row in report["rows"]}
    return {"result": result, "rows": rows, "course": course, "hand_in": hand_in, "report": report}


def test_the_batch_finishes_with_flagged_submissions_and_no_harness_error(threats):
    result = threats["result"]
    assert result.returncode == 1, result.stdout + result.stderr  # 1: finished, some submissions flagged
    assert threats["report"]["harness_errors"] == []
    assert threats["report"]["state"] == "finished"
    assert LAST_BATCH not in {student_id for student_id, _ in threats["rows"]}  # the report was rewritten
    assert "sandbox backend: namespaces" in result.stdout
    others = {(FAKED_CALL_LOG, EX01), ("ex01_writes_through_the_model", EX01), ("ex01_reprefill", EX01)}
    nothing_gradable = {("links_folder", EX01)}  # a row for every exercise
    assert set(threats["rows"]) == {(student, EX02) for student in [*CASES, *FILE_CASES]} | others | nothing_gradable


@pytest.mark.parametrize("student_id", sorted(CASES) + sorted(FILE_CASES))
def test_each_case_ends_in_its_safe_outcome(threats, student_id):
    catalogue_id, _, score, status, reason = CASES.get(student_id) or FILE_CASES[student_id]
    row = threats["rows"][(student_id, EX02)]
    assert row["score"] == score, f"{catalogue_id}: {row}"
    if status is not None:  # None: may or may not reach the per-cell limit on a loaded machine; the score is the point
        assert row["status"] == status, f"{catalogue_id}: {row}"
    if reason:
        assert re.search(reason, row["reason"]), row["reason"]


def test_no_solution_reaches_a_student_through_a_link(threats):
    feedback = threats["course"] / "_build/grading/feedback"
    assert not (feedback / "links_to_source").exists() and not (feedback / "links_to_other_student").exists()
    assert threats["rows"][(COPIED, EX02)]["status"] == "ok"  # linked to and copied by others, and graded as usual


def test_student_markdown_runs_in_no_page(threats):
    course, student = threats["course"], "markdown_live_html"
    page = (course / "_build/grading/feedback" / student / EX02 / f"{EX02}.html").read_text(encoding="utf-8")
    assert live_html(page) == []
    assert f"window.{MARK}_1" in page  # shown as the text it is
    autograded = nbformat.read(course / "_build/grading/autograded" / student / EX02 / f"{EX02}.ipynb", as_version=4)
    formgrader_view, _ = HTMLExporter(template_name="classic").from_notebook_node(autograded)
    assert live_html(formgrader_view) == []


def test_feedback_names_paths_as_seen_from_the_students_notebook(threats):
    course, student = threats["course"], "paths_in_messages"
    page = (course / "_build/grading/feedback" / student / EX02 / f"{EX02}.html").read_text(encoding="utf-8")
    autograded = course / "_build/grading/autograded" / student / EX02 / f"{EX02}.ipynb"
    for text in (" ".join(html_visible_text(page).split()), notebook_text(nbformat.read(autograded, as_version=4))):
        assert "../../autograde/checks.py exists=True in ./data.csv" in text
        assert "cwd . ../../infer_lib/__init__.py" in text
        host = {str(REPO), str(Path(sys.prefix).resolve()), str(Path(sys.base_prefix).resolve()), "/scratch",
                "/opt/grading-runner"} - {"/", "/usr", "/usr/local"}
        assert [path for path in host if path in text] == []


def test_faking_the_models_call_log_earns_nothing(threats):
    faked = threats["rows"][(FAKED_CALL_LOG, EX01)]
    honest_mistake = threats["rows"][("ex01_reprefill", EX01)]
    assert faked["score"] == honest_mistake["score"] < FULL


def test_no_code_reaches_the_graders_side_through_the_wire(threats):
    # Neither a forged enum class name nor the real model behind exercise 1's instrumented one.
    assert not list(threats["course"].parent.glob(MARKER + "*"))
    assert threats["rows"][("ex01_writes_through_the_model", EX01)]["score"] == FULL


def test_nothing_is_left_running_and_no_cgroup_remains(threats):
    assert sandbox_processes() == []
    assert sandbox_cgroups() == []


def test_course_files_are_untouched(threats):
    course = threats["course"]
    assert (course / "nbgrader_config.py").read_bytes() == (REPO / "nbgrader_config.py").read_bytes()
    checks = REPO / "autograde" / "checks.py"
    assert "def check(" in checks.read_text(encoding="utf-8")


def test_feedback_shows_no_hidden_input_and_no_output_of_student_cells(threats):
    page = threats["course"] / "_build/grading/feedback/d2_stashes_hidden_inputs" / EX02 / f"{EX02}.html"
    text = page.read_text(encoding="utf-8")
    assert "SEEN-BY-STUDENT" in text  # the visible check's echo of the student's print is shown...
    assert "(64, 100)" not in text  # ...but never a hidden input (a hidden case's D and F)
    assert "PRINTED-IN-A-STUDENT-CELL" not in text


@pytest.mark.parametrize("student_id", ["r4_many_lines", "r5_huge_line_in_check"])
def test_huge_output_is_cut_in_the_graded_notebook_and_the_feedback(threats, student_id):
    course = threats["course"]
    notebook = course / "_build/grading/autograded" / student_id / EX02 / f"{EX02}.ipynb"
    page = course / "_build/grading/feedback" / student_id / EX02 / f"{EX02}.html"
    assert notebook.stat().st_size < 1_000_000
    assert page.stat().st_size < 1_000_000


@pytest.fixture(scope="module")
def secret_batch(tmp_path_factory) -> dict[str, Any]:
    """...while under a secret of the instructor's, in a file outside the course, it scores no hidden point.

    Exercise 2, graded once; tests/test_hidden_secret.py draws every exercise under two secrets.
    """
    course = copy_course(tmp_path_factory.mktemp("secret") / "course", [EX02])
    assert run_harness(course, "assignments").returncode == 0
    hand_in = tmp_path_factory.mktemp("secret-hand-in")
    release = release_of(course, EX02)
    write_notebook(hand_in / "reference" / f"{EX02}.ipynb", _signed(answered(release, EX02), "reference"))
    write_notebook(hand_in / SHIPPED_LOOKUP / f"{EX02}.ipynb", answered(release, EX02, hardcoded_shipped_answers(EX02)))
    secret_file = tmp_path_factory.mktemp("instructor") / "hidden-secret.txt"
    secret_file.write_text(SECRETS[1] + "\n")
    result = run_harness(course, "grade", str(hand_in), "--cell-timeout-s", str(CELL_TIMEOUT_S),
                         "--hidden-secret-file", str(secret_file))
    report = json.loads((course / "_build/grading/report.json").read_text(encoding="utf-8"))
    sandbox = {
        student: json.loads((course / "_build/grading/sandbox" / student / EX02 / f"{EX02}.json").read_text())
        for student in ("reference", SHIPPED_LOOKUP)
    }
    return {"result": result, "rows": {row["student_id"]: row for row in report["rows"]}, "sandbox": sandbox}


def test_under_a_secret_the_reference_scores_full_marks_and_the_lookup_no_hidden_point(secret_batch):
    result = secret_batch["result"]
    assert "hidden cases: drawn from your secret" in result.stdout, result.stdout + result.stderr
    assert SECRETS[1] not in result.stdout + result.stderr
    reference, lookup = secret_batch["rows"]["reference"], secret_batch["rows"][SHIPPED_LOOKUP]
    assert (reference["score"], reference["status"]) == (FULL, "ok"), reference
    assert lookup["score"] == 0.0, lookup
    checks = {item["check"]: item["passed"] for item in secret_batch["sandbox"][SHIPPED_LOOKUP]["checks"]}
    assert {name: passed for name, passed in checks.items() if name.endswith("_hidden")} == {
        "ex02_block_params_hidden": False, "ex02_model_params_hidden": False, "ex02_attention_fraction_hidden": False}
    assert all(passed for name, passed in checks.items() if not name.endswith("_hidden"))
    assert secret_batch["sandbox"]["reference"]["hidden_cases"] == "drawn from the instructor's secret"


def test_the_catalogues_batch_grades_the_shipped_hidden_cases(threats):
    assert "hidden cases: the shipped ones" in threats["result"].stdout
    assert threats["rows"][(SHIPPED_LOOKUP, EX02)]["score"] == FULL  # the public cases are all it needs
