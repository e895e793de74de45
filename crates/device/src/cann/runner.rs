//! The aclnn runner: a small C++ program generated per operator that runs
//! one case on the chip through the operator's aclnn entry points and
//! times it, as cann-device.md §3 ("Call") and §4 ("Events") document;
//! and the chip's error codes read back into messages (§5).
//!
//! The runner takes a job folder, written by the device ([`super::job`]):
//! `job.txt`, one line per tensor or attribute in the aclnn call's order
//! (inputs, then attributes, then outputs, as msopgen generates
//! `aclnn<Op>GetWorkspaceSize`):
//!
//! ```text
//! in  <acl dtype enum> <rank> <dims...> <file>
//! attr <int|float|bool> <value>
//! out <acl dtype enum> <rank> <dims...> <file>
//! ```
//!
//! Input files hold the raw elements; output files hold the poison the
//! caller chose and are copied to the device before the first launch, so
//! an element the kernel never writes stays poisoned. The first launch is
//! the checked one: after it (and a stream sync) the outputs are copied
//! back and written over their files, and `result.txt` gets `outputs
//! written`. Then the timing ([`TIMING`]): `warmup` launches and a sync,
//! then `repeats` launches, each alone between a pair of events followed
//! by a stream sync (the executor is made repeatable after phase 1);
//! `result.txt` gets `sample_us <v>` per timed launch and `status ok`, or
//! `status error <code> <message>` (`aclGetRecentErrMsg`) at the first
//! failing call. Every sync is `aclrtSynchronizeStreamWithTimeout`, so a
//! kernel that never ends surfaces as 507046 when the runtime notices it;
//! the device keeps its own wall-clock limit too. The process exits 0
//! only when the status is ok.
//!
//! `runner --reset <device>` only sets and resets the device
//! (`aclrtResetDevice`) in a fresh process: what the device runs after a
//! runner was killed or reported a fault that poisons the process.
//!
//! The source has never been compiled (no CANN headers on the machines
//! that built this) nor run on a chip: the tests check its calls and the
//! reading of its results, and run the whole loop against a scripted
//! stand-in of the runner that writes the same files.

use ascendopt_op::opdef::OpDefDesc;

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

