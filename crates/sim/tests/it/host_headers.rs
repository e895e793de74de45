//! Host-side constructs of public op_host code that are not AscendC APIs
//! (clean-room fixtures, issue 21), compiled with g++ against the
//! emulation headers and run: graph-mode shape inference that reads a
//! constant input as a ge::Tensor (never run by the simulator; it must
//! compile), GE's unknown-dimension markers, GE's Status codes used
//! unqualified after `using namespace ge`, and the std names
//! platform/platform_info.h declares globally.

use std::process::Command;

use crate::kernel_lib::sim_dir;

const GRAPH_INFERENCE: &str = r#"
#include <vector>
#include "register/op_def_registry.h"
#include "tiling/platform/platform_ascendc.h"
namespace ge {
template <typename T>
static void ConstValues(const Operator& op, const Tensor& t, std::vector<int64_t>& out) {
  const T* p = (const T*)t.GetData();
  size_t n = t.GetSize() / sizeof(T);
  for (size_t i = 0; i < n; i++) out.push_back(p[i]);
  Tensor again;
  if (op.GetInputConstData("num", again) == GRAPH_SUCCESS) out.push_back(-9);
}
}  // namespace ge
int main() {
  std::vector<int64_t> values;
  ge::Operator op;
  ge::Tensor t;
  ge::ConstValues<int32_t>(op, t, values);
  bool dynamic = ge::UNKNOWN_DIM == -1 && ge::UNKNOWN_DIM_NUM == -2;
  return values.empty() && dynamic ? 0 : 1;
}
"#;

/// Compiles `source` against the emulation headers and runs it; the
/// program's exit status must be 0.
fn compile_and_run(source: &str) {
    let dir = tempfile::tempdir().unwrap();
    let cpp = dir.path().join("graph.cpp");
    let exe = dir.path().join("graph");
    std::fs::write(&cpp, source).unwrap();
    let out = Command::new("g++")
        .args(["-std=c++17", "-O0", "-I"])
        .arg(sim_dir().join("include"))
        .arg(&cpp)
        .arg("-o")
        .arg(&exe)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(Command::new(&exe).status().unwrap().success());
}

#[test]
fn graph_inference_on_constant_inputs_compiles() {
    compile_and_run(GRAPH_INFERENCE);
}

/// A tiling helper returning GE's Status, checked against SUCCESS without
/// qualification after `using namespace ge` (SUCCESS is 0, FAILED is not),
/// in a file that also defines its own SUCCESS macro before the headers.
const GE_STATUS: &str = r#"
#define SUCCESS 0
#include "register/op_def_registry.h"
#include "tiling/platform/platform_ascendc.h"
static const int kMacro = SUCCESS;
#undef SUCCESS
using namespace ge;
namespace optiling {
static Status CheckRows(int64_t rows) { return rows > 0 ? ge::SUCCESS : FAILED; }
}  // namespace optiling
int main() {
  bool ok = optiling::CheckRows(3) == SUCCESS && optiling::CheckRows(0) != SUCCESS;
  return ok && kMacro == 0 && SUCCESS == GRAPH_SUCCESS ? 0 : 1;
}
"#;

#[test]
fn ge_status_codes_are_usable_unqualified() {
    compile_and_run(GE_STATUS);
}

/// A tiling source that includes platform/platform_info.h and names
/// `map`, `vector` and `string` unqualified, as CANN's header of that name
/// lets it (its global `using` declarations); the names are std's own.
const PLATFORM_INFO_STD_NAMES: &str = r#"
#include <type_traits>
#include "platform/platform_info.h"
#include "register/op_def_registry.h"
namespace optiling {
static const map<ge::DataType, int32_t> BUFFERS_PER_DTYPE = {
    {ge::DT_FLOAT, 3}, {ge::DT_FLOAT16, 5}};
static int32_t Buffers(ge::DataType dt) {
  auto it = BUFFERS_PER_DTYPE.find(dt);
  return it == BUFFERS_PER_DTYPE.end() ? -1 : it->second;
}
}  // namespace optiling
int main() {
  vector<string> names{"x", "y"};
  bool same = std::is_same<map<int, int>, std::map<int, int>>::value;
  return optiling::Buffers(ge::DT_FLOAT16) == 5 && optiling::Buffers(ge::DT_INT8) == -1 &&
                 names.size() == 2 && same
             ? 0
             : 1;
}
"#;

