//! The aclnn runner: a small C++ program generated per operator that runs
//! one case on the chip through the operator's aclnn entry points and
//! times it, as cann-device.md §3 ("Call") and §4 ("Events") document;
//! and the chip's error codes read back into messages (§5).
//!
//! The runner takes a job folder, written by the device ([`super::job`]):
//! `job.txt`, one line per argument of the aclnn call, in its order
//! (inputs, then attributes, then outputs, as msopgen generates
//! `aclnn<Op>GetWorkspaceSize`; guide 2.10.2.9):
//!
//! ```text
//! in <acl dtype enum> <rank> <dims...> <file>     an input tensor
//! in_list <n>                                     an input tensor list (aclCreateTensorList)
//!   item <acl dtype enum> <rank> <dims...> <file>   of the next n lines
//! in_absent                                       an optional input left out (nullptr)
//! attr int|float|bool <value>
//! attr str x<hex bytes>                           a string attribute (char*)
//! attr ints|floats|bools <n> <values...>          aclIntArray / aclFloatArray / aclBoolArray
//! out <acl dtype enum> <rank> <dims...> <file>    an output tensor
//! out_alias <input> <file>                        an output in input <input>'s memory (in place)
//! out_list <n>                                    an output tensor list of the next n
//!   item ... | item_alias <input> <file>            lines
//! readback <input> <file>                         an in-place output with no argument
//! ```
//!
//! `<input>` counts the input tensors in the order of the file (list items
//! included). An output named like an input has no argument of its own:
//! the generated aclnn keeps the input alone (`<name>Ref`, guide
//! 2.10.2.9), and the kernel's result is read back from that input's
//! memory (`readback`). An in-place output that is an argument of its own
//! gets an `aclTensor` over the input's memory [I: the guide describes
//! only the `Ref` form]. Input files hold the raw elements; output files
//! hold the poison the caller chose and are copied to the device before
//! the first launch, so an element the kernel never writes stays poisoned.
//! The first launch is the checked one: after it (and a stream sync) every
//! output (in-place ones from their input's memory) is copied back and
//! written over its file, and `result.txt` gets `outputs written`. Then
//! the timing ([`TIMING`]): `warmup` launches and a sync, then `repeats`
//! launches, each alone between a pair of events followed by a stream
//! sync (the executor is made repeatable after phase 1); `result.txt` gets
//! `sample_us <v>` per timed launch and `status ok`, or `status error
//! <code> <message>` (`aclGetRecentErrMsg`) at the first failing call; a
//! job whose arguments do not match the operator's (a list where a tensor
//! goes, a missing attribute) is `status error -1`. Every sync is
//! `aclrtSynchronizeStreamWithTimeout`, so a kernel that never ends
//! surfaces as 507046 when the runtime notices it; the device keeps its
//! own wall-clock limit too. The process exits 0 only when the status is
//! ok.
//!
//! `runner --reset <device>` only sets and resets the device
//! (`aclrtResetDevice`) in a fresh process: what the device runs after a
//! runner was killed or reported a fault that poisons the process.
//!
//! The source has never been compiled (no CANN headers on the machines
//! that built this) nor run on a chip: the tests check its calls and the
//! reading of its results, and run the whole loop against a scripted
//! stand-in of the runner that writes the same files.

use ascendopt_op::opdef::{OpDefDesc, ParamType};

use super::build::snake_case;
use ascendopt_op::Dtype;

/// How the runner times a case, for the record: warm-up launches, then
/// timed launches, one launch between each pair of events (cann-device.md
/// §4: "3 warm-ups + 100 trials, one event pair + sync each" seen in
/// practice). The harness summarises the samples (median, spread) and its
/// acceptance rule compares them.
pub const TIMING: &str = "warm-up launches then one event pair + stream sync around each timed launch (aclrtEventElapsedTime), µs per sample";

