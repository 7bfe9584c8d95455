// SPDX-License-Identifier: Apache-2.0
// One test body for each of kiln's 16-bit floating-point types.
#pragma once

#include <gtest/gtest.h>

#include <kiln/half.hpp>

namespace kiln::test {

/// Runs `check.template operator()<T>()` for T = half, then bfloat16.
template <class F>
void for_each_binary16(F check) {
    {
        SCOPED_TRACE("kiln::half");
        check.template operator()<kiln::half>();
    }
    {
        SCOPED_TRACE("kiln::bfloat16");
        check.template operator()<kiln::bfloat16>();
    }
}

}  // namespace kiln::test
