// ascendopt host (op_host) emulation of CANN's graph/utils/type_utils.h:
// ge::TypeUtils, conversions between GE's data types and formats and
// their names and sizes.
#ifndef ASCENDOPT_GRAPH_UTILS_TYPE_UTILS_H
#define ASCENDOPT_GRAPH_UTILS_TYPE_UTILS_H

#include "../../ascendopt/host/std_bundle.h"
#include "../types.h"

namespace ge {
class TypeUtils {
 public:
  // The element size of `dtype` in bytes; false (length untouched) for a
  // type without a whole-byte element.
  static bool GetDataTypeLength(DataType dtype, uint32_t& length) {
    int size = GetSizeByDataType(dtype);
    if (size <= 0) return false;
    length = (uint32_t)size;
    return true;
  }
  // `DT_FLOAT16`, ...; `DT_UNDEFINED` for an unknown code.
  static std::string DataTypeToSerialString(DataType dtype) {
    for (const auto& e : dtype_names())
      if (e.first == dtype) return e.second;
    return "DT_UNDEFINED";
  }
  static DataType SerialStringToDataType(const std::string& name) {
    for (const auto& e : dtype_names())
      if (e.second == name) return e.first;
    return DT_UNDEFINED;
  }
  // The format without its prefix: `ND`, `NCHW`, ...; `RESERVED` for an
  // unknown code.
  static std::string FormatToSerialString(Format format) {
    for (const auto& e : format_names())
      if (e.first == format) return e.second;
    return "RESERVED";
  }
  static Format SerialStringToFormat(const std::string& name) {
    for (const auto& e : format_names())
      if (e.second == name) return e.first;
    return FORMAT_RESERVED;
  }

 private:
  static const std::vector<std::pair<DataType, std::string>>& dtype_names() {
    static const std::vector<std::pair<DataType, std::string>> names = {
        {DT_FLOAT, "DT_FLOAT"},   {DT_FLOAT16, "DT_FLOAT16"}, {DT_INT8, "DT_INT8"},
        {DT_INT32, "DT_INT32"},   {DT_UINT8, "DT_UINT8"},     {DT_INT16, "DT_INT16"},
        {DT_UINT16, "DT_UINT16"}, {DT_UINT32, "DT_UINT32"},   {DT_INT64, "DT_INT64"},
        {DT_UINT64, "DT_UINT64"}, {DT_DOUBLE, "DT_DOUBLE"},   {DT_BOOL, "DT_BOOL"},
        {DT_STRING, "DT_STRING"}, {DT_COMPLEX64, "DT_COMPLEX64"}, {DT_COMPLEX128, "DT_COMPLEX128"},
        {DT_BF16, "DT_BF16"},     {DT_INT4, "DT_INT4"},       {DT_UNDEFINED, "DT_UNDEFINED"}};
    return names;
  }
  static const std::vector<std::pair<Format, std::string>>& format_names() {
    static const std::vector<std::pair<Format, std::string>> names = {
        {FORMAT_NCHW, "NCHW"},       {FORMAT_NHWC, "NHWC"},       {FORMAT_ND, "ND"},
        {FORMAT_NC1HWC0, "NC1HWC0"}, {FORMAT_FRACTAL_Z, "FRACTAL_Z"}, {FORMAT_HWCN, "HWCN"},
        {FORMAT_NDHWC, "NDHWC"},     {FORMAT_FRACTAL_NZ, "FRACTAL_NZ"}, {FORMAT_NCDHW, "NCDHW"},
        {FORMAT_DHWCN, "DHWCN"},     {FORMAT_NDC1HWC0, "NDC1HWC0"}, {FORMAT_CN, "CN"},
        {FORMAT_NC, "NC"},           {FORMAT_NCL, "NCL"},         {FORMAT_RESERVED, "RESERVED"}};
    return names;
  }
};
}  // namespace ge

#endif
