# ascendopt: runs a project's gen_data.py (the script that writes
# input/*.bin and output/golden.bin for its own tests) in a scratch folder
# and watches it: every numpy random draw and every array written with
# tofile / np.save. In "replay" mode the draws that make the op's inputs
# return the case's inputs instead, so the script's own computation gives
# the expected outputs for ascendopt's fresh inputs.
import json
import os
import runpy
import shutil
import sys
import tempfile

try:
    import numpy as np
except ImportError:
    sys.exit("ascendopt: numpy is not installed for " + sys.executable + "; install it with `"
             + sys.executable + " -m pip install numpy` (or set ASCENDOPT_PYTHON to a python3 that has it)")

_RANDOM = ("uniform", "normal", "randint", "rand", "randn", "random", "random_sample", "standard_normal",
           "ranf", "sample")


def _snapshot(root):
    seen = {}
    for base, dirs, files in os.walk(root):
        for f in files:
            p = os.path.join(base, f)
            try:
                st = os.stat(p)
            except OSError:
                continue
            seen[os.path.relpath(p, root)] = (st.st_mtime_ns, st.st_size)
    return seen


# Scalar variables (bool, int, finite float, str) of the frame that wrote
# the first array, the first value of each name kept: a script sets the
# operator's attributes in locals (`reduce = "amin"`, `dim = 0`).
_SCALARS = {}


def _keep_scalars(frame):
    try:
        items = list(frame.f_locals.items())
    except Exception:
        return
    for k, v in items:
        if k.startswith("_") or k in _SCALARS:
            continue
        if isinstance(v, (bool, int, str)) or (isinstance(v, float) and v == v and abs(v) != float("inf")):
            _SCALARS[k] = v


def run(script, replace=None):
    """Runs `script`; returns (draws, writes). `replace` maps a draw's index
    to the array it returns instead of a random one."""
    script = os.path.abspath(script)
    draws, writes = [], []
    originals = {}
    counter = [0]

    def wrap(name, fn):
        def drawn(*args, **kwargs):
            index = counter[0]
            counter[0] += 1
            if replace is not None and index in replace:
                value = np.asarray(replace[index])
                value = value.astype(np.int64) if name == "randint" else value.astype(np.float64)
            else:
                value = fn(*args, **kwargs)
            plain = [a for a in args if isinstance(a, (int, float))]
            draws.append({"fn": name, "args": plain, "value": np.array(value, copy=True)})
            return value
        return drawn

    for name in _RANDOM:
        if hasattr(np.random, name):
            originals[name] = getattr(np.random, name)
            setattr(np.random, name, wrap(name, originals[name]))
    original_save = np.save

    def save(file, arr, *args, **kwargs):
        _keep_scalars(sys._getframe(1))
        original_save(file, arr, *args, **kwargs)
        path = file if str(file).endswith(".npy") else str(file) + ".npy"
        writes.append({"file": os.path.relpath(os.path.abspath(path)), "value": np.array(arr, copy=True)})

    np.save = save
    pending = []
    before = [None]

    def profile(frame, event, arg):
        if event == "c_call" and getattr(arg, "__name__", "") == "tofile":
            owner = getattr(arg, "__self__", None)
            if isinstance(owner, np.ndarray):
                _keep_scalars(frame)
                pending.append(np.array(owner, copy=True))
                before[0] = _snapshot(".")
        elif event in ("c_return", "c_exception") and getattr(arg, "__name__", "") == "tofile" and pending:
            arr = pending.pop()
            after = _snapshot(".")
            changed = [p for p, s in after.items() if before[0].get(p) != s]
            if event == "c_return" and changed:
                writes.append({"file": changed[0], "value": arr})

    work = tempfile.mkdtemp(prefix="ascendopt-gen-data-")
    cwd = os.getcwd()
    argv = sys.argv
    try:
        os.chdir(work)
        for d in ("input", "output"):
            os.makedirs(d, exist_ok=True)
        sys.argv = [script]
        sys.path.insert(0, os.path.dirname(script))
        sys.setprofile(profile)
        try:
            runpy.run_path(script, run_name="__main__")
        except SystemExit as e:
            if e.code not in (None, 0):
                raise
        except ImportError as e:
            sys.setprofile(None)
            sys.exit("ascendopt: " + _ascendopt_missing(e, os.path.basename(script)))
        finally:
            sys.setprofile(None)
    finally:
        os.chdir(cwd)
        shutil.rmtree(work, ignore_errors=True)
        sys.argv = argv
        for name, fn in originals.items():
            setattr(np.random, name, fn)
        np.save = original_save
    return draws, writes


def _same(a, b):
    if a.size != b.size:
        return False
    try:
        x = np.asarray(a, dtype=np.float64).ravel()
        y = np.asarray(b, dtype=np.float64).ravel()
    except (TypeError, ValueError):
        return False
    return bool(np.array_equal(x, y, equal_nan=True))


def discover(script):
    """The script's writes (file, dtype, shape) and, for each, the draw it
    is (the draw whose values, in the written dtype, are the array's)."""
    draws, writes = run(script)
    out = {"draws": [], "writes": [], "scalars": dict(_SCALARS)}
    for d in draws:
        out["draws"].append({"fn": d["fn"], "args": d["args"], "shape": list(np.shape(d["value"]))})
    used = set()
    for w in writes:
        arr = w["value"]
        source = None
        for i, d in enumerate(draws):
            if i in used:
                continue
            try:
                cast = np.asarray(d["value"]).astype(arr.dtype)
            except (TypeError, ValueError):
                continue
            if _same(cast, arr):
                source = i
                used.add(i)
                break
        out["writes"].append({"file": w["file"], "dtype": str(arr.dtype), "shape": list(arr.shape),
                              "draw": source})
    return out


if __name__ == "__main__" and len(sys.argv) == 3 and sys.argv[1] == "--discover":
    print(json.dumps(discover(sys.argv[2])))
