// SPDX-License-Identifier: Apache-2.0
// A swizzle of three components where a vector of two belongs.
// clang-format off
// expected g++: conversion from 'kiln::detail::swizzle<float, 3>' to non-scalar type 'const kiln::detail::kernel_scope::float2'
// expected clang++: no viable conversion from 'swizzle<float, 3>'
// clang-format on
#include <kiln/kernel.hpp>

#include "mistake.hpp"

KILN_KERNEL(first_two, (kiln::global_ptr<kiln::float4> v, kiln::global_ptr<kiln::float2> r), {
    const kiln::uint i = get_global_id(0);
    const float2 pair = KILN_MISTAKE(v[i].xyz, v[i].xy);
    r[i] = pair;
});
