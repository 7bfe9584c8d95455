// The sparse format rule's numbers (tuning as data) and the rule itself.
#include <algorithm>
#include <kiln/algo/sparse_format.hpp>
#include <mutex>

namespace kiln::detail {
namespace {

// clang-format off
constexpr sparse_rule gpu_rule{
    1.25, 32, 32, 128, 16,
    "GPUs: ELL while padding adds at most a quarter of the traffic (5-point stencil rows: "
    "4..5 entries, 1.05x) and rows fit in one 32-entry pass; csr_vector teams up to a warp (32), "
    "groups of 128 (4 rows of 32 lanes, 64 of 2); rows needing more than 16 passes of their "
    "team go to a whole group. Chosen from the memory traffic of each format, not yet "
    "measured: bench/algo/spmv_bench on the H200 is to confirm them"};
constexpr sparse_rule cpu_rule{
    0.0, 0, 1, 16, 0,
    "CPUs (PoCL): always csr_scalar; a work-item walks a contiguous block of rows, which is the "
    "plain CSR loop that caches and prefetchers handle best; no padding, no local memory"};
// clang-format on

std::mutex override_mutex;
std::optional<sparse_layout> layout_override;

unsigned lanes_for(double mean, unsigned max_lanes) {
    unsigned lanes = 2;
    while (lanes < max_lanes && lanes < mean) lanes *= 2;
    return lanes;
}

}  // namespace

std::string_view to_string(sparse_format format) noexcept {
    switch (format) {
        case sparse_format::csr_scalar:
            return "csr_scalar";
        case sparse_format::csr_vector:
            return "csr_vector";
        case sparse_format::ell:
            return "ell";
    }
    return "unknown";
}

const sparse_rule& sparse_rule_for(const device& dev) {
    return dev.type() == device_type::gpu ? gpu_rule : cpu_rule;
}

sparse_layout choose_sparse_layout(const row_statistics& rows, const device& dev) {
    {
        std::lock_guard lock(override_mutex);
        if (layout_override) {
            sparse_layout forced = *layout_override;
            forced.ell_width = rows.longest;
            return forced;
        }
    }
    const sparse_rule& rule = sparse_rule_for(dev);
    sparse_layout layout;
    layout.work_group_size = rule.work_group_size;
    if (rule.max_lanes <= 1) return layout;
    const double padded = double(rows.longest) * double(rows.rows);
    if (rows.longest <= rule.ell_max_width &&
        padded <= rule.ell_max_padding * double(rows.nonzeros)) {
        layout.format = sparse_format::ell;
        layout.ell_width = rows.longest;
    } else {
        layout.format = sparse_format::csr_vector;
        layout.lanes = lanes_for(rows.mean(), rule.max_lanes);
        layout.long_row =
            std::max<std::size_t>(layout.lanes * rule.long_row_passes, layout.work_group_size);
    }
    return layout;
}

scoped_sparse_layout::scoped_sparse_layout(sparse_layout layout) {
    std::lock_guard lock(override_mutex);
    previous_ = layout_override;
    layout_override = layout;
}

scoped_sparse_layout::~scoped_sparse_layout() {
    std::lock_guard lock(override_mutex);
    layout_override = previous_;
}

}  // namespace kiln::detail
