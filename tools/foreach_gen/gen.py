#!/usr/bin/env python3
"""Generates the built-in foreach operator packages ops/foreach_<name>/.

Usage: python3 tools/foreach_gen/gen.py [name ...]   (from the repository root)

Every package is self-contained (op.toml, op_host/, op_kernel/); this script
only writes them from one design (kernel.py) and the per-operator table
(ops_table.py). Edit the table or the design and re-run; the generated files
are committed, the script is kept so that they stay consistent.
"""

import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import kernel as K  # noqa: E402
import ops_table  # noqa: E402

DTYPE_GE = {
    "float16": "ge::DT_FLOAT16",
    "float32": "ge::DT_FLOAT",
    "bfloat16": "ge::DT_BF16",
    "int32": "ge::DT_INT32",
    "int64": "ge::DT_INT64",
    "int8": "ge::DT_INT8",
    "int16": "ge::DT_INT16",
    "uint8": "ge::DT_UINT8",
    "uint16": "ge::DT_UINT16",
    "uint32": "ge::DT_UINT32",
    "float64": "ge::DT_DOUBLE",
    "bool": "ge::DT_BOOL",
}
CTYPE = {
    "float16": "half",
    "float32": "float",
    "bfloat16": "bfloat16_t",
    "int32": "int32_t",
    "int64": "int64_t",
    "int8": "int8_t",
    "int16": "int16_t",
    "uint8": "uint8_t",
    "uint16": "uint16_t",
    "uint32": "uint32_t",
    "float64": "double",
    "bool": "bool",
}
SIZE = {"half": 2, "float": 4, "bfloat16_t": 2, "int32_t": 4, "int64_t": 8, "int8_t": 1, "uint8_t": 1,
        "int16_t": 2, "uint16_t": 2, "uint32_t": 4, "uint64_t": 8, "double": 8, "bool": 1}


def sub(text, values):
    for k, v in values.items():
        text = text.replace("@" + k + "@", v)
    assert "@" not in text.replace("@file", ""), [l for l in text.splitlines() if "@" in l][:3]
    return text


def comment(text):
    """`text` as C++ comment lines of at most 80 columns."""
    import textwrap
    flat = " ".join(text.replace("\n// ", " ").split())
    return "\n".join("// " + l for l in textwrap.wrap(flat, 77))


def camel(name):
    return "".join(p.capitalize() for p in name.split("_"))


def indent(text, n):
    pad = " " * n
    return "\n".join(pad + l if l.strip() else "" for l in text.strip("\n").splitlines())


def opdef_param(kind, name, dtypes):
    ge = ", ".join(DTYPE_GE[d] for d in dtypes)
    fmt = ", ".join("ge::FORMAT_ND" for _ in dtypes)
    param = {"list": "DYNAMIC", "tensor": "REQUIRED"}[kind]
    return (f'        this->{ "Output" if name == "y" else "Input"}("{name}")\n'
            f"            .ParamType({param})\n"
            f"            .DataType({{{ge}}})\n"
            f"            .Format({{{fmt}}});")


