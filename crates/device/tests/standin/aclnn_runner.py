#!/usr/bin/env python3
"""Stand-in of the generated aclnn runner (tests only).

Usage: aclnn_runner.py <libcust_opapi.so manifest> <job> <device> <warmup> <repeats> <sync ms>
       aclnn_runner.py <manifest> --reset <device>

Reads job.txt and the raw tensors as the real runner does, computes the
outputs in plain Python for the operators it knows, writes them back, then
writes result.txt: `outputs written`, one `sample_us` per timed launch
and `status ok`, or `status error <code> <message>`.
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


def add_custom(ins, attrs, outs):
    x, y = ins
    return [[a + b for a, b in zip(x, y)]]


OPS = {"AddCustom": add_custom}


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
    ins, outs, attrs = [], [], []
    for line in open(os.path.join(job, "job.txt")):
        f = line.split()
        if not f:
            continue
        if f[0] == "attr":
            attrs.append((f[1], f[2]))
            continue
        fmt, rank = ACL[int(f[1])], int(f[2])
        shape = [int(v) for v in f[3:3 + rank]]
        path = os.path.join(job, f[3 + rank])
        raw = open(path, "rb").read()
        n = 1
        for d in shape:
            n *= d
        if len(raw) != n * struct.calcsize(fmt):
            return error(-1, "%s: %d bytes, the shape %s needs %d" % (path, len(raw), shape, n * struct.calcsize(fmt)))
        (ins if f[0] == "in" else outs).append((fmt, shape, path, list(struct.unpack("<%d%s" % (n, fmt), raw)), len(raw)))
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
    values = op([t[3] for t in ins], attrs, [(t[0], t[1]) for t in outs])
    for (fmt, shape, path, _, _), v in zip(outs, values):
        with open(path, "wb") as f:
            f.write(pack(fmt, v))
    result.write("outputs written\n")
    moved = sum(t[4] for t in ins) + sum(t[4] for t in outs)
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
