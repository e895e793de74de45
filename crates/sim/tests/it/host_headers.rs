//! Host-side constructs of public op_host code that are not AscendC APIs
//! (clean-room fixtures, issue 21), compiled with g++ against the
//! emulation headers and run: graph-mode shape inference that reads a
//! constant input as a ge::Tensor (never run by the simulator; it must
//! compile) and GE's unknown-dimension markers.

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

#[test]
fn graph_inference_on_constant_inputs_compiles() {
    let dir = tempfile::tempdir().unwrap();
    let cpp = dir.path().join("graph.cpp");
    let exe = dir.path().join("graph");
    std::fs::write(&cpp, GRAPH_INFERENCE).unwrap();
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
