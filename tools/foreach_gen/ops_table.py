"""The foreach operators: formula, dtype paths, kernel body, op.toml cases.

Semantics: shared/ref/operators-l2.md, "Foreach family". A path is
(dtype, storage type T, compute type C, scalar storage type S, scalar
dtype name); T != C means the kernel casts to float32 work tiles and back.
"""

F16 = ("float16", "half", "half")
F16F = ("float16", "half", "float")
F32 = ("float32", "float", "float")
BF16 = ("bfloat16", "bfloat16_t", "float")
I32 = ("int32", "int32_t", "int32_t")


def paths(*ps, scalar=None):
    """Paths with the scalar input's storage type and dtype: `scalar` maps a
    dtype to (S, dtype name); default S = T (no scalar input: T)."""
    out = []
    for dt, t, c in ps:
        s, sd = (scalar or {}).get(dt, (t, dt))
        out.append((dt, t, c, s, sd))
    return out


# The Scalar dtype rule: x's dtype for float16/float32/int32, float32 for
# bfloat16 x.
SCALAR_RULE = {"bfloat16": ("float", "float32")}
# The ScalarList rule: float32 for float x, int64 for int32 x.
SCALAR_LIST_RULE = {"float16": ("float", "float32"), "float32": ("float", "float32"),
                    "bfloat16": ("float", "float32"), "int32": ("int64_t", "int64")}
# aclScalar float32 inputs (LerpScalar weight, PowScalarAndTensor scalar).
FLOAT_SCALAR = {d: ("float", "float32") for d in ["float16", "float32", "bfloat16"]}


def tmp(api):
    return f"    AscendC::Get{api}TmpBufferFactorSize(path.computeBytes, tmpLive, tmpExtra);\n"


# ---- op.toml ----------------------------------------------------------------

LARGE_F32 = "[[4096, 4096], [4096, 2048], [2048, 2048], [1000, 999]]"
LARGE_F16 = "[[4096, 4096], [4096, 2048], [8192, 1024], [8000, 999]]"
MANY20 = "[" + ", ".join(f"[{17 * i + 5}]" for i in range(1, 21)) + "]"
MANY = "[" + ", ".join(f"[{17 * i + 5}]" for i in range(1, 25)) + "]"


def toml_inputs(lists, dtypes, scalar=None, scalar_dtypes=None):
    out = []
    if scalar and scalar.get("first"):
        out.append(f'[[inputs]]\nname = "{scalar["name"]}"\ndtypes = {scalar_dtypes}\n')
    for i, l in enumerate(lists):
        rule = "" if i == 0 else f'dtype = {{ same_as = "{lists[0]}" }}\n'
        out.append(f'[[inputs]]\nname = "{l}"\ndtypes = {dtypes}\nkind = "list"\n{rule}')
    if scalar and not scalar.get("first"):
        out.append(f'[[inputs]]\nname = "{scalar["name"]}"\ndtypes = {scalar_dtypes}\n')
    return "\n".join(out)


def q(xs):
    return "[" + ", ".join(f'"{x}"' for x in xs) + "]"


def make_toml(op):
    """op.toml text; cases from op['cases'] (list of (comment, name, shapes of
    the list, dtype, extra toml lines))."""
    lists = op["lists"]
    dts = [p[0] for p in op["paths"]]
    scalar = op.get("scalar")
    sdts = sorted({p[4] for p in op["paths"]}) if scalar else None
    head = f"# {{name}}: {op['formula']}, for every tensor i of a list\n"
    head += "# (shared/ref/operators-l2.md, Foreach family).\n"
    for line in op.get("notes", []):
        head += f"# {line}\n" if line else "#\n"
    if op.get("roofline"):
        import textwrap
        for line in textwrap.wrap(op["roofline"], 68):
            head += f"# roofline: {line}\n"
    head += "# Schema: ops/README-schema.md.\n\n"
    head += "[op]\nname = \"{name}\"\nlevel = 2\nop_type = \"{optype}\"\n"
    head += f"description = \"{op['description']}\"\n\n"
    head += toml_inputs(lists, q(dts), scalar, q(sdts) if sdts else None) + "\n"
    if op.get("inplace"):
        head += ('[[outputs]]\nname = "y"\nkind = "list"\ninplace = "x"\nargument = false\n'
                 'dtype = { same_as = "x" }\n\n')
    else:
        head += f'[[outputs]]\nname = "y"\nkind = "list"\ndtype = {{ same_as = "{lists[0]}" }}\n\n'
    head += "[golden]\nbuiltin = \"{name}\"\n\n"
    for line in op.get("toml_extra", []):
        head += line + "\n"
    head += ("# No [tiling] constraints: the host code caps the tile by the UB size itself,\n"
             "# so every knob combination of op_host/ is feasible.\n")
    for comment, cname, shapes, dtype, extra in op["cases"]:
        if scalar:
            # The scalar input stays clean in the specials cases.
            sn = scalar["name"]
            extra = [e.replace(f"{sn} = {{ kind", f"{sn} = {{ specials = false, kind") for e in extra]
        head += "\n"
        for line in comment.splitlines():
            head += f"# {line}\n"
        shape_lists = ", ".join(shapes for _ in lists)
        if scalar:
            sshape = "[1]" if scalar["kind"] != "scalars" else f"[{shapes.count('[') - 1}]"
            all_shapes = f"[{sshape}, {shape_lists}]" if scalar.get("first") else f"[{shape_lists}, {sshape}]"
        else:
            all_shapes = f"[{shape_lists}]"
        head += f'[[cases]]\nname = "{cname}"\nshapes = {all_shapes}\ndtype = "{dtype}"\n'
        if scalar:
            sd = next(p[4] for p in op["paths"] if p[0] == dtype)
            if sd != dtype:
                head += f'dtypes = {{ {scalar["name"]} = "{sd}" }}\n'
        for line in extra:
            head += line + "\n"
    return head


