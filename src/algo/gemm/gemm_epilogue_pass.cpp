// SPDX-License-Identifier: Apache-2.0
// The user's epilogue over C once a strategy that runs no kernel of kiln's has written the
// product (host_blas): one work-item an element, C = epilogue(C, row, column).
#include <string>
#include <vector>

#include "gemm_kernels.hpp"
#include "gemm_strategies.hpp"

namespace kiln::detail {
namespace {

constexpr const char* pass_kernel = "kiln_gemm_epilogue_pass";
constexpr std::size_t pass_group = 256;

kernel_description pass_description(const gemm_types& types) {
    // The GEMM kernels' parameters, a and b unread: one binding serves both.
    return gemm_kernel_description(pass_kernel, types);
}

std::string generate(const gemm_types& types) {
    source_builder b;
    b.begin_kernel(pass_kernel, pass_group);
    pass_description(types).declare(b);
    define_gemm_epilogue(b, types);
    b.begin_body();
    b.line("const ulong item = " + source_builder::global_id() + ";");
    b.line("if (item >= m * n * batch) return;");
    emit_batch_entry(b, "(item / (m * n))");
    b.line("const ulong row = item % (m * n) / n, column = item % n;");
    const std::string at = "c[row * c_leading + column]";
    b.line(at + " = (" + opencl_name(types.c) + ")" +
           gemm_epilogue_call(*types.epilogue, at, "row", "column") + ";");
    b.end_kernel();
    return b.str();
}

}  // namespace

event run_gemm_epilogue_pass(const queue& q, const gemm_problem& problem) {
    const gemm_types types = gemm_types_of(problem);
    const auto describe = [&] { return std::vector<kernel_description>{pass_description(types)}; };
    const algorithm_program& program =
        algorithm_program_for(q.device(), std::string(pass_kernel) + ":" + types.key(), describe,
                              [&] { return generate(types); });
    const std::size_t elements = problem.m() * problem.n() * problem.batch();
    return program.bind(bind_gemm(program, pass_kernel, problem, types))
        .launch(q, (elements + pass_group - 1) / pass_group * pass_group, pass_group);
}

}  // namespace kiln::detail
