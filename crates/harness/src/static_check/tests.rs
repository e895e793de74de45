//! Tests of the static check: one adversarial snippet per rule, legitimate
//! code that must pass, and the repository's operators.

use super::*;

/// Findings as `rule@file:line`.
fn check(files: &[(&str, &str)]) -> Vec<String> {
    let files: Vec<SourceFile> = files
        .iter()
        .map(|(path, text)| SourceFile {
            path: path.to_string(),
            text: text.to_string(),
        })
        .collect();
    check_sources(&files)
        .iter()
        .map(|f| format!("{}@{}:{}", f.rule, f.file, f.line))
        .collect()
}

fn kernel(src: &str) -> Vec<String> {
    check(&[("op_kernel/k.cpp", src)])
}

fn host(src: &str) -> Vec<String> {
    check(&[("op_host/h.cpp", src)])
}

const K: &str = "op_kernel/k.cpp";

fn at(rule: &str, line: u32) -> String {
    format!("{rule}@{K}:{line}")
}

/// A plausible kernel prologue: includes and the entry.
const OK_KERNEL: &str = r#"#include "kernel_operator.h"
using namespace AscendC;
constexpr int32_t BUFFER_NUM = 2;
template <typename T>
struct Same { static constexpr bool value = false; };
class KernelAdd {
public:
    __aicore__ inline KernelAdd() {}
    __aicore__ inline void Init(GM_ADDR x) : n_{4} {
        static constexpr uint32_t kBlock = 32;
        const uint32_t tile = kBlock * 2;
        DataCopyExtParams params{1, static_cast<uint32_t>(tile), 0, 0, 0};
        pipe.InitBuffer(inQueue, BUFFER_NUM, tile);
        for (int i = 0; i < 4; ++i) { n_ += i; }
        auto f = [&](int v) { return v + 1; };
        n_ = f(n_);
    }
    static __aicore__ inline uint32_t Align(uint32_t v) { return (v + 31) / 32 * 32; }
private:
    TPipe pipe;
    TQue<QuePosition::VECIN, BUFFER_NUM> inQueue;
    uint32_t n_ = 0;
    float scale = 1.0f;
};
extern "C" __global__ __aicore__ void add_custom(GM_ADDR x, GM_ADDR y, GM_ADDR tiling)
{
    GET_TILING_DATA(t, tiling);
    KernelAdd op;
    op.Init(x);
}
"#;

#[test]
fn legitimate_kernel_passes() {
    assert_eq!(kernel(OK_KERNEL), Vec::<String>::new());
}

#[test]
fn comments_and_strings_do_not_trip_rules() {
    let src = r#"#include "kernel_operator.h"
// fork(); system("rm -rf /"); static int cache = 0;
/* asm("nop"); volatile int v; */
__aicore__ inline void F() {
    printf("fopen(%s) getenv sleep(1) #pragma GCC optimize\n", "x");
    const char* s = R"(extern "C" int getpid();)";
}
"#;
    assert_eq!(kernel(src), Vec::<String>::new());
}

#[test]
fn rule_include() {
    let src = "#include <cstdio>\n#include \"../../etc/passwd\"\n#include <sys/socket.h>\n#define H <x.h>\n#include H\n#include \"ascendopt/abi.h\"\n#include <cstdint>\n#include \"register/op_def_registry.h\"\n";
    assert_eq!(
        kernel(src),
        vec![
            at("include", 1),
            at("include-path", 2),
            at("include", 3),
            at("include-path", 5),
            at("include", 6)
        ]
    );
    // An unknown header is a note (the compiler decides whether it
    // exists); a path leaving the folder rejects.
    let findings = check_sources(&[SourceFile {
        path: K.into(),
        text: src.into(),
    }]);
    let reason = rejection_reason(&findings).unwrap();
    assert_eq!(reason.lines().count(), 2, "{reason}");
    // <vector> allocates: fine in host code, not in kernel code.
    assert_eq!(kernel("#include <vector>\n"), vec![at("include", 1)]);
    assert_eq!(
        host("#include <vector>\n#include <cstdint>\n"),
        Vec::<String>::new()
    );
}