/// The `aclDataType` enum value of a dtype (`acl_base.h`: ACL_FLOAT 0,
/// ACL_FLOAT16 1, ACL_INT8 2, ACL_INT32 3, ACL_UINT8 4, ACL_INT16 6,
/// ACL_UINT16 7, ACL_UINT32 8, ACL_INT64 9, ACL_UINT64 10, ACL_DOUBLE 11,
/// ACL_BOOL 12, ACL_COMPLEX64 16, ACL_BF16 27).
pub fn acl_dtype(dtype: Dtype) -> i32 {
    match dtype {
        Dtype::Float32 => 0,
        Dtype::Float16 => 1,
        Dtype::Int8 => 2,
        Dtype::Int32 => 3,
        Dtype::Uint8 => 4,
        Dtype::Int16 => 6,
        Dtype::Uint16 => 7,
        Dtype::Uint32 => 8,
        Dtype::Int64 => 9,
        Dtype::Uint64 => 10,
        Dtype::Float64 => 11,
        Dtype::Bool => 12,
        Dtype::Complex64 => 16,
        Dtype::Bfloat16 => 27,
    }
}

/// What an error code of the runtime or aclnn means (cann-device.md §3,
/// §5; `rt_error_codes.h` via public code), and whether the device is
/// left unusable for the process (a fault poisons it: fail and exit).
pub fn acl_error(code: i64) -> (&'static str, bool) {
    match code {
        561002 => ("the operator's tiling failed (aclnn 561002)", false),
        561003 => (
            "no kernel binary matches this call (aclnn 561003: kernel not found)",
            false,
        ),
        107022 => ("task aborted after an earlier failure (107022)", true),
        207001 => ("device out of memory (207001)", false),
        507000 => ("runtime internal error (507000)", true),
        507014 => ("AI Core timeout: the kernel did not finish (507014)", true),
        507015 => ("AI Core exception: the kernel faulted (507015)", true),
        507018 => ("AI CPU exception (507018)", true),
        507035 => (
            "vector core exception, e.g. an MTE access out of range (507035)",
            true,
        ),
        507046 => ("stream synchronisation timed out (507046)", true),
        507899 => (
            "driver error (507899; sticky: the device needs a reset)",
            true,
        ),
        _ => ("unknown error code", true),
    }
}

/// How the runner passes each OpDef input: `T` one tensor, `O` an
/// optional tensor (nullptr when the case leaves it out), `L` a tensor
/// list (`DYNAMIC`).
fn input_kinds(def: &OpDefDesc) -> String {
    def.inputs
        .iter()
        .map(|p| match p.param_type {
            ParamType::Dynamic => 'L',
            ParamType::Optional => 'O',
            _ => 'T',
        })
        .collect()
}

/// How the runner passes each output argument: `T` or `L`. An output
/// named like an input is no argument of its own: the generated aclnn
/// keeps only the input (`<name>Ref`, guide 2.10.2.9), and the runner
/// reads the output back from that input's memory (`readback`).
fn output_kinds(def: &OpDefDesc) -> String {
    call_outputs(def)
        .map(|p| match p.param_type {
            ParamType::Dynamic => 'L',
            _ => 'T',
        })
        .collect()
}

fn call_outputs(def: &OpDefDesc) -> impl Iterator<Item = &ascendopt_op::opdef::ParamDesc> {
    def.outputs
        .iter()
        .filter(|o| !def.inputs.iter().any(|i| i.name == o.name))
}

/// The call argument of attribute `k` of OpDef type `ty` (guide 2.10.2.9
/// shows `double` for a float attribute; a string is a `char*` and a list
/// an `aclIntArray*`/`aclFloatArray*`/`aclBoolArray*` [I: the guide names
/// the three array types for value-depend inputs; attributes are our
/// reading]).
fn attr_arg(k: usize, ty: &str) -> String {
    match ty {
        "Float" => format!("attrs[{k}].f"),
        "Bool" => format!("attrs[{k}].b"),
        "String" => format!("attrs[{k}].str()"),
        "ListInt" => format!("attrs[{k}].int_array()"),
        "ListFloat" => format!("attrs[{k}].float_array()"),
        "ListBool" => format!("attrs[{k}].bool_array()"),
        _ => format!("attrs[{k}].i"),
    }
}

