// ascendopt AscendC emulation: AscendC::Std, the subset of the C++ standard
// library the guide documents for kernel code (6.4.1: max and min; tuple,
// get and make_tuple; the type traits; integral_constant and Int;
// index_sequence and make_index_sequence). On the CPU the standard library
// has every one of them with the documented behaviour, so these are its
// names. abs and sqrt (6.4.1.2) are documented for the Atlas 350 only, not
// for the 910B: they are left out.
#ifndef ASCENDOPT_KERNEL_STD_H
#define ASCENDOPT_KERNEL_STD_H

#include <stddef.h>

#include <tuple>
#include <type_traits>
#include <utility>

namespace AscendC {
namespace Std {

// 6.4.1.1: the larger / smaller of two values, in the first operand's type
// (the guide asks for two operands of one type; the second is compared as
// the first's type, not refused).
template <typename T, typename U>
constexpr T max(const T src0, const U src1) {
  return src0 < static_cast<T>(src1) ? static_cast<T>(src1) : src0;
}
template <typename T, typename U>
constexpr T min(const T src0, const U src1) {
  return static_cast<T>(src1) < src0 ? static_cast<T>(src1) : src0;
}

// 6.4.1.3: tuple, get, make_tuple (and the tuple_size / tuple_element
// helpers get is declared with).
using std::get;
using std::make_tuple;
using std::tuple;
using std::tuple_element;
using std::tuple_size;

// 6.4.1.4: type traits.
using std::add_const;
using std::add_cv;
using std::add_lvalue_reference;
using std::add_pointer;
using std::add_rvalue_reference;
using std::add_volatile;
using std::conditional;
using std::enable_if;
using std::false_type;
using std::integral_constant;
using std::is_array;
using std::is_base_of;
using std::is_const;
using std::is_convertible;
using std::is_floating_point;
using std::is_integral;
using std::is_pointer;
using std::is_reference;
using std::is_same;
using std::is_void;
using std::remove_const;
using std::remove_cv;
using std::remove_pointer;
using std::remove_reference;
using std::remove_volatile;
using std::true_type;

template <typename T>
struct remove_cvref {
  using type = typename std::remove_cv<typename std::remove_reference<T>::type>::type;
};

// The _v and _t shorthands real kernels write.
using std::add_const_t;
using std::add_cv_t;
using std::add_lvalue_reference_t;
using std::add_pointer_t;
using std::add_rvalue_reference_t;
using std::add_volatile_t;
using std::conditional_t;
using std::enable_if_t;
using std::is_array_v;
using std::is_base_of_v;
using std::is_const_v;
using std::is_convertible_v;
using std::is_floating_point_v;
using std::is_integral_v;
using std::is_pointer_v;
using std::is_reference_v;
using std::is_same_v;
using std::is_void_v;
using std::remove_const_t;
using std::remove_cv_t;
using std::remove_pointer_t;
using std::remove_reference_t;
using std::remove_volatile_t;
template <typename T>
using remove_cvref_t = typename remove_cvref<T>::type;
// A false that depends on its arguments, for static_assert in a branch.
template <typename...>
constexpr bool always_false_v = false;

// 6.4.1.4.24: integral_constant's size_t shorthand.
template <size_t v>
using Int = integral_constant<size_t, v>;

// 6.4.1.5.1: compile-time integer sequences.
template <typename T, T... Idx>
using IntegerSequence = std::integer_sequence<T, Idx...>;
template <typename T, T N>
using MakeIntegerSequence = std::make_integer_sequence<T, N>;
template <size_t... Idx>
using index_sequence = IntegerSequence<size_t, Idx...>;
template <size_t N>
using make_index_sequence = MakeIntegerSequence<size_t, N>;

}  // namespace Std
}  // namespace AscendC

#endif
