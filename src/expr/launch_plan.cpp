// SPDX-License-Identifier: Apache-2.0
// The element-wise launches' table (plan_elementwise_launch), each row with where it was measured.
#include <array>
#include <kiln/detail/device_class.hpp>
#include <kiln/expr/launch_plan.hpp>
#include <string_view>

namespace kiln::detail {
namespace {

// clang-format off
struct elementwise_row {
    device_class devices;
    launch_policy policy;
    std::string_view provenance;
    std::string_view vector_bytes_provenance;
};
// CPU devices (PoCL) run a group's work-items as a loop that PoCL vectorises across them, which
// over chunks of one work-item each makes gathers: groups of one leave the chunk's own loop to the
// vectoriser, and 16 groups per core balance the load. Their chunks step 64 bytes at a time where
// the statement has a vector form: PoCL's scalar maths built-ins run an order of magnitude slower
// than its vector ones, which the vectoriser does not call. GPUs: 256-item groups, up to 16 per
// compute unit, two full waves of an SM of 2048 resident threads, the strided loop keeping accesses
// coalesced; 1-D stencils in expressions there take the stencil windows (width and centre
// constants, the 16-byte loop kept), whose run-time form left the wide loop for the element loop
// at 63-67% of copy on the H100, the windows at 88-90% (2026-11-25, stencil_bench).
constexpr std::array elementwise_table{
    elementwise_row{any_cpu, {loop_style::chunked, 1, 16, 64},
                    "PoCL 5 on 16 cores and PoCL 3.1 on 2, a copy of 2^24 ints against memcpy, "
                    "2026-11-24; docs/benchmarks.md, ## Vector expressions",
                    "float16, as the CPU runs of user stencils alone (stencil_on_cpu.cpp: 3.3x "
                    "one host thread on 2 cores, where the same body per element ran at 0.21x, "
                    "2026-11-24)"},
    elementwise_row{any_device, {loop_style::strided, 256, 16, 0, true},
                    "H200, bench/expr over 2^28 floats, 2026-11-21; docs/benchmarks.md, ## Vector "
                    "expressions",
                    "none: strided loops have no vector form"},
};
// clang-format on

}  // namespace

launch_policy plan_elementwise_launch(const device_properties& props) {
    for (const elementwise_row& row : elementwise_table)
        if (matches(row.devices, props)) return row.policy;
    return {};
}

}  // namespace kiln::detail