def std_cases(op, dist="", specials="true", large="f32", int_dist="", bf16_dist=None):
    """The usual cases: the cann-ops example, the NPUKernelBench mixed list
    with tails, bfloat16, special values, one element, a long list, int32
    when the operator takes it, and the large case."""
    dts = [p[0] for p in op["paths"]]
    scalar_line = op.get("scalar_case", [])
    d = [dist] if dist else []
    cases = [
        ("cann-ops example: two fp32 [8, 2048] tensors.", "f32_cann_2x8x2048", "[[8, 2048], [8, 2048]]",
         "float32", d + scalar_line),
        ("NPUKernelBench lists [1], [15], [512, 3], [24, 1023] in fp16: tails of\n"
         "2, 30, 3072 and 49104 bytes (not multiples of a tile).", "f16_nkb_mixed",
         "[[1], [15], [512, 3], [24, 1023]]", "float16", d + scalar_line),
        ("bfloat16 (computed in float32), three tensors.", "bf16_three", "[[512, 3], [16, 64, 128], [24, 1023]]",
         "bfloat16", ([bf16_dist] if bf16_dist else d) + scalar_line),
    ]
    if specials and specials == "true" and any(p[0] == "float16" and p[1] != p[2] for p in op["paths"]):
        specials = '["inf", "nan", "zero", "tiny"]'
        cases.append(("Special values (inf, NaN, +-0, tiny) in every tensor; odd sizes. float16 computes\n"
                      "in float32 here, so `huge` is left out: a float32 result above 65504 must round to\n"
                      "inf, but the simulator's float32 -> float16 Cast saturates to 65504 (the A2 Cast's\n"
                      "documented saturation; as in addcdiv). The float32 cases are unaffected.",
                      "f16_specials", "[[3, 1001], [7], [64]]", "float16",
                      d + [f"specials = {specials}"] + scalar_line))
    elif specials:
        cases.append(("Special values (inf, NaN, +-0, huge, tiny) in every tensor; odd sizes.",
                      "f16_specials", "[[3, 1001], [7], [64]]", "float16",
                      d + [f"specials = {specials}"] + scalar_line))
    cases.append(("One element.", "f32_one", "[[1]]", "float32", d + scalar_line))
    if len(op["lists"]) < 3:
        cases.append(("A long list: 24 tensors of 22 to 413 elements (a core walks many tensors).",
                      "f32_many", MANY, "float32", d + scalar_line))
    else:
        cases.append(("A long list: 20 tensors per list of 22 to 345 elements (a core walks many\n"
                      "tensors; the simulator's tiling request takes at most 64 inputs).",
                      "f32_many", MANY20, "float32", d + scalar_line))
    if "int32" in dts:
        cases.append(("int32 over the whole range (wrapping where the formula overflows).", "i32_two",
                      "[[4, 1000], [999]]", "int32",
                      ([int_dist] if int_dist else []) + op.get("scalar_case_int", scalar_line)))
    if large == "f32":
        cases.append(("Large: 30.4 M fp32 elements in four tensors (243 MB moved, more than the\n192 MB L2) (launch head under 20% of\n"
                      "the Task Duration).", "f32_large", LARGE_F32, "float32", d + scalar_line))
    else:
        cases.append(("Large: 41.6 M fp16 elements in four tensors per list (launch head under 20% of\n"
                      "the Task Duration).", "f16_large", LARGE_F16, "float16", d + scalar_line))
    return cases


def unary_lib(name, api, formula, description, dist, notes, bf16_tol=True, specials="true", dist_bf16=None):
    op = dict(
        name=name, lists=["x"], formula=formula, description=description,
        paths=paths(F16, F32, BF16),
        body=f"{api}(y, a, tmpLocal, n);",
        tmp_host=tmp(api),
        path_note=f"{api} is the math library API (guide 6.2.4.1); bfloat16 is cast to float32 and back.",
        notes=notes,
    )
    if bf16_tol:
        op["toml_extra"] = [
            "# The golden is exact (f64, rounded once); the float32 math API is a few",
            "# f32 ulps off, which can flip the final bfloat16 rounding: one bf16 ulp.",
            "[tolerance.bfloat16]", "atol = 8e-3", "rtol = 8e-3", "",
        ]
    op["cases"] = std_cases(op, dist=dist, specials=specials, bf16_dist=dist_bf16)
    return op


OPS = []

# ---- unary (math library) ----------------------------------------------------
OPS.append(dict(unary_lib("acos", "Acos", "y = acos(x)", "y[i] = acos(x[i]); NaN outside [-1, 1]",
                     "inputs = { x = { kind = \"uniform\", low = -1.0, high = 1.0 } }",
                     ["acos is NaN outside [-1, 1] (the specials case feeds inf and huge)."]), roofline="vector-bound: on the largest case the slowest block's vector pipe is 97% busy (HBM at 57% of its bandwidth): the Acos API (guide 6.2.4.1) is 32 float32 vector instructions per element (asin of a reduced argument (with a square root for |x| > 1/2) and the quadrant fix-ups, all evaluated and selected), while the roofline counts one operation per element. The tile and the temporary space are sized so that each tile is one API call."))
OPS.append(dict(unary_lib("asin", "Asin", "y = asin(x)", "y[i] = asin(x[i]); NaN outside [-1, 1]",
                     "inputs = { x = { kind = \"uniform\", low = -1.0, high = 1.0 } }",
                     ["asin is NaN outside [-1, 1] (the specials case feeds inf and huge)."]), roofline="vector-bound: on the largest case the slowest block's vector pipe is 96% busy (HBM at 67% of its bandwidth): the Asin API (guide 6.2.4.1) is 27 float32 vector instructions per element (a polynomial on |x| <= 1/2 and the square-root form beyond, both evaluated and selected), while the roofline counts one operation per element. The tile and the temporary space are sized so that each tile is one API call."))
