// SPDX-License-Identifier: Apache-2.0
// The GEMM module's host-library strategy: OpenBLAS's CBLAS through dlopen (gemm_host_blas.hpp).
#include "gemm_host_blas.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <climits>
#include <cstddef>
#include <memory>
#include <vector>

#include "runtime/host_mapping.hpp"

namespace kiln::detail {
namespace {

// CBLAS's enumerators (cblas.h).
constexpr int cblas_row_major = 101, cblas_no_trans = 111, cblas_trans = 112;

/// The entry points kiln calls: CBLAS's, stable for decades, with OpenBLAS's int (the LP64
/// build Debian ships) for sizes.
struct openblas_library {
    using sgemm_fn = void (*)(int, int, int, int, int, int, float, const float*, int, const float*,
                              int, float, float*, int);
    using dgemm_fn = void (*)(int, int, int, int, int, int, double, const double*, int,
                              const double*, int, double, double*, int);
    sgemm_fn sgemm = nullptr;
    dgemm_fn dgemm = nullptr;
    void (*set_num_threads)(int) = nullptr;
    int (*get_num_threads)() = nullptr;
};

/// OpenBLAS, loaded once; null where it is missing. The handle stays open for the process.
const openblas_library* openblas() {
    static const std::unique_ptr<openblas_library> library =
        []() -> std::unique_ptr<openblas_library> {
        void* handle = nullptr;
        for (const char* name : {"libopenblas.so.0", "libopenblas.so"})
            if ((handle = dlopen(name, RTLD_NOW | RTLD_LOCAL))) break;
        if (!handle) return nullptr;
        auto api = std::make_unique<openblas_library>();
        api->sgemm = reinterpret_cast<openblas_library::sgemm_fn>(dlsym(handle, "cblas_sgemm"));
        api->dgemm = reinterpret_cast<openblas_library::dgemm_fn>(dlsym(handle, "cblas_dgemm"));
        api->set_num_threads =
            reinterpret_cast<void (*)(int)>(dlsym(handle, "openblas_set_num_threads"));
        api->get_num_threads =
            reinterpret_cast<int (*)()>(dlsym(handle, "openblas_get_num_threads"));
        if (!api->sgemm || !api->dgemm || !api->set_num_threads || !api->get_num_threads)
            return nullptr;
        return api;
    }();
    return library.get();
}

bool fits_int(std::size_t n) {
    return n <= std::size_t(INT_MAX);
}

/// The bytes of one buffer that the problem's operands on it reach, mapped once: A and B may be
/// the same buffer, and two mappings of overlapping bytes are not promised to agree.
struct mapped_buffer {
    const buffer_storage* storage;
    std::size_t begin, end;  // bytes
    std::unique_ptr<host_mapping> mapping;
};

}  // namespace

bool host_blas_available() {
    return openblas() != nullptr;
}

bool host_blas_fits(const gemm_problem& problem) {
    for (const gemm_operand* operand : {&problem.a, &problem.b, &problem.c})
        if (!fits_int(operand->rows) || !fits_int(operand->columns) ||
            !fits_int(operand->leading_dimension))
            return false;
    return true;
}

event run_host_blas_gemm(const queue& q, const gemm_problem& problem) {
    const openblas_library& api = *openblas();
    const int threads = int(std::max(1u, q.device().properties().compute_units));
    if (api.get_num_threads() != threads) api.set_num_threads(threads);

    const std::size_t bytes = element_bytes(problem.c.element);
    std::vector<mapped_buffer> buffers;
    for (const gemm_operand* operand : {&problem.a, &problem.b, &problem.c}) {
        const std::size_t begin = operand->offset * bytes, end = begin + operand->extent() * bytes;
        auto same = std::find_if(buffers.begin(), buffers.end(), [&](const mapped_buffer& m) {
            return m.storage->memory() == operand->storage->memory();
        });
        if (same == buffers.end())
            buffers.push_back({operand->storage, begin, end, nullptr});
        else
            *same = {same->storage, std::min(same->begin, begin), std::max(same->end, end),
                     nullptr};
    }
    for (mapped_buffer& m : buffers)
        m.mapping = std::make_unique<host_mapping>(q, *m.storage, m.begin, m.end - m.begin);
    // The first element of `operand` in host memory, as bytes.
    const auto host = [&](const gemm_operand& operand) {
        for (const mapped_buffer& m : buffers)
            if (m.storage->memory() == operand.storage->memory())
                return static_cast<std::byte*>(m.mapping->data()) + operand.offset * bytes -
                       m.begin;
        return static_cast<std::byte*>(nullptr);
    };
    std::byte *a = host(problem.a), *b = host(problem.b), *c = host(problem.c);
    const int m = int(problem.m()), n = int(problem.n()), k = int(problem.k());
    const int trans_a = problem.a.transposed ? cblas_trans : cblas_no_trans;
    const int trans_b = problem.b.transposed ? cblas_trans : cblas_no_trans;
    // BLAS asks for leading dimensions of at least 1, even where an operand has no columns.
    const int lda = int(std::max<std::size_t>(1, problem.a.leading_dimension));
    const int ldb = int(std::max<std::size_t>(1, problem.b.leading_dimension));
    const int ldc = int(std::max<std::size_t>(1, problem.c.leading_dimension));
    for (std::size_t entry = 0; entry < problem.batch(); ++entry) {
        std::byte* ea = a + entry * problem.a.batch_stride * bytes;
        std::byte* eb = b + entry * problem.b.batch_stride * bytes;
        std::byte* ec = c + entry * problem.c.batch_stride * bytes;
        if (problem.c.element == gemm_element::f64)
            api.dgemm(cblas_row_major, trans_a, trans_b, m, n, k, problem.alpha,
                      reinterpret_cast<const double*>(ea), lda, reinterpret_cast<const double*>(eb),
                      ldb, problem.beta, reinterpret_cast<double*>(ec), ldc);
        else
            api.sgemm(cblas_row_major, trans_a, trans_b, m, n, k, float(problem.alpha),
                      reinterpret_cast<const float*>(ea), lda, reinterpret_cast<const float*>(eb),
                      ldb, float(problem.beta), reinterpret_cast<float*>(ec), ldc);
    }
    for (mapped_buffer& m : buffers) m.mapping->unmap();
    return q.marker();
}

}  // namespace kiln::detail