/// The runner's C++ source for `def` (the header and entry point the
/// msopgen build generates, [`super::build::BuildPlan`]). An operator
/// with a value-depend input is called through
/// `aclnn<Op>TensorGetWorkspaceSize`, the variant that takes that input
/// as an `aclTensor` (guide 2.10.2.9).
pub fn source(def: &OpDefDesc) -> String {
    let op = &def.op_type;
    let header = format!("aclnn_{}.h", snake_case(op));
    let in_kinds = input_kinds(def);
    let out_kinds = output_kinds(def);
    let attr_kinds: String = def
        .attrs
        .iter()
        .map(|a| match a.ty.as_str() {
            "Float" => 'f',
            "Bool" => 'b',
            "String" => 's',
            "ListInt" | "ListBool" => 'I',
            "ListFloat" => 'F',
            _ => 'i',
        })
        .collect();
    let value_depend = def
        .inputs
        .iter()
        .any(|p| !p.value_depend.is_empty() && p.value_depend != "ignore");
    let phase1 = if value_depend {
        format!("aclnn{op}TensorGetWorkspaceSize")
    } else {
        format!("aclnn{op}GetWorkspaceSize")
    };
    let mut args = Vec::new();
    for (k, kind) in in_kinds.chars().enumerate() {
        args.push(if kind == 'L' {
            format!("in_args[{k}].list")
        } else {
            format!("in_args[{k}].tensor")
        });
    }
    for (k, a) in def.attrs.iter().enumerate() {
        args.push(attr_arg(k, &a.ty));
    }
    for (k, kind) in out_kinds.chars().enumerate() {
        args.push(if kind == 'L' {
            format!("out_args[{k}].list")
        } else {
            format!("out_args[{k}].tensor")
        });
    }
    let call_args = args.join(", ");
    format!(
        r#"// Generated by ascendopt: runs one case of {op} through aclnn{op} and times it.
// Usage: runner <job folder> <device id> <warmup> <repeats> <sync timeout ms> | runner --reset <device id>
#include <acl/acl.h>
#include "{header}"
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {{
// A tensor on the device: its own memory, or (in place) an input's.
struct Tensor {{ int dtype = 0; std::vector<int64_t> dims; std::string file; size_t bytes = 0; int alias = -1; void* dev = nullptr; aclTensor* t = nullptr; }};
// One argument of the call: a tensor, a tensor list, or nullptr (an absent optional input).
struct Arg {{ char kind = 'N'; std::vector<int> tensors; aclTensor* tensor = nullptr; aclTensorList* list = nullptr; }};
struct Attr {{
  char kind = 'i'; int64_t i = 0; double f = 0.0; bool b = false; std::string s;
  std::vector<int64_t> ints; std::vector<float> floats; std::vector<char> bools_storage;
  aclIntArray* ia = nullptr; aclFloatArray* fa = nullptr; aclBoolArray* ba = nullptr;
  char* str() {{ return &s[0]; }}
  aclIntArray* int_array() {{ if (ia == nullptr) ia = aclCreateIntArray(ints.data(), ints.size()); return ia; }}
  aclFloatArray* float_array() {{ if (fa == nullptr) fa = aclCreateFloatArray(floats.data(), floats.size()); return fa; }}
  aclBoolArray* bool_array() {{
    if (ba == nullptr) {{
      bool* v = new bool[ints.size() + 1];
      for (size_t k = 0; k < ints.size(); ++k) v[k] = ints[k] != 0;
      ba = aclCreateBoolArray(v, ints.size());
      delete[] v;
    }}
    return ba;
  }}
}};
// What {op} takes: inputs (T tensor, O optional, L list), attributes, outputs.
const char kInputs[] = "{in_kinds}";
const char kAttrs[] = "{attr_kinds}";
const char kOutputs[] = "{out_kinds}";
std::string g_dir;
FILE* g_result = nullptr;
std::vector<Tensor> g_tensors;  // every tensor of the job: inputs in job order, then outputs
std::vector<int> g_inputs;      // the input tensors in job order (what `alias`/`readback` count)
std::vector<std::pair<int, std::string>> g_written;  // (tensor, file) written back after the checked launch

int finish(int code, const char* where) {{
  const char* msg = aclGetRecentErrMsg();
  fprintf(g_result, "status error %d %s: %s\n", code, where, msg != nullptr ? msg : "");
  fclose(g_result);
  return 1;
}}
int job_error(const char* what) {{
  fprintf(g_result, "status error -1 job.txt: %s\n", what);
  fclose(g_result);
  return 1;
}}
#define CHECK(call) do {{ int rc_ = (int)(call); if (rc_ != 0) return finish(rc_, #call); }} while (0)

size_t elem_size(int dtype) {{ return (size_t)aclDataTypeSize((aclDataType)dtype); }}

// `<dtype> <rank> <dims...> <file>`: a tensor with memory of its own.
int read_tensor(FILE* f, bool input) {{
  Tensor t;
  int rank = 0;
  char path[4096];
  if (fscanf(f, "%d %d", &t.dtype, &rank) != 2 || rank < 0 || rank > 8) return -1;
  t.dims.resize(rank);
  size_t n = 1;
  for (int d = 0; d < rank; ++d) {{
    long long v = 0;
    if (fscanf(f, "%lld", &v) != 1 || v < 0) return -1;
    t.dims[d] = v;
    n *= (size_t)v;
  }}
  if (fscanf(f, "%4095s", path) != 1) return -1;
  t.file = g_dir + "/" + path;
  t.bytes = n * elem_size(t.dtype);
  g_tensors.push_back(t);
  const int id = (int)g_tensors.size() - 1;
  if (input) g_inputs.push_back(id);
  else g_written.push_back({{id, t.file}});
  return id;
}}

// `<input> <file>`: an output in input `<input>`'s memory (in place).
int read_alias(FILE* f) {{
  int k = -1;
  char path[4096];
  if (fscanf(f, "%d %4095s", &k, path) != 2 || k < 0 || k >= (int)g_inputs.size()) return -1;
  Tensor t = g_tensors[g_inputs[k]];
  t.alias = g_inputs[k];
  t.file = g_dir + "/" + path;
  g_tensors.push_back(t);
  const int id = (int)g_tensors.size() - 1;
  g_written.push_back({{id, t.file}});
  return id;
}}

// `<n>` then n `item` (or, for outputs, `item_alias`) lines.
bool read_list(FILE* f, bool input, Arg& arg) {{
  int n = 0;
  if (fscanf(f, "%d", &n) != 1 || n < 0 || n > 4096) return false;
  arg.kind = 'L';
  for (int k = 0; k < n; ++k) {{
    char kind[16];
    if (fscanf(f, "%15s", kind) != 1) return false;
    int id = -1;
    if (strcmp(kind, "item") == 0) id = read_tensor(f, input);
    else if (!input && strcmp(kind, "item_alias") == 0) id = read_alias(f);
    if (id < 0) return false;
    arg.tensors.push_back(id);
  }}
  return true;
}}

bool read_attr(FILE* f, Attr& a) {{
  char type[8];
  if (fscanf(f, "%7s", type) != 1) return false;
  if (strcmp(type, "str") == 0) {{
    // `x` then the bytes in hex (a string may hold spaces).
    char hex[8194];
    if (fscanf(f, "%8193s", hex) != 1 || hex[0] != 'x' || strlen(hex) % 2 != 1) return false;
    a.kind = 's';
    for (size_t k = 1; hex[k] != '\0'; k += 2) {{
      char byte[3] = {{hex[k], hex[k + 1], '\0'}};
      a.s.push_back((char)strtol(byte, nullptr, 16));
    }}
    return true;
  }}
  if (strcmp(type, "ints") == 0 || strcmp(type, "bools") == 0 || strcmp(type, "floats") == 0) {{
    int n = 0;
    if (fscanf(f, "%d", &n) != 1 || n < 0 || n > 65536) return false;
    a.kind = type[0] == 'f' ? 'F' : 'I';
    for (int k = 0; k < n; ++k) {{
      char value[64];
      if (fscanf(f, "%63s", value) != 1) return false;
      if (a.kind == 'F') a.floats.push_back(strtof(value, nullptr));
      else a.ints.push_back(strcmp(value, "true") == 0 ? 1 : strtoll(value, nullptr, 10));
    }}
    return true;
  }}
  char value[64];
  if (fscanf(f, "%63s", value) != 1) return false;
  a.kind = type[0] == 'f' ? 'f' : type[0] == 'b' ? 'b' : 'i';
  a.i = strtoll(value, nullptr, 10); a.f = strtod(value, nullptr); a.b = strcmp(value, "true") == 0 || strcmp(value, "1") == 0;
  return true;
}}

aclTensor* make_tensor(Tensor& t) {{
  std::vector<int64_t> strides(t.dims.size(), 1);
  for (int d = (int)t.dims.size() - 2; d >= 0; --d) strides[d] = strides[d + 1] * t.dims[d + 1];
  return aclCreateTensor(t.dims.data(), t.dims.size(), (aclDataType)t.dtype, strides.data(), 0, ACL_FORMAT_ND,
                         t.dims.data(), t.dims.size(), t.dev);
}}

void make_arg(Arg& arg) {{
  if (arg.kind == 'T') arg.tensor = g_tensors[arg.tensors[0]].t;
  if (arg.kind == 'L') {{
    std::vector<aclTensor*> ts;
    for (int id : arg.tensors) ts.push_back(g_tensors[id].t);
    arg.list = aclCreateTensorList(ts.data(), ts.size());
  }}
}}
}}  // namespace

int reset_device(int device) {{
  int rc = (int)aclInit(nullptr);
  if (rc == 0) rc = (int)aclrtSetDevice(device);
  if (rc == 0) rc = (int)aclrtResetDevice(device);
  aclFinalize();
  if (rc != 0) {{ const char* m = aclGetRecentErrMsg(); fprintf(stderr, "reset failed: %d %s\n", rc, m != nullptr ? m : ""); return 1; }}
  return 0;
}}

int main(int argc, char** argv) {{
  if (argc == 3 && strcmp(argv[1], "--reset") == 0) return reset_device(atoi(argv[2]));
  if (argc != 6) {{ fprintf(stderr, "usage: %s <job folder> <device id> <warmup> <repeats> <sync timeout ms> | --reset <device id>\n", argv[0]); return 2; }}
  g_dir = argv[1];
  const int device = atoi(argv[2]), warmup = atoi(argv[3]), repeats = atoi(argv[4]);
  const int32_t sync_ms = (int32_t)atoi(argv[5]);
  g_result = fopen((g_dir + "/result.txt").c_str(), "w");
  if (g_result == nullptr) return 2;
  FILE* job = fopen((g_dir + "/job.txt").c_str(), "r");
  if (job == nullptr) return job_error("missing");
  std::vector<Arg> in_args, out_args;
  std::vector<Attr> attrs;
  char kind[16];
  bool ok = true;
  while (ok && fscanf(job, "%15s", kind) == 1) {{
    Arg arg;
    if (strcmp(kind, "in") == 0 || strcmp(kind, "out") == 0) {{
      arg.kind = 'T';
      const int id = read_tensor(job, kind[0] == 'i');
      ok = id >= 0;
      arg.tensors.push_back(id);
      (kind[0] == 'i' ? in_args : out_args).push_back(arg);
    }} else if (strcmp(kind, "in_list") == 0 || strcmp(kind, "out_list") == 0) {{
      ok = read_list(job, kind[0] == 'i', arg);
      (kind[0] == 'i' ? in_args : out_args).push_back(arg);
    }} else if (strcmp(kind, "in_absent") == 0) {{
      in_args.push_back(arg);
    }} else if (strcmp(kind, "out_alias") == 0) {{
      arg.kind = 'T';
      const int id = read_alias(job);
      ok = id >= 0;
      arg.tensors.push_back(id);
      out_args.push_back(arg);
    }} else if (strcmp(kind, "readback") == 0) {{
      ok = read_alias(job) >= 0;
    }} else if (strcmp(kind, "attr") == 0) {{
      Attr a;
      ok = read_attr(job, a);
      attrs.push_back(a);
    }} else {{
      ok = false;
    }}
  }}
  fclose(job);
  if (!ok) return job_error("malformed");
  if (in_args.size() != strlen(kInputs) || attrs.size() != strlen(kAttrs) || out_args.size() != strlen(kOutputs)) {{
    fprintf(g_result, "status error -1 job.txt has %zu inputs, %zu attributes, %zu outputs; {op} takes %zu, %zu, %zu\n",
            in_args.size(), attrs.size(), out_args.size(), strlen(kInputs), strlen(kAttrs), strlen(kOutputs));
    fclose(g_result);
    return 1;
  }}
  for (size_t k = 0; k < in_args.size(); ++k) {{
    const char want = kInputs[k], got = in_args[k].kind;
    if (!(got == want || (want == 'O' && (got == 'T' || got == 'N')))) return job_error("an input argument of the wrong kind (tensor, list, absent)");
  }}
  for (size_t k = 0; k < out_args.size(); ++k) {{
    if (out_args[k].kind != kOutputs[k]) return job_error("an output argument of the wrong kind (tensor, list)");
  }}
  for (size_t k = 0; k < attrs.size(); ++k) {{
    const char want = kAttrs[k], got = attrs[k].kind;
    if (!(got == want || (want == 'f' && got == 'i') || (want == 'F' && got == 'I'))) return job_error("an attribute of the wrong type");
    if (want == 'f' && got == 'i') attrs[k].f = (double)attrs[k].i;
    if (want == 'F' && got == 'I') for (int64_t v : attrs[k].ints) attrs[k].floats.push_back((float)v);
  }}
  CHECK(aclInit(nullptr));
  CHECK(aclrtSetDevice(device));
  CHECK(aclrtSetOpExecuteTimeOut((uint32_t)(sync_ms / 1000 + 1)));
  aclrtStream stream = nullptr;
  CHECK(aclrtCreateStream(&stream));
  for (Tensor& t : g_tensors) {{
    if (t.alias >= 0) {{ t.dev = g_tensors[t.alias].dev; t.t = make_tensor(t); continue; }}
    std::vector<char> host(t.bytes);
    FILE* f = fopen(t.file.c_str(), "rb");
    if (f == nullptr || fread(host.data(), 1, t.bytes, f) != t.bytes) {{ if (f) fclose(f); return finish(-1, t.file.c_str()); }}
    fclose(f);
    CHECK(aclrtMalloc(&t.dev, t.bytes == 0 ? 1 : t.bytes, ACL_MEM_MALLOC_HUGE_FIRST));
    if (t.bytes != 0) CHECK(aclrtMemcpy(t.dev, t.bytes, host.data(), t.bytes, ACL_MEMCPY_HOST_TO_DEVICE));
    t.t = make_tensor(t);
  }}
  for (Arg& a : in_args) make_arg(a);
  for (Arg& a : out_args) make_arg(a);
  uint64_t ws_size = 0;
  aclOpExecutor* exec = nullptr;
  CHECK({phase1}({call_args}, &ws_size, &exec));
  CHECK(aclSetAclOpExecutorRepeatable(exec));
  void* ws = nullptr;
  if (ws_size > 0) CHECK(aclrtMalloc(&ws, ws_size, ACL_MEM_MALLOC_HUGE_FIRST));
  // The checked launch: its outputs (and in-place inputs) are the ones compared.
  CHECK(aclnn{op}(ws, ws_size, exec, stream));
  CHECK(aclrtSynchronizeStreamWithTimeout(stream, sync_ms));
  for (auto& w : g_written) {{
    const Tensor& t = g_tensors[w.first];
    std::vector<char> host(t.bytes);
    if (t.bytes != 0) CHECK(aclrtMemcpy(host.data(), t.bytes, t.dev, t.bytes, ACL_MEMCPY_DEVICE_TO_HOST));
    FILE* f = fopen(w.second.c_str(), "wb");
    if (f == nullptr || fwrite(host.data(), 1, t.bytes, f) != t.bytes) {{ if (f) fclose(f); return finish(-1, w.second.c_str()); }}
    fclose(f);
  }}
  fprintf(g_result, "outputs written\n");
  fflush(g_result);
  // The timing.
  for (int i = 0; i < warmup; ++i) CHECK(aclnn{op}(ws, ws_size, exec, stream));
  CHECK(aclrtSynchronizeStreamWithTimeout(stream, sync_ms));
  aclrtEvent start = nullptr, end = nullptr;
  CHECK(aclrtCreateEvent(&start));
  CHECK(aclrtCreateEvent(&end));
  for (int i = 0; i < repeats; ++i) {{
    CHECK(aclrtRecordEvent(start, stream));
    CHECK(aclnn{op}(ws, ws_size, exec, stream));
    CHECK(aclrtRecordEvent(end, stream));
    CHECK(aclrtSynchronizeStreamWithTimeout(stream, sync_ms));
    float ms = 0.0f;
    CHECK(aclrtEventElapsedTime(&ms, start, end));
    fprintf(g_result, "sample_us %.3f\n", ms * 1000.0);
  }}
  fprintf(g_result, "status ok\n");
  fclose(g_result);
  aclrtDestroyEvent(start);
  aclrtDestroyEvent(end);
  if (ws != nullptr) aclrtFree(ws);
  // A list owns its tensors [I]: destroyed with it, the others one by one.
  std::vector<bool> in_list(g_tensors.size(), false);
  for (auto* args : {{&in_args, &out_args}}) for (Arg& a : *args) if (a.list != nullptr) {{
    aclDestroyTensorList(a.list);
    for (int id : a.tensors) in_list[id] = true;
  }}
  for (size_t k = 0; k < g_tensors.size(); ++k) {{
    if (!in_list[k]) aclDestroyTensor(g_tensors[k].t);
    if (g_tensors[k].alias < 0) aclrtFree(g_tensors[k].dev);
  }}
  for (Attr& a : attrs) {{
    if (a.ia != nullptr) aclDestroyIntArray(a.ia);
    if (a.fa != nullptr) aclDestroyFloatArray(a.fa);
    if (a.ba != nullptr) aclDestroyBoolArray(a.ba);
  }}
  aclrtDestroyStream(stream);
  aclrtResetDevice(device);
  aclFinalize();
  return 0;
}}
"#
    )
}

