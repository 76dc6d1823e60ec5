"""The README's Python example runs and does what its comments say."""

import re
from pathlib import Path

README = Path(__file__).resolve().parents[2] / "README.md"


def test_the_readme_example_runs_and_recovers(capsys):
    text = README.read_text()
    block = re.search(r"run by tests/core/test_readme.py.*?```python\n(.*?)```", text, re.S)
    assert block, "the README lost its Python example"
    namespace: dict = {}
    exec(compile(block.group(1), str(README), "exec"), namespace)
    assert namespace["dent"] < -0.045  # the ball's 5 cm, less what the damping has not reached
    surface = namespace["surface"]
    assert abs(surface.positions[:, 2]).max() == 0.0  # reset: back at rest
    printed = capsys.readouterr().out
    after = float(re.search(r"after 1 s (-?[0-9.]+)", printed).group(1))
    assert abs(after) < 0.01 * abs(namespace["dent"])  # 99 % recovered after 2 x time to rest