#[test]
fn include_resolution_follows_the_build() {
    let files = [
        (
            "op_kernel/k.cpp",
            "#include \"helpers/util.h\"\n#include \"my_tiling.h\"\n#include \"missing.h\"\n",
        ),
        ("op_kernel/helpers/util.h", "#include \"../k2.h\"\n"),
        ("op_kernel/k2.h", "#pragma once\n"),
        (
            "op_host/my_tiling.h",
            "#include \"register/tilingdata_base.h\"\n",
        ),
        (
            "op_host/h.cpp",
            "#include \"my_tiling.h\"\n#include \"../op_kernel/k2.h\"\n#include \"../../x.h\"\n",
        ),
    ];
    assert_eq!(
        check(&files),
        vec![
            "include@op_host/h.cpp:3".to_string(),
            "include@op_kernel/k.cpp:3".to_string()
        ]
    );
}

#[test]
fn kernel_rules_follow_includes_from_the_kernel() {
    // Kernel rules hold for the kernel's own files, the tiling header it
    // force-includes among them; a host helper that a kernel file
    // includes is still host code (public operators share such headers).
    let files = [
        ("op_kernel/k.cpp", "#include \"alloc.h\"\n"),
        (
            "op_host/alloc.h",
            "inline void* Get() { return malloc(4); }\n",
        ),
        (
            "op_host/x_tiling.h",
            "inline void* G2() { return malloc(4); }\n",
        ),
        (
            "op_host/host_only.h",
            "inline void* G3() { return malloc(4); }\n",
        ),
    ];
    assert_eq!(
        check(&files),
        vec!["kernel-heap@op_host/x_tiling.h:1".to_string()]
    );
}

#[test]
fn rule_directive() {
    let src = "#line 1 \"fake.cpp\"\n#include_next <x.h>\n#ident \"x\"\n#ifdef A\n#endif\n";
    assert_eq!(
        kernel(src),
        vec![at("directive", 1), at("directive", 2), at("directive", 3)]
    );
}

#[test]
fn rule_pragma() {
    let src = "#pragma GCC optimize(\"O0\")\n#pragma once\n#pragma omp parallel for\n#pragma GCC unroll 4\n_Pragma(\"GCC optimize 3\")\n%:pragma GCC target(\"avx2\")\n";
    assert_eq!(
        kernel(src),
        vec![
            at("pragma", 1),
            at("pragma", 3),
            at("pragma", 5),
            at("pragma", 6)
        ]
    );
}

#[test]
fn rule_inline_asm() {
    let src = "__aicore__ inline void F() {\n  asm(\"nop\");\n  __asm__ __volatile__(\"\" ::: \"memory\");\n}\n";
    assert_eq!(
        kernel(src),
        vec![at("inline-asm", 2), at("inline-asm", 3), at("volatile", 3)]
    );
}

#[test]
fn rule_forbidden_api() {
    let src = r#"__aicore__ inline void F() {
    if (fork() == 0) { execl("/bin/sh", "sh", nullptr); }
    system("id");
    FILE* f = fopen("/tmp/x", "w");
    int fd = open("/tmp/y", 0);
    const char* home = std::getenv("HOME");
    std::thread t([] {});
    usleep(10);
    std::this_thread::sleep_for(1);
    void* h = dlopen("libc.so.6", 0);
    int s = ::socket(2, 1, 0);
    pthread_create(nullptr, nullptr, nullptr, nullptr);
    srand(1);
    unlink("/tmp/z");
    fo\
rk();
    writev(1, nullptr, 0); __libc_system("id");
}
"#;
    assert_eq!(
        kernel(src),
        vec![
            at("forbidden-api", 2),
            at("forbidden-api", 2),
            at("forbidden-api", 3),
            at("forbidden-api", 4),
            at("forbidden-api", 4),
            at("forbidden-api", 5),
            // The environment, sleeping and libc's random state: harmless
            // in the sandbox, notes.
            at("sandboxed-api", 6),
            at("forbidden-api", 7),
            at("sandboxed-api", 8),
            at("forbidden-api", 9),
            at("forbidden-api", 10),
            at("forbidden-api", 11),
            at("forbidden-api", 12),
            at("sandboxed-api", 13),
            at("forbidden-api", 14),
            at("forbidden-api", 15),
            at("forbidden-api", 17),
            at("forbidden-api", 17),
        ]
    );
}