#[test]
fn platform_info_brings_map_string_and_vector_into_scope() {
    compile_and_run(PLATFORM_INFO_STD_NAMES);
}

/// PlatFormInfos::GetLocalMemSize, as cann-ops tilings ask it for the UB
/// (`platformInfo->GetLocalMemSize(fe::LocalMemType::UB, ubSize)`): the
/// platform's sizes.
const LOCAL_MEM_SIZE: &str = r#"
#include "register/op_def_registry.h"
int main() {
  fe::PlatFormInfos pi{};
  pi.info_.ub_size = 196608;
  pi.info_.l1_size = 524288;
  pi.info_.l0c_size = 131072;
  fe::PlatFormInfos* platformInfo = &pi;
  uint64_t ub = 0, l1 = 0, l0c = 0, none = 7;
  platformInfo->GetLocalMemSize(fe::LocalMemType::UB, ub);
  platformInfo->GetLocalMemSize(fe::LocalMemType::L1, l1);
  platformInfo->GetLocalMemSize(fe::LocalMemType::L0_C, l0c);
  platformInfo->GetLocalMemSize(fe::LocalMemType::RESERVED, none);
  return ub == 196608 && l1 == 524288 && l0c == 131072 && none == 0 ? 0 : 1;
}
"#;

#[test]
fn platform_infos_give_local_memory_sizes() {
    compile_and_run(LOCAL_MEM_SIZE);
}

/// TilingData fields named like the setters' parameters (`value`,
/// `values`): `set_value(2.5f)` sets the field (a public Addcdiv sample
/// names its attribute's field `value`; the setter once assigned its
/// parameter to itself and the kernel read 0).
const FIELD_NAMED_VALUE: &str = r#"
#include "register/tilingdata_base.h"
namespace optiling {
BEGIN_TILING_DATA_DEF(Inner)
  TILING_DATA_FIELD_DEF(uint32_t, value);
END_TILING_DATA_DEF;
BEGIN_TILING_DATA_DEF(ValueTiling)
  TILING_DATA_FIELD_DEF(float, value);
  TILING_DATA_FIELD_DEF_ARR(uint32_t, 2, values);
  TILING_DATA_FIELD_DEF_STRUCT(Inner, ascendopt_new_value_holder);
END_TILING_DATA_DEF;
}  // namespace optiling
int main() {
  optiling::ValueTiling t;
  t.set_value(2.5f);
  const uint32_t two[2] = {7, 9};
  t.set_values(two);
  optiling::Inner inner;
  inner.set_value(11);
  t.set_ascendopt_new_value_holder(inner);
  return t.get_value() == 2.5f && t.values[0] == 7 && t.values[1] == 9 &&
                 t.ascendopt_new_value_holder.value == 11
             ? 0
             : 1;
}
"#;

#[test]
fn tiling_fields_named_value_are_set_by_their_setters() {
    compile_and_run(FIELD_NAMED_VALUE);
}

/// The matmul tiling's TPosition::LCM, VECCALC's other name (guide
/// 6.2.6.7), as the CV fusion examples set the C matrix's position.
const MATMUL_TILING_LCM: &str = r#"
#include "register/op_def_registry.h"
#include "tiling/tiling_api.h"
using namespace matmul_tiling;
int main() {
  return TPosition::LCM == TPosition::VECCALC && TPosition::LCM != TPosition::GM ? 0 : 1;
}
"#;

#[test]
fn matmul_tiling_positions_know_lcm() {
    compile_and_run(MATMUL_TILING_LCM);
}
