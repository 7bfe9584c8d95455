# SPDX-License-Identifier: Apache-2.0
# docs/python.md quotes code that this suite runs: every region between "# [doc:name]" and
# "# [/doc]" in python/examples and python/tests appears in it verbatim.
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[2]


def regions(path):
    found, inside, lines = [], False, []
    for line in path.read_text().splitlines():
        if line.strip().startswith("# [doc:"):
            inside, lines = True, []
        elif line.strip() == "# [/doc]" and inside:
            indent = min((len(l) - len(l.lstrip()) for l in lines if l.strip()), default=0)
            found.append("\n".join(l[indent:] for l in lines) + "\n")
            inside = False
        elif inside:
            lines.append(line)
    return found


def test_the_guide_quotes_every_marked_region():
    guide = (ROOT / "docs" / "python.md").read_text()
    marked = [r for folder in ("python/examples", "python/tests")
              for f in sorted((ROOT / folder).glob("*.py")) for r in regions(f)]
    assert len(marked) >= 3, "the markers went missing"
    for region in marked:
        assert region in guide, f"docs/python.md does not quote:\n{region}"