#[test]
fn member_calls_and_other_namespaces_are_not_libc() {
    let src = r#"__aicore__ inline void F(Queue& q, Pipe* p) {
    q.read(); p->write(1); q.open(2); p->close();
    auto b = std::bind(G, 1);
    Ns::sleep(3);
    int time_left = 4; int read_count = 5; uint32_t select_mask = 6;
}
"#;
    assert_eq!(kernel(src), Vec::<String>::new());
}

#[test]
fn rule_kernel_heap() {
    let src = "__aicore__ inline void F() {\n  float* p = new float[4];\n  void* q = malloc(16);\n  std::vector<int> v;\n  delete[] p;\n}\nstruct S { S(const S&) = delete; };\n";
    assert_eq!(
        kernel(src),
        vec![
            at("kernel-heap", 2),
            at("kernel-heap", 3),
            at("kernel-heap", 4),
            at("kernel-heap", 5)
        ]
    );
    // Host code may allocate.
    assert_eq!(
        host("void F() { auto* p = new int(3); std::vector<int> v; }\n"),
        Vec::<String>::new()
    );
}

#[test]
fn rule_mutable_static() {
    let src = r#"#include "kernel_operator.h"
static int g_calls = 0;
float g_cache[1024];
__gm__ uint8_t* g_last;
int Counter::count = 0;
static constexpr int kOk = 1;
const int kAlsoOk = 2;
static const char* const kName = "x";
static const char* g_name = "x";
struct Holder {
    static int instances;
    static constexpr int kSize = 8;
    static __aicore__ inline void Reset() {}
} g_holder;
__aicore__ inline void F() {
    static bool seen = false;
    static float cache{0.0f};
    static const int kLocal = 3;
    thread_local int tl = 0;
}
void (*g_hook)(int) = nullptr;
int g_direct(7);
"#;
    assert_eq!(
        kernel(src),
        vec![
            at("mutable-static", 2),
            at("mutable-static", 3),
            at("mutable-static", 4),
            at("mutable-static", 5),
            at("mutable-static", 9),
            at("mutable-static", 11),
            at("mutable-static", 14),
            at("mutable-static", 16),
            at("mutable-static", 17),
            at("mutable-static", 19),
            at("mutable-static", 21),
            at("mutable-static", 22),
        ]
    );
}

#[test]
fn declarations_that_are_not_state_pass() {
    let src = r#"namespace optiling {
BEGIN_TILING_DATA_DEF(AddTilingData)
TILING_DATA_FIELD_DEF(uint32_t, totalLength);
END_TILING_DATA_DEF;
REGISTER_TILING_DATA_CLASS(Add, AddTilingData)
int Helper(int a, int b);
static ge::graphStatus TilingFunc(gert::TilingContext* context);
using Alias = int;
typedef int Other;
enum Mode { A = 1, B = 2 };
struct Plan { uint32_t a; uint32_t b; };
template <typename T> T Max(T a, T b) { return a > b ? a : b; }
}
namespace ops {
class AddCustom : public OpDef {
public:
    explicit AddCustom(const char* name) : OpDef(name), n_{1}
    {
        this->Input("x").DataType({ge::DT_FLOAT16, ge::DT_FLOAT});
    }
    AddCustom& operator=(const AddCustom&) = default;
private:
    int n_;
};
OP_ADD(AddCustom);
}
"#;
    assert_eq!(host(src), Vec::<String>::new());
}

#[test]
fn rule_volatile() {
    assert_eq!(
        kernel("__aicore__ inline void F() {\n  volatile int spin = 0;\n}\n"),
        vec![at("volatile", 2)]
    );
}

#[test]
fn rule_attribute() {
    let src = "__attribute__((constructor)) void Init() {}\n[[gnu::destructor]] void Fini() {}\n__attribute__((optimize(\"O0\"))) void Slow() {}\n__attribute__((aligned(32))) int16_t lut[16] = {0};\n";
    assert_eq!(
        kernel(src),
        vec![
            at("attribute", 1),
            at("attribute", 2),
            at("attribute", 3),
            at("mutable-static", 4)
        ]
    );
}

#[test]
fn rule_extern_decl() {
    let src = "extern \"C\" int getpid();\nextern int g_shared;\nextern \"C\" {\nint kill(int, int);\n}\n__aicore__ inline void F() {\n  extern int hidden;\n}\n";
    assert_eq!(
        kernel(src),
        vec![
            at("extern-decl", 1),
            at("extern-decl", 2),
            at("extern-decl", 4),
            at("extern-decl", 7),
        ]
    );
}

