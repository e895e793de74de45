// ascendopt AscendC emulation: the fields of TCubeTiling, the Matmul
// API's tiling (guide 6.2.4.2.2 "TCubeTiling结构体", table 6-1072), in the
// table's order, every one an int32. One list for the kernel's plain
// struct (kernel_tiling/kernel_tiling.h) and the host's TilingData class
// (ascendopt/lib/matmul_tiling.h), so both lay out the same bytes.
#ifndef ASCENDOPT_LIB_CUBE_TILING_FIELDS_H
#define ASCENDOPT_LIB_CUBE_TILING_FIELDS_H

#define ASCENDOPT_TCUBETILING_FIELDS(F)                                                                      \
  F(usedCoreNum) F(M) F(N) F(Ka) F(Kb) F(singleCoreM) F(singleCoreN) F(singleCoreK) F(baseM) F(baseN) F(baseK) \
  F(depthA1) F(depthB1) F(stepM) F(stepN) F(stepKa) F(stepKb) F(isBias) F(transLength) F(iterateOrder)       \
  F(dbL0A) F(dbL0B) F(dbL0C) F(shareMode) F(shareL1Size) F(shareL0CSize) F(shareUbSize) F(batchM) F(batchN) \
  F(singleBatchM) F(singleBatchN) F(mxTypePara)

#define ASCENDOPT_TCUBETILING_PLAIN_FIELD(name) int32_t name = 0;

#endif