OPS.append(dict(unary_lib("erf", "Erf", "y = erf(x)", "y[i] = erf(x[i])",
                     "inputs = { x = { kind = \"normal\", scale = 2.0 } }", []), roofline="vector-bound: on the largest case the slowest block's vector pipe is 97% busy (HBM at 43% of its bandwidth): the Erf API (guide 6.2.4.1) is 46 float32 vector instructions per element (a polynomial for |x| < 1 and the erfc form beyond, both evaluated and selected), while the roofline counts one operation per element. The tile and the temporary space are sized so that each tile is one API call."))
OPS.append(dict(unary_lib("erfc", "Erfc", "y = 1 - erf(x)", "y[i] = erfc(x[i]) = 1 - erf(x[i])",
                     "inputs = { x = { kind = \"uniform\", low = -3.0, high = 3.0 } }",
                     ["x in [-3, 3]: erfc underflows quickly beyond (the math API's relative",
                      "error grows as 2 x^2 * 6e-8)."]), roofline="vector-bound: on the largest case the slowest block's vector pipe is 96% busy (HBM at 61% of its bandwidth): the Erfc API (guide 6.2.4.1) is 31 float32 vector instructions per element (t = 1/(1 + |x|/2), an exponential of a degree-9 polynomial in t and the reflection for x < 0), while the roofline counts one operation per element. The tile and the temporary space are sized so that each tile is one API call."))
OPS.append(unary_lib("sigmoid", "Sigmoid", "y = 1 / (1 + e^-x)", "y[i] = 1 / (1 + exp(-x[i]))",
                     "inputs = { x = { kind = \"normal\", scale = 5.0 } }", []))
OPS.append(unary_lib("sinh", "Sinh", "y = (e^x - e^-x) / 2", "y[i] = sinh(x[i]); overflows to inf",
                     "inputs = { x = { kind = \"uniform\", low = -10.0, high = 10.0 } }", []))
OPS.append(dict(unary_lib("tan", "Tan", "y = tan(x)", "y[i] = tan(x[i])",
                     "inputs = { x = { kind = \"uniform\", low = -1.4, high = 1.4 } }",
                     ["x in [-1.4, 1.4]: near the poles of tan a float16 input's rounding",
                      "dominates any comparison."], specials='["nan", "zero", "inf"]'), roofline="vector-bound: on the largest case the slowest block's vector pipe is 98% busy (HBM at 45% of its bandwidth): the Tan API (guide 6.2.4.1) is 41 float32 vector instructions per element (a Cody-Waite reduction by pi/2, sine and cosine polynomials and a quotient chosen by quadrant), while the roofline counts one operation per element. The tile and the temporary space are sized so that each tile is one API call."))
OPS.append(unary_lib("tanh", "Tanh", "y = tanh(x)", "y[i] = tanh(x[i])",
                     "inputs = { x = { kind = \"normal\", scale = 3.0 } }",
                     []))

# ---- unary (vector instructions) -----------------------------------------------
_log2 = dict(
    name="log2", lists=["x"], formula="y = log2(x)", description="y[i] = log2(x[i]); -inf at 0, NaN below",
    paths=paths(F16, F32, BF16),
    body="if constexpr (sizeof(C) == sizeof(float)) {\n    Log2(y, a, n);\n} else {\n"
         "    Log2(y, a, tmpLocal, n);\n}",
    tmp_host=tmp("Log2"),
    path_note="Log2 (guide 6.2.4.1.6) computes ln x / ln 2; float16 through float32 in its temporary space.",
    notes=["Inputs are positive except in the specials case (0 gives -inf, -0 too)."],
    toml_extra=["# The golden is exact; ln x * (1/ln 2) in float32 is a few f32 ulps off:",
                "# one bf16 ulp.", "[tolerance.bfloat16]", "atol = 8e-3", "rtol = 8e-3", ""],
)
_log2["cases"] = std_cases(_log2, dist="inputs = { x = { sign = \"positive\", scale = 100.0 } }",
                           specials='["inf", "nan", "zero", "huge"]')
OPS.append(_log2)

_exp = dict(
    name="exp", lists=["x"], formula="y = e^x", description="y[i] = exp(x[i]); overflows to inf",
    paths=paths(F16, F32, BF16), body="Exp(y, a, n);",
    path_note="Exp is the vector instruction; float16 runs natively, bfloat16 through float32.",
    notes=["x in [-12, 12]: float16 overflows to inf above 11.09, as the golden does."],
)
_exp["cases"] = std_cases(_exp, dist="inputs = { x = { kind = \"uniform\", low = -12.0, high = 12.0 } }")
OPS.append(_exp)

_sqrt = dict(
    name="sqrt", lists=["x"], formula="y = sqrt(x)", description="y[i] = sqrt(x[i]); NaN for x < 0",
    paths=paths(F16, F32, BF16), body="Sqrt(y, a, n);",
    path_note="Sqrt is the vector instruction (correctly rounded); bfloat16 through float32.",
    notes=["NPUKernelBench feeds randn: negative inputs give NaN, as in the specials and",
           "bfloat16 cases; the others are positive."],
)
_sqrt["cases"] = std_cases(_sqrt, dist="inputs = { x = { sign = \"positive\", scale = 100.0 } }",
                           bf16_dist="inputs = { x = { kind = \"normal\", scale = 4.0 } }")
# The specials case keeps both signs.
_sqrt["cases"] = [(c, n, s, d, [e for e in ex if not (n == "f16_specials" and "positive" in e)])
                  for c, n, s, d, ex in _sqrt["cases"]]
