// ascendopt simulator: linked into every kernel library. Holds the runtime
// table pointer, calls the kernel entry with its GM arguments, and turns a
// fatal fault reported by the runtime into a C++ exception that unwinds the
// kernel back to ascendopt_kernel_call (see abi.h).
#include "ascendopt/abi.h"
#include "ascendopt/kernel/kernel_type.h"
#include "ascendopt/kernel/tpl_table.h"

#include <stddef.h>
#include <string.h>

namespace ascendopt {
const AscRuntime* g_rt = nullptr;
struct KernelFault {};
}  // namespace ascendopt

// ---- counting the kernel's own code ---------------------------------------
// The build compiles a kernel with -fsanitize-coverage=trace-pc and
// -fsanitize=kernel-address and rewrites its assembly (crates/sim/src/build/
// instrument.rs): each stretch of the kernel's code adds its instruction
// counts to these thread-local counters, and each load or store it makes
// through a pointer calls one of the hooks below with the address.
// Initial-exec TLS: the rewritten code reaches it without a call.
extern "C" {
__attribute__((visibility("default"), tls_model("initial-exec"))) __thread AscScalarCounters ascendopt_scalar;
}
static_assert(offsetof(AscScalarCounters, alu) == 0, "alu offset (instrument.rs)");
static_assert(offsetof(AscScalarCounters, loads) == 8, "loads offset (instrument.rs)");
static_assert(offsetof(AscScalarCounters, stores) == 16, "stores offset (instrument.rs)");

extern "C" __attribute__((visibility("default"))) AscScalarCounters* ascendopt_kernel_scalar_counters(void) {
  return &ascendopt_scalar;
}

namespace {
constexpr unsigned kLineShift = 6;  // 64-byte lines (trace::GM_LINE_BYTES)

// One load or store of `size` bytes at `addr` by the kernel's code: every
// line it covers that is not among the four touched just before goes to
// the runtime, which records it when it is GM; the counters remember the
// answer, so a loop over a line asks once. A line in the guard around a GM
// allocation (out of bounds) is never remembered: the runtime is told
// where (`pc`, the return address into the kernel's code) and ends the
// launch with a fault naming the tensor and the offset.
inline void touch(uintptr_t addr, size_t size, uint32_t store, const void* pc) {
  AscScalarCounters& c = ascendopt_scalar;
  uintptr_t first = addr >> kLineShift;
  uintptr_t last = (addr + (size ? size - 1 : 0)) >> kLineShift;
  bool gm = false;
  for (uintptr_t line = first; line <= last; ++line) {
    int k = 0;
    while (k < 4 && (c.recent[k] == 0 || (c.recent[k] >> 1) != line)) ++k;
    uint64_t entry;
    if (k < 4) {
      entry = c.recent[k];
    } else {
      const AscRuntime* rt = ascendopt::g_rt;
      int32_t is_gm = rt ? rt->scalar_touch((const void*)(line << kLineShift), store) : 0;
      if (is_gm == 2) {
        // From the access's first byte in that line on.
        uintptr_t from = line << kLineShift;
        if (from < addr) from = addr;
        rt->scalar_stray((const void*)from, (uint64_t)(addr + size - from), store, pc);
        is_gm = 0;
      }
      entry = ((uint64_t)line << 1) | (is_gm ? 1u : 0u);
      k = 3;
    }
    for (int j = k; j > 0; --j) c.recent[j] = c.recent[j - 1];
    c.recent[0] = entry;
    gm = gm || (entry & 1u);
  }
  if (gm) c.gm_accesses += 1;
}

// A block copy or fill of `len` bytes by the kernel's code: 8-byte moves.
inline void count_block(size_t len, bool loads, bool stores) {
  AscScalarCounters& c = ascendopt_scalar;
  uint64_t moves = (len + 7) / 8;
  if (loads) c.loads += moves;
  if (stores) c.stores += moves;
  c.alu += moves / 4 + 1;  // the loop around them
}
}  // namespace

#define ASC_HOOK(kind, n, store)                                                                  \
  extern "C" __attribute__((visibility("hidden"))) void __asan_##kind##n##_noabort(uintptr_t a) { \
    touch(a, n, store, __builtin_return_address(0));                                              \
  }
ASC_HOOK(load, 1, 0)
ASC_HOOK(load, 2, 0)
ASC_HOOK(load, 4, 0)
ASC_HOOK(load, 8, 0)
ASC_HOOK(load, 16, 0)
ASC_HOOK(store, 1, 1)
ASC_HOOK(store, 2, 1)
ASC_HOOK(store, 4, 1)
ASC_HOOK(store, 8, 1)
ASC_HOOK(store, 16, 1)
#undef ASC_HOOK

