// ascendopt AscendC emulation: sorting as the guide documents it for Atlas
// A2 (the 910B). Clean-room, from the documented signatures and semantics.
//
// Instructions (guide 6.2.3.3.9; the runtime executes them,
// crates/sim/src/runtime/vec/sort.rs):
//   Sort32, MrgSort and GetMrgSortResult. A sorted element is an 8-byte
//   (score, index) structure, score in the low bytes, uint32 index in the
//   high 4.
//   ProposalConcat, ProposalExtract, RpSort16 and MrgSort4 (the Region
//   Proposal instructions) are not available on Atlas A2 (their product
//   tables say so): calling one fails to compile with a message saying it.
// High-level API (guide 6.2.4.7, the A2 layout "排布方式一"), built here
// from the instructions:
//   Concat   copies the scores (16 per repeat) into the concat buffer;
//   Sort     Sort32 on every 32 scores, then (isFullSort) MrgSort passes
//            that merge four lists at a time, alternating between dst and
//            tmp (tmp holds as many structures as dst), so equal scores
//            keep their input order;
//   Extract  splits 32 structures per repeat into values and indices with
//            GatherMask;
//   MrgSort  (the six-argument form) is one MrgSort instruction;
//   GetSortLen / GetSortOffset give sizes and offsets of structures in
//   elements of T (8 / sizeof(T) per structure), as real code uses them
//   (`Get<float>(GetSortLen<float>(n))`, `blockLen = GetSortLen<float>(n) *
//   sizeof(float)`).
#ifndef ASCENDOPT_KERNEL_SORT_H
#define ASCENDOPT_KERNEL_SORT_H

#include "vec_move.h"

namespace ascendopt {
// What the last MrgSort of this block took from each list (4 x 16 bits),
// read by GetMrgSortResult.
inline thread_local uint64_t g_mrg_sort_result = 0;
}  // namespace ascendopt