OPS.append(_sqrt)

_recip = dict(
    name="reciprocal", lists=["x"], formula="y = 1 / x", description="y[i] = 1 / x[i]; +-inf at +-0",
    paths=paths(F16, F32, BF16), body="Div(y, auxLocal, a, n);", aux="static_cast<C>(1.0f)",
    path_note="The Reciprocal instruction is not exact (guide 6.2.3.3.1.4), so y = Div(ones, x) with a tile\n"
              "// of ones filled once per core; bfloat16 through float32.",
    notes=[],
)
_recip["cases"] = std_cases(_recip)
OPS.append(_recip)

_neg = dict(
    name="neg", lists=["x"], formula="y = -x", description="y[i] = -x[i]; int32 wraps",
    paths=paths(F16, F32, BF16, I32), body="Muls(y, a, static_cast<C>(-1), n);",
    path_note="-x is Muls by -1 (exact; int32 wraps at -2^31); bfloat16 through float32.",
    notes=["Floats flip the sign exactly (signed zeros, inf and NaN included); int32",
           "wraps, -(-2^31) = -2^31."],
)
_neg["cases"] = std_cases(_neg, int_dist='specials = ["huge", "zero", "tiny"]')
OPS.append(_neg)

_sign = dict(
    name="sign", lists=["x"], formula="y = sign(x)", description="y[i] = sign(x[i]): -1, 0 or 1; NaN stays NaN",
    paths=paths(F16, F32, BF16, I32),
    body="if constexpr (IsSameType<C, int32_t>::value) {\n"
         "    Maxs(y, a, static_cast<C>(-1), n);\n"
         "    Mins(y, y, static_cast<C>(1), n);\n"
         "} else {\n"
         "    Sign(y, a, tmpLocal, n);\n"
         "}",
    tmp_host="    if (dtype != ge::DT_INT32) {\n"
             "        AscendC::GetSignTmpBufferFactorSize(path.computeBytes, tmpLive, tmpExtra);\n    }\n",
    path_note="Floats use the Sign API (guide 6.2.4.1); int32 clamps to [-1, 1] with Maxs and Mins.",
    notes=["int8 and int64 (in the CANN dtype list) are not offered: the vector unit has",
           "no int8/int64 Maxs; deviation noted below.",
           "deviation: int8 and int64 lists are not accepted (float16, float32,",
           "deviation: bfloat16 and int32 are)."],
)
_sign["cases"] = std_cases(_sign, int_dist='specials = ["huge", "zero", "tiny"]')
OPS.append(_sign)

# ---- scalar forms ------------------------------------------------------------------
SCALAR_12 = 'scalar = { kind = "uniform", low = 1.2, high = 1.2 }'


def scalar_op(name, formula, description, body, notes, ints=True, half=F16, bodyflags=None, dist="",
              scalar_dist=SCALAR_12, int_scalar='scalar = { kind = "int", low = -7, high = -7 }', **kw):
    ps = [half, F32, BF16] + ([I32] if ints else [])
    op = dict(name=name, lists=["x"], formula=formula, description=description,
              paths=paths(*ps, scalar=SCALAR_RULE), body=body,
              scalar=dict(name="scalar", kind="scalar"), notes=notes,
              path_note=kw.pop("path_note", "bfloat16 computes in float32 with a float32 scalar."))
    op.update(kw)
    op["scalar_case"] = [f"inputs = {{ {scalar_dist}{', ' + dist if dist else ''} }}"]
    op["scalar_case_int"] = [f"inputs = {{ {int_scalar} }}", 'specials = ["huge", "zero", "tiny"]']
    op["cases"] = std_cases(op)
    return op


OPS.append(scalar_op("add_scalar", "y = x + scalar", "y[i] = x[i] + scalar; int32 wraps",
                     "Adds(y, a, scalar, n);",
                     ["scalar is a one-element tensor of x's dtype (float32 for bfloat16 x);",
                      "the cases use 1.2 (NPUKernelBench) and -7 for int32."]))
OPS.append(scalar_op("sub_scalar", "y = x - scalar", "y[i] = x[i] - scalar; int32 wraps",
                     "Adds(y, a, scalar, n);",
                     ["scalar is a one-element tensor of x's dtype (float32 for bfloat16 x);",
                      "the kernel adds -scalar (exact: negation is exact, int32 wraps)."],
                     negate=True))
OPS.append(scalar_op("mul_scalar", "y = x * scalar", "y[i] = x[i] * scalar; int32 wraps",
                     "Muls(y, a, scalar, n);",
                     ["scalar is a one-element tensor of x's dtype (float32 for bfloat16 x)."]))
OPS.append(scalar_op("maximum_scalar", "y = max(x, scalar)", "y[i] = max(x[i], scalar); NaN propagates",
                     "Maxs(y, a, scalar, n);",
                     ["torch.maximum semantics: a NaN element gives NaN."]))
OPS.append(scalar_op("minimum_scalar", "y = min(x, scalar)", "y[i] = min(x[i], scalar); NaN propagates",
                     "Mins(y, a, scalar, n);",
                     ["torch.minimum semantics: a NaN element gives NaN."]))
OPS.append(scalar_op("div_scalar", "y = x / scalar", "y[i] = x[i] / scalar",
                     "Div(y, a, auxLocal, n);",
                     ["float16 is computed in float32 (the CANN kernel does so too); the divide",
                      "is a Div by a tile holding the scalar (exact, unlike a reciprocal)."],
                     ints=False, half=F16F, aux="scalar",
                     path_note="float16 and bfloat16 compute in float32; Div by a tile of the scalar, filled once."))
