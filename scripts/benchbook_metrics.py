"""The `benchbook run exec` protocol for Python scripts.

`emit()` appends one JSON line to the file named by $BENCHBOOK_METRICS_FILE
(or prints it to stdout when the script runs outside benchbook); `skip()`
says why a script cannot run here and exits with code 77, which benchbook
records as a skipped point with that reason instead of a failure.
"""

import json
import os
import sys

SKIP_EXIT = 77


def emit(metric, value, unit, params=None, better=None):
    line = {"metric": metric, "value": float(value), "unit": unit, "params": params or {}}
    if better is not None:
        line["better"] = better
    path = os.environ.get("BENCHBOOK_METRICS_FILE")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(line) + "\n")
    else:
        print(json.dumps(line))


def skip(reason):
    print(f"skipped: {reason}", file=sys.stderr)
    sys.exit(SKIP_EXIT)


def torch_or_skip(what):
    """Import torch, or skip with the reason."""
    try:
        import torch  # noqa: F401

        return torch
    except ImportError:
        skip(f"{what} needs PyTorch, which is not installed for {sys.executable}")