/// What a runner's `result.txt` says.
#[derive(Debug, Clone, PartialEq)]
pub enum RunnerResult {
    /// The case ran: one latency sample per timed launch, µs.
    Ok {
        /// The samples.
        samples_us: Vec<f64>,
    },
    /// It failed with a code and the runtime's message.
    Error {
        /// The code (-1: the runner's own).
        code: i64,
        /// What the runner and `aclGetRecentErrMsg` said, with the code's
        /// meaning.
        message: String,
        /// The device is unusable in that process.
        fatal: bool,
    },
}

/// Reads `result.txt`; None when it has no status line (the runner died:
/// the caller reports the exit status and its output).
pub fn parse_result(text: &str) -> Option<RunnerResult> {
    let mut samples = Vec::new();
    for line in text.lines() {
        if let Some(v) = line.strip_prefix("sample_us ") {
            samples.push(v.trim().parse().ok()?);
        } else if line.trim() == "status ok" {
            return Some(RunnerResult::Ok {
                samples_us: samples,
            });
        } else if let Some(rest) = line.strip_prefix("status error ") {
            let (code, said) = rest.split_once(' ').unwrap_or((rest, ""));
            let code: i64 = code.trim().parse().ok()?;
            let (meaning, fatal) = if code == -1 {
                ("the runner could not read its job", false)
            } else {
                acl_error(code)
            };
            return Some(RunnerResult::Error {
                code,
                message: format!("{meaning}: {}", said.trim()),
                fatal,
            });
        }
    }
    None
}