_pow = scalar_op("pow_scalar", "y = x ^ scalar", "y[i] = x[i] ^ scalar (scalar: the exponent)",
                 "Power(y, a, scalar, tmpLocal, n);",
                 ["Exponents: 2 (default cases), 0.5, 3, -1 and 1.5 (NPUKernelBench's list);",
                  "negative bases meet a non-integral exponent only in the specials case (NaN)."],
                 dist='x = { sign = "positive", scale = 4.0 }',
                 scalar_dist='scalar = { kind = "uniform", low = 2.0, high = 2.0 }',
                 int_scalar='scalar = { kind = "int", low = 3, high = 3 }, x = { kind = "int", low = -1000, high = 1000 }',
                 tmp_host="    AscendC::GetPowerTmpBufferFactorSize(true, false, dtype == ge::DT_INT32, path.computeBytes,\n"
                          "                                        tmpLive, tmpExtra);\n",
                 path_note="Power (guide 6.2.4.1.8) with a scalar exponent; bfloat16 through float32.",
                 toml_extra=["# The golden is exact; Power computes exp(y ln|x|) in float32, a few f32",
                             "# ulps off: one bf16 ulp.", "[tolerance.bfloat16]", "atol = 8e-3",
                             "rtol = 8e-3", ""])
_pow["cases"] = [(c.replace("huge, tiny", "tiny") + ("\nfloat16 Power computes in float32 and casts back: `huge` is left out, its\n"
                                                     "square must round to inf but the simulator's Cast saturates to 65504."
                                                     if n == "f16_specials" else ""), n, s, d,
                  [('specials = ["inf", "nan", "zero", "tiny"]' if e == "specials = true" else e) for e in ex])
                 for c, n, s, d, ex in _pow["cases"]]
for e, tag in [("0.5", "half"), ("3.0", "three"), ("-1.0", "minus_one"), ("1.5", "three_halves")]:
    _pow["cases"].insert(-1, (f"Exponent {e}.", f"f32_exp_{tag}", "[[33, 65], [1000]]", "float32",
                              [f'inputs = {{ scalar = {{ kind = "uniform", low = {e}, high = {e} }}, '
                               f'x = {{ sign = "positive", scale = 4.0 }} }}']))
OPS.append(_pow)

_pst = dict(
    name="pow_scalar_and_tensor", lists=["x"], formula="y = scalar ^ x",
    description="y[i] = scalar ^ x[i] (scalar: the base, input order (scalar, x))",
    paths=paths(F16F, F32, BF16, scalar=FLOAT_SCALAR),
    body="Power(y, scalar, a, tmpLocal, n);",
    scalar=dict(name="scalar", kind="scalar", first=True),
    tmp_host="    AscendC::GetPowerTmpBufferFactorSize(false, true, false, path.computeBytes, tmpLive, tmpExtra);\n",
    path_note="Power (guide 6.2.4.1.8) with a scalar base, in float32 for every dtype (a float16 base\n"
              "// would lose the scalar's precision).",
    notes=["The scalar (the base) is a float32 aclScalar; the op def lists int32 too but",
           "the CANN kernel has only float paths, so int32 is not offered.",
           "deviation: int32 x is not accepted (the CANN kernel has no int32 path)."],
    toml_extra=["# The golden is exact; Power computes exp(x ln s) in float32: one bf16 ulp.",
                "[tolerance.bfloat16]", "atol = 8e-3", "rtol = 8e-3", ""],
)
_pst["scalar_case"] = ['inputs = { scalar = { kind = "uniform", low = 1.2, high = 1.2 }, '
                       'x = { kind = "uniform", low = -20.0, high = 20.0 } }']
_pst["cases"] = std_cases(_pst)
OPS.append(_pst)

_asl = dict(
    name="add_scalar_list", lists=["x"], formula="y = x + scalars[i]",
    description="y[i] = x[i] + scalars[i]; int32 wraps",
    paths=paths(F16F, F32, BF16, I32, scalar=SCALAR_LIST_RULE), body="Adds(y, a, scalar, n);",
    scalar=dict(name="scalars", kind="scalars"),
    path_note="The scalars are float32 (int64 for int32 x), one per tensor, read when a core enters the\n"
              "// tensor; float16 and bfloat16 add in float32 (the scalar is not rounded to x's dtype).",
    notes=["scalars holds one value per tensor: float32 for float x, int64 for int32 x",
           "(wrapped to int32 like the sum)."],
)
_asl["scalar_case"] = ['inputs = { scalars = { kind = "normal", scale = 3.0 } }']
_asl["scalar_case_int"] = ['inputs = { scalars = { kind = "int", low = -100000, high = 100000 } }',
                           'specials = ["huge", "zero", "tiny"]']
_asl["cases"] = std_cases(_asl)
OPS.append(_asl)

# ---- list forms ----------------------------------------------------------------------
_add_list = dict(
    name="add_list", lists=["x1", "x2"], formula="y = x1 + alpha * x2",
    description="y[i] = x1[i] + alpha * x2[i]; int32 wraps",
    paths=paths(F16F, F32, BF16, I32, scalar=SCALAR_RULE),
    body="Muls(y, b, scalar, n);\nAdd(y, a, y, n);",
    scalar=dict(name="alpha", kind="scalar"),
    path_note="alpha * x2 then + x1, in float32 steps for the 16-bit floats (int32 wraps).",
    notes=["alpha follows the Scalar dtype rule (x's dtype, float32 for bfloat16).",
           "The golden evaluates alpha * x2, then x1 + that, in float32 steps."],
)
_add_list["scalar_case"] = ['inputs = { alpha = { kind = "uniform", low = 1.2, high = 1.2 } }']
_add_list["scalar_case_int"] = ['inputs = { alpha = { kind = "int", low = 3, high = 3 } }',
                                'specials = ["huge", "zero", "tiny"]']
_add_list["cases"] = std_cases(_add_list, large="f16")
OPS.append(_add_list)

