// Sparse matrix storage on the device and the loop structure of the product kernels.
#include <algorithm>
#include <kiln/expr/launch.hpp>
#include <kiln/sparse.hpp>

namespace kiln::detail {
namespace {

/// A device copy of `host`, at least one element long (a matrix may have no entries at all).
template <class T>
kiln::buffer<T> device_copy(const queue& q, std::span<const T> host) {
    if (host.empty()) return kiln::buffer<T>(q, 1);
    return kiln::buffer<T>(q, host);
}

}  // namespace

template <class T>
sparse_storage<T> make_storage(const queue& q, const row_statistics& stats,
                               std::span<const std::uint32_t> row_pointers,
                               std::span<const std::uint32_t> columns, std::span<const T> values) {
    sparse_storage<T> s;
    s.layout = choose_sparse_layout(stats, q.device());
    if (s.layout.format != sparse_format::ell) {
        s.row_pointers = device_copy(q, row_pointers);
        s.columns = device_copy(q, columns);
        s.values = device_copy(q, values);
        return s;
    }
    // Column-major: entry k of row r at k * rows + r, so that the work-items of neighbouring
    // rows read neighbouring addresses. Padding comes after each row's entries.
    const std::size_t rows = stats.rows, width = s.layout.ell_width;
    std::vector<std::uint32_t> padded_columns(rows * width, sparse_storage<T>::no_column);
    std::vector<T> padded_values(rows * width, T{});
    for (std::size_t r = 0; r < rows; ++r)
        for (std::uint32_t e = row_pointers[r]; e < row_pointers[r + 1]; ++e) {
            const std::size_t slot = (e - row_pointers[r]) * rows + r;
            padded_columns[slot] = columns[e];
            padded_values[slot] = values[e];
        }
    s.row_pointers = kiln::buffer<std::uint32_t>(q, 1);
    s.columns = device_copy<std::uint32_t>(q, padded_columns);
    s.values = device_copy<T>(q, padded_values);
    return s;
}

template sparse_storage<float> make_storage(const queue&, const row_statistics&,
                                            std::span<const std::uint32_t>,
                                            std::span<const std::uint32_t>, std::span<const float>);
template sparse_storage<double> make_storage(const queue&, const row_statistics&,
                                             std::span<const std::uint32_t>,
                                             std::span<const std::uint32_t>,
                                             std::span<const double>);
template sparse_storage<std::complex<float>> make_storage(const queue&, const row_statistics&,
                                                          std::span<const std::uint32_t>,
                                                          std::span<const std::uint32_t>,
                                                          std::span<const std::complex<float>>);
template sparse_storage<std::complex<double>> make_storage(const queue&, const row_statistics&,
                                                           std::span<const std::uint32_t>,
                                                           std::span<const std::uint32_t>,
                                                           std::span<const std::complex<double>>);

void open_sparse_rows(source_builder& b, const sparse_layout& layout, loop_style style,
                      const std::string& zero, const std::string& type) {
    switch (layout.format) {
        case sparse_format::csr_scalar:
            b.open_element_loop(b.declare_element_range(style, "n"), "kiln_row");
            break;
        case sparse_format::ell:
            b.open_element_loop(b.declare_element_range(loop_style::strided, "n"), "kiln_row");
            break;
        case sparse_format::csr_vector: {
            const std::string lanes = std::to_string(layout.lanes);
            const std::string rows_per_group =
                std::to_string(layout.work_group_size / layout.lanes);
            b.local_array(type, "kiln_partial", std::to_string(layout.work_group_size));
            b.line("const uint kiln_lid = " + source_builder::local_id() + ";");
            b.line("const uint kiln_lane = kiln_lid % " + lanes + ";");
            b.open("for (ulong kiln_first = " + source_builder::group_id() + " * " +
                   rows_per_group + "; kiln_first < n; kiln_first += " +
                   source_builder::group_count() + " * " + rows_per_group + ")");
            b.line("const ulong kiln_row = kiln_first + kiln_lid / " + lanes + ";");
            break;
        }
    }
    b.line(type + " kiln_sum = " + zero + ";");
}

void open_sparse_entries(source_builder& b, const sparse_layout& layout) {
    switch (layout.format) {
        case sparse_format::csr_scalar:
            b.open(
                "for (ulong kiln_entry = kiln_row_pointers[kiln_row]; kiln_entry < "
                "kiln_row_pointers[kiln_row + 1]; ++kiln_entry)");
            b.line("const uint kiln_column = kiln_columns[kiln_entry];");
            break;
        case sparse_format::ell:
            b.open("for (ulong kiln_k = 0; kiln_k < kiln_width; ++kiln_k)");
            b.line("const ulong kiln_entry = kiln_k * n + kiln_row;");
            b.line("const uint kiln_column = kiln_columns[kiln_entry];");
            b.line("if (kiln_column == 0xffffffffu) break;");
            break;
        case sparse_format::csr_vector:
            b.open("if (kiln_row < n)");
            b.line("const ulong kiln_end = kiln_row_pointers[kiln_row + 1];");
            b.open(
                "for (ulong kiln_entry = kiln_row_pointers[kiln_row] + kiln_lane; kiln_entry "
                "< kiln_end; kiln_entry += " +
                std::to_string(layout.lanes) + ")");
            b.line("const uint kiln_column = kiln_columns[kiln_entry];");
            break;
    }
}

void close_sparse_entries(source_builder& b, const sparse_layout& layout, const std::string& add) {
    b.close();
    if (layout.format != sparse_format::csr_vector) {
        b.open("");
        return;
    }
    b.close();
    // A tree over the team's lanes in local memory: portable OpenCL C 1.2, no sub-group
    // functions. Every work-item of the group meets every barrier (the row loop's trip count is
    // the same for the whole group).
    b.line("kiln_partial[kiln_lid] = kiln_sum;");
    b.local_barrier();
    b.open("for (uint kiln_s = " + std::to_string(layout.lanes / 2) +
           "; kiln_s > 0; kiln_s >>= 1)");
    const std::string other = "kiln_partial[kiln_lid + kiln_s]";
    b.line("if (kiln_lane < kiln_s) kiln_partial[kiln_lid] = " +
           (add.empty() ? "kiln_partial[kiln_lid] + " + other
                        : add + "(kiln_partial[kiln_lid], " + other + ")") +
           ";");
    b.local_barrier();
    b.close();
    b.open("if (kiln_lane == 0 && kiln_row < n)");
    b.line("kiln_sum = kiln_partial[kiln_lid];");
}

void close_sparse_rows(source_builder& b, const sparse_layout&) {
    b.close();  // the per-row block
    b.close();  // the row loop
}

event launch_sparse(const kiln::kernel& kernel, const queue& q, const sparse_layout& layout,
                    std::size_t rows, std::vector<kernel_argument> args) {
    const device& dev = q.device();
    const launch_policy policy = launch_policy_for(dev);
    const std::size_t group = layout.format == sparse_format::csr_vector
                                  ? layout.work_group_size
                                  : std::min(policy.work_group_size, kernel.max_work_group_size());
    const std::size_t items =
        layout.format == sparse_format::csr_vector ? rows * layout.lanes : rows;
    const std::size_t max_groups =
        std::max<std::size_t>(1, dev.properties().compute_units) * policy.groups_per_compute_unit;
    const std::size_t groups = std::clamp<std::size_t>((items + group - 1) / group, 1, max_groups);
    return kernel.bind(std::move(args)).launch(q, groups * group, group);
}

}  // namespace kiln::detail
