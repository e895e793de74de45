// ascendopt host (op_host) emulation: platform_ascendc::PlatformAscendC, the
// hardware facts a tiling function may query (core counts, memory sizes).
//
// Clean-room, from the AscendC guide 6.4.2 (PlatformAscendC) and
// ref/hardware-facts.md sections E and F. The numbers come from the
// simulator's platform (AscHostPlatform), set by the worker from the
// hardware profile.
#ifndef ASCENDOPT_HOST_PLATFORM_H
#define ASCENDOPT_HOST_PLATFORM_H

#include "context.h"

namespace platform_ascendc {

// Guide 6.4.2.1.11 lists these values.
enum class CoreMemType { L0_A = 0, L0_B = 1, L0_C = 2, L1 = 3, L2 = 4, UB = 5, HBM = 6, FB = 7, BT = 8, RESERVED };

enum class SocVersion {
  ASCEND910 = 0,
  ASCEND910B,
  ASCEND910_93,
  ASCEND310P,
  ASCEND310B,
  ASCEND610,
  ASCEND610LITE,
  RESERVED_VERSION = 99999
};

// Guide 6.4.2.1.16.
enum class ReservedSize { RESERVED_SIZE_8K, RESERVED_SIZE_16K, RESERVED_SIZE_32K };

class PlatformAscendC {
 public:
  PlatformAscendC() = delete;
  explicit PlatformAscendC(fe::PlatFormInfos* platform_info) : info_(platform_info) {}

  // Separated (AIC/AIV) architecture: the vector core count (guide 6.4.2.1.3).
  uint32_t GetCoreNum() const { return p().core_num_aiv; }
  uint32_t GetCoreNumAiv() const { return p().core_num_aiv; }
  uint32_t GetCoreNumAic() const { return p().core_num_aic; }
  // Independent vector cores exist only on inference parts; A2 returns 0
  // (guide 6.4.2.1.9).
  uint32_t GetCoreNumVector() const { return 0; }
  // 0 on chips that are not RegBase, which includes the 910B (guide 6.4.2.1.6).
  uint32_t GetVecRegLen() const { return 0; }
  SocVersion GetSocVersion() const;
  void GetCoreMemSize(const CoreMemType& mem_type, uint64_t& size) const;
  // Takes `size` off the UB that GetCoreMemSize reports; the last call wins
  // (guide 6.4.2.1.16).
  void ReserveLocalMemory(ReservedSize size) {
    reserved_ub_ = size == ReservedSize::RESERVED_SIZE_8K    ? 8u * 1024u
                   : size == ReservedSize::RESERVED_SIZE_16K ? 16u * 1024u
                                                             : 32u * 1024u;
  }
  uint32_t GetLibApiWorkSpaceSize() const { return (uint32_t)p().lib_api_workspace; }
  // Blocks for a mixed cube/vector launch: one block drives
  // aiv/aic vector cores, so `slice_num` vector slices need
  // ceil(slice_num / (aiv/aic)) blocks; with either count 0 the launch is
  // single-kind and takes `slice_num` blocks (guide 6.4.2.1.10).
  uint32_t CalcTschNumBlocks(uint32_t slice_num, uint32_t aic_core_num, uint32_t aiv_core_num) const {
    if (aic_core_num == 0 || aiv_core_num == 0 || aiv_core_num < aic_core_num) return slice_num;
    uint32_t ratio = aiv_core_num / aic_core_num;
    return (slice_num + ratio - 1) / ratio;
  }
  uint32_t CalcTschBlockDim(uint32_t slice_num, uint32_t aic_core_num, uint32_t aiv_core_num) const {
    return CalcTschNumBlocks(slice_num, aic_core_num, aiv_core_num);
  }
  ASCENDOPT_HOST_UNSUPPORTED(GetCoreMemBw, "PlatformAscendC::GetCoreMemBw")
  ASCENDOPT_HOST_UNSUPPORTED(GetCurNpuArch, "PlatformAscendC::GetCurNpuArch")
  ASCENDOPT_HOST_UNSUPPORTED(GetResGroupBarrierWorkSpaceSize, "PlatformAscendC::GetResGroupBarrierWorkSpaceSize")
  ASCENDOPT_HOST_UNSUPPORTED(GetResCubeGroupWorkSpaceSize, "PlatformAscendC::GetResCubeGroupWorkSpaceSize")

 private:
  const AscHostPlatform& p() const {
    if (info_ == nullptr) ::ascendopt::host::fail("PlatformAscendC was built from a null PlatFormInfos");
    return info_->info_;
  }
  fe::PlatFormInfos* info_;
  uint64_t reserved_ub_ = 0;
};

inline SocVersion PlatformAscendC::GetSocVersion() const {
  const char* soc = p().soc_version != nullptr ? p().soc_version : "";
  if (strncmp(soc, "Ascend910_93", 12) == 0) return SocVersion::ASCEND910_93;
  if (strncmp(soc, "Ascend910B", 10) == 0) return SocVersion::ASCEND910B;
  if (strncmp(soc, "Ascend910", 9) == 0) return SocVersion::ASCEND910;
  if (strncmp(soc, "Ascend310P", 10) == 0) return SocVersion::ASCEND310P;
  if (strncmp(soc, "Ascend310B", 10) == 0) return SocVersion::ASCEND310B;
  ::ascendopt::host::fail("GetSocVersion: unknown SoC '%s'", soc);
}

inline void PlatformAscendC::GetCoreMemSize(const CoreMemType& mem_type, uint64_t& size) const {
  const AscHostPlatform& pf = p();
  switch (mem_type) {
    case CoreMemType::UB:
      size = pf.ub_size > reserved_ub_ ? pf.ub_size - reserved_ub_ : 0;
      return;
    case CoreMemType::L1:
      size = pf.l1_size;
      return;
    case CoreMemType::L0_A:
      size = pf.l0a_size;
      return;
    case CoreMemType::L0_B:
      size = pf.l0b_size;
      return;
    case CoreMemType::L0_C:
      size = pf.l0c_size;
      return;
    case CoreMemType::L2:
      size = pf.l2_size;
      return;
    case CoreMemType::HBM:
      size = pf.hbm_size;
      return;
    case CoreMemType::BT:
      // BiasTable 1 KB (hardware-facts F, [INI] [AICoreSpec]).
      size = 1024;
      return;
    default:
      ::ascendopt::host::fail("GetCoreMemSize: memory type %d is not modelled by the simulator", (int)mem_type);
  }
}

// Kernel-launch projects: the platform of the tiling call in progress.
class PlatformAscendCManager {
 public:
  static PlatformAscendC* GetInstance();
  static PlatformAscendC* GetInstance(const char* custom_soc_version);
};
}  // namespace platform_ascendc

#endif