_div_list = dict(
    name="div_list", lists=["x1", "x2"], formula="y = x1 / x2", description="y[i] = x1[i] / x2[i]",
    paths=paths(F16, F32, BF16), body="Div(y, a, b, n);",
    path_note="Div is exact in float16 and float32; bfloat16 through float32.", notes=[],
)
_div_list["cases"] = std_cases(_div_list, large="f16")
OPS.append(_div_list)

_mul_list = dict(
    name="mul_list", lists=["x1", "x2"], formula="y = x1 * x2", description="y[i] = x1[i] * x2[i]; int32 wraps",
    paths=paths(F16, F32, BF16, I32), body="Mul(y, a, b, n);",
    path_note="Mul is exact (one rounding) in float16 and float32; bfloat16 through float32.", notes=[],
)
_mul_list["cases"] = std_cases(_mul_list, large="f16", int_dist='specials = ["huge", "zero", "tiny"]')
OPS.append(_mul_list)

_lerp = dict(
    name="lerp_scalar", lists=["x1", "x2"], formula="y = x1 + weight * (x2 - x1)",
    description="y[i] = x1[i] + weight * (x2[i] - x1[i]), torch's two-sided form",
    paths=paths(F16F, F32, BF16, scalar=FLOAT_SCALAR),
    body="Sub(y, b, a, n);\n"
         "if (scalar < 0.5f && scalar > -0.5f) {\n"
         "    Muls(y, y, scalar, n);\n"
         "    Add(y, a, y, n);\n"
         "} else {\n"
         "    Muls(y, y, scalar - 1.0f, n);\n"
         "    Add(y, b, y, n);\n"
         "}",
    scalar=dict(name="weight", kind="scalar", ctype="float"),
    path_note="torch.lerp's two-sided form, the side chosen once on the scalar unit: |w| < 0.5 gives\n"
              "// x1 + w (x2 - x1), otherwise x2 + (w - 1)(x2 - x1); float32 steps for the 16-bit floats.",
    notes=["weight is a float32 aclScalar. |w| < 0.5: x1 + w (x2 - x1); otherwise",
           "x2 + (w - 1)(x2 - x1), both in float32 steps (the golden too)."],
)
_lerp["scalar_case"] = ['inputs = { weight = { kind = "uniform", low = 0.3, high = 0.3 } }']
_lerp["cases"] = std_cases(_lerp, large="f16")
_lerp["cases"].insert(-1, ("The other side: weight 0.75.", "f32_weight_high", "[[33, 65], [1000]]", "float32",
                           ['inputs = { weight = { kind = "uniform", low = 0.75, high = 0.75 } }']))
_lerp["cases"].insert(-1, ("Weight -0.5 (|w| = 0.5 takes the x2 side).", "f16_weight_neg_half",
                           "[[33, 65], [1000]]", "float16",
                           ['inputs = { weight = { kind = "uniform", low = -0.5, high = -0.5 } }']))
OPS.append(_lerp)

# ---- pointwise forms -------------------------------------------------------------------
_addcdiv = dict(
    name="addcdiv_scalar", lists=["x1", "x2", "x3"], formula="y = x1 + scalar * x2 / x3",
    description="y[i] = x1[i] + scalar * (x2[i] / x3[i])",
    paths=paths(F16F, F32, BF16, scalar=SCALAR_RULE),
    body="Div(y, b, c, n);\nMuls(y, y, scalar, n);\nAdd(y, a, y, n);",
    scalar=dict(name="scalar", kind="scalar"),
    path_note="x2 / x3, times the scalar, plus x1, in float32 steps for the 16-bit floats.",
    notes=["torch._foreach_addcdiv(x1, x2, x3, value). The golden evaluates x2 / x3,",
           "then scalar * that, then x1 + that, in float32 steps, as the kernel does."],
)
_addcdiv["scalar_case"] = ['inputs = { scalar = { kind = "uniform", low = 1.2, high = 1.2 }, '
                           'x3 = { kind = "uniform", low = 0.5, high = 4.0, specials = ["inf", "nan", "zero"] } }']
_addcdiv["notes"] += ["x3 is drawn from [0.5, 4) with inf, NaN and +-0 injected in every case (x / 0 is",
                      "+-inf, 0 / 0 NaN): a finite float32 quotient above 65504 would have to round to inf",
                      "in float16, but the simulator's float32 -> float16 Cast saturates (as in addcdiv)."]
_addcdiv["cases"] = std_cases(_addcdiv, large="f16")
OPS.append(_addcdiv)

_addcmul = dict(
    name="addcmul_scalar", lists=["x1", "x2", "x3"], formula="y = x1 + scalar * x2 * x3",
    description="y[i] = x1[i] + scalar * x2[i] * x3[i]; int32 wraps",
    paths=paths(F16F, F32, BF16, I32, scalar=SCALAR_RULE),
    body="Mul(y, b, c, n);\nMuls(y, y, scalar, n);\nAdd(y, a, y, n);",
    scalar=dict(name="scalar", kind="scalar"),
    path_note="x2 * x3, times the scalar, plus x1, in float32 steps for the 16-bit floats; int32 wraps.",
    notes=["torch._foreach_addcmul(x1, x2, x3, value). The golden evaluates x2 * x3,",
           "then scalar * that, then x1 + that, in float32 steps (int32 wraps each step)."],
)
_addcmul["scalar_case"] = ['inputs = { scalar = { kind = "uniform", low = 1.2, high = 1.2 } }']
_addcmul["scalar_case_int"] = ['inputs = { scalar = { kind = "int", low = 3, high = 3 } }',
                               'specials = ["huge", "zero", "tiny"]']
_addcmul["cases"] = std_cases(_addcmul, large="f16")
OPS.append(_addcmul)

