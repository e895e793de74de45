#!/usr/bin/env python3
"""Stand-in of the generated aclnn runner (tests only).

Usage: aclnn_runner.py <libcust_opapi.so manifest> <job> <device> <warmup> <repeats> <sync ms>
       aclnn_runner.py <manifest> --reset <device>

Reads job.txt (the format of crates/device/src/cann/runner.rs: tensors,
tensor lists, absent optional inputs, in-place outputs, attributes of
every kind) and the raw tensors as the real runner does, computes the
outputs in plain Python for the operators it knows, writes them back (an
in-place output from its input's memory), then writes result.txt:
`outputs written`, one `sample_us` per timed launch and `status ok`, or
`status error <code> <message>`.
"""
import math
import os
import random
import signal
import struct
import sys
import time

# aclDataType -> struct format of one element (plain Python, no numpy).
ACL = {0: "f", 1: "e", 2: "b", 3: "i", 4: "B", 6: "h", 7: "H", 8: "I", 9: "q", 10: "Q", 11: "d", 12: "?"}
INT_BITS = {"b": 8, "i": 32, "h": 16, "q": 64}
UINT_BITS = {"B": 8, "H": 16, "I": 32, "Q": 64}

STATE = os.environ.get("ASCENDOPT_STANDIN_STATE")


def state(name):
    return os.path.join(STATE, name) if STATE else None


def manifest(path):
    out = {}
    with open(path) as f:
        for line in f:
            if "=" in line:
                k, v = line.strip().split("=", 1)
                out[k] = v
    return out


def pack(fmt, values):
    """Elements as the dtype stores them: floats rounded once (an overflow
    becomes an infinity), integers wrapped."""
    out = bytearray()
    for v in values:
        if fmt in "efd":
            try:
                out += struct.pack("<" + fmt, v)
            except OverflowError:
                out += struct.pack("<" + fmt, math.copysign(math.inf, v))
        elif fmt in INT_BITS:
            bits = INT_BITS[fmt]
            v = (int(v) + (1 << (bits - 1))) % (1 << bits) - (1 << (bits - 1))
            out += struct.pack("<" + fmt, v)
        elif fmt in UINT_BITS:
            out += struct.pack("<" + fmt, int(v) % (1 << UINT_BITS[fmt]))
        else:
            out += struct.pack("<" + fmt, bool(v))
    return bytes(out)


# Each operator gets its input arguments (a tensor's values, a list of
# them, or None for an absent optional input) and its attributes, and
# returns the values of its output arguments (a list's as a list) and the
# new values of the input tensors it changes in place {position: values}.
def add_custom(ins, attrs):
    x, y = ins
    return [[a + b for a, b in zip(x, y)]], {}


def foreach_add_scalar(ins, attrs):
    xs, scalar = ins
    return [[[v + scalar[0] for v in x] for x in xs]], {}


def foreach_zero_inplace(ins, attrs):
    (xs,) = ins
    return [], {k: [0] * len(x) for k, x in enumerate(xs)}


OPS = {"AddCustom": add_custom, "ForeachAddScalar": foreach_add_scalar, "ForeachZeroInplace": foreach_zero_inplace}


class JobError(Exception):
    pass


def read_job(job):
    """The arguments of job.txt: (inputs, attrs, outputs, tensors, readbacks)."""
    words = open(os.path.join(job, "job.txt")).read().split()
    pos = [0]

    def word():
        if pos[0] >= len(words):
            raise JobError("job.txt ends early")
        pos[0] += 1
        return words[pos[0] - 1]

    tensors = []  # the input tensors in file order: [fmt, shape, values]

    def tensor(is_input):
        fmt, rank = ACL[int(word())], int(word())
        shape = [int(word()) for _ in range(rank)]
        path = os.path.join(job, word())
        n = 1
        for d in shape:
            n *= d
        spec = {"fmt": fmt, "shape": shape, "path": path, "bytes": n * struct.calcsize(fmt)}
        if is_input:
            raw = open(path, "rb").read()
            if len(raw) != spec["bytes"]:
                raise JobError("%s: %d bytes, the shape %s needs %d" % (path, len(raw), shape, spec["bytes"]))
            spec["values"] = list(struct.unpack("<%d%s" % (n, fmt), raw))
            tensors.append(spec)
            return len(tensors) - 1
        return spec

    def alias():
        k, path = int(word()), os.path.join(job, word())
        if not 0 <= k < len(tensors):
            raise JobError("alias of input %d of %d" % (k, len(tensors)))
        return {"alias": k, "path": path, "fmt": tensors[k]["fmt"], "bytes": tensors[k]["bytes"]}

    ins, attrs, outs, readbacks = [], [], [], []
    while pos[0] < len(words):
        kind = word()
        if kind == "in":
            ins.append(tensor(True))
        elif kind == "in_list":
            items = []
            for _ in range(int(word())):
                if word() != "item":
                    raise JobError("a list item is not an item")
                items.append(tensor(True))
            ins.append(items)
        elif kind == "in_absent":
            ins.append(None)
        elif kind == "out":
            outs.append(tensor(False))
        elif kind == "out_alias":
            outs.append(alias())
        elif kind == "out_list":
            items = []
            for _ in range(int(word())):
                item = word()
                items.append(tensor(False) if item == "item" else alias() if item == "item_alias" else None)
                if items[-1] is None:
                    raise JobError("a list item is not an item")
            outs.append(items)
        elif kind == "readback":
            readbacks.append(alias())
        elif kind == "attr":
            ty = word()
            if ty == "str":
                v = word()
                attrs.append(bytes.fromhex(v[1:]).decode())
            elif ty in ("ints", "floats", "bools"):
                attrs.append([float(word()) if ty == "floats" else int(word()) for _ in range(int(word()))])
            else:
                v = word()
                attrs.append(float(v) if ty == "float" else v == "true" if ty == "bool" else int(v))
        else:
            raise JobError("unknown line kind %s" % kind)
    return ins, attrs, outs, tensors, readbacks


