// ascendopt emulation of CANN's kernel_tiling/kernel_tiling.h: what a
// kernel sees of the tiling structs (guide 2.5.3.2.1 "如何使用Tiling依赖的头文件",
// 2.10.2.5.4 "使用标准C++语法定义Tiling结构体").
//
// - The high-level APIs' tiling structs, as standard C++ structs in
//   namespace AscendC::tiling, with the fields the guide's API pages list
//   (in their order and types; the page of each is named below). A
//   kernel's own TilingData may hold one as a member
//   (`AscendC::tiling::SoftMaxTiling sm;`, or through the host macro
//   TILING_DATA_FIELD_DEF_STRUCT(SoftMaxTiling, sm)); the bytes the host
//   writes are these structs' bytes. Kernels also name them unqualified,
//   so they are declared at global scope too. TCubeTiling, the Matmul
//   API's (guide 6.2.4.2.2), takes its fields from
//   ascendopt/lib/cube_tiling_fields.h, shared with the host's class.
// - GET_TILING_DATA and its relatives, the tiling-key macros and
//   REGISTER_TILING_DEFAULT (ascendopt/kernel/tiling.h): a kernel that
//   includes this header before kernel_operator.h can use them.
//
// Clean-room: the struct layouts are facts of the documented API.
#ifndef ASCENDOPT_KERNEL_TILING_KERNEL_TILING_H
#define ASCENDOPT_KERNEL_TILING_KERNEL_TILING_H

#include <stdint.h>

#include "../ascendopt/kernel/tiling.h"
#include "../ascendopt/lib/cube_tiling_fields.h"