/// The runner's C++ source for `def` (the header and entry point the
/// msopgen build generates, [`super::build::BuildPlan`]).
pub fn source(def: &OpDefDesc) -> String {
    let op = &def.op_type;
    let header = format!("aclnn_{}.h", snake_case(op));
    let n_in = def.inputs.len();
    let n_attr = def.attrs.len();
    let n_out = def.outputs.len();
    let mut args = Vec::new();
    for i in 0..n_in {
        args.push(format!("ins[{i}]"));
    }
    for (k, a) in def.attrs.iter().enumerate() {
        args.push(match a.ty.as_str() {
            "Float" => format!("attrs[{k}].f"),
            "Bool" => format!("attrs[{k}].b"),
            _ => format!("attrs[{k}].i"),
        });
    }
    for i in 0..n_out {
        args.push(format!("outs[{i}]"));
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
struct Tensor {{ int dtype; std::vector<int64_t> dims; std::string file; size_t bytes; void* dev; aclTensor* t; }};
struct Attr {{ int64_t i; double f; bool b; }};
std::string g_dir;
FILE* g_result = nullptr;

int finish(int code, const char* where) {{
  const char* msg = aclGetRecentErrMsg();
  fprintf(g_result, "status error %d %s: %s\n", code, where, msg != nullptr ? msg : "");
  fclose(g_result);
  return 1;
}}
#define CHECK(call) do {{ int rc_ = (int)(call); if (rc_ != 0) return finish(rc_, #call); }} while (0)

size_t elem_size(int dtype) {{ return (size_t)aclDataTypeSize((aclDataType)dtype); }}

bool read_tensor_line(FILE* f, Tensor& t) {{
  int rank = 0;
  char path[4096];
  if (fscanf(f, "%d %d", &t.dtype, &rank) != 2 || rank < 0 || rank > 8) return false;
  t.dims.resize(rank);
  size_t n = 1;
  for (int d = 0; d < rank; ++d) {{
    long long v = 0;
    if (fscanf(f, "%lld", &v) != 1 || v < 0) return false;
    t.dims[d] = v;
    n *= (size_t)v;
  }}
  if (fscanf(f, "%4095s", path) != 1) return false;
  t.file = g_dir + "/" + path;
  t.bytes = n * elem_size(t.dtype);
  return true;
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
  if (job == nullptr) {{ fprintf(g_result, "status error -1 no job.txt\n"); fclose(g_result); return 1; }}
  std::vector<Tensor> in_t, out_t;
  std::vector<Attr> attrs;
  char kind[8];
  while (fscanf(job, "%7s", kind) == 1) {{
    if (strcmp(kind, "attr") == 0) {{
      char type[8], value[64];
      if (fscanf(job, "%7s %63s", type, value) != 2) break;
      Attr a{{}};
      a.i = strtoll(value, nullptr, 10); a.f = strtod(value, nullptr); a.b = strcmp(value, "true") == 0 || strcmp(value, "1") == 0;
      attrs.push_back(a);
    }} else {{
      Tensor t{{}};
      if (!read_tensor_line(job, t)) {{ fprintf(g_result, "status error -1 malformed job.txt\n"); fclose(g_result); return 1; }}
      (strcmp(kind, "in") == 0 ? in_t : out_t).push_back(t);
    }}
  }}
  fclose(job);
  if (in_t.size() != {n_in} || attrs.size() != {n_attr} || out_t.size() != {n_out}) {{
    fprintf(g_result, "status error -1 job.txt has %zu inputs, %zu attributes, %zu outputs; {op} takes {n_in}, {n_attr}, {n_out}\n",
            in_t.size(), attrs.size(), out_t.size());
    fclose(g_result);
    return 1;
  }}
  CHECK(aclInit(nullptr));
  CHECK(aclrtSetDevice(device));
  CHECK(aclrtSetOpExecuteTimeOut((uint32_t)(sync_ms / 1000 + 1)));
  aclrtStream stream = nullptr;
  CHECK(aclrtCreateStream(&stream));
  std::vector<aclTensor*> ins, outs;
  for (auto* list : {{&in_t, &out_t}}) {{
    for (Tensor& t : *list) {{
      std::vector<char> host(t.bytes);
      FILE* f = fopen(t.file.c_str(), "rb");
      if (f == nullptr || fread(host.data(), 1, t.bytes, f) != t.bytes) {{ if (f) fclose(f); return finish(-1, t.file.c_str()); }}
      fclose(f);
      CHECK(aclrtMalloc(&t.dev, t.bytes == 0 ? 1 : t.bytes, ACL_MEM_MALLOC_HUGE_FIRST));
      if (t.bytes != 0) CHECK(aclrtMemcpy(t.dev, t.bytes, host.data(), t.bytes, ACL_MEMCPY_HOST_TO_DEVICE));
      std::vector<int64_t> strides(t.dims.size(), 1);
      for (int d = (int)t.dims.size() - 2; d >= 0; --d) strides[d] = strides[d + 1] * t.dims[d + 1];
      t.t = aclCreateTensor(t.dims.data(), t.dims.size(), (aclDataType)t.dtype, strides.data(), 0, ACL_FORMAT_ND,
                            t.dims.data(), t.dims.size(), t.dev);
      (list == &in_t ? ins : outs).push_back(t.t);
    }}
  }}
  uint64_t ws_size = 0;
  aclOpExecutor* exec = nullptr;
  CHECK(aclnn{op}GetWorkspaceSize({call_args}, &ws_size, &exec));
  CHECK(aclSetAclOpExecutorRepeatable(exec));
  void* ws = nullptr;
  if (ws_size > 0) CHECK(aclrtMalloc(&ws, ws_size, ACL_MEM_MALLOC_HUGE_FIRST));
  // The checked launch: its outputs are the ones compared.
  CHECK(aclnn{op}(ws, ws_size, exec, stream));
  CHECK(aclrtSynchronizeStreamWithTimeout(stream, sync_ms));
  for (Tensor& t : out_t) {{
    std::vector<char> host(t.bytes);
    if (t.bytes != 0) CHECK(aclrtMemcpy(host.data(), t.bytes, t.dev, t.bytes, ACL_MEMCPY_DEVICE_TO_HOST));
    FILE* f = fopen(t.file.c_str(), "wb");
    if (f == nullptr || fwrite(host.data(), 1, t.bytes, f) != t.bytes) {{ if (f) fclose(f); return finish(-1, t.file.c_str()); }}
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
  for (auto* list : {{&in_t, &out_t}}) for (Tensor& t : *list) {{ aclDestroyTensor(t.t); aclrtFree(t.dev); }}
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
