import subprocess
import sys


def test_python_m_entry_point():
    proc = subprocess.run(
        [sys.executable, "-m", "etclib", "--version"], capture_output=True, text=True
    )
    assert proc.returncode == 0 and proc.stdout.startswith("etclib ")