namespace AscendC {

// Up to four sorted lists (guide 6.2.3.3.9.6).
template <typename T>
struct MrgSortSrcList {
  MrgSortSrcList() {}
  MrgSortSrcList(const LocalTensor<T>& src1In, const LocalTensor<T>& src2In, const LocalTensor<T>& src3In,
                 const LocalTensor<T>& src4In)
      : src1(src1In[0]), src2(src2In[0]), src3(src3In[0]), src4(src4In[0]) {}
  LocalTensor<T> src1;
  LocalTensor<T> src2;
  LocalTensor<T> src3;
  LocalTensor<T> src4;
};

// The merge's parameters (guide table 6-433).
struct MrgSort4Info {
  uint16_t elementLengths[4] = {0, 0, 0, 0};
  bool ifExhaustedSuspension = false;
  uint16_t validBit = 0;
  uint16_t repeatTimes = 1;
  MrgSort4Info() {}
  MrgSort4Info(const uint16_t elementLengthsIn[4], const bool ifExhaustedSuspensionIn, const uint16_t validBitIn,
               const uint16_t repeatTimesIn)
      : ifExhaustedSuspension(ifExhaustedSuspensionIn), validBit(validBitIn), repeatTimes(repeatTimesIn) {
    for (int i = 0; i < 4; ++i) elementLengths[i] = elementLengthsIn[i];
  }
};

// Sorts every 32 scores of src0 with their indices of src1 into dst,
// largest first; repeatTime groups of 32.
template <typename T>
inline void Sort32(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<uint32_t>& src1,
                   const int32_t repeatTime, ASC_LOC) {
  AscVecOp op = ::ascendopt::vec::make(ASC_VOP_SORT32, ::ascendopt::dtype_of<T>(), loc_);
  op.dst = dst.desc_;
  op.src0 = src0.desc_;
  op.src1 = src1.desc_;
  op.form = ASC_FORM_MASK_CONT;
  op.repeat = (uint32_t)repeatTime;
  ::ascendopt::vec::issue(op);
}

// Merges the valid sorted lists of `src` into dst, largest score first.
template <typename T>
inline void MrgSort(const LocalTensor<T>& dst, const MrgSortSrcList<T>& src, const MrgSort4Info& params, ASC_LOC) {
  AscVecOp op = ::ascendopt::vec::make(ASC_VOP_MRG_SORT, ::ascendopt::dtype_of<T>(), loc_);
  op.dst = dst.desc_;
  op.src0 = src.src1.desc_;
  op.src1 = src.src2.desc_;
  op.src2 = src.src3.desc_;
  op.form = ASC_FORM_MASK_CONT;
  for (int i = 0; i < 4; ++i) op.p[i] = params.elementLengths[i];
  op.p[4] = params.ifExhaustedSuspension ? 1u : 0u;
  op.p[5] = params.validBit;
  op.p[6] = src.src4.desc_.addr;
  op.repeat = params.repeatTimes;
  ::ascendopt::g_mrg_sort_result = ASC_RT->vec_result(&op);
}

// The structures the last MrgSort took from each list.
inline void GetMrgSortResult(uint16_t& mrgSortList1, uint16_t& mrgSortList2, uint16_t& mrgSortList3,
                             uint16_t& mrgSortList4) {
  uint64_t r = ::ascendopt::g_mrg_sort_result;
  mrgSortList1 = (uint16_t)(r & 0xffff);
  mrgSortList2 = (uint16_t)((r >> 16) & 0xffff);
  mrgSortList3 = (uint16_t)((r >> 32) & 0xffff);
  mrgSortList4 = (uint16_t)((r >> 48) & 0xffff);
}

// ---- not available on Atlas A2 ------------------------------------------------------
#define ASCENDOPT_NOT_ON_A2(Name)                                                                  \
  template <class... Ts, class... As>                                                              \
  inline void Name(As&&...) {                                                                      \
    static_assert(::ascendopt::always_false<Ts..., As...>,                                         \
                  "not supported by the ascendopt simulator: " #Name                               \
                  " (a Region Proposal instruction the guide lists as unavailable on Atlas A2, "   \
                  "the 910B; use Sort32/MrgSort or the high-level Sort)");                         \
  }
ASCENDOPT_NOT_ON_A2(ProposalConcat)
ASCENDOPT_NOT_ON_A2(ProposalExtract)
ASCENDOPT_NOT_ON_A2(RpSort16)
ASCENDOPT_NOT_ON_A2(MrgSort4)
#undef ASCENDOPT_NOT_ON_A2

// ---- high-level sort (guide 6.2.4.7) ------------------------------------------------------
// Elements of T one (score, index) structure takes.
template <typename T>
constexpr uint32_t ascendopt_sort_elems_per_struct() {
  return 8u / (uint32_t)sizeof(T);
}

template <typename T>
inline uint32_t GetSortLen(const uint32_t elemCount) {
  return elemCount * ascendopt_sort_elems_per_struct<T>();
}
template <typename T>
inline uint32_t GetSortOffset(const uint32_t elemOffset) {
  return elemOffset * ascendopt_sort_elems_per_struct<T>();
}

namespace detail {
// Copies `elems` elements inside the UB (one vector instruction).
template <typename T>
inline void ub_copy(const LocalTensor<T>& dst, const LocalTensor<T>& src, uint32_t elems, const ::ascendopt::Loc& loc) {
  AscVecOp op = ::ascendopt::vec::make(ASC_VOP_COPY, ::ascendopt::dtype_of<T>(), loc);
  op.dst = dst.desc_;
  op.src0 = src.desc_;
  ::ascendopt::vec::count_form(op, (int64_t)elems, true);
  ::ascendopt::vec::issue(op);
}
}  // namespace detail

// Prepares the scores for Sort: on Atlas A2 the concat buffer holds the
// scores themselves, 16 per repeat.
template <typename T>
inline void Concat(LocalTensor<T>& concat, const LocalTensor<T>& src, const LocalTensor<T>& tmp,
                   const int32_t repeatTime, ASC_LOC) {
  (void)tmp;
  if (repeatTime > 0) detail::ub_copy(concat, src, (uint32_t)repeatTime * 16u, loc_);
}

template <typename T, bool isFullSort>
inline void Sort(const LocalTensor<T>& dst, const LocalTensor<T>& concat, const LocalTensor<uint32_t>& index,
                 LocalTensor<T>& tmp, const int32_t repeatTime, ASC_LOC) {
  Sort32(dst, concat, index, repeatTime, loc_);
  if (!isFullSort || repeatTime <= 1) return;
  const uint32_t n = (uint32_t)repeatTime * 32u;
  const uint32_t per = ascendopt_sort_elems_per_struct<T>();
  LocalTensor<T> from = dst;
  LocalTensor<T> to = tmp;
  bool in_dst = true;
  for (uint32_t len = 32; len < n; len *= 4) {
    for (uint32_t g = 0; g < n; g += 4 * len) {
      uint16_t lens[4] = {0, 0, 0, 0};
      uint32_t lists = 0;
      for (uint32_t k = 0; k < 4 && g + k * len < n; ++k) {
        uint32_t rest = n - (g + k * len);
        lens[k] = (uint16_t)(rest < len ? rest : len);
        ++lists;
      }
      if (lists == 1) {
        detail::ub_copy(to[g * per], from[g * per], lens[0] * per, loc_);
        continue;
      }
      MrgSortSrcList<T> list;
      list.src1 = from[g * per];
      list.src2 = from[(g + len) * per];
      list.src3 = lists > 2 ? from[(g + 2 * len) * per] : from[g * per];
      list.src4 = lists > 3 ? from[(g + 3 * len) * per] : from[g * per];
      const uint16_t valid = lists == 2 ? 0b11 : lists == 3 ? 0b111 : 0b1111;
      MrgSort(to[g * per], list, MrgSort4Info(lens, false, valid, 1), loc_);
    }
    LocalTensor<T> t = from;
    from = to;
    to = t;
    in_dst = !in_dst;
  }
  if (!in_dst) detail::ub_copy(dst, from, n * per, loc_);
}

// Splits the sorted structures into values and indices, 32 per repeat.
template <typename T>
inline void Extract(const LocalTensor<T>& dstValue, const LocalTensor<uint32_t>& dstIndex, const LocalTensor<T>& sorted,
                    const int32_t repeatTime, ASC_LOC) {
  if (repeatTime <= 0) return;
  uint64_t kept = 0;
  // A repeat of GatherMask reads 256 bytes: 32 structures.
  GatherMask(dstValue, sorted, (uint8_t)(sizeof(T) == 2 ? 3 : 1), false, 0,
             GatherMaskParams(1, repeatTime, 8, 0), kept, loc_);
  GatherMask(dstIndex, sorted.template ReinterpretCast<uint32_t>(), (uint8_t)2, false, 0,
             GatherMaskParams(1, repeatTime, 8, 0), kept, loc_);
}

// The high-level merge: one MrgSort; `sortedNum` gets what it took from
// each list.
template <typename T, bool isExhaustedSuspension = false>
inline void MrgSort(const LocalTensor<T>& dst, const MrgSortSrcList<T>& sortList, const uint16_t elementCountList[4],
                    uint32_t sortedNum[4], uint16_t validBit, const int32_t repeatTime, ASC_LOC) {
  MrgSort(dst, sortList, MrgSort4Info(elementCountList, isExhaustedSuspension, validBit, (uint16_t)repeatTime), loc_);
  uint16_t taken[4];
  GetMrgSortResult(taken[0], taken[1], taken[2], taken[3]);
  for (int i = 0; i < 4; ++i) sortedNum[i] = taken[i];
}

// ---- unlocated overloads (see ASC_UNLOCATED_OVERLOAD) ----------------------------------
ASC_UNLOCATED_OVERLOAD((typename T), (T), void, Sort32,
                       (const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<uint32_t>& src1,
                        const int32_t repeatTime),
                       (dst, src0, src1, repeatTime))
ASC_UNLOCATED_OVERLOAD((typename T), (T), void, MrgSort,
                       (const LocalTensor<T>& dst, const MrgSortSrcList<T>& src, const MrgSort4Info& params),
                       (dst, src, params))

}  // namespace AscendC

#endif
