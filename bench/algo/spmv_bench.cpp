// SPDX-License-Identifier: Apache-2.0
// y = A x with kiln::sparse_matrix beside cuSPARSE (GPUs) or one host thread (CPUs), same data.
//
//     spmv_bench [poisson side] [power-law rows]
//                (defaults 4096 and 2^24 on GPUs, 1024 and 2^20 on CPUs; KILN_DEVICE picks it)
//
// Prints one markdown table: y = A x on the 2-D 5-point Poisson matrix and a power-law matrix of
// about as many rows (bench/algo/spmv_matrices.hpp, float values, int32 indices); time per product
// (best of batches of back-to-back products, wall clock), the bandwidth at the minimum CSR traffic
// (values, columns, row pointers, x once, y), the format kiln chose, and the ratio to cuSPARSE's
// cusparseSpMV on the same matrix (bench/algo/cusparse_spmv_reference.cu, run by this program
// when it was built) or, on CPUs, to a plain single-threaded CSR loop. Then one CG iteration on
// the Poisson matrix beside cuSPARSE + cuBLAS, and y = x * S (a 5-point 1-D stencil over
// 4 side^2 floats) against the copy bandwidth.
//
// KILN_SPMV_FORMATS=csr_scalar,csr_chunked (any of to_string's names) times those formats, forced,
// instead of the rule's choice: a row each, their batches alternating in one run. sliced_ell:16
// forces slices of 16 rows (plain sliced_ell: 32, the CPU rule's).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <device_limits.hpp>
#include <kiln/kiln.hpp>
#include <kiln/sparse.hpp>
#include <kiln/stencil.hpp>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "ratio_rows.hpp"
#include "spmv_matrices.hpp"
#include "timing.hpp"