#[test]
fn rule_token_paste() {
    let src = "#define CAT(a, b) a##b\n__aicore__ inline void F() { CAT(fo, rk)(); }\n";
    assert_eq!(kernel(src), vec![at("token-paste", 1)]);
    // Digraph spelling of ##.
    assert_eq!(
        kernel("%:define CAT(a, b) a %:%: b\n"),
        vec![at("token-paste", 1)]
    );
}

#[test]
fn macro_bodies_are_scanned() {
    let src = "#define SPAWN() fork()\n#define SH(c) system(c)\n";
    assert_eq!(
        kernel(src),
        vec![at("forbidden-api", 1), at("forbidden-api", 2)]
    );
}

#[test]
fn rule_trigraph() {
    assert_eq!(
        kernel("??=include <cstdio>\nint a;\n")[0],
        at("trigraph", 1)
    );
}

#[test]
fn rule_lexical() {
    assert_eq!(
        kernel("constexpr int a = 1;\n/* unterminated\n"),
        vec![at("lexical", 2)]
    );
}

#[test]
fn rejection_reason_names_rule_file_and_line() {
    let files = [SourceFile {
        path: "op_kernel/k.cpp".to_string(),
        text: "__aicore__ inline void F() {\n  asm(\"nop\");\n}\n".to_string(),
    }];
    let findings = check_sources(&files);
    assert_eq!(
        rejection_reason(&findings).unwrap(),
        "inline-asm at op_kernel/k.cpp:2: inline assembly (`asm`)"
    );
    assert_eq!(rejection_reason(&[]), None);
}

/// The operators of this repository pass (they are the reference kernels
/// the agent starts from).
#[test]
fn repository_operators_pass() {
    let ops = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../ops");
    let mut checked = 0;
    let mut entries: Vec<_> = std::fs::read_dir(&ops)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for op in entries {
        if !op.join("op_kernel").is_dir() {
            continue;
        }
        let findings = check_operator_dir(&op).unwrap();
        let shown: Vec<String> = findings.iter().map(|f| f.to_string()).collect();
        assert!(
            findings.is_empty(),
            "{}:\n{}",
            op.display(),
            shown.join("\n")
        );
        checked += 1;
    }
    assert!(
        checked >= 6,
        "only {checked} operators found under {}",
        ops.display()
    );
}

/// The bypasses that got through the checker as written before: each is
/// now a finding naming the rule, file and line.
#[test]
fn known_bypasses_are_caught_on_the_tokens() {
    // A namespace alias of std, and a namespace that pulls a name in.
    assert_eq!(
        host("namespace n = std;\nvoid f() { (void)n::system(\"id\"); }\n"),
        vec!["forbidden-api@op_host/h.cpp:2"]
    );
    assert_eq!(
        host("// m\nnamespace m { using ::system; }\nvoid f() { m::system(\"id\"); }\n"),
        vec!["forbidden-api@op_host/h.cpp:3"]
    );
    // A parenthesised name, and a function's address.
    assert_eq!(
        host("void f() { (open)(\"x\", 0); (::open)(\"y\", 0); }\n"),
        vec!["forbidden-api@op_host/h.cpp:1"]
    );
    assert_eq!(
        host("void f() { auto g = &open; g(\"x\", 0); }\n"),
        vec!["forbidden-api@op_host/h.cpp:1"]
    );
    // Names the list did not have.
    for name in [
        "pread64",
        "pwrite64",
        "glob",
        "symlinkat",
        "openat2",
        "__builtin_execl",
    ] {
        assert_eq!(
            host(&format!("void f() {{ {name}(0, 0, 0, 0); }}\n")),
            vec!["forbidden-api@op_host/h.cpp:1"],
            "{name}"
        );
    }
    // The attribute-using form.
    assert_eq!(
        kernel("[[using gnu: constructor]] void init() {}\n"),
        vec![at("attribute", 1)]
    );
    assert_eq!(
        kernel("[[using gnu: used, constructor(101)]] void init() {}\n"),
        vec![at("attribute", 1)]
    );
    // A variable template is state like any variable (a note).
    assert_eq!(
        kernel(
            "template <typename T> T counter = 0;\ntemplate <typename T> constexpr T kOne = 1;\n"
        ),
        vec![at("mutable-static", 1)]
    );
    // A variable that shares a function's name is a variable, and the
    // operator's own function (defined, not just declared) is its own.
    assert!(kernel("void f() { TPipe pipe; g(&pipe); int read = 0; h(&read); }\n").is_empty());
    assert!(kernel("struct S { void wait() {} void run() { wait(); } };\n").is_empty());
    assert_eq!(
        host("int system(const char*);\nvoid f() { system(\"sh\"); }\n"),
        vec!["forbidden-api@op_host/h.cpp:2"]
    );
}

