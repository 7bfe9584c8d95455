// SPDX-License-Identifier: Apache-2.0
// Sparse matrix storage on the device and the loop structure of the product kernels.
#include <algorithm>
#include <kiln/expr/launch.hpp>
#include <kiln/sparse.hpp>

#include "sparse_product_kernel.hpp"

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
    s.layout = choose_sparse_layout(stats, row_pointers, q.device(), sizeof(T));
    s.work = kiln::buffer<std::uint32_t>(q, 1);
    if (s.layout.format == sparse_format::sliced_ell) {
        // Entry k of a slice's row `lane` at the slice's offset + k * slice rows + lane.
        const std::size_t slice_rows = s.layout.lanes;
        const std::vector<std::uint64_t> offsets = slice_offsets(slice_rows, row_pointers);
        if (offsets.back() >= sparse_storage<T>::no_column || stats.columns > sliced_max_columns)
            throw invalid_argument_error("kiln::sparse_matrix",
                                         "sliced ELL takes at most 2^31 columns and 2^32 - 2 "
                                         "entries with padding");
        const std::vector<std::uint32_t> starts(offsets.begin(), offsets.end());
        std::vector<std::uint32_t> padded_columns(starts.back(), sliced_padding_column);
        std::vector<T> padded_values(starts.back(), T{});
        for (std::size_t r = 0; r < stats.rows; ++r)
            for (std::uint32_t e = row_pointers[r]; e < row_pointers[r + 1]; ++e) {
                const std::size_t slot =
                    starts[r / slice_rows] + (e - row_pointers[r]) * slice_rows + r % slice_rows;
                padded_columns[slot] = columns[e];
                padded_values[slot] = values[e];
            }
        // Never more chunks than slices: each has one at least, a matrix without rows one.
        const std::vector<std::uint32_t> work =
            row_chunks(std::clamp<std::size_t>(starts.size() - 1, 1, s.layout.chunks), starts);
        s.work_count = work.size() - 1;
        s.work = kiln::buffer<std::uint32_t>(q, work);
        s.row_pointers = kiln::buffer<std::uint32_t>(q, starts);
        s.columns = device_copy<std::uint32_t>(q, padded_columns);
        s.values = device_copy<T>(q, padded_values);
        return s;
    }
    if (s.layout.format != sparse_format::ell) {
        std::vector<std::uint32_t> work;
        if (s.layout.format == sparse_format::csr_vector && s.layout.long_row > 0) {
            for (std::size_t r = 0; r < stats.rows; ++r)
                if (row_pointers[r + 1] - row_pointers[r] > s.layout.long_row)
                    work.push_back(static_cast<std::uint32_t>(r));
            s.work_count = work.size();
        } else if (s.layout.format == sparse_format::csr_adaptive) {
            work = adaptive_blocks(s.layout, row_pointers);
            s.work_count = work.size() / 4;
        } else if (s.layout.format == sparse_format::csr_chunked) {
            // Never more chunks than rows: each has one at least, a matrix without rows one.
            work =
                row_chunks(std::clamp<std::size_t>(stats.rows, 1, s.layout.chunks), row_pointers);
            s.work_count = work.size() - 1;
        }
        if (!work.empty()) s.work = kiln::buffer<std::uint32_t>(q, work);
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
template sparse_storage<half> make_storage(const queue&, const row_statistics&,
                                           std::span<const std::uint32_t>,
                                           std::span<const std::uint32_t>, std::span<const half>);
template sparse_storage<bfloat16> make_storage(const queue&, const row_statistics&,
                                               std::span<const std::uint32_t>,
                                               std::span<const std::uint32_t>,
                                               std::span<const bfloat16>);

template <class T>
const typename sparse_storage<T>::csr_arrays& inline_csr(const sparse_storage<T>& storage,
                                                         const queue& q, std::size_t rows) {
    auto& csr = *storage.inlined;
    std::call_once(csr.made, [&] {
        const std::vector<std::uint32_t> offsets = storage.row_pointers.read(q);
        const std::vector<std::uint32_t> padded_columns = storage.columns.read(q);
        const std::vector<T> padded_values = storage.values.read(q);
        std::vector<std::uint32_t> row_pointers;
        const std::vector<std::uint32_t> slots =
            csr_slots_of_slices(storage.layout.lanes, rows, offsets, padded_columns, row_pointers);
        std::vector<std::uint32_t> columns(slots.size());
        std::vector<T> values(slots.size());
        for (std::size_t e = 0; e < slots.size(); ++e) {
            columns[e] = padded_columns[slots[e]];
            values[e] = padded_values[slots[e]];
        }
        csr.row_pointers = device_copy<std::uint32_t>(q, row_pointers);
        csr.columns = device_copy<std::uint32_t>(q, columns);
        csr.values = device_copy<T>(q, values);
    });
    return csr;
}

template const sparse_storage<float>::csr_arrays& inline_csr(const sparse_storage<float>&,
                                                             const queue&, std::size_t);
template const sparse_storage<double>::csr_arrays& inline_csr(const sparse_storage<double>&,
                                                              const queue&, std::size_t);
template const sparse_storage<std::complex<float>>::csr_arrays& inline_csr(
    const sparse_storage<std::complex<float>>&, const queue&, std::size_t);
template const sparse_storage<std::complex<double>>::csr_arrays& inline_csr(
    const sparse_storage<std::complex<double>>&, const queue&, std::size_t);
template const sparse_storage<half>::csr_arrays& inline_csr(const sparse_storage<half>&,
                                                            const queue&, std::size_t);
template const sparse_storage<bfloat16>::csr_arrays& inline_csr(const sparse_storage<bfloat16>&,
                                                                const queue&, std::size_t);

namespace {

void emit_lines(source_builder& b, const std::vector<std::string>& lines) {
    for (const auto& line : lines) b.line(line);
}

/// kiln_sum of the group's work-items (or of each team of `lanes`, kiln_lane its rank) summed
/// into the first of them, through local memory: portable OpenCL C 1.2, no sub-group
/// functions. Every work-item of the group must get here.
void emit_tree_sum(source_builder& b, const std::string& lanes, const std::string& add,
                   const std::string& lane) {
    const std::string other = "kiln_partial[kiln_lid + kiln_s]";
    b.line("kiln_partial[kiln_lid] = kiln_sum;");
    b.local_barrier();
    b.open("for (uint kiln_s = (" + lanes + ") / 2; kiln_s > 0; kiln_s >>= 1)");
    b.line("if (" + lane + " < kiln_s) kiln_partial[kiln_lid] = " +
           (add.empty() ? "kiln_partial[kiln_lid] + " + other
                        : add + "(kiln_partial[kiln_lid], " + other + ")") +
           ";");
    b.local_barrier();
    b.close();
}

void emit_csr_vector(source_builder& b, const sparse_layout& layout,
                     const sparse_kernel_text& text) {
    const std::string lanes = std::to_string(layout.lanes);
    const std::string group = std::to_string(layout.work_group_size);
    const std::string rows_per_group = std::to_string(layout.work_group_size / layout.lanes);
    b.local_array(text.type, "kiln_partial", group);
    b.line("const uint kiln_lid = " + source_builder::local_id() + ";");
    // The long rows first, a whole group each, then the others, a team each: every group does
    // some of both, and the loops' trip counts are the same for the whole group (barriers).
    b.open("for (ulong kiln_l = " + source_builder::group_id() +
           "; kiln_l < kiln_work_count; "
           "kiln_l += " +
           source_builder::group_count() + ")");
    b.line("const ulong kiln_row = kiln_work[kiln_l];");
    b.line(text.type + " kiln_sum = " + text.zero + ";");
    b.open(
        "for (ulong kiln_entry = kiln_row_pointers[kiln_row] + kiln_lid; kiln_entry < "
        "kiln_row_pointers[kiln_row + 1]; kiln_entry += " +
        group + ")");
    b.line("const uint kiln_column = kiln_columns[kiln_entry];");
    emit_lines(b, text.entry);
    b.close();
    emit_tree_sum(b, group, text.add, "kiln_lid");
    b.open("if (kiln_lid == 0)");
    b.line("kiln_sum = kiln_partial[0];");
    emit_lines(b, text.row);
    b.close();
    b.close();

    b.line("const uint kiln_lane = kiln_lid % " + lanes + ";");
    b.open("for (ulong kiln_first = " + source_builder::group_id() + " * " + rows_per_group +
           "; kiln_first < n; kiln_first += " + source_builder::group_count() + " * " +
           rows_per_group + ")");
    b.line("const ulong kiln_row = kiln_first + kiln_lid / " + lanes + ";");
    b.line(text.type + " kiln_sum = " + text.zero + ";");
    b.line("ulong kiln_begin = 0, kiln_end = 0;");
    b.open("if (kiln_row < n)");
    b.line("kiln_begin = kiln_row_pointers[kiln_row];");
    b.line("kiln_end = kiln_row_pointers[kiln_row + 1];");
    b.close();
    b.line(
        "const int kiln_mine = kiln_row < n && (kiln_work_count == 0 || kiln_end - kiln_begin "
        "<= " +
        std::to_string(layout.long_row) + ");");
    b.open(
        "if (kiln_mine) for (ulong kiln_entry = kiln_begin + kiln_lane; kiln_entry < "
        "kiln_end; kiln_entry += " +
        lanes + ")");
    b.line("const uint kiln_column = kiln_columns[kiln_entry];");
    emit_lines(b, text.entry);
    b.close();
    emit_tree_sum(b, lanes, text.add, "kiln_lane");
    b.open("if (kiln_lane == 0 && kiln_mine)");
    b.line("kiln_sum = kiln_partial[kiln_lid];");
    emit_lines(b, text.row);
    b.close();
    b.close();
}

std::string added(const sparse_kernel_text& text, const std::string& a, const std::string& b) {
    return text.add.empty() ? a + " + " + b : text.add + "(" + a + ", " + b + ")";
}

/// The group's work-items walk entries first, first + group, ... up to the block's capacity,
/// each entry in its own scope (the loads of different entries do not wait for each other);
/// `each` and `after` are lines around the entry's text, inside the scope.
void emit_block_entries(source_builder& b, const sparse_layout& layout,
                        const sparse_kernel_text& text, const std::string& first,
                        const std::vector<std::string>& each,
                        const std::vector<std::string>& after) {
    for (std::size_t k = 0; k < layout.block_entries / layout.work_group_size; ++k) {
        b.open("");
        b.line("const uint kiln_slot = " + std::to_string(k * layout.work_group_size) +
               " + kiln_lid;");
        b.line("const ulong kiln_entry = " + first + " + kiln_slot;");
        emit_lines(b, each);
        b.open("if (kiln_entry < kiln_end)");
        b.line("const uint kiln_column = kiln_columns[kiln_entry];");
        emit_lines(b, text.entry);
        b.close();
        emit_lines(b, after);
        b.close();
    }
}

void emit_csr_adaptive(source_builder& b, const sparse_layout& layout,
                       const sparse_kernel_text& text) {
    const std::string group = std::to_string(layout.work_group_size);
    const std::string capacity = std::to_string(layout.block_entries);
    b.local_array(text.type, "kiln_products", capacity);
    b.local_array(text.type, "kiln_partial", group);
    b.local_array("uint", "kiln_starts", std::to_string(layout.work_group_size + 1));
    b.line("const uint kiln_lid = " + source_builder::local_id() + ";");
    b.open("for (ulong kiln_block = " + source_builder::group_id() +
           "; kiln_block < kiln_work_count; kiln_block += " + source_builder::group_count() + ")");
    b.line("const ulong kiln_first_row = kiln_work[4 * kiln_block];");
    b.line("const uint kiln_rows = kiln_work[4 * kiln_block + 1] - (uint)kiln_first_row;");
    b.line("const ulong kiln_begin = kiln_work[4 * kiln_block + 2];");
    b.line("const ulong kiln_end = kiln_work[4 * kiln_block + 3];");

    // One row longer than a block: the whole group adds its entries up in registers.
    b.open("if (kiln_end - kiln_begin > " + capacity + ")");
    b.line(text.type + " kiln_sum = " + text.zero + ";");
    b.open("for (ulong kiln_base = kiln_begin; kiln_base < kiln_end; kiln_base += " + capacity +
           ")");
    emit_block_entries(b, layout, text, "kiln_base", {}, {});
    b.close();
    emit_tree_sum(b, group, text.add, "kiln_lid");
    b.open("if (kiln_lid == 0)");
    b.line("kiln_sum = kiln_partial[0];");
    b.line("const ulong kiln_row = kiln_first_row;");
    emit_lines(b, text.row);
    b.close();
    b.close_with("else");
    b.open("");
    // Rows that fit: every entry's product into local memory (coalesced loads), where row r's
    // products are kiln_starts[r] .. kiln_starts[r + 1] - 1.
    b.line("if (kiln_lid == 0) kiln_starts[0] = 0;");
    b.line(
        "if (kiln_lid < kiln_rows) kiln_starts[kiln_lid + 1] = "
        "kiln_row_pointers[kiln_first_row + kiln_lid + 1] - (uint)kiln_begin;");
    emit_block_entries(b, layout, text, "kiln_begin",
                       {text.type + " kiln_sum = " + text.zero + ";"},
                       {"kiln_products[kiln_slot] = kiln_sum;"});
    b.local_barrier();
    // Then a team of kiln_lanes work-items per row (a power of two, as many as the group holds):
    // the host cut the blocks so that no work-item adds more than lane_entries products.
    b.line("uint kiln_lanes = " + group + ";");
    b.line("while (kiln_lanes * kiln_rows > " + group + ") kiln_lanes >>= 1;");
    b.line("const uint kiln_team = kiln_lid / kiln_lanes, kiln_lane = kiln_lid % kiln_lanes;");
    b.line(text.type + " kiln_sum = " + text.zero + ";");
    b.open(
        "if (kiln_team < kiln_rows) for (uint kiln_k = kiln_starts[kiln_team] + kiln_lane; "
        "kiln_k < kiln_starts[kiln_team + 1]; kiln_k += kiln_lanes)");
    b.line("kiln_sum = " + added(text, "kiln_sum", "kiln_products[kiln_k]") + ";");
    b.close();
    b.open("if (kiln_lanes > 1)");
    emit_tree_sum(b, "kiln_lanes", text.add, "kiln_lane");
    b.line("kiln_sum = kiln_partial[kiln_lid];");
    b.close();
    b.open("if (kiln_team < kiln_rows && kiln_lane == 0)");
    b.line("const ulong kiln_row = kiln_first_row + kiln_team;");
    emit_lines(b, text.row);
    b.close();
    b.close();
    // The next block reuses the local arrays.
    b.local_barrier();
    b.close();
}

}  // namespace

std::vector<split_part_plan> plan_split(const layout& row_parts, const layout& column_parts,
                                        std::span<const std::uint32_t> row_pointers,
                                        std::span<const std::uint32_t> column_indices) {
    std::vector<split_part_plan> plans;
    for (std::size_t k = 0; k < row_parts.size(); ++k) {
        split_part_plan plan;
        const std::size_t first_row = row_parts[k].begin, rows = row_parts[k].size;
        const std::size_t own_begin = column_parts[k].begin, own = column_parts[k].size;
        plan.entries_begin = row_pointers[first_row];
        plan.entries = row_pointers[first_row + rows] - plan.entries_begin;
        const auto columns = column_indices.subspan(plan.entries_begin, plan.entries);
        const auto is_own = [&](std::uint64_t c) { return c >= own_begin && c < own_begin + own; };
        for (const auto c : columns)
            if (!is_own(c)) plan.halo.push_back(c);
        std::sort(plan.halo.begin(), plan.halo.end());
        plan.halo.erase(std::unique(plan.halo.begin(), plan.halo.end()), plan.halo.end());
        for (const auto c : columns) {
            if (is_own(c)) {
                plan.column_indices.push_back(static_cast<std::uint32_t>(c - own_begin));
            } else {
                const auto h = std::lower_bound(plan.halo.begin(), plan.halo.end(), c);
                plan.column_indices.push_back(static_cast<std::uint32_t>(
                    own + static_cast<std::size_t>(h - plan.halo.begin())));
            }
        }
        for (std::size_t r = 0; r <= rows; ++r)
            plan.row_pointers.push_back(
                static_cast<std::uint32_t>(row_pointers[first_row + r] - plan.entries_begin));
        plans.push_back(std::move(plan));
    }
    return plans;
}

template <class T>
kiln::buffer<T> exchange_halo(const kiln::vector<T>& x, std::size_t part, std::size_t own,
                              std::size_t halo, const std::vector<halo_transfer>& transfers) {
    const queue& q = x.layout()[part].queue;
    kiln::buffer<T> operand(q, std::max<std::size_t>(1, own + halo));
    if (own > 0) x.part(part).copy_to(q, 0, operand, 0, own);
    const halo_gather_key key{opencl_type_name<T>()};
    for (const auto& transfer : transfers) {
        const queue& owner = x.layout()[transfer.owner].queue;
        const algorithm_program& program = algorithm_program_for(
            owner.device(), key.key(), [&] { return std::vector{key.kernel()}; },
            [&] {
                source_builder b;
                if constexpr (is_complex_v<T>) define_complex_helpers<real_of_t<T>>(b);
                b.begin_kernel(halo_gather_key::kernel_name);
                key.kernel().declare(b);
                b.begin_body();
                b.open_element_loop(b.declare_element_range(loop_style::strided, "n"), "i");
                b.line("out[i] = x[indices[i]];");
                b.close();
                b.end_kernel();
                return b.str();
            });
        kiln::buffer<T> gathered(owner, transfer.count);
        const std::size_t group = 64;
        kernel_binding args = program.binding(halo_gather_key::kernel_name);
        args.scalar<std::uint64_t>("n", transfer.count)
            .buffer("indices", transfer.owner_indices)
            .buffer("x", x.part(transfer.owner))
            .buffer("out", gathered);
        program.bind(std::move(args))
            .launch(owner, (transfer.count + group - 1) / group * group, group);
        // Between devices through the host: only the elements this part reads.
        const std::vector<T> host = gathered.read(owner);
        operand.write(q, own + transfer.offset, std::span<const T>(host));
    }
    return operand;
}

template kiln::buffer<float> exchange_halo(const kiln::vector<float>&, std::size_t, std::size_t,
                                           std::size_t, const std::vector<halo_transfer>&);
template kiln::buffer<double> exchange_halo(const kiln::vector<double>&, std::size_t, std::size_t,
                                            std::size_t, const std::vector<halo_transfer>&);
template kiln::buffer<std::complex<float>> exchange_halo(const kiln::vector<std::complex<float>>&,
                                                         std::size_t, std::size_t, std::size_t,
                                                         const std::vector<halo_transfer>&);
template kiln::buffer<std::complex<double>> exchange_halo(const kiln::vector<std::complex<double>>&,
                                                          std::size_t, std::size_t, std::size_t,
                                                          const std::vector<halo_transfer>&);

void emit_sparse_body(source_builder& b, const sparse_layout& layout, loop_style style,
                      const sparse_kernel_text& text) {
    if (layout.format == sparse_format::csr_vector) {
        emit_csr_vector(b, layout, text);
        return;
    }
    if (layout.format == sparse_format::csr_adaptive) {
        emit_csr_adaptive(b, layout, text);
        return;
    }
    if (layout.format == sparse_format::csr_chunked) {
        emit_csr_chunked(b, text);
        return;
    }
    if (layout.format == sparse_format::sliced_ell) {
        emit_sliced_ell(b, layout, text);
        return;
    }
    const bool ell = layout.format == sparse_format::ell;
    b.open_element_loop(b.declare_element_range(ell ? loop_style::strided : style, "n"),
                        "kiln_row");
    b.line(text.type + " kiln_sum = " + text.zero + ";");
    if (ell) {
        b.open("for (ulong kiln_k = 0; kiln_k < kiln_width; ++kiln_k)");
        b.line("const ulong kiln_entry = kiln_k * n + kiln_row;");
        b.line("const uint kiln_column = kiln_columns[kiln_entry];");
        b.line("if (kiln_column == 0xffffffffu) break;");
    } else {
        b.open(
            "for (ulong kiln_entry = kiln_row_pointers[kiln_row]; kiln_entry < "
            "kiln_row_pointers[kiln_row + 1]; ++kiln_entry)");
        b.line("const uint kiln_column = kiln_columns[kiln_entry];");
    }
    emit_lines(b, text.entry);
    b.close();
    b.open("");
    emit_lines(b, text.row);
    b.close();
    b.close();
}

kernel_description sparse_product_description(const std::string& value_type) {
    kernel_description kernel(sparse_product_kernel);
    // restrict: the matrix is only read, so loads may take the read-only cache path.
    kernel.scalar<std::uint64_t>("n")
        .scalar<std::uint64_t>("kiln_width")
        .global_const<std::uint32_t>("kiln_row_pointers")
        .restricted()
        .global_const<std::uint32_t>("kiln_columns")
        .restricted()
        .global_const(value_type, "kiln_values")
        .restricted()
        .scalar<std::uint64_t>("kiln_work_count")
        .global_const<std::uint32_t>("kiln_work")
        .restricted();
    return kernel.then_input();
}

std::string sparse_product_key::key() const {
    return "kiln_spmv:" + statement + ":" + layout.key() + ":" +
           (loop == loop_style::chunked ? "chunked" : "strided") + ":" + result;
}

kernel_description halo_gather_key::kernel() const {
    kernel_description gather(kernel_name);
    gather.scalar<std::uint64_t>("n")
        .global_const<std::uint32_t>("indices")
        .global_const(value_type, "x")
        .global(value_type, "out");
    return gather;
}

std::string halo_gather_key::key() const {
    return std::string(kernel_name) + ":" + value_type;
}

event launch_sparse(const algorithm_program& program, kernel_binding args, const queue& q,
                    const sparse_layout& layout, std::size_t rows, std::size_t work_count) {
    const device& dev = q.device();
    const kiln::kernel& kernel = program.kernel(sparse_product_kernel);
    const launch_policy policy = launch_policy_for(dev);
    const bool teams = layout.format == sparse_format::csr_vector ||
                       layout.format == sparse_format::csr_adaptive ||
                       layout.format == sparse_format::csr_chunked ||
                       layout.format == sparse_format::sliced_ell;
    const std::size_t group = teams
                                  ? layout.work_group_size
                                  : std::min(policy.work_group_size, kernel.max_work_group_size());
    // csr_adaptive: a group per block, so that the hardware hands blocks to groups as they
    // finish (blocks differ in cost).
    if (layout.format == sparse_format::csr_adaptive)
        return program.bind(std::move(args))
            .launch(q, std::max<std::size_t>(1, work_count) * group, group);
    // csr_chunked, sliced_ell: a work-item per chunk, the groups of one left to the runtime's
    // threads.
    if (layout.format == sparse_format::csr_chunked || layout.format == sparse_format::sliced_ell)
        return program.bind(std::move(args))
            .launch(q, (work_count + group - 1) / group * group, group);
    const std::size_t items =
        layout.format == sparse_format::csr_vector ? rows * layout.lanes : rows;
    const std::size_t max_groups =
        std::max<std::size_t>(1, dev.properties().compute_units) * policy.groups_per_compute_unit;
    const std::size_t groups = std::clamp<std::size_t>((items + group - 1) / group, 1, max_groups);
    return program.bind(std::move(args)).launch(q, groups * group, group);
}

}  // namespace kiln::detail
