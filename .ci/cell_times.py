"""Print the time evcxr's `:timing` reported for every code cell of the
executed notebooks given on the command line, and the slowest cell after
each notebook's first (the set-up cell, which compiles benchbook)."""
import json
import re
import sys

TOOK = re.compile(r"Took (\d+)\s*ms")

for path in sys.argv[1:]:
    nb = json.load(open(path))
    times = []
    for i, cell in enumerate(c for c in nb["cells"] if c["cell_type"] == "code"):
        text = ""
        for out in cell.get("outputs", []):
            text += "".join(out.get("text", ""))
            for v in out.get("data", {}).values():
                text += "".join(v) if isinstance(v, list) else str(v)
        ms = [int(m) for m in TOOK.findall(text)]
        times.append(sum(ms) if ms else None)
    shown = ", ".join("?" if t is None else f"{t / 1000:.2f}" for t in times)
    later = [t for t in times[1:] if t is not None]
    worst = f"{max(later) / 1000:.2f} s" if later else "n/a"
    print(f"cells {path.rsplit('/', 1)[-1]}: [{shown}] s; slowest after the first: {worst}")