_addcmul_sl = dict(
    name="addcmul_scalar_list", lists=["x1", "x2", "x3"], formula="y = x1 + scalars[i] * x2 * x3",
    description="y[i] = x1[i] + scalars[i] * x2[i] * x3[i]; int32 wraps",
    paths=paths(F16F, F32, BF16, I32),
    body="Mul(y, b, c, n);\nMuls(y, y, scalar, n);\nAdd(y, a, y, n);",
    scalar=dict(name="scalars", kind="scalars"),
    path_note="The scalars (x's dtype, one per tensor) are read when a core enters the tensor;\n"
              "// float32 steps for the 16-bit floats; int32 wraps.",
    notes=["As in cann-ops, scalars is a tensor of n elements with x's dtype."],
)
_addcmul_sl["scalar_case"] = ['inputs = { scalars = { kind = "normal", scale = 2.0 } }']
_addcmul_sl["scalar_case_int"] = ['inputs = { scalars = { kind = "int", low = -9, high = 9 } }',
                                  'specials = ["huge", "zero", "tiny"]']
_addcmul_sl["cases"] = std_cases(_addcmul_sl, large="f16")
OPS.append(_addcmul_sl)

for _op in OPS:
    _op["toml"] = make_toml(_op)

# ---- round_off_number -------------------------------------------------------------------
_round = dict(
    name="round_off_number", lists=["x"], formula="y = round(x, roundMode)",
    description="y[i] = x[i] rounded by roundMode (1 rint, 2 floor, 3 ceil, 4 half away, 5 trunc, 6 odd, 7 frac)",
    paths=paths(F16F, F32, BF16, scalar={d: ("int8_t", "int8") for d in ["float16", "float32", "bfloat16"]}),
    body="if (mode == 1) {\n    Round(y, a, tmpLocal, n);\n"
         "} else if (mode == 2) {\n    Floor(y, a, tmpLocal, n);\n"
         "} else if (mode == 3) {\n    Ceil(y, a, tmpLocal, n);\n"
         "} else if (mode == 4) {\n    Cast(y, a, RoundMode::CAST_ROUND, n);\n"
         "} else if (mode == 5) {\n    Trunc(y, a, tmpLocal, n);\n"
         "} else if (mode == 6) {\n    RoundToOdd(y, a, n);\n"
         "} else if (mode == 7) {\n    Frac(y, a, tmpLocal, n);\n"
         "} else {\n    // Unchanged (-0 and NaN kept).\n    Muls(y, a, 1.0f, n);\n"
         "}",
    scalar=dict(name="roundMode", kind="mode"),
    tmp_host=tmp("Frac"),
    scratch=3,
    methods="""// Round to odd: an inexact x goes to the neighbouring odd integer, i.e.
// t = trunc(x), plus sign(x - t) when t is even. Computed on x clamped to
// [-2^24, 2^24] (exact there); beyond, every float is an integer, and adding
// back x - clamp(x) gives x itself (infinities included; NaN stays NaN).
__aicore__ inline void RoundToOdd(const LocalTensor<float>& y, const LocalTensor<float>& x, uint32_t n)
{
    LocalTensor<float> scratch = scratchBuf.Get<float>();
    LocalTensor<float> even = scratch;
    LocalTensor<float> frac = scratch[tileLength];
    LocalTensor<float> clamped = scratch[2 * tileLength];
    Maxs(clamped, x, -16777216.0f, n);
    Mins(clamped, clamped, 16777216.0f, n);
    // y = t = trunc(clamped); even = 1 - (t mod 2), 1 when t is even.
    Cast(y, clamped, RoundMode::CAST_TRUNC, n);
    Muls(even, y, 0.5f, n);
    Cast(even, even, RoundMode::CAST_FLOOR, n);
    Muls(even, even, 2.0f, n);
    Sub(even, y, even, n);
    Muls(even, even, -1.0f, n);
    Adds(even, even, 1.0f, n);
    // y += even * sign(clamped - t).
    Sub(frac, clamped, y, n);
    Sign(frac, frac, tmpLocal, n);
    Mul(even, even, frac, n);
    Add(y, y, even, n);
    // y += x - clamped (0 unless |x| > 2^24).
    Sub(frac, x, clamped, n);
    Add(y, y, frac, n);
}""",
    path_note="Every dtype rounds in float32 (the CANN kernel does so) and casts back with rint; the\n"
              "// mode is read once per core and selects the rounding API.",
    notes=["roundMode is a one-element int8 tensor: 1 rint, 2 floor, 3 ceil, 4 half away",
           "from zero, 5 trunc, 6 round to odd (an inexact x goes to the neighbouring odd",
           "integer), 7 frac (x - trunc x), any other value leaves x unchanged."],
)


def _mode(m):
    return [f'inputs = {{ roundMode = {{ kind = "int", low = {m}, high = {m} }}, '
            f'x = {{ kind = "uniform", low = -40.0, high = 40.0 }} }}']


_round["cases"] = [
    ("Mode 1 (rint) on the cann-ops example shape.", "f32_rint", "[[8, 2048], [8, 2048]]", "float32", _mode(1)),
    ("Mode 2 (floor), NPUKernelBench lists with tails.", "f16_floor", "[[1], [15], [512, 3], [24, 1023]]",
     "float16", _mode(2)),
    ("Mode 3 (ceil) in bfloat16.", "bf16_ceil", "[[512, 3], [16, 64, 128], [24, 1023]]", "bfloat16", _mode(3)),
    ("Mode 4 (half away from zero) with special values.", "f16_round_specials", "[[3, 1001], [7], [64]]",
     "float16", _mode(4) + ["specials = true"]),
    ("Mode 5 (trunc).", "f32_trunc", "[[1], [1000]]", "float32", _mode(5)),
    ("Mode 6 (round to odd) with special values (infinities and huge values stay).", "f32_odd",
     "[[33, 65], [1000]]", "float32", _mode(6) + ["specials = true"]),
    ("Mode 7 (frac).", "f32_frac_many", MANY, "float32", _mode(7)),
    ("Mode 9: unchanged.", "f16_unchanged", "[[100], [37]]", "float16", _mode(9)),
    ("Large: 30.4 M fp32 elements in four tensors (243 MB moved, more than the\n192 MB L2), mode 1 (launch head under 20%\nof the Task Duration).",
     "f32_large", LARGE_F32, "float32", _mode(1)),
]
_round["toml"] = make_toml(_round)
OPS.append(_round)

