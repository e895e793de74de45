// ascendopt host (op_host) emulation of CANN's graph/types.h: ge::DataType,
// ge::Format, ge::graphStatus and the size of a data type.
#ifndef ASCENDOPT_GRAPH_TYPES_H
#define ASCENDOPT_GRAPH_TYPES_H

#include "../ascendopt/host/core.h"

namespace ge {
// Bytes of one element of `dtype`; -1 for types without a whole-byte
// element (strings, 4-bit types) and unknown codes.
inline int GetSizeByDataType(DataType dtype) {
  switch (dtype) {
    case DT_INT8:
    case DT_UINT8:
    case DT_BOOL:
      return 1;
    case DT_FLOAT16:
    case DT_BF16:
    case DT_INT16:
    case DT_UINT16:
      return 2;
    case DT_FLOAT:
    case DT_INT32:
    case DT_UINT32:
      return 4;
    case DT_INT64:
    case DT_UINT64:
    case DT_DOUBLE:
    case DT_COMPLEX64:
      return 8;
    case DT_COMPLEX128:
      return 16;
    default:
      return -1;
  }
}
}  // namespace ge

#endif