namespace {

using kiln::bench::best_seconds_per_call;
using kiln::bench::clock_type;
using kiln::bench::seconds_since;

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

/// Checks y = A x against the host loop and prints the row of one format.
void report(const char* name, const spmv_matrices::csr& m, const std::vector<float>& x,
            const kiln::sparse_matrix<float>& A, const kiln::vector<float>& y, double s,
            double reference, double copy_gb_per_s, bool cpu) {
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
    std::printf("| %s, %zu rows, %zu non-zeros | %s | %.3f ms | %.1f GB/s, %.2f of copy |", name,
                m.rows, m.values.size(), std::string(kiln::detail::to_string(A.format())).c_str(),
                s * 1e3, bytes / s / 1e9, bytes / s / 1e9 / copy_gb_per_s);
    const char* ref_name = cpu ? "one-thread CSR loop" : "cuSPARSE cusparseSpMV";
    if (ref > 0) {
        std::printf(" %.2fx %s (%.3f ms) |", ref / s, ref_name, ref * 1e3);
        kiln::bench::record_ratio(std::string(name) + ", " + std::to_string(m.rows) + " rows",
                                  ref / s, kiln::bench::measure::speed, ref_name);
    } else
        std::printf(" (no reference) |");
    std::printf(" %s |\n", wrong == 0 ? "matches the host loop" : "MISMATCH");
}

/// The formats KILN_SPMV_FORMATS names (with sliced_ell's rows per slice), or the rule's choice
/// alone (nullopt).
std::vector<std::optional<std::pair<kiln::detail::sparse_format, std::size_t>>> formats_to_time() {
    using kiln::detail::sparse_format;
    const char* list = std::getenv("KILN_SPMV_FORMATS");
    if (!list || !*list) return {std::nullopt};
    std::vector<std::optional<std::pair<sparse_format, std::size_t>>> formats;
    std::string names = std::string(list) + ",";
    for (std::size_t start = 0, comma; (comma = names.find(',', start)) != std::string::npos;
         start = comma + 1) {
        const std::string item = names.substr(start, comma - start);
        const std::size_t colon = item.find(':');
        const std::string name = item.substr(0, colon);
        const std::size_t lanes =
            colon == std::string::npos ? 32 : std::strtoull(item.c_str() + colon + 1, nullptr, 10);
        for (const auto f :
             {sparse_format::csr_scalar, sparse_format::csr_vector, sparse_format::ell,
              sparse_format::csr_adaptive, sparse_format::csr_chunked, sparse_format::sliced_ell})
            if (name == kiln::detail::to_string(f)) formats.emplace_back(std::pair(f, lanes));
    }
    return formats;
}

void measure(const kiln::queue& q, const char* name, const spmv_matrices::csr& m, double reference,
             double copy_gb_per_s, bool cpu) {
    const std::vector<float> x = spmv_matrices::operand(m.columns);
    std::vector<std::unique_ptr<kiln::sparse_matrix<float>>> matrices;
    using kiln::detail::sparse_format;
    std::size_t longest = 0;
    for (std::size_t r = 0; r < m.rows; ++r)
        longest = std::max<std::size_t>(longest, m.row_pointers[r + 1] - m.row_pointers[r]);
    for (const auto& choice : formats_to_time()) {
        std::optional<kiln::detail::scoped_sparse_layout> forced;
        if (choice) {
            const sparse_format format = choice->first;
            // ELL's arrays padded to the longest row would not fit (power laws): not timed.
            if (format == sparse_format::ell && longest * m.rows > 4 * m.values.size()) continue;
            kiln::detail::sparse_layout layout;
            layout.format = format;
            // The GPU rule's shapes for the formats that take one, the CPU rule's groups of one.
            if (format == sparse_format::csr_vector) layout.lanes = 4;
            if (format == sparse_format::csr_adaptive) layout = {format, 1, 0, 256, 0, 1024, 8};
            if (format == sparse_format::csr_chunked || format == sparse_format::sliced_ell)
                layout.work_group_size = 1;
            if (format == sparse_format::sliced_ell) layout.lanes = unsigned(choice->second);
            forced.emplace(layout);
        }
        matrices.push_back(std::make_unique<kiln::sparse_matrix<float>>(
            q, m.rows, m.columns, m.row_pointers, m.column_indices, m.values));
    }
    kiln::vector<float> dx(q, x), y(q, m.rows);
    std::vector<double> seconds(matrices.size(), 1e30);
    for (int round = 0; round < 5; ++round)
        for (std::size_t k = 0; k < matrices.size(); ++k)
            seconds[k] =
                std::min(seconds[k], best_seconds_per_call(q, matrices.size() > 1 ? 2 : 5, 10,
                                                           [&] { y = *matrices[k] * dx; }));
    for (std::size_t k = 0; k < matrices.size(); ++k) {
        y = *matrices[k] * dx;
        report(name, m, x, *matrices[k], y, seconds[k], reference, copy_gb_per_s, cpu);
    }
}

/// One CG iteration on the matrix (Ap = A p, two sums, the u and r updates in one kernel, the
/// new direction), against cuSPARSE + cuBLAS doing the same; on CPUs no reference.
void measure_cg(const kiln::queue& q, const spmv_matrices::csr& m, double reference, bool cpu) {
    const kiln::sparse_matrix<float> A(q, m.rows, m.columns, m.row_pointers, m.column_indices,
                                       m.values);
    kiln::vector<float> u(q, m.rows), r(q, spmv_matrices::operand(m.rows)), p(q, m.rows),
        Ap(q, m.rows);
    u = 0;
    p = r;
    double rr = kiln::sum(r * r);
    const double s = best_seconds_per_call(q, 5, 10, [&] {
        Ap = A * p;
        const float alpha = static_cast<float>(rr / kiln::sum(p * Ap));
        kiln::tie(u, r) = std::make_tuple(u + alpha * p, r - alpha * Ap);
        const double rr_next = kiln::sum(r * r);
        p = r + static_cast<float>(rr_next / rr) * p;
        rr = rr_next;
    });
    std::printf("| CG iteration, Poisson, %zu rows | %s | %.3f ms | |", m.rows,
                std::string(kiln::detail::to_string(A.format())).c_str(), s * 1e3);
    if (!cpu && reference > 0) {
        std::printf(" %.2fx cuSPARSE + cuBLAS (%.3f ms) |", reference / s, reference * 1e3);
        kiln::bench::record_ratio("one CG iteration, Poisson", reference / s,
                                  kiln::bench::measure::speed, "cuSPARSE + cuBLAS");
    } else
        std::printf(" (no reference) |");
    std::printf(" residual norm %.3g after %d iterations |\n", std::sqrt(rr), 5 * 10 + 1);
}

/// y = x * S with a 5-point stencil, against the copy bandwidth (the limit: one read, one
/// write) and, on CPUs, a one-thread loop.
void measure_stencil(const kiln::queue& q, std::size_t n, double copy_gb_per_s, bool cpu) {
    const std::vector<float> c = {-1.0f / 12, 4.0f / 3, -5.0f / 2, 4.0f / 3, -1.0f / 12};
    const std::vector<float> host = spmv_matrices::operand(n);
    const kiln::stencil<float> S(q, c, 2);
    kiln::vector<float> x(q, host), y(q, n);
    const double s = best_seconds_per_call(q, 5, 10, [&] { y = x * S; });
    std::vector<float> expected(n);
    const auto start = clock_type::now();
    for (std::size_t i = 0; i < n; ++i) {
        float sum = 0;
        for (std::size_t k = 0; k < 5; ++k)
            sum += c[k] * host[std::min(n - 1, i + k < 2 ? 0 : i + k - 2)];
        expected[i] = sum;
    }
    const double host_s = seconds_since(start);
    const std::vector<float> got = y.read();
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < n; ++i) wrong += std::abs(got[i] - expected[i]) > 1e-5f;
    const double gb_per_s = 2.0 * double(n) * 4 / s / 1e9;
    std::printf(
        "| y = x * S, 5-point 1-D stencil, %zu floats | | %.3f ms | %.1f GB/s | %.0f%% of "
        "copy bandwidth",
        n, s * 1e3, gb_per_s, 100 * gb_per_s / copy_gb_per_s);
    if (cpu) std::printf(", %.2fx one-thread loop (%.3f ms)", host_s / s, host_s * 1e3);
    std::printf(" | %s |\n", wrong == 0 ? "matches the host loop" : "MISMATCH");
}

}  // namespace