# ---- bit moves --------------------------------------------------------------------------
ALL_COPY = ["float16", "float32", "bfloat16", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64",
            "float64", "bool"]
_copy = dict(
    name="copy", kind="copy", move="uint8_t", lists=["x"], formula="y = x (a bit copy)",
    description="y[i] = x[i], a bit copy of any of twelve dtypes",
    paths=[(d, "uint8_t", "uint8_t", "uint8_t", d) for d in ALL_COPY], body="",
    path_note="Every dtype moves as bytes through a bound VECIN/VECOUT queue\n"
              "// (TQueBind), so MTE2 and MTE3 overlap with no vector work; whole 32 B blocks move\n"
              "// with DataCopy, a tail with DataCopyPad.",
    notes=["Shapes from NPUKernelBench (Copy): [48, 1024], [512, 2048], [24, 16, 128, 128],",
           "[8192] + [2048], and [512, 2048] + [1024, 512, 128] + [48, 2048] (scaled down)."],
    cases=[
        ("NPUKernelBench [48, 1024] fp16.", "f16_48x1024", "[[48, 1024]]", "float16", ["specials = true"]),
        ("NPUKernelBench [8192] + [2048] fp32.", "f32_8192_2048", "[[8192], [2048]]", "float32", []),
        ("bfloat16, three tensors with tails.", "bf16_three", "[[512, 3], [16, 64, 128], [24, 1023]]",
         "bfloat16", []),
        ("int8 with odd sizes (1-byte tails).", "i8_tails", "[[1], [15], [333]]", "int8", []),
        ("uint8.", "u8_two", "[[100, 7], [64]]", "uint8", []),
        ("int16.", "i16_two", "[[3, 1001], [7]]", "int16", []),
        ("uint16.", "u16_two", "[[99], [2048]]", "uint16", []),
        ("int32 over the whole range.", "i32_two", "[[4, 1000], [999]]", "int32", ['specials = ["huge"]']),
        ("uint32.", "u32_one", "[[1000]]", "uint32", []),
        ("int64.", "i64_two", "[[3, 333], [5]]", "int64", ['specials = ["huge"]']),
        ("float64 with special values.", "f64_specials", "[[257], [31]]", "float64", ["specials = true"]),
        ("bool.", "bool_three", "[[1], [100], [4099]]", "bool", []),
        ("A long list: 24 fp32 tensors of 22 to 413 elements.", "f32_many", MANY, "float32", []),
        ("Large: [512, 2048] + [1024, 512, 128] + [48, 2048] fp32 (NPUKernelBench), 68.3 M\n"
         "elements, scaled to [512, 2048] + [512, 512, 128] + [48, 2048]: 34.7 M elements, 277 MB\n"
         "moved (launch head under 20% of the Task Duration).", "f32_large", "[[512, 2048], [512, 512, 128], [48, 2048]]",
         "float32", []),
    ],
)
_copy["toml"] = make_toml(_copy)
OPS.append(_copy)

_zero = dict(
    name="zero_inplace", kind="zero", move="uint16_t", lists=["x"], inplace=True, formula="x := 0 in place",
    description="x[i] := 0 in place; no output tensor",
    paths=[(d, "uint16_t", "uint16_t", "uint16_t", d) for d in ["float16", "float32", "bfloat16", "int16", "int32"]],
    body="",
    path_note="A tile of zeros is filled once per core (Duplicate)\n"
              "// and stored over every range the core owns (no input read); whole 32 B blocks with\n"
              "// DataCopy, a tail with DataCopyPad. Every dtype is cleared as 16-bit words.",
    notes=["x is both input and output (torch._foreach_zero_): the kernel has no output",
           "argument and the tensors of x are compared with zeros after the launch.",
           "Shapes from NPUKernelBench (ZeroInplace). The roofline floor counts x's bytes",
           "as read and written; the kernel only writes, so it can exceed 100%."],
    cases=[
        ("NPUKernelBench [48, 1024] fp16, with special values to be overwritten.", "f16_48x1024",
         "[[48, 1024]]", "float16", ["specials = true"]),
        ("NPUKernelBench [8192] + [2048] fp32.", "f32_8192_2048", "[[8192], [2048]]", "float32", []),
        ("bfloat16, three tensors with tails.", "bf16_three", "[[512, 3], [16, 64, 128], [24, 1023]]",
         "bfloat16", []),
        ("int16 with odd sizes.", "i16_tails", "[[1], [15], [3, 1001]]", "int16", []),
        ("int32.", "i32_two", "[[4, 1000], [999]]", "int32", []),
        ("A long list: 24 fp32 tensors of 22 to 413 elements.", "f32_many", MANY, "float32", []),
        ("Large: NPUKernelBench [512, 2048] + [1024, 512, 128] + [48, 2048] fp32: 68.3 M\n"
         "elements, writes only (launch head under 20% of the Task Duration).", "f32_large",
         "[[512, 2048], [1024, 512, 128], [48, 2048]]", "float32", []),
    ],
)
_zero["toml"] = make_toml(_zero)
OPS.append(_zero)
