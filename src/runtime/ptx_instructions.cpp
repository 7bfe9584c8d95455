// SPDX-License-Identifier: Apache-2.0
// The PTX instruction table (include/kiln/detail/ptx_instructions.hpp): each row's PTX as NVIDIA's
// PTX ISA documents it (mma.sync, ldmatrix, cp.async, wgmma, mbarrier, cp.async.bulk.tensor),
// and the mma.sync fragments as its figures lay them out. The only place kiln writes these
// instructions (check-layout.py).
#include <algorithm>
#include <kiln/detail/ptx_instructions.hpp>

namespace kiln::detail {
namespace {

using use = ptx_operand_use;
using value = ptx_value;

// Lanes 4 x 8 (a group of four lanes, eight groups), as every mma.sync fragment splits them.
constexpr ptx_layout_mode lane_in_group(unsigned row, unsigned column) {
    return {4, row, column};
}
constexpr ptx_layout_mode group_of_lanes(unsigned row, unsigned column) {
    return {8, row, column};
}

// The float (and double) accumulators of m16n8: rows lane/4 and +8, columns 2 (lane%4) and +1.
constexpr ptx_fragment_layout c_16x8{16,
                                     8,
                                     {lane_in_group(0, 2), group_of_lanes(1, 0)},
                                     {ptx_layout_mode{2, 0, 1}, ptx_layout_mode{2, 8, 0}}};

constexpr ptx_mma_shape m16n8k16_16_bit{
    16,
    8,
    16,
    // A: pairs of columns 2 (lane%4), rows +8, columns +8.
    {16, 16, {lane_in_group(0, 2), group_of_lanes(1, 0)}, {{{2, 0, 1}, {2, 8, 0}, {2, 0, 8}}}},
    // B (k x n): pairs of rows 2 (lane%4), rows +8; column lane/4.
    {16, 8, {lane_in_group(2, 0), group_of_lanes(0, 1)}, {{{2, 1, 0}, {2, 8, 0}}}},
    c_16x8};

// The 32-bit and 64-bit atoms' A: row lane/4 and +8, column lane%4 and + k/2; B: row lane%4 and
// + k/2 (+ k/4 for k 16), column lane/4.
constexpr ptx_mma_shape m16n8k8_32_bit{
    16,
    8,
    8,
    {16, 8, {lane_in_group(0, 1), group_of_lanes(1, 0)}, {{{2, 8, 0}, {2, 0, 4}}}},
    {8, 8, {lane_in_group(1, 0), group_of_lanes(0, 1)}, {{{2, 4, 0}}}},
    c_16x8};

constexpr ptx_mma_shape m16n8k16_f64{
    16,
    8,
    16,
    {16, 16, {lane_in_group(0, 1), group_of_lanes(1, 0)}, {{{2, 8, 0}, {4, 0, 4}}}},
    {16, 8, {lane_in_group(1, 0), group_of_lanes(0, 1)}, {{{4, 4, 0}}}},
    c_16x8};

constexpr ptx_mma_shape m8n8k4_f64{
    8,
    8,
    4,
    {8, 4, {lane_in_group(0, 1), group_of_lanes(1, 0)}, {}},
    {4, 8, {lane_in_group(1, 0), group_of_lanes(0, 1)}, {}},
    {8, 8, {lane_in_group(0, 2), group_of_lanes(1, 0)}, {{{2, 0, 1}}}}};

constexpr ptx_operand float_accumulators_4[] = {{"d", use::accumulate, value::f32, 4},
                                                {"a", use::read, value::u32, 4},
                                                {"b", use::read, value::u32, 2}};
constexpr ptx_operand tf32_operands[] = {{"d", use::accumulate, value::f32, 4},
                                         {"a", use::read, value::f32, 4},
                                         {"b", use::read, value::f32, 2}};
constexpr ptx_operand m8n8k4_operands[] = {{"d", use::accumulate, value::f64, 2},
                                           {"a", use::read, value::f64, 1},
                                           {"b", use::read, value::f64, 1}};
constexpr ptx_operand m16n8k8_f64_operands[] = {{"d", use::accumulate, value::f64, 4},
                                                {"a", use::read, value::f64, 4},
                                                {"b", use::read, value::f64, 2}};
constexpr ptx_operand m16n8k16_f64_operands[] = {{"d", use::accumulate, value::f64, 4},
                                                 {"a", use::read, value::f64, 8},
                                                 {"b", use::read, value::f64, 4}};
constexpr ptx_operand ldmatrix_operands[] = {{"r", use::write, value::u32, 4},
                                             {"p", use::shared_address, value::u16}};
constexpr ptx_operand copy_16_operands[] = {{"to", use::shared_address, value::u16, 0, true},
                                            {"from", use::global_address, value::u16},
                                            {"bytes", use::read, value::u32}};
constexpr ptx_operand copy_4_operands[] = {{"to", use::shared_address, value::f32, 0, true},
                                           {"from", use::global_address, value::f32},
                                           {"bytes", use::read, value::u32}};
constexpr ptx_operand barrier[] = {{"bar", use::read, value::u32}};
constexpr ptx_operand barrier_count[] = {{"bar", use::read, value::u32},
                                         {"count", use::read, value::u32}};
constexpr ptx_operand barrier_parity[] = {{"bar", use::read, value::u32},
                                          {"parity", use::read, value::u32}};
constexpr ptx_operand barrier_bytes[] = {{"bar", use::read, value::u32},
                                         {"bytes", use::read, value::u32}};
constexpr ptx_operand tile_copy_operands[] = {
    {"to", use::read, value::u32}, {"map", use::reference_address, value::tile_map},
    {"x", use::read, value::s32},  {"y", use::read, value::s32},
    {"z", use::read, value::s32},  {"bar", use::read, value::u32}};

// wgmma D += A B with A and B in local memory through descriptors; trans_a (trans_b) 1 where
// A's (B's) tile lies with m (n) inner, 0 with k inner; scale_d 0: D = A B. Its K is 32 bytes of
// the inputs: k16 for 16-bit ones, k8 for TF32, k32 for FP8.
// A warpgroup's m64nN accumulators: rows lane / 4 of each warp's 16, and + 8; columns
// 2 (lane % 4) and + 1, then every 8 columns on.
template <unsigned N, unsigned K>
constexpr ptx_mma_shape m64nNkK{
    64,
    N,
    K,
    {},
    {},
    {64,
     N,
     {lane_in_group(0, 2), group_of_lanes(1, 0), ptx_layout_mode{4, 16, 0}},
     {ptx_layout_mode{2, 0, 1}, ptx_layout_mode{2, 8, 0}, ptx_layout_mode{N / 8, 0, 8}}}};

template <unsigned Accumulators>
constexpr ptx_operand wgmma_operands[] = {{"d", use::accumulate, value::f32, Accumulators},
                                          {"a", use::read, value::u64},
                                          {"b", use::read, value::u64},
                                          {"scale_d", use::read, value::s32},
                                          {"trans_a", use::immediate, value::s32},
                                          {"trans_b", use::immediate, value::s32}};
// TF32 and FP8 inputs: no transpose operands, as wgmma reads both tiles with k inner only.
template <unsigned Accumulators>
constexpr ptx_operand k_major_wgmma_operands[] = {{"d", use::accumulate, value::f32, Accumulators},
                                                  {"a", use::read, value::u64},
                                                  {"b", use::read, value::u64},
                                                  {"scale_d", use::read, value::s32}};
#define KILN_WGMMA_SCALED(shape_and_types, rest)                                                   \
    "{\n.reg .pred p;\nsetp.ne.b32 p, $scale_d, 0;\nwgmma.mma_async.sync.aligned." shape_and_types \
    " $d, $a, $b, p, 1, 1" rest ";\n}"
#define KILN_WGMMA_PTX(shape_and_types) KILN_WGMMA_SCALED(shape_and_types, ", $trans_a, $trans_b")
#define KILN_WGMMA_K_MAJOR_PTX(shape_and_types) KILN_WGMMA_SCALED(shape_and_types, "")

constexpr ptx_instruction effect(std::string_view function, ptx_set set, std::string_view ptx,
                                 std::span<const ptx_operand> operands = {}) {
    return {.function = function,
            .set = set,
            .ptx = ptx,
            .operands = operands,
            .has_effects = true,
            .clobbers_memory = true};
}

template <unsigned N>
constexpr ptx_instruction wgmma(std::string_view function, std::string_view ptx) {
    return {.function = function,
            .set = ptx_set::warpgroup,
            .ptx = ptx,
            .operands = wgmma_operands<N / 2>,
            .has_effects = true,
            .mma = m64nNkK<N, 16>};
}

/// A wgmma of inputs that only lie with k inner, K deep (32 bytes of them).
template <unsigned N, unsigned K>
constexpr ptx_instruction k_major_wgmma(std::string_view function, std::string_view ptx) {
    return {.function = function,
            .set = ptx_set::warpgroup,
            .ptx = ptx,
            .operands = k_major_wgmma_operands<N / 2>,
            .has_effects = true,
            .mma = m64nNkK<N, K>};
}

constexpr auto tc = ptx_set::tensor_cores;
constexpr auto wg = ptx_set::warpgroup;

const ptx_instruction table[] = {
    {.function = "kiln_mma_m16n8k16_f16",
     .ptx = "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 $d, $a, $b, $d;",
     .operands = float_accumulators_4,
     .mma = m16n8k16_16_bit},
    {.function = "kiln_mma_m16n8k16_bf16",
     .ptx = "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 $d, $a, $b, $d;",
     .operands = float_accumulators_4,
     .mma = m16n8k16_16_bit},
    {.function = "kiln_mma_m8n8k4_f64",
     .ptx = "mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 $d, $a, $b, $d;",
     .operands = m8n8k4_operands,
     .mma = m8n8k4_f64},
    {.function = "kiln_mma_m16n8k8_f64",
     .architecture = 90,
     .ptx = "mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64 $d, $a, $b, $d;",
     .operands = m16n8k8_f64_operands,
     .mma = m16n8k8_32_bit},
    {.function = "kiln_mma_m16n8k16_f64",
     .architecture = 90,
     .ptx = "mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.f64 $d, $a, $b, $d;",
     .operands = m16n8k16_f64_operands,
     .mma = m16n8k16_f64},
    // Floats rounded to TF32 (to nearest, ties away: cvt.rna), float accumulation.
    {.function = "kiln_mma_m16n8k8_tf32",
     .ptx = "{\n.reg .b32 a0, a1, a2, a3, b0, b1;\ncvt.rna.tf32.f32 a0, $a[0];\n"
            "cvt.rna.tf32.f32 a1, $a[1];\ncvt.rna.tf32.f32 a2, $a[2];\ncvt.rna.tf32.f32 a3, "
            "$a[3];\ncvt.rna.tf32.f32 b0, $b[0];\ncvt.rna.tf32.f32 b1, $b[1];\n"
            "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 $d, {a0, a1, a2, a3}, {b0, b1}, "
            "$d;\n}",
     .operands = tf32_operands,
     .mma = m16n8k8_32_bit},
    {.function = "kiln_ldmatrix_x4",
     .ptx = "ldmatrix.sync.aligned.m8n8.x4.shared.b16 $r, [$p];",
     .operands = ldmatrix_operands,
     .has_effects = true},
    {.function = "kiln_ldmatrix_x4_trans",
     .ptx = "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 $r, [$p];",
     .operands = ldmatrix_operands,
     .has_effects = true},
    effect("kiln_copy_async_16", tc, "cp.async.cg.shared.global [$to], [$from], 16, $bytes;",
           copy_16_operands),
    effect("kiln_copy_async_4", tc, "cp.async.ca.shared.global [$to], [$from], 4, $bytes;",
           copy_4_operands),
    effect("kiln_copy_async_commit", tc, "cp.async.commit_group;"),
    effect("kiln_copy_async_wait_0", tc, "cp.async.wait_group 0;"),
    effect("kiln_copy_async_wait_1", tc, "cp.async.wait_group 1;"),
    effect("kiln_copy_async_wait_2", tc, "cp.async.wait_group 2;"),
    effect("kiln_copy_async_wait_3", tc, "cp.async.wait_group 3;"),
    effect("kiln_copy_async_wait_4", tc, "cp.async.wait_group 4;"),
    // cp.async wrote the tiles through the generic proxy; wgmma reads them through the async one.
    effect("kiln_fence_proxy_async", wg, "fence.proxy.async.shared::cta;"),
    effect("kiln_wgmma_fence", wg, "wgmma.fence.sync.aligned;"),
    effect("kiln_wgmma_commit", wg, "wgmma.commit_group.sync.aligned;"),
    effect("kiln_wgmma_wait_0", wg, "wgmma.wait_group.sync.aligned 0;"),
    effect("kiln_wgmma_wait_1", wg, "wgmma.wait_group.sync.aligned 1;"),
    // Barriers in local memory (mbarrier) at the 8-byte local address `bar`: a phase completes
    // when `count` arrivals are in and the bytes a copy promised have landed; waits name the
    // parity of the phase they wait for.
    effect("kiln_barrier_init", wg, "mbarrier.init.shared::cta.b64 [$bar], $count;", barrier_count),
    // Makes the initialised barriers visible to the tensor memory accelerator's proxy.
    effect("kiln_barrier_init_fence", wg, "fence.mbarrier_init.release.cluster;"),
    effect("kiln_barrier_wait", wg,
           "{\n.reg .pred done;\nkiln_wait_%=:\nmbarrier.try_wait.parity.shared::cta.b64 done, "
           "[$bar], $parity;\n@!done bra kiln_wait_%=;\n}",
           barrier_parity),
    effect("kiln_barrier_arrive", wg, "mbarrier.arrive.shared::cta.b64 _, [$bar];", barrier),
    // Arrives and promises `bytes` of copies that will complete on the barrier.
    effect("kiln_barrier_expect_bytes", wg,
           "mbarrier.arrive.expect_tx.shared::cta.b64 _, [$bar], $bytes;", barrier_bytes),
    // The box of `map` at (x, y, z) into local memory at `to`, its bytes completing on `bar`.
    effect("kiln_tile_copy", wg,
           "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [$to], "
           "[$map, {$x, $y, $z}], [$bar];",
           tile_copy_operands),
    // Registers moved between a work-group's warpgroups: the copying one keeps 40 per
    // work-item, the multiplying ones take 232 for their accumulators.
    {.function = "kiln_registers_release_to_40",
     .set = wg,
     .ptx = "setmaxnreg.dec.sync.aligned.u32 40;",
     .has_effects = true},
    {.function = "kiln_registers_take_232",
     .set = wg,
     .ptx = "setmaxnreg.inc.sync.aligned.u32 232;",
     .has_effects = true},
    wgmma<64>("kiln_wgmma_m64n64k16_f16", KILN_WGMMA_PTX("m64n64k16.f32.f16.f16")),
    wgmma<64>("kiln_wgmma_m64n64k16_bf16", KILN_WGMMA_PTX("m64n64k16.f32.bf16.bf16")),
    wgmma<128>("kiln_wgmma_m64n128k16_f16", KILN_WGMMA_PTX("m64n128k16.f32.f16.f16")),
    wgmma<128>("kiln_wgmma_m64n128k16_bf16", KILN_WGMMA_PTX("m64n128k16.f32.bf16.bf16")),
    wgmma<256>("kiln_wgmma_m64n256k16_f16", KILN_WGMMA_PTX("m64n256k16.f32.f16.f16")),
    wgmma<256>("kiln_wgmma_m64n256k16_bf16", KILN_WGMMA_PTX("m64n256k16.f32.bf16.bf16")),
    // TF32 reads each float's bits and drops the low 13 of its mantissa (no rounding, unlike
    // kiln_mma_m16n8k8_tf32's cvt.rna).
    k_major_wgmma<64, 8>("kiln_wgmma_m64n64k8_tf32",
                         KILN_WGMMA_K_MAJOR_PTX("m64n64k8.f32.tf32.tf32")),
    k_major_wgmma<128, 8>("kiln_wgmma_m64n128k8_tf32",
                          KILN_WGMMA_K_MAJOR_PTX("m64n128k8.f32.tf32.tf32")),
    k_major_wgmma<256, 8>("kiln_wgmma_m64n256k8_tf32",
                          KILN_WGMMA_K_MAJOR_PTX("m64n256k8.f32.tf32.tf32")),
    // FP8 of either format on each side.
    k_major_wgmma<64, 32>("kiln_wgmma_m64n64k32_e4m3_e4m3",
                          KILN_WGMMA_K_MAJOR_PTX("m64n64k32.f32.e4m3.e4m3")),
    k_major_wgmma<64, 32>("kiln_wgmma_m64n64k32_e4m3_e5m2",
                          KILN_WGMMA_K_MAJOR_PTX("m64n64k32.f32.e4m3.e5m2")),
    k_major_wgmma<64, 32>("kiln_wgmma_m64n64k32_e5m2_e4m3",
                          KILN_WGMMA_K_MAJOR_PTX("m64n64k32.f32.e5m2.e4m3")),
    k_major_wgmma<64, 32>("kiln_wgmma_m64n64k32_e5m2_e5m2",
                          KILN_WGMMA_K_MAJOR_PTX("m64n64k32.f32.e5m2.e5m2")),
    k_major_wgmma<128, 32>("kiln_wgmma_m64n128k32_e4m3_e4m3",
                           KILN_WGMMA_K_MAJOR_PTX("m64n128k32.f32.e4m3.e4m3")),
    k_major_wgmma<128, 32>("kiln_wgmma_m64n128k32_e4m3_e5m2",
                           KILN_WGMMA_K_MAJOR_PTX("m64n128k32.f32.e4m3.e5m2")),
    k_major_wgmma<128, 32>("kiln_wgmma_m64n128k32_e5m2_e4m3",
                           KILN_WGMMA_K_MAJOR_PTX("m64n128k32.f32.e5m2.e4m3")),
    k_major_wgmma<128, 32>("kiln_wgmma_m64n128k32_e5m2_e5m2",
                           KILN_WGMMA_K_MAJOR_PTX("m64n128k32.f32.e5m2.e5m2")),
    k_major_wgmma<256, 32>("kiln_wgmma_m64n256k32_e4m3_e4m3",
                           KILN_WGMMA_K_MAJOR_PTX("m64n256k32.f32.e4m3.e4m3")),
    k_major_wgmma<256, 32>("kiln_wgmma_m64n256k32_e4m3_e5m2",
                           KILN_WGMMA_K_MAJOR_PTX("m64n256k32.f32.e4m3.e5m2")),
    k_major_wgmma<256, 32>("kiln_wgmma_m64n256k32_e5m2_e4m3",
                           KILN_WGMMA_K_MAJOR_PTX("m64n256k32.f32.e5m2.e4m3")),
    k_major_wgmma<256, 32>("kiln_wgmma_m64n256k32_e5m2_e5m2",
                           KILN_WGMMA_K_MAJOR_PTX("m64n256k32.f32.e5m2.e5m2")),
};
#undef KILN_WGMMA_K_MAJOR_PTX
#undef KILN_WGMMA_PTX
#undef KILN_WGMMA_SCALED

unsigned split(unsigned index, const ptx_layout_mode* modes, std::size_t count, unsigned& row) {
    unsigned column = 0;
    for (std::size_t i = 0; i < count; ++i) {
        const unsigned step = index % modes[i].extent;
        index /= modes[i].extent;
        row += step * modes[i].row;
        column += step * modes[i].column;
    }
    return column;
}

template <std::size_t N>
unsigned product_of_extents(const std::array<ptx_layout_mode, N>& modes) {
    unsigned count = 1;
    for (const ptx_layout_mode& mode : modes) count *= mode.extent;
    return count;
}

}  // namespace

ptx_fragment_layout::coordinate ptx_fragment_layout::at(unsigned lane,
                                                        unsigned value) const noexcept {
    coordinate c;
    c.column = split(lane, lanes.data(), lanes.size(), c.row) +
               split(value, values.data(), values.size(), c.row);
    return c;
}

unsigned ptx_fragment_layout::lane_count() const noexcept {
    return product_of_extents(lanes);
}

unsigned ptx_fragment_layout::value_count() const noexcept {
    return product_of_extents(values);
}

std::span<const ptx_instruction> ptx_instructions() noexcept {
    return table;
}

const ptx_instruction* find_ptx_instruction(std::string_view function) noexcept {
    const auto found =
        std::find_if(std::begin(table), std::end(table),
                     [&](const ptx_instruction& row) { return row.function == function; });
    return found == std::end(table) ? nullptr : &*found;
}

}  // namespace kiln::detail