namespace AscendC {
namespace tiling {

// guide 6.2.4.3.1.9
struct SoftMaxTiling {
  uint32_t srcM = 0;
  uint32_t srcK = 0;
  uint32_t srcSize = 0;
  uint32_t outMaxM = 0;
  uint32_t outMaxK = 0;
  uint32_t outMaxSize = 0;
  uint32_t splitM = 0;
  uint32_t splitK = 0;
  uint32_t splitSize = 0;
  uint32_t reduceM = 0;
  uint32_t reduceK = 0;
  uint32_t reduceSize = 0;
  uint32_t rangeM = 0;
  uint32_t tailM = 0;
  uint32_t tailSplitSize = 0;
  uint32_t tailReduceSize = 0;
};

// guide 6.2.4.4.2
struct LayerNormTiling {
  uint32_t bLength = 0;
  uint32_t sLength = 0;
  uint32_t hLength = 0;
  uint32_t originalHLength = 0;
  uint32_t inputXSize = 0;
  uint32_t meanVarSize = 0;
  uint32_t numberOfTmpBuf = 0;
  uint32_t meanTmpTensorPos = 0;
  uint32_t meanTmpTensorSize = 0;
  uint32_t varianceTmpTensorPos = 0;
  uint32_t varianceTmpTensorSize = 0;
  uint32_t tmpBufSize = 0;
  uint32_t oneTmpSize = 0;
  uint32_t firstTmpStartPos = 0;
  uint32_t secondTmpStartPos = 0;
  uint32_t thirdTmpStartPos = 0;
  uint32_t loopRound = 0;
  uint32_t inputRoundSize = 0;
  uint32_t inputTailSize = 0;
  uint32_t inputTailPos = 0;
  uint32_t meanVarRoundSize = 0;
  uint32_t meanVarTailSize = 0;
  uint32_t meanVarTailPos = 0;
  uint32_t bshCurLength = 0;
  uint32_t bsCurLength = 0;
  float lastDimValueBack = 0;
};

// guide 6.2.4.4.2
struct LayerNormSeparateTiling {
  uint32_t aLength = 0;
  uint32_t rLength = 0;
  uint32_t halfAddRepeatTimes = 0;
  uint32_t rHeadLength = 0;
  float k2Rec = 0;
  float k2RRec = 0;
  uint32_t inputXSize = 0;
  uint32_t meanVarSize = 0;
  uint32_t numberOfTmpBuf = 0;
  uint32_t varianceTmpTensorPos = 0;
  uint32_t varianceTmpTensorSize = 0;
  uint32_t tmpBufSize = 0;
  uint32_t oneTmpSize = 0;
  uint32_t firstTmpStartPos = 0;
  uint32_t secondTmpStartPos = 0;
  uint32_t thirdTmpStartPos = 0;
  uint32_t loopRound = 0;
  uint32_t inputRoundSize = 0;
  uint32_t inputTailSize = 0;
  uint32_t inputTailPos = 0;
  uint32_t meanVarRoundSize = 0;
  uint32_t meanVarTailSize = 0;
  uint32_t meanVarTailPos = 0;
  uint32_t arCurLength = 0;
  uint32_t aCurLength = 0;
  float rValueBack = 0;
};

// guide 6.2.4.4.4
struct LayerNormGradTiling {
  uint32_t stackBufferSize = 0;
  uint32_t bLength = 0;
  uint32_t sLength = 0;
  uint32_t hLength = 0;
  uint32_t originalHLength = 0;
  uint32_t oneCalSize = 0;
  uint32_t nohCalSize = 0;
  uint32_t loopNum = 0;
  uint32_t tailSize = 0;
  uint32_t nohTailSize = 0;
  uint32_t tmpTensorBSHPos = 0;
  uint32_t tmpTensorBSHSize = 0;
  uint32_t pdVarTensorPos = 0;
  uint32_t pdVarTensorSize = 0;
  uint32_t pdMeanTensorPos = 0;
  uint32_t pdMeanTensorSize = 0;
  uint32_t x1TensorPos = 0;
  uint32_t x1TensorSize = 0;
  uint32_t x2TensorPos = 0;
  uint32_t x2TensorSize = 0;
  uint32_t x3TensorPos = 0;
  uint32_t x3TensorSize = 0;
  uint32_t tmpTensorPos = 0;
  uint32_t tmpTensorSize = 0;
  uint32_t tmpTensor1Pos = 0;
  uint32_t tmpTensor1Size = 0;
  uint32_t tmpTensor2Pos = 0;
  uint32_t tmpTensor2Size = 0;
  uint32_t lastDimValueBack = 0;
  uint32_t lastDimValueBackMulTwo = 0;
};

// guide 6.2.4.4.6
struct LayerNormGradBetaTiling {
  uint32_t stackBufferSize = 0;
  uint32_t bLength = 0;
  uint32_t sLength = 0;
  uint32_t hLength = 0;
  uint32_t originalHLength = 0;
  uint32_t bshLength = 0;
  uint32_t bsLength = 0;
  uint32_t oneCalSize = 0;
  uint32_t numberOfTmpBuf = 0;
  uint32_t loopRound = 0;
  uint32_t inputTailSize = 0;
  uint32_t inputTailPos = 0;
  uint32_t bsTailSize = 0;
  uint32_t bshCurLength = 0;
  uint32_t bsCurLength = 0;
  uint32_t gammaTempTensorPos = 0;
  uint32_t betaTempTensorPos = 0;
  uint32_t inputDyTmpTensorPos = 0;
  uint32_t resForGammaTmpTensorPos = 0;
  uint32_t reserved = 0;
};

// guide 6.2.4.4.8
struct RmsNormTiling {
  uint32_t bLength = 0;
  uint32_t sLength = 0;
  uint32_t hLength = 0;
  uint32_t originalHLength = 0;
  float reciprocalOfHLength = 0;
  uint32_t mainBshLength = 0;
  uint32_t mainBsLength = 0;
  uint32_t mainBsLengthAlign = 0;
  uint32_t loopRound = 0;
  uint32_t inputTailPos = 0;
  uint32_t tailBshLength = 0;
  uint32_t tailBsLength = 0;
};

// guide 6.2.4.4.10
struct BatchNormTiling {
  uint32_t originalBLength = 0;
  uint32_t meanVarSize = 0;
  uint32_t meanTmpTensorPos = 0;
  uint32_t varianceTmpTensorPos = 0;
  uint32_t tmpBufSize = 0;
  uint32_t oneTmpSize = 0;
  uint32_t firstTmpStartPos = 0;
  uint32_t secondTmpStartPos = 0;
  uint32_t thirdTmpStartPos = 0;
  uint32_t loopRound = 0;
  uint32_t inputTailSize = 0;
  uint32_t inputTailPos = 0;
  uint32_t meanVarTailSize = 0;
  uint32_t meanVarTailPos = 0;
  uint32_t bshCurLength = 0;
  uint32_t shCurLength = 0;
  float firstDimValueBack = 0;
  uint32_t castHalfRepStride = 0;
  uint32_t shCurLengthBlockNum = 0;
  uint32_t castHalfOutRepStride = 0;
};

// guide 6.2.4.4.12
struct DeepNormTiling {
  uint32_t bLength = 0;
  uint32_t sLength = 0;
  uint32_t hLength = 0;
  uint32_t originalHLength = 0;
  uint32_t inputXSize = 0;
  uint32_t meanVarSize = 0;
  uint32_t numberOfTmpBuf = 0;
  uint32_t meanTmpTensorPos = 0;
  uint32_t meanTmpTensorSize = 0;
  uint32_t varianceTmpTensorPos = 0;
  uint32_t varianceTmpTensorSize = 0;
  uint32_t tmpBufSize = 0;
  uint32_t oneTmpSize = 0;
  uint32_t firstTmpStartPos = 0;
  uint32_t secondTmpStartPos = 0;
  uint32_t thirdTmpStartPos = 0;
  uint32_t loopRound = 0;
  uint32_t inputRoundSize = 0;
  uint32_t inputTailSize = 0;
  uint32_t inputTailPos = 0;
  uint32_t meanVarRoundSize = 0;
  uint32_t meanVarTailSize = 0;
  uint32_t meanVarTailPos = 0;
  uint32_t bshCurLength = 0;
  uint32_t bsCurLength = 0;
  float lastDimValueBack = 0;
};

// guide 6.2.4.4.20
struct GroupNormTiling {
  uint32_t n = 0;
  uint32_t c = 0;
  uint32_t hw = 0;
  uint32_t g = 0;
  uint32_t d = 0;
  uint32_t hwAlignSize = 0;
  uint32_t dhwAlignSize = 0;
  uint32_t inputXSize = 0;
  uint32_t meanVarSize = 0;
  uint32_t numberOfTmpBuf = 0;
  uint32_t meanTmpTensorPos = 0;
  uint32_t meanTmpTensorSize = 0;
  uint32_t varianceTmpTensorPos = 0;
  uint32_t varianceTmpTensorSize = 0;
  uint32_t tmpBufSize = 0;
  uint32_t oneTmpSize = 0;
  uint32_t firstTmpStartPos = 0;
  uint32_t secondTmpStartPos = 0;
  uint32_t thirdTmpStartPos = 0;
  uint32_t loopRound = 0;
  uint32_t inputRoundSize = 0;
  uint32_t inputTailSize = 0;
  uint32_t inputTailPos = 0;
  uint32_t meanVarRoundSize = 0;
  uint32_t meanVarTailSize = 0;
  uint32_t meanVarTailPos = 0;
  uint32_t bshCurLength = 0;
  uint32_t bsCurLength = 0;
  float factor = 0;
  bool smallShape = 0;
};

// guide 6.2.4.7.2
struct TopkTiling {
  int32_t tmpLocalSize = 0;
  int32_t allDataSize = 0;
  int32_t innerDataSize = 0;
  uint32_t sortRepeat = 0;
  int32_t mrgSortRepeat = 0;
  int32_t kAlignFourBytes = 0;
  int32_t kAlignTwoBytes = 0;
  int32_t maskOffset = 0;
  int32_t maskVreducev2FourBytes = 0;
  int32_t maskVreducev2TwoBytes = 0;
  int32_t mrgSortSrc1offset = 0;
  int32_t mrgSortSrc2offset = 0;
  int32_t mrgSortSrc3offset = 0;
  int32_t mrgSortTwoQueueSrc1Offset = 0;
  int32_t mrgFourQueueTailPara1 = 0;
  int32_t mrgFourQueueTailPara2 = 0;
  int32_t srcIndexOffset = 0;
  uint32_t copyUbToUbBlockCount = 0;
  int32_t topkMrgSrc1MaskSizeOffset = 0;
  int32_t topkNSmallSrcIndexOffset = 0;
  uint32_t vreduceValMask0 = 0;
  uint32_t vreduceValMask1 = 0;
  uint32_t vreduceIdxMask0 = 0;
  uint32_t vreduceIdxMask1 = 0;
  uint16_t vreducehalfValMask0 = 0;
  uint16_t vreducehalfValMask1 = 0;
  uint16_t vreducehalfValMask2 = 0;
  uint16_t vreducehalfValMask3 = 0;
  uint16_t vreducehalfValMask4 = 0;
  uint16_t vreducehalfValMask5 = 0;
  uint16_t vreducehalfValMask6 = 0;
  uint16_t vreducehalfValMask7 = 0;
};
#ifndef ASCENDOPT_PLAIN_TCUBETILING
#define ASCENDOPT_PLAIN_TCUBETILING
// guide 6.2.4.2.2 (TCubeTiling结构体)
struct TCubeTiling {
  ASCENDOPT_TCUBETILING_FIELDS(ASCENDOPT_TCUBETILING_PLAIN_FIELD)
};
#endif
}  // namespace tiling
}  // namespace AscendC

using AscendC::tiling::TCubeTiling;
using AscendC::tiling::SoftMaxTiling;
using AscendC::tiling::LayerNormTiling;
using AscendC::tiling::LayerNormSeparateTiling;
using AscendC::tiling::LayerNormGradTiling;
using AscendC::tiling::LayerNormGradBetaTiling;
using AscendC::tiling::RmsNormTiling;
using AscendC::tiling::BatchNormTiling;
using AscendC::tiling::DeepNormTiling;
using AscendC::tiling::GroupNormTiling;
using AscendC::tiling::TopkTiling;

#endif