def main():
    m = manifest(sys.argv[1])
    args = sys.argv[2:]
    if args and args[0] == "--reset":
        if STATE:
            with open(state("resets.log"), "a") as f:
                f.write("reset device %s\n" % args[1])
            if os.path.exists(state("hung")):
                os.remove(state("hung"))
        return 0
    job, device, warmup, repeats, sync_ms = args[0], int(args[1]), int(args[2]), int(args[3]), int(args[4])
    result = open(os.path.join(job, "result.txt"), "w")

    def error(code, message):
        result.write("status error %d %s\n" % (code, message))
        result.close()
        return 1

    if STATE and os.path.exists(state("hung")):
        return error(507899, "aclrtSetDevice(device): EL9999 the device is in an abnormal state")
    try:
        ins, attrs, outs, tensors, readbacks = read_job(job)
    except (JobError, ValueError, KeyError) as e:
        return error(-1, "job.txt: %s" % e)
    # The arguments against the operator's (kInputs, kAttrs, kOutputs of
    # the generated runner), as the runner checks them.
    sig = os.environ.get("ASCENDOPT_STANDIN_SIG", "").split(":")
    if len(sig) >= 3:
        want_in, want_attrs, want_out = sig[:3]
        if (len(ins), len(attrs), len(outs)) != (len(want_in), len(want_attrs), len(want_out)):
            return error(-1, "job.txt has %d inputs, %d attributes, %d outputs; %s takes %d, %d, %d"
                         % (len(ins), len(attrs), len(outs), m["op"], len(want_in), len(want_attrs), len(want_out)))
        for a, want in zip(ins, want_in):
            got = "N" if a is None else "L" if isinstance(a, list) else "T"
            if not (got == want or (want == "O" and got in "TN")):
                return error(-1, "job.txt: an input argument of the wrong kind (tensor, list, absent)")
        for a, want in zip(outs, want_out):
            if ("L" if isinstance(a, list) else "T") != want:
                return error(-1, "job.txt: an output argument of the wrong kind (tensor, list)")
    fail = m.get("fail", "none")
    if fail == "561002":
        return error(561002, "aclnn%sGetWorkspaceSize(...): EZ1001 tiling func failed" % m["op"])
    if fail == "561003":
        return error(561003, "aclnn%sGetWorkspaceSize(...): EZ3003 no kernel binary for this dtype" % m["op"])
    op = OPS.get(m["op"])
    if op is None:
        return error(561003, "the stand-in runner does not know %s" % m["op"])
    if fail == "hang":
        if STATE:
            open(state("hung"), "w").close()
        time.sleep(3600)
    if fail == "crash":
        os.kill(os.getpid(), signal.SIGSEGV)
    if fail in ("507015", "507035"):
        return error(int(fail), "aclrtSynchronizeStreamWithTimeout(stream, %d): EZ9999 The error from device(chipId:%d), "
                     "exception of aivec error, core id is 3" % (sync_ms, device))
    args = [None if a is None else [tensors[k]["values"] for k in a] if isinstance(a, list) else tensors[a]["values"] for a in ins]
    values, changed = op(args, attrs)
    for k, v in changed.items():
        tensors[k]["values"] = v
    flat_outs, flat_values = [], []
    for spec, v in zip(outs, values):
        if isinstance(spec, list):
            flat_outs += spec
            flat_values += v
        else:
            flat_outs.append(spec)
            flat_values.append(v)
    for spec, v in zip(flat_outs, flat_values):
        if "alias" in spec:
            tensors[spec["alias"]]["values"] = v
    for spec, v in list(zip(flat_outs, flat_values)) + [(r, None) for r in readbacks]:
        if "alias" in spec:
            v = tensors[spec["alias"]]["values"]
        with open(spec["path"], "wb") as f:
            f.write(pack(spec["fmt"], v))
    result.write("outputs written\n")
    moved = sum(t["bytes"] for t in tensors) + sum(spec["bytes"] for spec in flat_outs)
    scale = float(m["scale"]) if m.get("scale") else 0.85 + (int(m["hash"][:8], 16) % 300) / 1000.0
    clean = (4.0 + moved / 800e3) * scale
    if os.environ.get("STANDIN_MSPROF_OUT"):
        with open(os.environ["STANDIN_MSPROF_OUT"], "w") as f:
            f.write("%s %.6f %d\n" % (m["op"], clean, 40 if m.get("downclock") != "1" else -40))
    rng = random.Random()
    for _ in range(repeats):
        result.write("sample_us %.3f\n" % (clean * (1.0 + rng.gauss(0.0, 0.01))))
    result.write("status ok\n")
    result.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
