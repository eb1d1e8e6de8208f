"""`python -m srcgrad show FILE.py:FUNCTION [--wrt ...]`, run as a user would, in a subprocess."""
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).parent


def run_cli(*args):
    env = dict(os.environ)
    return subprocess.run([sys.executable, "-m", "srcgrad", *args], capture_output=True,
                          text=True, env=env, cwd=HERE, timeout=120)


def test_show_prints_the_generated_gradient():
    result = run_cli("show", f"{HERE / 'golden_model.py'}:energy")
    assert result.returncode == 0, result.stderr
    assert "def energy__grad(x, k):" in result.stdout
    assert "# grad of: stretch = x[1] - x[0]   (golden_model.py:7)" in result.stdout


def test_show_with_wrt_names_the_arguments():
    result = run_cli("show", f"{HERE / 'golden_model.py'}:energy", "--wrt", "0,k")
    assert result.returncode == 0, result.stderr
    assert "gradient wrt x, k of energy" in result.stdout
    assert "return e__2, (_adj_x, _adj_k)" in result.stdout


def test_show_reports_a_bad_target_clearly():
    result = run_cli("show", f"{HERE / 'golden_model.py'}:missing")
    assert result.returncode != 0
    assert "has no function 'missing'" in result.stderr
    result = run_cli("show", "nowhere.py:f")
    assert result.returncode != 0 and "no such file" in result.stderr
    result = run_cli("show", f"{HERE / 'golden_model.py'}:energy", "--wrt", "7")
    assert result.returncode == 1 and "out of range" in result.stderr


def test_supported_table_is_generated_from_the_registry():
    # docs/supported.md must be regenerated (python -m srcgrad rules) whenever a rule changes.
    from srcgrad.frontend.forms import forms_table
    from srcgrad.rules import table
    committed = (HERE.parent / "docs" / "supported.md").read_text()
    assert committed == table() + forms_table(), "run: python -m srcgrad rules > docs/supported.md"
    result = run_cli("rules")
    assert result.returncode == 0 and result.stdout == committed
