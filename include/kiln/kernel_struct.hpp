// SPDX-License-Identifier: Apache-2.0
// KILN_STRUCT: a struct declared once for the host and for kernels, its layout checked against
// each device's compiler.
//
//     KILN_STRUCT(particle, (kiln::float4, position), (kiln::float4, velocity), (float, mass))
//
// declares `struct particle { kiln::float4 position; kiln::float4 velocity; float mass; }` and
// its OpenCL C twin, which kiln::declarations<particle>() returns for hand-written programs and
// generated kernels (kiln::vector<particle>) declare by themselves.
#pragma once
#pragma GCC visibility push(default)

#include <cstddef>
#include <kiln/detail/device_type_names.hpp>
#include <kiln/detail/kernel_narrow_float.hpp>
#include <kiln/vector_types.hpp>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace kiln {
namespace detail {

/// One field as the OpenCL C declaration and the layout check see it.
struct struct_field {
    const char* name;
    std::string opencl_type;
    std::size_t offset;
};

/// The OpenCL C declaration of a struct, preceded by a `// kiln-layout` line carrying the host's
/// size, alignment and field offsets: every kiln::program whose source holds that line checks
/// the device's layout against it before building (src/runtime/struct_layout.cpp).
std::string struct_declaration(std::string_view name, std::size_t size, std::size_t alignment,
                               const std::vector<struct_field>& fields);

/// Field types of a KILN_STRUCT: scalars and kiln vector types. bool (one byte on the host, an
/// int in kiln's kernels) and std::complex (aligned to its component on the host, to twice that
/// on devices) would not lay out alike; nested structs are not supported.
template <class T>
concept struct_field_type = device_representable<T> && !std::is_same_v<T, bool> &&
                            !is_complex_v<T> && !is_pair_state_v<T> && !declared_struct<T>;

/// The OpenCL C type of a field: its own name, but ushort for half, whose values OpenCL C keeps
/// in memory only without cl_khr_fp16 (kernels read them with kiln_half_to_float).
template <struct_field_type T>
std::string struct_field_opencl_type() {
    if constexpr (std::is_same_v<T, half>)
        return "ushort";
    else
        return opencl_type_name<T>();
}

/// The struct and field type of a data member pointer.
template <class M>
struct member_of;
template <class Owner, class Field>
struct member_of<Field Owner::*> {
    using owner = Owner;
    using field = Field;
};

template <auto A, auto B>
inline constexpr bool same_member = [] {
    if constexpr (std::is_same_v<decltype(A), decltype(B)>)
        return A == B;
    else
        return false;
}();

}  // namespace detail

/// The OpenCL C declarations of KILN_STRUCTs, to put first in a program's sources:
/// `kiln::program(dev, {kiln::declarations<particle>(), source})`.
template <detail::declared_struct... Structs>
std::string declarations() {
    return (std::string() + ... + Structs::kiln_struct_declaration());
}

/// The OpenCL C name of a field given by its member pointer (&particle::mass).
template <auto Member>
requires std::is_member_object_pointer_v<decltype(Member)>
constexpr std::string_view field_name() {
    using owner = typename detail::member_of<decltype(Member)>::owner;
    static_assert(detail::declared_struct<owner>, "the struct is not declared with KILN_STRUCT");
    constexpr const char* name = owner::template kiln_field_name<Member>();
    static_assert(name != nullptr, "not a field that KILN_STRUCT declared");
    return name;
}

}  // namespace kiln

// A for-each over the macro's arguments: each rescan level re-expands the recursion once more.
#define KILN_DETAIL_PARENS ()
#define KILN_DETAIL_EXPAND(...) \
    KILN_DETAIL_EXPAND3(KILN_DETAIL_EXPAND3(KILN_DETAIL_EXPAND3(KILN_DETAIL_EXPAND3(__VA_ARGS__))))
#define KILN_DETAIL_EXPAND3(...) \
    KILN_DETAIL_EXPAND2(KILN_DETAIL_EXPAND2(KILN_DETAIL_EXPAND2(KILN_DETAIL_EXPAND2(__VA_ARGS__))))
#define KILN_DETAIL_EXPAND2(...) \
    KILN_DETAIL_EXPAND1(KILN_DETAIL_EXPAND1(KILN_DETAIL_EXPAND1(KILN_DETAIL_EXPAND1(__VA_ARGS__))))
#define KILN_DETAIL_EXPAND1(...) __VA_ARGS__
#define KILN_DETAIL_FOR_EACH(macro, owner, ...) \
    __VA_OPT__(KILN_DETAIL_EXPAND(KILN_DETAIL_FOR_EACH_STEP(macro, owner, __VA_ARGS__)))