extern "C" __attribute__((visibility("hidden"))) void __asan_loadN_noabort(uintptr_t a, size_t n) {
  touch(a, n, 0, __builtin_return_address(0));
}
extern "C" __attribute__((visibility("hidden"))) void __asan_storeN_noabort(uintptr_t a, size_t n) {
  touch(a, n, 1, __builtin_return_address(0));
}
extern "C" __attribute__((visibility("hidden"))) void __asan_handle_no_return(void) {}
// Dynamic initialisers of an instrumented unit (the kernel type's
// registration, ascendopt/kernel/kernel_type.h, or a kernel's own global
// initialised at load time, such as `const float k = std::log(2.0f)`) are
// bracketed by these init-order checks; they run while the library loads,
// before any block, and there is no init-order checking here.
extern "C" __attribute__((visibility("hidden"))) void __asan_before_dynamic_init(const char*) {}
extern "C" __attribute__((visibility("hidden"))) void __asan_after_dynamic_init(void) {}

// memcpy/memmove/memset/memcmp called by the kernel's own code (the pass
// renames those calls): counted as the 8-byte loads and stores they are.
extern "C" __attribute__((visibility("hidden"))) void* ascendopt_memcpy(void* d, const void* s, size_t n) {
  touch((uintptr_t)s, n, 0, __builtin_return_address(0));
  touch((uintptr_t)d, n, 1, __builtin_return_address(0));
  count_block(n, true, true);
  return memcpy(d, s, n);
}
extern "C" __attribute__((visibility("hidden"))) void* ascendopt_memmove(void* d, const void* s, size_t n) {
  touch((uintptr_t)s, n, 0, __builtin_return_address(0));
  touch((uintptr_t)d, n, 1, __builtin_return_address(0));
  count_block(n, true, true);
  return memmove(d, s, n);
}
extern "C" __attribute__((visibility("hidden"))) void* ascendopt_memset(void* d, int v, size_t n) {
  touch((uintptr_t)d, n, 1, __builtin_return_address(0));
  count_block(n, false, true);
  return memset(d, v, n);
}
extern "C" __attribute__((visibility("hidden"))) int ascendopt_memcmp(const void* a, const void* b, size_t n) {
  touch((uintptr_t)a, n, 0, __builtin_return_address(0));
  touch((uintptr_t)b, n, 0, __builtin_return_address(0));
  count_block(2 * n, true, false);
  return memcmp(a, b, n);
}

// ---- indirect calls of the kernel's own code ------------------------------
// Code outside the kernel library (the host library, the C library, the
// simulator) is not instrumented: a kernel that called it through a
// function pointer would have its work done uncounted. The build's pass
// (instrument.rs) checks the target (in %r11) of every indirect call the
// kernel's own code makes: inside the library's code, [__ehdr_start,
// etext), it goes ahead at once; otherwise it calls ascendopt_check_call,
// which returns (every register as it was) only for an entry of the
// runtime table (the AscendC macros expanded in the kernel's own lines,
// GET_TILING_DATA and the like, call those) and ends the launch with a
// fault naming the target for anything else.
extern "C" const char __ehdr_start[] __attribute__((visibility("hidden")));
extern "C" const char etext[] __attribute__((visibility("hidden")));
extern "C" {
__attribute__((visibility("hidden"))) extern const uintptr_t ascendopt_text_lo;
__attribute__((visibility("hidden"))) extern const uintptr_t ascendopt_text_hi;
const uintptr_t ascendopt_text_lo = (uintptr_t)__ehdr_start;
const uintptr_t ascendopt_text_hi = (uintptr_t)etext;
}
extern "C" __attribute__((visibility("hidden"), used)) void ascendopt_call_allowed(const void* target, const void* pc) {
  const AscRuntime* rt = ascendopt::g_rt;
  if (rt) {
    // The table: two 32-bit words, then function pointers to its end.
    const void* const* entry = (const void* const*)((const char*)rt + 8);
    const void* const* end = (const void* const*)((const char*)rt + sizeof(AscRuntime));
    for (; entry < end; ++entry)
      if (*entry == target) return;
    rt->stray_call(target, pc);
  }
  __builtin_trap();
}
// Saves the argument registers (general and vector) and %r11, asks
// (with call-frame information, so the fault's exception unwinds through)
// ascendopt_call_allowed about the target in %r11 (with the kernel's return
// address, 200 bytes up once everything is saved), restores them, returns.
asm(R"(
  .text
  .globl ascendopt_check_call
  .hidden ascendopt_check_call
  .type ascendopt_check_call, @function
ascendopt_check_call:
  .cfi_startproc
  pushq %rdi
  .cfi_adjust_cfa_offset 8
  pushq %rsi
  .cfi_adjust_cfa_offset 8
  pushq %rdx
  .cfi_adjust_cfa_offset 8
  pushq %rcx
  .cfi_adjust_cfa_offset 8
  pushq %r8
  .cfi_adjust_cfa_offset 8
  pushq %r9
  .cfi_adjust_cfa_offset 8
  pushq %rax
  .cfi_adjust_cfa_offset 8
  pushq %r10
  .cfi_adjust_cfa_offset 8
  pushq %r11
  .cfi_adjust_cfa_offset 8
  subq $128, %rsp
  .cfi_adjust_cfa_offset 128
  movdqu %xmm0, 0(%rsp)
  movdqu %xmm1, 16(%rsp)
  movdqu %xmm2, 32(%rsp)
  movdqu %xmm3, 48(%rsp)
  movdqu %xmm4, 64(%rsp)
  movdqu %xmm5, 80(%rsp)
  movdqu %xmm6, 96(%rsp)
  movdqu %xmm7, 112(%rsp)
  movq %r11, %rdi
  movq 200(%rsp), %rsi
  call ascendopt_call_allowed
  movdqu 0(%rsp), %xmm0
  movdqu 16(%rsp), %xmm1
  movdqu 32(%rsp), %xmm2
  movdqu 48(%rsp), %xmm3
  movdqu 64(%rsp), %xmm4
  movdqu 80(%rsp), %xmm5
  movdqu 96(%rsp), %xmm6
  movdqu 112(%rsp), %xmm7
  addq $128, %rsp
  .cfi_adjust_cfa_offset -128
  popq %r11
  .cfi_adjust_cfa_offset -8
  popq %r10
  .cfi_adjust_cfa_offset -8
  popq %rax
  .cfi_adjust_cfa_offset -8
  popq %r9
  .cfi_adjust_cfa_offset -8
  popq %r8
  .cfi_adjust_cfa_offset -8
  popq %rcx
  .cfi_adjust_cfa_offset -8
  popq %rdx
  .cfi_adjust_cfa_offset -8
  popq %rsi
  .cfi_adjust_cfa_offset -8
  popq %rdi
  .cfi_adjust_cfa_offset -8
  ret
  .cfi_endproc
  .size ascendopt_check_call, .-ascendopt_check_call
)");