/// The units as g++ preprocesses them: what macros produce is checked at
/// the line that uses them.
#[test]
fn macro_hidden_statics_externs_and_pastes_are_seen_after_preprocessing() {
    let dir = tempfile::tempdir().unwrap();
    let op = dir.path().join("op");
    std::fs::create_dir_all(op.join("op_kernel")).unwrap();
    std::fs::create_dir_all(op.join("op_host")).unwrap();
    let kernel_src = "#define EXT extern \"C\"\n\
                      EXT int helper_from_outside(int);\n\
                      #define S static\n\
                      int f() { S int calls = 0; return ++calls; }\n\
                      #define P(a, b) a##b\n\
                      int g() { return P(sys, tem)(\"id\"); }\n\
                      #define ATTR __attribute__((constructor))\n\
                      ATTR void init() {}\n\
                      #if 0\n\
                      void never() { fork(); }\n\
                      #endif\n";
    std::fs::write(op.join("op_kernel/k.cpp"), kernel_src).unwrap();
    std::fs::write(op.join("op_host/h.cpp"), "int host_value = 1;\n").unwrap();
    let pre = |file: &str| {
        let out = std::process::Command::new("g++")
            .args(["-std=c++17", "-E"])
            .arg(op.join(file))
            .output()
            .unwrap();
        assert!(out.status.success());
        String::from_utf8(out.stdout).unwrap()
    };
    let units = [
        PreprocessedUnit {
            unit: "kernel".into(),
            text: pre("op_kernel/k.cpp"),
        },
        PreprocessedUnit {
            unit: "host".into(),
            text: pre("op_host/h.cpp"),
        },
    ];
    let findings = check_with_units(&op, &units).unwrap();
    let shown: Vec<String> = findings
        .iter()
        .map(|f| format!("{}@{}:{}", f.rule, f.file, f.line))
        .collect();
    assert_eq!(
        shown,
        vec![
            "mutable-static@op_host/h.cpp:1",
            "extern-decl@op_kernel/k.cpp:2",
            "mutable-static@op_kernel/k.cpp:4",
            "token-paste@op_kernel/k.cpp:5",
            "forbidden-api@op_kernel/k.cpp:6",
            "attribute@op_kernel/k.cpp:8",
        ]
    );
    // The dead `#if 0` branch is not code; the notes do not reject: the
    // extern declaration is one (what it declares is judged where it is
    // called, by name and by the library's imports).
    let reason = rejection_reason(&findings).unwrap();
    assert!(!reason.contains("mutable-static") && !reason.contains("token-paste"));
    assert_eq!(reason.lines().count(), 2, "{reason}");
    assert_eq!(notes(&findings).len(), 4);
}

/// State that cannot survive a launch in a fresh sealed process, and
/// style, are notes: a public operator whose tiling keeps values in
/// namespace-scope variables (the cann-ops triu style) is not refused.
#[test]
fn namespace_scope_state_of_a_tiling_function_is_a_note() {
    let src = "namespace optiling {\nuint32_t type_Size = 0;\nint64_t row_Length = 0;\n\
               static int setShapeInfo() { row_Length = 4; return 0; }\n}\n";
    let files = [SourceFile {
        path: "op_host/triu.cpp".into(),
        text: src.into(),
    }];
    let findings = check_sources(&files);
    assert_eq!(findings.len(), 2);
    assert!(findings
        .iter()
        .all(|f| f.rule == Rule::MutableStatic && !f.rejects()));
    assert_eq!(rejection_reason(&findings), None);
}