int main(int argc, char** argv) {
    const kiln::device dev = kiln::default_device();
    const bool cpu = dev.is_cpu();
    const std::size_t side = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : cpu ? 1024 : 4096;
    const std::size_t rows =
        argc > 2 ? std::strtoull(argv[2], nullptr, 10) : std::size_t{1} << (cpu ? 20 : 24);
    kiln::queue q(dev);
    kiln::bench::record_rows_of(dev, "SpMV");
    const spmv_matrices::csr poisson = spmv_matrices::poisson_2d(side);
    // At the Poisson product's size: its minimum traffic, half read and half written.
    const double copy_gb_per_s =
        kiln::bench::copy_bound(dev, std::size_t(spmv_matrices::minimum_bytes(poisson) / 2));
    std::map<std::string, double> reference;
    if (!cpu) reference = cusparse_reference(side, rows);

    std::printf("### kiln sparse matrix-vector products, %s (%s)\n\n", dev.name().c_str(),
                std::string(kiln::to_string(dev.backend())).c_str());
    std::printf("copy bandwidth (%s, the limit): %.1f GB/s\n\n", kiln::bench::copy_bound_name(dev),
                copy_gb_per_s);
    std::printf(
        "| matrix | kiln format | time | bandwidth (min. CSR traffic) | reference | check "
        "|\n|---|---|---|---|---|---|\n");
    measure(q, "2-D Poisson 5-point", poisson, reference["poisson"], copy_gb_per_s, cpu);
    measure(q, "power-law", spmv_matrices::power_law(rows, 100000), reference["power_law"],
            copy_gb_per_s, cpu);
    measure_cg(q, poisson, reference["cg_poisson"], cpu);
    measure_stencil(q, side * side * 4, copy_gb_per_s, cpu);
    return 0;
}