def generate(op):
    name = "foreach_" + op["name"]
    optype = "Foreach" + camel(op["name"])
    lists = op["lists"]  # names of the list inputs
    scalar = op.get("scalar")  # dict(name, kind: scalar|scalars|mode, first: bool)
    paths = op["paths"]  # list of (dtype, T, C, S)
    nin = len(lists)
    out_dir = os.path.join("ops", name)
    os.makedirs(os.path.join(out_dir, "op_host"), exist_ok=True)
    os.makedirs(os.path.join(out_dir, "op_kernel"), exist_ok=True)

    # OpDef input order (IR indices).
    inputs = []
    if scalar and scalar.get("first"):
        inputs.append(("tensor", scalar["name"]))
    inputs += [("list", l) for l in lists]
    if scalar and not scalar.get("first"):
        inputs.append(("tensor", scalar["name"]))
    ir = {n: i for i, (_, n) in enumerate(inputs)}
    list0_ir = str(ir[lists[0]])
    other_irs = ", ".join(str(ir[l]) for l in lists[1:])

    # ---- tiling header
    guard = name.upper() + "_TILING_H"
    with open(os.path.join(out_dir, "op_host", name + "_tiling.h"), "w") as f:
        f.write(sub(K.TILING_HEADER, {"OPTYPE": optype, "FORMULA": op["formula"], "GUARD": guard}))

    # ---- host
    path_cases = []
    keys_note = []
    for key, (dt, t, c, s, *_) in enumerate(paths, start=1):
        via = "true" if t != c else "false"
        path_cases.append(
            f"        case {DTYPE_GE[dt]}:\n"
            f"            path = Path{{{key}, {SIZE[t]}, {SIZE[c]}, {via}, 1}};\n"
            f"            return true;")
        keys_note.append(f"{key} {dt}" + (" (in float32)" if t != c else ""))
    if op.get("move"):
        unit = SIZE[op["move"]]
        path_cases = [f"        case {DTYPE_GE[dt]}:\n"
                      f"            path = Path{{1, {unit}, {unit}, false, {SIZE[CTYPE[dt]] // unit}}};\n"
                      f"            return true;" for dt, *_ in paths]
        keys_note = [f"1 (every dtype, moved as {op['move']})"]
    dtypes_all = [p[0] for p in paths]
    opdef = []
    for kind, n in inputs:
        if kind == "list":
            opdef.append(opdef_param("list", n, dtypes_all))
        else:
            opdef.append(opdef_param("tensor", n, [p[4] for p in paths]))
    if op.get("inplace"):
        infer = sub(K.INFER_NONE, {})
    else:
        opdef.append(opdef_param("list", "y", dtypes_all).replace('Input("y")', 'Output("y")'))
        infer = sub(K.INFER_LIST, {"LIST0_IR": list0_ir})
    extra_checks = ""
    if scalar:
        sir = ir[scalar["name"]]
        nb = sum(1 for kk, _ in inputs[:sir] if kk == "list")
        flat = f"{nb} * count" if nb else "0"
        want = "static_cast<int64_t>(count)" if scalar["kind"] == "scalars" else "1"
        what = "one value per tensor" if scalar["kind"] == "scalars" else "one value"
        extra_checks = (
            f"    // `{scalar['name']}` holds {what}.\n"
            f"    const gert::StorageShape* scalarShape = context->GetInputShape({flat});\n"
            f"    if (scalarShape == nullptr || scalarShape->GetStorageShape().GetShapeSize() != {want}) {{\n"
            f"        return ge::GRAPH_FAILED;\n"
            f"    }}\n")
    other_lists = ""
    if other_irs:
        other_lists = (
            "    // Every other list matches the first, tensor by tensor.\n"
            f"    for (size_t ir : {{{other_irs}}}) {{\n"
            "        uint64_t others[MAX_TENSORS] = {0};\n"
            "        uint32_t otherCount = 0;\n"
            "        if (!ListLengths(context, ir, dtype, others, otherCount) || otherCount != count) {\n"
            "            return ge::GRAPH_FAILED;\n"
            "        }\n"
            "        for (uint32_t i = 0; i < count; ++i) {\n"
            "            if (others[i] != lengths[i]) {\n"
            "                return ge::GRAPH_FAILED;\n"
            "            }\n"
            "        }\n"
            "    }\n")
    tmp_code = op.get("tmp_host", "")
    aux_note = "a tile of the constant operand" if op.get("aux") else "no constant tile"
    if op.get("aux"):
        tmp_code = "    perElemBytes += path.computeBytes;  // the constant tile\n" + tmp_code
    if op.get("scratch"):
        tmp_code = f"    perElemBytes += {op['scratch']} * sizeof(float);  // float32 scratch tiles\n" + tmp_code
    host = sub(K.HOST, {
        "OPTYPE": optype, "NAME": name, "FORMULA": op["formula"],
        "KEYS_NOTE": comment(", ".join(keys_note) + "."),
        "EXTRA_INCLUDE": '#include "tiling/tiling_api.h"\n' if "Tmp" in tmp_code else "",
        "NIN": str(nin), "NQUEUE": str(nin + 1),
        "PATH_CASES": "\n".join(path_cases),
        "LIST0_IR": list0_ir, "OTHER_LISTS": other_lists,
        "EXTRA_CHECKS": extra_checks.rstrip("\n"),
        "AUX_NOTE": aux_note,
        "TMP_CODE": tmp_code.rstrip("\n"),
        "INFER_BODY": infer,
        "OPDEF_PARAMS": "\n".join(opdef),
    })
    with open(os.path.join(out_dir, "op_host", name + ".cpp"), "w") as f:
        f.write(host)

    # ---- kernel
    entry = [n for _, n in inputs] + ([] if op.get("inplace") else ["y"])
    init_params = ", ".join(f"GM_ADDR {n}" for n in entry)
    init_lists = []
    members = []
    set_tensor = []
    copy_in = []
    deque = []
    casts = []
    free_after = []
    for k, l in enumerate(lists):
        init_lists.append(f"listDesc{k}.SetGlobalBuffer((__gm__ uint64_t*){l});\n"
                          f"listTable{k} = listDesc{k}.GetValue(0) / sizeof(uint64_t);")
        members.append(f"TQue<QuePosition::VECIN, BUFFER_NUM> inQueue{k};\n"
                       f"GlobalTensor<uint64_t> listDesc{k};\n"
                       f"GlobalTensor<T> xGm{k};\n"
                       f"uint64_t listTable{k} = 0;")
        set_tensor.append(f"xGm{k}.SetGlobalBuffer((__gm__ T*)(uintptr_t)ListAddress(listDesc{k}, listTable{k}, t), "
                          f"tensorLength[t]);")
        copy_in.append(f"LocalTensor<T> xLocal{k} = inQueue{k}.AllocTensor<T>();")
        deque.append(f"LocalTensor<T> x{k} = inQueue{k}.DeQue<T>();")
        casts.append(f"LocalTensor<float> f{k} = workBuf{k}.Get<float>();\n"
                     f"Cast(f{k}, x{k}, RoundMode::CAST_NONE, n);\n"
                     f"inQueue{k}.FreeTensor(x{k});")
        free_after.append(f"inQueue{k}.FreeTensor(x{k});")
    out_list = lists[0] if op.get("inplace") else "y"
    init_lists.append(f"yDesc.SetGlobalBuffer((__gm__ uint64_t*){out_list});\n"
                      f"yTable = yDesc.GetValue(0) / sizeof(uint64_t);")
    members.append("GlobalTensor<uint64_t> yDesc;\nuint64_t yTable = 0;")
    set_tensor.append("yGm.SetGlobalBuffer((__gm__ T*)(uintptr_t)ListAddress(yDesc, yTable, t), tensorLength[t]);")
    copy_in_body = "\n".join(copy_in) + "\n"
    copy_in_body += "if ((count * sizeof(T)) % BLOCK_BYTES == 0) {\n"
    copy_in_body += "\n".join(f"    DataCopy(xLocal{k}, xGm{k}[offset], count);" for k in range(nin)) + "\n"
    copy_in_body += ("} else {\n"
                     "    DataCopyExtParams copyParams{1, static_cast<uint32_t>(count * sizeof(T)), 0, 0, 0};\n"
                     "    DataCopyPadExtParams<T> padParams{false, 0, 0, 0};\n")
    copy_in_body += "\n".join(f"    DataCopyPad(xLocal{k}, xGm{k}[offset], copyParams, padParams);" for k in range(nin))
    copy_in_body += "\n}\n" + "\n".join(f"inQueue{k}.EnQue(xLocal{k});" for k in range(nin))

    fargs = ", ".join(f"f{k}" for k in range(nin))
    xargs = ", ".join(f"x{k}" for k in range(nin))
    compute = "\n".join(deque) + "\nLocalTensor<T> yLocal = outQueue.AllocTensor<T>();\n"
    compute += "if constexpr (VIA_FLOAT) {\n" + indent("\n".join(casts), 4) + "\n"
    compute += ("    LocalTensor<float> fy = workBufY.Get<float>();\n"
                f"    Body(fy, {fargs}, n);\n"
                "    Cast(yLocal, fy, RoundMode::CAST_RINT, n);\n"
                "} else {\n"
                f"    Body(yLocal, {xargs}, n);\n" + indent("\n".join(free_after), 4) + "\n}\n"
                "outQueue.EnQue(yLocal);")
    init_queues = "\n".join(f"pipe->InitBuffer(inQueue{k}, tiling.bufferNum, tileLength * sizeof(T));"
                            for k in range(nin))
    init_queues += "\npipe->InitBuffer(outQueue, tiling.bufferNum, tileLength * sizeof(T));"
    init_work = "\n".join(f"pipe->InitBuffer(workBuf{k}, tileLength * sizeof(float));" for k in range(nin))
    init_work += "\npipe->InitBuffer(workBufY, tileLength * sizeof(float));"
    members.append("\n".join(f"TBuf<TPosition::VECCALC> workBuf{k};" for k in range(nin)))
    members.append("TBuf<TPosition::VECCALC> workBufY;")

    init_scalar = ""
    if scalar:
        sn = scalar["name"]
        if scalar["kind"] == "scalars":
            init_scalar = f"scalarsGm.SetGlobalBuffer((__gm__ S*){sn});"
            members.append("GlobalTensor<S> scalarsGm;\nC scalarValue = 0;")
            set_tensor.append("scalarValue = ScalarAs<C>(scalarsGm.GetValue(t));")
        elif scalar["kind"] == "mode":
            init_scalar = (f"GlobalTensor<S> scalarGm;\nscalarGm.SetGlobalBuffer((__gm__ S*){sn}, 1);\n"
                           f"mode = static_cast<int32_t>(scalarGm.GetValue(0));")
            members.append("int32_t mode = 0;")
        else:
            init_scalar = (f"GlobalTensor<S> scalarGm;\nscalarGm.SetGlobalBuffer((__gm__ S*){sn}, 1);\n"
                           f"scalarValue = ScalarAs<{scalar.get('ctype', 'C')}>(scalarGm.GetValue(0));")
            members.append(f"{scalar.get('ctype', 'C')} scalarValue = 0;")
            if op.get("negate"):
                init_scalar += "\n// x - s as x + (-s): negation is exact (int32 wraps through uint32).\n"
                init_scalar += ("if constexpr (IsSameType<C, int32_t>::value) {\n"
                                "    scalarValue = static_cast<int32_t>(0u - static_cast<uint32_t>(scalarValue));\n"
                                "} else {\n"
                                "    scalarValue = static_cast<C>(-static_cast<float>(scalarValue));\n"
                                "}")
    init_extra = ""
    if op.get("aux"):
        init_extra += ("pipe->InitBuffer(auxBuf, tileLength * sizeof(C));\n"
                       "auxLocal = auxBuf.Get<C>();\n"
                       "Duplicate(auxLocal, " + re.sub(r"\bscalar\b", "scalarValue", op["aux"]) + ", tileLength);\n")
        members.append("TBuf<TPosition::VECCALC> auxBuf;\nLocalTensor<C> auxLocal;")
    if op.get("scratch"):
        init_extra += f"pipe->InitBuffer(scratchBuf, {op['scratch']} * tileLength * sizeof(float));\n"
        members.append("TBuf<TPosition::VECCALC> scratchBuf;")
    if op.get("tmp_host"):
        init_extra += ("if (tiling.tmpBytes > 0) {\n"
                       "    pipe->InitBuffer(tmpBuf, tiling.tmpBytes);\n"
                       "    tmpLocal = tmpBuf.Get<uint8_t>();\n"
                       "}\n")
        members.append("TBuf<TPosition::VECCALC> tmpBuf;\nLocalTensor<uint8_t> tmpLocal;")
    body_params = "const LocalTensor<C>& y, " + ", ".join(
        f"const LocalTensor<C>& {v}" for v in ["a", "b", "c"][:nin])
    dispatch = []
    for key, (dt, t, c, s, *_) in enumerate(paths, start=1):
        kw = "if" if key == 1 else "} else if"
        dispatch.append(f"    {kw} (TILING_KEY_IS({key})) {{\n"
                        f"        Kernel{optype}<{t}, {c}, {s}> op;\n"
                        f"        op.Init({', '.join(entry)}, tilingData, &pipe);\n"
                        f"        op.Process();")
    dispatch.append("    }")
    template = {"copy": K.KERNEL_COPY, "zero": K.KERNEL_ZERO}.get(op.get("kind"), K.KERNEL)
    kern = sub(template, {
        "OPTYPE": optype, "NAME": name, "FORMULA": op["formula"],
        "PATH_NOTE": comment(op.get("path_note", "")),
        "INIT_PARAMS": init_params,
        "INIT_LISTS": indent("\n".join(init_lists), 8),
        "INIT_SCALAR": indent(init_scalar, 8),
        "INIT_QUEUES": indent(init_queues, 8),
        "INIT_WORK": indent(init_work, 12),
        "INIT_EXTRA": indent(init_extra, 8),
        "SET_TENSOR": indent("\n".join(set_tensor), 8),
        "COPY_IN": indent(copy_in_body, 8),
        "COMPUTE": indent(compute, 8),
        "BODY_PARAMS": body_params,
        "BODY": indent(re.sub(r"\bscalar\b", "scalarValue", op["body"]), 8),
        "EXTRA_METHODS": ("\n" + indent(op["methods"], 4) + "\n") if op.get("methods") else "",
        "MEMBERS": indent("\n".join(members), 4),
        "ENTRY_PARAMS": ", ".join(f"GM_ADDR {n}" for n in entry),
        "DISPATCH": "\n".join(dispatch),
    })
    kern = "\n".join(l.rstrip() for l in kern.splitlines()) + "\n"
    while "\n\n\n" in kern:
        kern = kern.replace("\n\n\n", "\n\n")
    with open(os.path.join(out_dir, "op_kernel", name + ".cpp"), "w") as f:
        f.write(kern)

    # ---- op.toml
    with open(os.path.join(out_dir, "op.toml"), "w") as f:
        f.write(op["toml"].replace("{name}", name).replace("{optype}", optype))


def main():
    wanted = set(sys.argv[1:])
    for op in ops_table.OPS:
        if not wanted or op["name"] in wanted or "foreach_" + op["name"] in wanted:
            generate(op)
            print("generated ops/foreach_" + op["name"])


if __name__ == "__main__":
    main()