/// The public operators of the corpus (ASCENDOPT_CORPUS, default
/// /work/corpus; skipped when absent) as the loop would check them:
/// preprocessed against the emulation headers where that works, as written
/// otherwise. Prints the refusals by rule; none is expected for
/// legitimate code. Slow (one `g++ -E` per unit): run with `--ignored`.
#[test]
#[ignore]
fn corpus_operators_are_not_refused() {
    use ascendopt_sim::build::{preprocess, BuildRequest, Toolchain};
    let root = std::env::var_os("ASCENDOPT_CORPUS")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| "/work/corpus".into());
    if !root.is_dir() {
        eprintln!("{} not found: skipped", root.display());
        return;
    }
    let mut ops = Vec::new();
    let mut stack = vec![root.clone()];
    while let Some(dir) = stack.pop() {
        // Test utilities laid out like an operator are not operators.
        if dir.components().any(|c| c.as_os_str() == "tests") {
            continue;
        }
        if dir.join("op_host").is_dir() && dir.join("op_kernel").is_dir() {
            ops.push(dir);
            continue;
        }
        if let Ok(entries) = std::fs::read_dir(&dir) {
            for e in entries.flatten() {
                if e.path().is_dir() && !e.file_name().to_string_lossy().starts_with('.') {
                    stack.push(e.path());
                }
            }
        }
    }
    ops.sort();
    let limit: usize = std::env::var("CORPUS_LIMIT")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(usize::MAX);
    let (mut refused, mut preprocessed, mut checked) = (0, 0, 0);
    let mut by_rule: BTreeMap<String, usize> = BTreeMap::new();
    let mut notes_by_rule: BTreeMap<String, usize> = BTreeMap::new();
    for op in ops.iter().take(limit) {
        checked += 1;
        let units = BuildRequest::for_op_dir(op, Toolchain::from_env())
            .ok()
            .and_then(|req| preprocess(&req).ok());
        let findings = match units {
            Some(units) => {
                preprocessed += 1;
                let units: Vec<PreprocessedUnit> = units
                    .into_iter()
                    .map(|(u, text)| PreprocessedUnit {
                        unit: u.name().into(),
                        text,
                    })
                    .collect();
                check_with_units(op, &units).unwrap()
            }
            None => check_operator_dir(op).unwrap(),
        };
        for f in &findings {
            let bucket = if f.rejects() {
                &mut by_rule
            } else {
                &mut notes_by_rule
            };
            *bucket.entry(f.rule.to_string()).or_default() += 1;
        }
        if let Some(reason) = rejection_reason(&findings) {
            refused += 1;
            println!(
                "REFUSED {}:\n  {}",
                op.display(),
                reason.replace('\n', "\n  ")
            );
        }
    }
    println!(
        "{checked} operators, {preprocessed} preprocessed, {refused} refused; refusals by rule {by_rule:?}; notes by rule {notes_by_rule:?}"
    );
    assert_eq!(refused, 0);
}

/// OP_ADD expands, at the user's line, to the emulation's registration:
/// its objects are const, so the user is not told about state that is not
/// theirs, while a mutable static of their own on the next line still is.
#[test]
fn op_add_registration_is_not_reported_as_the_users_mutable_state() {
    let dir = tempfile::tempdir().unwrap();
    let op = dir.path().join("op");
    std::fs::create_dir_all(op.join("op_host")).unwrap();
    let host_src = "#include \"register/op_def_registry.h\"\n\
                    namespace ops {\n\
                    class DemoOp : public OpDef {\n\
                    public:\n\
                    explicit DemoOp(const char* name) : OpDef(name) {\n\
                    this->Input(\"x\").ParamType(REQUIRED).DataType({ge::DT_FLOAT});\n\
                    this->Output(\"y\").ParamType(REQUIRED).DataType({ge::DT_FLOAT});\n\
                    }\n\
                    };\n\
                    OP_ADD(DemoOp);\n\
                    int calls = 0;\n\
                    }\n";
    std::fs::write(op.join("op_host/h.cpp"), host_src).unwrap();
    let include = Path::new(env!("CARGO_MANIFEST_DIR")).join("../sim/include");
    let out = std::process::Command::new("g++")
        .args(["-std=c++17", "-E", "-I"])
        .arg(&include)
        .arg(op.join("op_host/h.cpp"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let units = [PreprocessedUnit {
        unit: "host".into(),
        text: String::from_utf8(out.stdout).unwrap(),
    }];
    let findings = check_with_units(&op, &units).unwrap();
    let shown: Vec<String> = findings
        .iter()
        .map(|f| format!("{}@{}:{}", f.rule, f.file, f.line))
        .collect();
    assert_eq!(shown, vec!["mutable-static@op_host/h.cpp:11"]);
}
