// SPDX-License-Identifier: Apache-2.0
// The PTX instruction table (include/kiln/detail/ptx_instructions.hpp): the mma.sync fragments
// against the PTX ISA's formulas for each lane's elements, written here a second time; and the
// wrappers both dialects are written from. NVRTC compiles them (cuda.vocabulary, cuda.prelude,
// cuda.nvrtc_compile), and the GEMM tests run them on NVIDIA GPUs.
#include <gtest/gtest.h>

#include <functional>
#include <kiln/detail/ptx_instructions.hpp>
#include <set>
#include <string>
#include <utility>

namespace {

using kiln::detail::ptx_dialect;
using kiln::detail::ptx_fragment_layout;
using kiln::detail::ptx_instruction;
using kiln::detail::ptx_set;

using formula =
    std::function<ptx_fragment_layout::coordinate(unsigned group, unsigned thread, unsigned i)>;

// Every lane's every value lands where the formula of the PTX ISA puts it (group: lane / 4,
// thread: lane % 4, i: the value's index), and the layout covers its tile once.
void expect_layout(const ptx_fragment_layout& layout, unsigned rows, unsigned columns,
                   unsigned values, const formula& expected, const std::string& what,
                   unsigned lanes = 32) {
    SCOPED_TRACE(what);
    EXPECT_EQ(layout.rows, rows);
    EXPECT_EQ(layout.columns, columns);
    ASSERT_EQ(layout.lane_count(), lanes);
    ASSERT_EQ(layout.value_count(), values);
    std::set<std::pair<unsigned, unsigned>> covered;
    for (unsigned lane = 0; lane < lanes; ++lane)
        for (unsigned i = 0; i < values; ++i) {
            const auto at = layout.at(lane, i);
            EXPECT_EQ(at, expected(lane / 4, lane % 4, i)) << "lane " << lane << ", value " << i;
            EXPECT_LT(at.row, rows);
            EXPECT_LT(at.column, columns);
            covered.emplace(at.row, at.column);
        }
    EXPECT_EQ(covered.size(), std::size_t{rows} * columns);
}

const ptx_instruction& row(std::string_view function) {
    const ptx_instruction* found = kiln::detail::find_ptx_instruction(function);
    if (found == nullptr) throw std::runtime_error("no row " + std::string(function));
    return *found;
}

// C of every m16n8 atom: c0, c1 at (group, 2 thread + i), c2, c3 eight rows down.
ptx_fragment_layout::coordinate c_m16n8(unsigned g, unsigned t, unsigned i) {
    return {g + 8 * (i / 2), 2 * t + i % 2};
}

TEST(ptx_instructions, sixteen_bit_fragments_are_the_isas) {
    for (const char* function : {"kiln_mma_m16n8k16_f16", "kiln_mma_m16n8k16_bf16"}) {
        const auto& mma = row(function).mma;
        EXPECT_EQ(mma.m * 100 + mma.n * 10 + mma.k, 1696u) << function;
        // Pairs of halves per register: a0..a7 in four registers, b0..b3 in two.
        expect_layout(
            mma.a, 16, 16, 8,
            [](unsigned g, unsigned t, unsigned i) {
                return ptx_fragment_layout::coordinate{g + 8 * ((i / 2) % 2),
                                                       2 * t + i % 2 + 8 * (i / 4)};
            },
            std::string(function) + " A");
        expect_layout(
            mma.b, 16, 8, 4,
            [](unsigned g, unsigned t, unsigned i) {
                return ptx_fragment_layout::coordinate{2 * t + i % 2 + 8 * (i / 2), g};
            },
            std::string(function) + " B");
        expect_layout(mma.c, 16, 8, 4, c_m16n8, std::string(function) + " C");
    }
}

TEST(ptx_instructions, tf32_and_double_fragments_are_the_isas) {
    // m16n8k8 of TF32 and of doubles: a0..a3 at (group, thread), +8 rows, +4 columns.
    for (const char* function : {"kiln_mma_m16n8k8_tf32", "kiln_mma_m16n8k8_f64"}) {
        const auto& mma = row(function).mma;
        expect_layout(
            mma.a, 16, 8, 4,
            [](unsigned g, unsigned t, unsigned i) {
                return ptx_fragment_layout::coordinate{g + 8 * (i % 2), t + 4 * (i / 2)};
            },
            std::string(function) + " A");
        expect_layout(
            mma.b, 8, 8, 2,
            [](unsigned g, unsigned t, unsigned i) {
                return ptx_fragment_layout::coordinate{t + 4 * i, g};
            },
            std::string(function) + " B");
        expect_layout(mma.c, 16, 8, 4, c_m16n8, std::string(function) + " C");
    }
    const auto& deep = row("kiln_mma_m16n8k16_f64").mma;
    expect_layout(
        deep.a, 16, 16, 8,
        [](unsigned g, unsigned t, unsigned i) {
            return ptx_fragment_layout::coordinate{g + 8 * (i % 2), t + 4 * (i / 2)};
        },
        "m16n8k16 f64 A");
    expect_layout(
        deep.b, 16, 8, 4,
        [](unsigned g, unsigned t, unsigned i) {
            return ptx_fragment_layout::coordinate{t + 4 * i, g};
        },
        "m16n8k16 f64 B");
    expect_layout(deep.c, 16, 8, 4, c_m16n8, "m16n8k16 f64 C");
    const auto& small = row("kiln_mma_m8n8k4_f64").mma;
    expect_layout(
        small.a, 8, 4, 1,
        [](unsigned g, unsigned t, unsigned) {
            return ptx_fragment_layout::coordinate{g, t};
        },
        "m8n8k4 A");
    expect_layout(
        small.b, 4, 8, 1,
        [](unsigned g, unsigned t, unsigned) {
            return ptx_fragment_layout::coordinate{t, g};
        },
        "m8n8k4 B");
    expect_layout(
        small.c, 8, 8, 2,
        [](unsigned g, unsigned t, unsigned i) {
            return ptx_fragment_layout::coordinate{g, 2 * t + i};
        },
        "m8n8k4 C");
}

// A warpgroup's lanes: the warp (lane / 32) takes 16 rows; each lane's values every 8 columns.
// The accumulators are the same for every input type; K is 32 bytes of the inputs.
TEST(ptx_instructions, warpgroup_accumulators_are_the_isas) {
    const std::pair<const char*, unsigned> inputs[] = {
        {"k16_f16", 16},       {"k16_bf16", 16},      {"k8_tf32", 8},       {"k32_e4m3_e4m3", 32},
        {"k32_e4m3_e5m2", 32}, {"k32_e5m2_e4m3", 32}, {"k32_e5m2_e5m2", 32}};
    for (const unsigned n : {64u, 128u, 256u})
        for (const auto& [type, k] : inputs) {
            const std::string function = "kiln_wgmma_m64n" + std::to_string(n) + std::string(type);
            const auto& mma = row(function).mma;
            EXPECT_EQ(mma.n, n);
            EXPECT_EQ(mma.k, k) << function;
            expect_layout(
                mma.c, 64, n, n / 2,
                [](unsigned g, unsigned t, unsigned i) {
                    return ptx_fragment_layout::coordinate{g / 8 * 16 + g % 8 + 8 * (i / 2 % 2),
                                                           8 * (i / 4) + 2 * t + i % 2};
                },
                function + " D", 128);
        }
}

TEST(ptx_instructions, every_mma_row_has_fragments_and_no_other_row_does) {
    for (const ptx_instruction& instruction : kiln::detail::ptx_instructions()) {
        const bool warpgroup = instruction.ptx.find("wgmma.mma_async") != std::string_view::npos;
        const bool mma = warpgroup || instruction.ptx.find("mma.sync") != std::string_view::npos;
        EXPECT_EQ(instruction.mma.m != 0, mma) << instruction.function;
        if (!mma) continue;
        const auto& shape = instruction.mma;
        EXPECT_EQ(shape.c.rows * shape.c.columns, shape.m * shape.n) << instruction.function;
        if (warpgroup) continue;  // A and B in local memory
        EXPECT_EQ(shape.a.rows * shape.a.columns, shape.m * shape.k) << instruction.function;
        EXPECT_EQ(shape.b.rows * shape.b.columns, shape.k * shape.n) << instruction.function;
    }
}

// Each row's wrapper once in each dialect of its set: the OpenCL one in OpenCL C (local and
// global pointers, no CUDA spellings), the CUDA one a __device__ function, the tensor-core set's
// body guarded by the row's compute capability.
TEST(ptx_instructions, wrappers_of_both_dialects_hold_every_row_once) {
    const std::string opencl =
        kiln::detail::ptx_wrappers(ptx_dialect::opencl_inline_asm, ptx_set::tensor_cores);
    const std::string cuda =
        kiln::detail::ptx_wrappers(ptx_dialect::cuda_prelude, ptx_set::tensor_cores) +
        kiln::detail::ptx_wrappers(ptx_dialect::cuda_prelude, ptx_set::warpgroup);
    const auto count = [](const std::string& text, const std::string& what) {
        std::size_t n = 0;
        for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
        return n;
    };
    for (const ptx_instruction& instruction : kiln::detail::ptx_instructions()) {
        const std::string signature = "void " + std::string(instruction.function) + "(";
        EXPECT_EQ(count(cuda, "__device__ inline " + signature), 1u) << instruction.function;
        EXPECT_EQ(count(opencl, signature), instruction.set == ptx_set::tensor_cores ? 1u : 0u)
            << instruction.function;
    }
    EXPECT_EQ(opencl.find("__"), std::string::npos);
    EXPECT_EQ(opencl.find("static_cast"), std::string::npos);
    EXPECT_NE(opencl.find("void kiln_ldmatrix_x4(uint* r, const local ushort* p)"),
              std::string::npos)
        << opencl;
    EXPECT_NE(opencl.find("\"r\"((uint)(ulong)p)"), std::string::npos);
    EXPECT_NE(opencl.find("void kiln_copy_async_commit(void)"), std::string::npos);
    EXPECT_NE(cuda.find("__device__ inline void kiln_copy_async_16(unsigned short* to, const "
                        "unsigned short* from, unsigned bytes) {\n#if __CUDA_ARCH__ >= 800\n"),
              std::string::npos)
        << cuda;
    EXPECT_NE(cuda.find("kiln_mma_m16n8k8_f64(double* d, const double* a, const double* b) "
                        "{\n#if __CUDA_ARCH__ >= 900\n"),
              std::string::npos);
    // wgmma's transposes are immediates: one statement for each of their four choices.
    const auto wgmma = cuda.find("void kiln_wgmma_m64n64k16_bf16(");
    ASSERT_NE(wgmma, std::string::npos);
    const std::string body = cuda.substr(wgmma, cuda.find("\n}\n", wgmma) - wgmma);
    EXPECT_EQ(count(body, "asm volatile("), 4u) << body;
    EXPECT_NE(body.find("if (trans_a && trans_b)"), std::string::npos) << body;
    EXPECT_NE(body.find("p, 1, 1, 1, 0;"), std::string::npos) << body;
    EXPECT_NE(body.find("\"+f\"(d[31])"), std::string::npos) << body;
    EXPECT_EQ(body.find("\"+f\"(d[32])"), std::string::npos) << body;
    EXPECT_NE(body.find("\"l\"(a), \"l\"(b), \"r\"(scale_d)"), std::string::npos) << body;
}

// TF32 and FP8 wgmma read both tiles with k inner: no transpose operands, one statement.
TEST(ptx_instructions, k_major_warpgroup_rows_have_no_transposes) {
    const std::string cuda =
        kiln::detail::ptx_wrappers(ptx_dialect::cuda_prelude, ptx_set::warpgroup);
    for (const char* function :
         {"kiln_wgmma_m64n128k8_tf32(float* d, unsigned long long a, unsigned long long b, int "
          "scale_d) {\n    asm volatile(",
          "kiln_wgmma_m64n256k32_e5m2_e4m3(float* d, unsigned long long a, unsigned long long b, "
          "int scale_d) {\n    asm volatile("})
        EXPECT_NE(cuda.find(function), std::string::npos) << function;
    EXPECT_NE(cuda.find("wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32 {%0, "),
              std::string::npos);
    EXPECT_NE(cuda.find("m64n64k32.f32.e4m3.e5m2 {%0, "), std::string::npos);
    const auto tf32 = cuda.find("void kiln_wgmma_m64n64k8_tf32(");
    const std::string body = cuda.substr(tf32, cuda.find("\n}\n", tf32) - tf32);
    EXPECT_NE(body.find("%32, %33, p, 1, 1;\\n}"), std::string::npos) << body;
}

TEST(ptx_instructions, operands_are_numbered_outputs_first) {
    const std::string cuda =
        kiln::detail::ptx_wrappers(ptx_dialect::cuda_prelude, ptx_set::tensor_cores);
    // The TF32 atom names single registers ($a[3]) inside its own PTX block.
    EXPECT_NE(cuda.find("cvt.rna.tf32.f32 a3, %7;"), std::string::npos) << cuda;
    EXPECT_NE(cuda.find("{%0, %1, %2, %3}, {a0, a1, a2, a3}, {b0, b1}, {%0, %1, %2, %3}"),
              std::string::npos);
    EXPECT_NE(cuda.find("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"),
              std::string::npos);
    EXPECT_NE(cuda.find("cp.async.cg.shared.global [%0], [%1], 16, %2;"), std::string::npos);
}

}  // namespace