// The device compiler's block variables (declared in
// ascendopt/kernel/builtins.h), set per block thread below.
namespace AscendC {
thread_local int32_t g_coreType = 2;
}
namespace ascendopt {
__attribute__((visibility("hidden"))) KernelTypes g_kernel_types = {-1, 0, {}, {}, 0, 0};
}

// The kernel type the library declared, registered while it loaded
// (ascendopt/kernel/kernel_type.h); the launch reads it before starting
// the cores (runtime/mix.rs).
extern "C" __attribute__((visibility("default"))) const void* ascendopt_kernel_types(void) {
  return &ascendopt::g_kernel_types;
}

// A kernel whose entry is a tiling template (ascendopt/kernel/tpl_instances.h):
// the instance registered under `key`, or null; `*count` says how many the
// library holds (0: the entry is no template).
namespace ascendopt {
namespace tpl {
__attribute__((visibility("hidden"))) Instances g_tpl_instances = {0, {}, {}};
}
}  // namespace ascendopt

extern "C" __attribute__((visibility("default"))) const void* ascendopt_kernel_tpl_entry(uint64_t key,
                                                                                        uint32_t* count) {
  const ascendopt::tpl::Instances& t = ascendopt::tpl::g_tpl_instances;
  if (count != nullptr) *count = t.count;
  for (uint32_t i = 0; i < t.count; ++i) {
    if (t.keys[i] == key) return t.entries[i];
  }
  return nullptr;
}

thread_local int64_t block_idx = 0;
thread_local int64_t block_num = 0;

typedef uint8_t* A;

extern "C" __attribute__((visibility("default"))) void ascendopt_kernel_attach(const AscRuntime* rt) {
  ascendopt::g_rt = rt;
}

extern "C" __attribute__((visibility("default"))) void ascendopt_kernel_throw(void) {
  throw ascendopt::KernelFault{};
}

