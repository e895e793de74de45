#include "clip_by_value_v2_tiling.h"
#include "register/op_def_registry.h"
#include "tiling/platform/platform_ascendc.h"

namespace optiling {
static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    ClipByValueV2TilingData tiling;
    auto platform = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
    uint32_t coreNum = platform.GetCoreNumAiv();
    if (coreNum > 8) {
        coreNum = 8;  // keep it simple for now
    }
    uint32_t totalLength = context->GetInputShape(0)->GetStorageShape().GetShapeSize();
    ge::DataType dtype = context->GetInputDesc(0)->GetDataType();
    uint32_t typeSize = dtype == ge::DT_FLOAT16 ? 2 : 4;
    uint32_t alignNum = 32 / typeSize;
    // per-core length: a multiple of 32 bytes, the last core takes less
    uint32_t blockLength = (totalLength + coreNum - 1) / coreNum;
    blockLength = (blockLength + alignNum - 1) / alignNum * alignNum;
    uint32_t usedCores = (totalLength + blockLength - 1) / blockLength;
    if (usedCores == 0) {
        usedCores = 1;
    }
    uint32_t tileLength = 2048 / typeSize;

    context->SetBlockDim(usedCores);
    tiling.set_totalLength(totalLength);
    tiling.set_blockLength(blockLength);
    tiling.set_tileLength(tileLength);
    context->SetTilingKey(dtype == ge::DT_FLOAT16 ? 1 : (dtype == ge::DT_FLOAT ? 2 : 3));
    tiling.SaveToBuffer(context->GetRawTilingData()->GetData(), context->GetRawTilingData()->GetCapacity());
    context->GetRawTilingData()->SetDataSize(tiling.GetDataSize());
    size_t* currentWorkspace = context->GetWorkspaceSizes(1);
    currentWorkspace[0] = 0;
    return ge::GRAPH_SUCCESS;
}
}  // namespace optiling

namespace ge {
static ge::graphStatus InferShape(gert::InferShapeContext* context)
{
    *context->GetOutputShape(0) = *context->GetInputShape(0);
    return GRAPH_SUCCESS;
}
}  // namespace ge

namespace ops {
class ClipByValueV2 : public OpDef {
public:
    explicit ClipByValueV2(const char* name) : OpDef(name)
    {
        this->Input("x").ParamType(REQUIRED).DataType({ge::DT_FLOAT16, ge::DT_FLOAT, ge::DT_INT32}).Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->Input("clip_value_min").ParamType(REQUIRED).DataType({ge::DT_FLOAT16, ge::DT_FLOAT, ge::DT_INT32}).Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->Input("clip_value_max").ParamType(REQUIRED).DataType({ge::DT_FLOAT16, ge::DT_FLOAT, ge::DT_INT32}).Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->Output("y").ParamType(REQUIRED).DataType({ge::DT_FLOAT16, ge::DT_FLOAT, ge::DT_INT32}).Format({ge::FORMAT_ND, ge::FORMAT_ND, ge::FORMAT_ND});
        this->SetInferShape(ge::InferShape);
        this->AICore().SetTiling(optiling::TilingFunc);
        this->AICore().AddConfig("ascend910b");
    }
};
OP_ADD(ClipByValueV2);
}  // namespace ops
