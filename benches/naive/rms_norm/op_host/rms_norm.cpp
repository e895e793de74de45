#include "rms_norm_tiling.h"
#include "register/op_def_registry.h"
#include "tiling/platform/platform_ascendc.h"

namespace optiling {
constexpr uint32_t TILE_LENGTH = 1024;  // floats per tile

static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    RmsNormTilingData tiling;
    const gert::Shape& shape = context->GetInputShape(0)->GetStorageShape();
    uint32_t total = shape.GetShapeSize();
    uint32_t cols = shape.GetDim(shape.GetDimNum() - 1);
    const float* epsilon = context->GetAttrs()->GetAttrPointer<float>(0);
    context->SetBlockDim(8);
    tiling.set_rows(total / cols);
    tiling.set_cols(cols);
    tiling.set_tileLength(TILE_LENGTH);
    tiling.set_epsilon(*epsilon);
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
    const gert::Shape* x = context->GetInputShape(0);
    *context->GetOutputShape(0) = *x;
    gert::Shape* rstd = context->GetOutputShape(1);
    *rstd = *x;
    rstd->SetDim(x->GetDimNum() - 1, 1);
    return GRAPH_SUCCESS;
}
}  // namespace ge

namespace ops {
class RmsNorm : public OpDef {
public:
    explicit RmsNorm(const char* name) : OpDef(name)
    {
        this->Input("x").ParamType(REQUIRED).DataType({ge::DT_FLOAT}).Format({ge::FORMAT_ND});
        this->Input("gamma").ParamType(REQUIRED).DataType({ge::DT_FLOAT}).Format({ge::FORMAT_ND});
        this->Output("y").ParamType(REQUIRED).DataType({ge::DT_FLOAT}).Format({ge::FORMAT_ND});
        this->Output("rstd").ParamType(REQUIRED).DataType({ge::DT_FLOAT}).Format({ge::FORMAT_ND});
        this->Attr("epsilon").AttrType(OPTIONAL).Float(1e-6);
        this->SetInferShape(ge::InferShape);
        this->AICore().SetTiling(optiling::TilingFunc);
        this->AICore().AddConfig("ascend910b");
    }
};
OP_ADD(RmsNorm);
}  // namespace ops
