#include "triu_tiling.h"
#include "register/op_def_registry.h"

namespace optiling {
static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    TriuTilingData tiling;
    const gert::Shape& shape = context->GetInputShape(0)->GetStorageShape();
    size_t dims = shape.GetDimNum();
    uint32_t width = shape.GetDim(dims - 1);
    uint32_t height = shape.GetDim(dims - 2);
    uint32_t rows = shape.GetShapeSize() / width;
    const int64_t* diagonal = context->GetAttrs()->GetAttrPointer<int64_t>(0);
    uint32_t blockDim = 4;
    uint32_t rowsPerCore = (rows + blockDim - 1) / blockDim;
    blockDim = (rows + rowsPerCore - 1) / rowsPerCore;
    context->SetBlockDim(blockDim);
    tiling.set_rows(rows);
    tiling.set_height(height);
    tiling.set_width(width);
    tiling.set_diagonal(static_cast<int32_t>(*diagonal));
    tiling.set_rowsPerCore(rowsPerCore);
    tiling.set_tileRows(8);
    context->SetTilingKey(context->GetInputDesc(0)->GetDataType() == ge::DT_FLOAT16 ? 1 : 2);
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
class Triu : public OpDef {
public:
    explicit Triu(const char* name) : OpDef(name)
    {
        this->Input("x").ParamType(REQUIRED).DataType({ge::DT_FLOAT16, ge::DT_FLOAT}).Format({ge::FORMAT_ND, ge::FORMAT_ND});
        this->Output("y").ParamType(REQUIRED).DataType({ge::DT_FLOAT16, ge::DT_FLOAT}).Format({ge::FORMAT_ND, ge::FORMAT_ND});
        this->Attr("diagonal").AttrType(OPTIONAL).Int(0);
        this->SetInferShape(ge::InferShape);
        this->AICore().SetTiling(optiling::TilingFunc);
        this->AICore().AddConfig("ascend910b");
    }
};
OP_ADD(Triu);
}  // namespace ops