#define KILN_DETAIL_FOR_EACH_STEP(macro, owner, first, ...) \
    macro(owner, first)                                     \
        __VA_OPT__(KILN_DETAIL_FOR_EACH_AGAIN KILN_DETAIL_PARENS(macro, owner, __VA_ARGS__))
#define KILN_DETAIL_FOR_EACH_AGAIN() KILN_DETAIL_FOR_EACH_STEP

#define KILN_DETAIL_STRUCT_MEMBER(owner, field) KILN_DETAIL_STRUCT_MEMBER_I field
#define KILN_DETAIL_STRUCT_MEMBER_I(type, name)                                      \
    static_assert(::kiln::detail::struct_field_type<type>,                           \
                  "KILN_STRUCT fields are scalars (not bool) or kiln vector types"); \
    type name;
#define KILN_DETAIL_STRUCT_VIEW_MEMBER(owner, field) KILN_DETAIL_STRUCT_VIEW_MEMBER_I field
#define KILN_DETAIL_STRUCT_VIEW_MEMBER_I(type, name) ::kiln::detail::kernel_value_t<type> name;
#define KILN_DETAIL_STRUCT_IS_BINARY16(owner, field) KILN_DETAIL_STRUCT_IS_BINARY16_I field
#define KILN_DETAIL_STRUCT_IS_BINARY16_I(type, name) || ::kiln::detail::is_narrow_float_v<type>
#define KILN_DETAIL_STRUCT_FIELD(owner, field) \
    KILN_DETAIL_STRUCT_FIELD_I(owner, KILN_DETAIL_EXPAND1 field)
#define KILN_DETAIL_STRUCT_FIELD_I(owner, ...) KILN_DETAIL_STRUCT_FIELD_II(owner, __VA_ARGS__)
#define KILN_DETAIL_STRUCT_FIELD_II(owner, type, name)                                    \
    ::kiln::detail::struct_field{#name, ::kiln::detail::struct_field_opencl_type<type>(), \
                                 offsetof(owner, name)},
#define KILN_DETAIL_STRUCT_NAME(owner, field) \
    KILN_DETAIL_STRUCT_NAME_I(owner, KILN_DETAIL_EXPAND1 field)
#define KILN_DETAIL_STRUCT_NAME_I(owner, ...) KILN_DETAIL_STRUCT_NAME_II(owner, __VA_ARGS__)
#define KILN_DETAIL_STRUCT_NAME_II(owner, type, name) \
    if constexpr (::kiln::detail::same_member<Member, &owner::name>) return #name;

/// Declares `struct name { type field; ... }` (at namespace scope; at most 64 fields; a type
/// with a comma needs an alias) with its OpenCL C declaration and layout description.
#define KILN_STRUCT(name, ...)                                                                 \
    struct name {                                                                              \
        KILN_DETAIL_FOR_EACH(KILN_DETAIL_STRUCT_MEMBER, name, __VA_ARGS__)                     \
        static constexpr const char* kiln_struct_name = #name;                                 \
        static std::string kiln_struct_declaration() {                                         \
            return ::kiln::detail::struct_declaration(                                         \
                #name, sizeof(name), alignof(name),                                            \
                {KILN_DETAIL_FOR_EACH(KILN_DETAIL_STRUCT_FIELD, name, __VA_ARGS__)});          \
        }                                                                                      \
        template <auto Member>                                                                 \
        static constexpr const char* kiln_field_name() {                                       \
            KILN_DETAIL_FOR_EACH(KILN_DETAIL_STRUCT_NAME, name, __VA_ARGS__)                   \
            return nullptr;                                                                    \
        }                                                                                      \
        friend bool operator==(const name&, const name&) = default;                            \
        /* What a kernel body reads through a pointer to the struct, where it has */           \
        /* 16-bit or FP8 fields (kiln/detail/kernel_narrow_float.hpp). */                      \
        static constexpr bool kiln_has_binary16_fields =                                       \
            false KILN_DETAIL_FOR_EACH(KILN_DETAIL_STRUCT_IS_BINARY16, name, __VA_ARGS__);     \
        struct kiln_kernel_view {                                                              \
            KILN_DETAIL_FOR_EACH(KILN_DETAIL_STRUCT_VIEW_MEMBER, name, __VA_ARGS__)            \
            kiln_kernel_view& operator=(const name&);                                          \
            operator name() const = delete; /* kernels read its 16-bit fields as s[i].field */ \
        };                                                                                     \
    }
#pragma GCC visibility pop
