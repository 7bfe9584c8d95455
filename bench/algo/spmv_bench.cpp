// y = A x with kiln::sparse_matrix beside cuSPARSE (GPUs) or one host thread (CPUs), same data.
//
//     spmv_bench [poisson side] [power-law rows]
//                (defaults 4096 and 2^24 on GPUs, 1024 and 2^20 on CPUs; KILN_DEVICE picks it)
//
// Prints one markdown table: the 2-D 5-point Poisson matrix and a power-law matrix of about as
// many rows (bench/algo/spmv_matrices.hpp, float values, int32 indices); time per product (best
// of batches of back-to-back products, wall clock), the bandwidth at the minimum CSR traffic
// (values, columns, row pointers, x once, y), the format kiln chose, and the ratio to cuSPARSE's
// cusparseSpMV on the same matrix (bench/algo/cusparse_spmv_reference.cu, run by this program
// when it was built) or, on CPUs, to a plain single-threaded CSR loop.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <device_limits.hpp>
#include <kiln/kiln.hpp>
#include <kiln/sparse.hpp>
#include <map>
#include <string>
#include <vector>

#include "spmv_matrices.hpp"

namespace {

using clock_type = std::chrono::steady_clock;

double seconds_since(clock_type::time_point start) {
    return std::chrono::duration<double>(clock_type::now() - start).count();
}

template <class Work>
double best_seconds_per_call(const kiln::queue& q, int batches, int calls, Work&& work) {
    work();
    q.finish();
    double best = 1e30;
    for (int b = 0; b < batches; ++b) {
        const auto start = clock_type::now();
        for (int c = 0; c < calls; ++c) work();
        q.finish();
        best = std::min(best, seconds_since(start) / calls);
    }
    return best;
}

/// cuSPARSE's seconds per product, from the reference program's `cusparse <matrix> <s>` lines.
std::map<std::string, double> cusparse_reference(std::size_t side, std::size_t rows) {
    std::map<std::string, double> times;
#ifdef KILN_SPMV_CUSPARSE_REFERENCE
    const std::string command = std::string(KILN_SPMV_CUSPARSE_REFERENCE) + " " +
                                std::to_string(side) + " " + std::to_string(rows);
    if (FILE* pipe = popen(command.c_str(), "r")) {
        char matrix[64];
        double seconds = 0;
        while (std::fscanf(pipe, "cusparse %63s %lf\n", matrix, &seconds) == 2)
            times[matrix] = seconds;
        pclose(pipe);
    }
#else
    (void)side, (void)rows;
#endif
    return times;
}

/// The plain CSR loop, in double to check kiln's float result against.
std::vector<double> host_product(const spmv_matrices::csr& m, const std::vector<float>& x) {
    std::vector<double> y(m.rows);
    for (std::size_t r = 0; r < m.rows; ++r) {
        double sum = 0;
        for (auto e = m.row_pointers[r]; e < m.row_pointers[r + 1]; ++e)
            sum += double(m.values[e]) * x[m.column_indices[e]];
        y[r] = sum;
    }
    return y;
}

void measure(const kiln::queue& q, const char* name, const spmv_matrices::csr& m, double reference,
             bool cpu) {
    const std::vector<float> x = spmv_matrices::operand(m.columns);
    const kiln::sparse_matrix<float> A(q, m.rows, m.columns, m.row_pointers, m.column_indices,
                                       m.values);
    kiln::vector<float> dx(q, x), y(q, m.rows);
    const double s = best_seconds_per_call(q, 5, 10, [&] { y = A * dx; });

    // The plain one-thread loop (float accumulation, as kiln's): the CPU reference.
    std::vector<float> host_y(m.rows);
    double host_s = 1e30;
    for (int r = 0; r < (cpu ? 3 : 1); ++r) {
        const auto start = clock_type::now();
        for (std::size_t row = 0; row < m.rows; ++row) {
            float sum = 0;
            for (auto e = m.row_pointers[row]; e < m.row_pointers[row + 1]; ++e)
                sum += m.values[e] * x[m.column_indices[e]];
            host_y[row] = sum;
        }
        host_s = std::min(host_s, seconds_since(start));
    }
    const std::vector<double> expected = host_product(m, x);
    const std::vector<float> got = y.read();
    std::size_t wrong = 0;
    for (std::size_t r = 0; r < m.rows; ++r) {
        double magnitude = 0;
        for (auto e = m.row_pointers[r]; e < m.row_pointers[r + 1]; ++e)
            magnitude += std::abs(double(m.values[e]) * x[m.column_indices[e]]);
        if (std::abs(got[r] - expected[r]) > 1e-5 * (magnitude + 1)) ++wrong;
    }

    const double bytes = spmv_matrices::minimum_bytes(m);
    const double ref = cpu ? host_s : reference;
    std::printf("| %s, %zu rows, %zu non-zeros | %s | %.3f ms | %.1f GB/s |", name, m.rows,
                m.values.size(), std::string(kiln::detail::to_string(A.format())).c_str(), s * 1e3,
                bytes / s / 1e9);
    if (ref > 0)
        std::printf(" %.2fx %s (%.3f ms) |", ref / s,
                    cpu ? "one-thread CSR loop" : "cuSPARSE cusparseSpMV", ref * 1e3);
    else
        std::printf(" (no reference) |");
    std::printf(" %s |\n", wrong == 0 ? "matches the host loop" : "MISMATCH");
}

}  // namespace

int main(int argc, char** argv) {
    const kiln::device dev = kiln::default_device();
    const bool cpu = dev.is_cpu();
    const std::size_t side = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : cpu ? 1024 : 4096;
    const std::size_t rows =
        argc > 2 ? std::strtoull(argv[2], nullptr, 10) : std::size_t{1} << (cpu ? 20 : 24);
    kiln::queue q(dev);
    const double copy_gb_per_s =
        kiln::bench::measure_copy_bandwidth(dev, kiln::bench::copy_benchmark_bytes(dev));
    std::map<std::string, double> reference;
    if (!cpu) reference = cusparse_reference(side, rows);

    std::printf("### kiln sparse matrix-vector products, %s (%s)\n\n", dev.name().c_str(),
                std::string(kiln::to_string(dev.backend())).c_str());
    std::printf("copy bandwidth (device to device, limit): %.1f GB/s\n\n", copy_gb_per_s);
    std::printf(
        "| matrix | kiln format | time | bandwidth (min. CSR traffic) | reference | check "
        "|\n|---|---|---|---|---|---|\n");
    measure(q, "2-D Poisson 5-point", spmv_matrices::poisson_2d(side), reference["poisson"], cpu);
    measure(q, "power-law", spmv_matrices::power_law(rows, 100000), reference["power_law"], cpu);
    return 0;
}