#define ASC_ARGS_1 a[0]
#define ASC_ARGS_2 ASC_ARGS_1, a[1]
#define ASC_ARGS_3 ASC_ARGS_2, a[2]
#define ASC_ARGS_4 ASC_ARGS_3, a[3]
#define ASC_ARGS_5 ASC_ARGS_4, a[4]
#define ASC_ARGS_6 ASC_ARGS_5, a[5]
#define ASC_ARGS_7 ASC_ARGS_6, a[6]
#define ASC_ARGS_8 ASC_ARGS_7, a[7]
#define ASC_ARGS_9 ASC_ARGS_8, a[8]
#define ASC_ARGS_10 ASC_ARGS_9, a[9]
#define ASC_ARGS_11 ASC_ARGS_10, a[10]
#define ASC_ARGS_12 ASC_ARGS_11, a[11]
#define ASC_ARGS_13 ASC_ARGS_12, a[12]
#define ASC_ARGS_14 ASC_ARGS_13, a[13]
#define ASC_ARGS_15 ASC_ARGS_14, a[14]
#define ASC_ARGS_16 ASC_ARGS_15, a[15]
#define ASC_ARGS_17 ASC_ARGS_16, a[16]
#define ASC_ARGS_18 ASC_ARGS_17, a[17]
#define ASC_ARGS_19 ASC_ARGS_18, a[18]
#define ASC_ARGS_20 ASC_ARGS_19, a[19]
#define ASC_ARGS_21 ASC_ARGS_20, a[20]
#define ASC_ARGS_22 ASC_ARGS_21, a[21]
#define ASC_ARGS_23 ASC_ARGS_22, a[22]
#define ASC_ARGS_24 ASC_ARGS_23, a[23]
#define ASC_ARGS_25 ASC_ARGS_24, a[24]
#define ASC_ARGS_26 ASC_ARGS_25, a[25]
#define ASC_ARGS_27 ASC_ARGS_26, a[26]
#define ASC_ARGS_28 ASC_ARGS_27, a[27]
#define ASC_ARGS_29 ASC_ARGS_28, a[28]
#define ASC_ARGS_30 ASC_ARGS_29, a[29]
#define ASC_ARGS_31 ASC_ARGS_30, a[30]
#define ASC_ARGS_32 ASC_ARGS_31, a[31]

#define ASC_P1 A
#define ASC_P2 ASC_P1, A
#define ASC_P3 ASC_P2, A
#define ASC_P4 ASC_P3, A
#define ASC_P5 ASC_P4, A
#define ASC_P6 ASC_P5, A
#define ASC_P7 ASC_P6, A
#define ASC_P8 ASC_P7, A
#define ASC_P9 ASC_P8, A
#define ASC_P10 ASC_P9, A
#define ASC_P11 ASC_P10, A
#define ASC_P12 ASC_P11, A
#define ASC_P13 ASC_P12, A
#define ASC_P14 ASC_P13, A
#define ASC_P15 ASC_P14, A
#define ASC_P16 ASC_P15, A
#define ASC_P17 ASC_P16, A
#define ASC_P18 ASC_P17, A
#define ASC_P19 ASC_P18, A
#define ASC_P20 ASC_P19, A
#define ASC_P21 ASC_P20, A
#define ASC_P22 ASC_P21, A
#define ASC_P23 ASC_P22, A
#define ASC_P24 ASC_P23, A
#define ASC_P25 ASC_P24, A
#define ASC_P26 ASC_P25, A
#define ASC_P27 ASC_P26, A
#define ASC_P28 ASC_P27, A
#define ASC_P29 ASC_P28, A
#define ASC_P30 ASC_P29, A
#define ASC_P31 ASC_P30, A
#define ASC_P32 ASC_P31, A

#define ASC_CASE(n)                                            \
  case n:                                                      \
    reinterpret_cast<void (*)(ASC_P##n)>(entry)(ASC_ARGS_##n); \
    break;

extern "C" __attribute__((visibility("default"))) int32_t ascendopt_kernel_call(void (*entry)(void), uint32_t nargs,
                                                                                 uint8_t** a) {
  try {
    block_idx = ascendopt::g_rt->block_idx();
    block_num = ascendopt::g_rt->block_num();
    AscendC::g_coreType = (int32_t)ascendopt::g_rt->core_info(0);
    switch (nargs) {
      case 0:
        entry();
        break;
      ASC_CASE(1) ASC_CASE(2) ASC_CASE(3) ASC_CASE(4) ASC_CASE(5) ASC_CASE(6) ASC_CASE(7) ASC_CASE(8)
      ASC_CASE(9) ASC_CASE(10) ASC_CASE(11) ASC_CASE(12) ASC_CASE(13) ASC_CASE(14) ASC_CASE(15) ASC_CASE(16)
      ASC_CASE(17) ASC_CASE(18) ASC_CASE(19) ASC_CASE(20) ASC_CASE(21) ASC_CASE(22) ASC_CASE(23) ASC_CASE(24)
      ASC_CASE(25) ASC_CASE(26) ASC_CASE(27) ASC_CASE(28) ASC_CASE(29) ASC_CASE(30) ASC_CASE(31) ASC_CASE(32)
      default:
        return 2;
    }
  } catch (const ascendopt::KernelFault&) {
    return 1;
  } catch (...) {
    return 3;
  }
  return 0;
}
