// SPDX-License-Identifier: Apache-2.0
// step_world --devices: the row-block stepper over the devices of one process, the halo rows
// copied between the blocks' sessions by kiln::buffer::copy_to (on one device, peer to peer, or
// staged through pinned host memory), or through the blocks' host rows for host engines.
#include "device_blocks.hpp"

#include <algorithm>
#include <array>
#include <exception>
#include <functional>
#include <kiln/runtime/buffer.hpp>
#include <kiln/runtime/device.hpp>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "parallel.hpp"
#include "tool_support.hpp"

namespace kiln::heat {
namespace {

// Rows [first, end) of the world that `source`'s block owns and `target`'s part holds as halo:
// empty when first >= end.
struct halo_overlap {
    std::uint32_t first;
    std::uint32_t end;
};
halo_overlap overlap(const row_block& source, const row_block& target) {
    return {std::max(source.block_first_row, target.part_first_row),
            std::min(source.block_first_row + source.block_rows,
                     target.part_first_row + target.part_rows)};
}

class device_blocks final : public block_stepper {
  public:
    device_blocks(const world& w, std::vector<row_block>& blocks,
                  std::vector<std::unique_ptr<engine>>& engines, float dt)
        : world_(w), blocks_(blocks), engines_(engines), dt_(dt) {}

    // The devices work at once, one host thread each, since a session's start and step may
    // wait for its device. Each uploads its part straight from the world's arrays.
    void start() override {
        in_parallel(blocks_.size(), [&](std::size_t b) {
            row_block& block = blocks_[b];
            if (block.block_rows > 0)
                block.start(*engines_[b], world_rows{world_, block.part_first_row, block.part_rows},
                            dt_);
        });
        // Asking for the route enables peer access between GPUs where the driver allows it,
        // which maps the other's memory and may take long: setup, not the first exchange's time.
        for (const auto& from : engines_)
            for (const auto& to : engines_)
                if (from->device() != nullptr && to->device() != nullptr)
                    (void)kiln::copy_route_between(*from->device(), *to->device());
    }
    double step(unsigned steps, bool) override {
        in_parallel(blocks_.size(), [&](std::size_t b) {
            if (blocks_[b].block_rows > 0) blocks_[b].step(steps);
        });
        double longest_write = 0;
        for (const row_block& block : blocks_)
            longest_write = std::max(longest_write, block.halo_write_seconds);
        return longest_write;
    }

    // Each block's halo rows from the blocks that own them, one thread per source block so that
    // the devices' copies overlap: device to device where both sessions keep their state on a
    // device (on one device, peer to peer, or staged by copy_to through pinned host memory),
    // else read into the target's host halo rows, which its next step writes; then each source
    // waits for its copies.
    void exchange() override {
        std::vector<std::array<unsigned, 4>> moves(blocks_.size());
        // Which targets' host halo rows each source filled (t, above): the flags are set after
        // the threads end, as a halo deeper than a block is filled by several sources at once.
        std::vector<std::vector<std::pair<std::size_t, bool>>> filled(blocks_.size());
        in_parallel(blocks_.size(), [&](std::size_t s) {
            const row_block& source = blocks_[s];
            if (source.block_rows == 0) return;
            for (std::size_t t = 0; t < blocks_.size(); ++t) {
                row_block& target = blocks_[t];
                if (t == s || target.block_rows == 0) continue;
                const halo_overlap rows = overlap(source, target);
                if (rows.first >= rows.end) continue;
                const halo_move how = source.session->copy_rows_to(
                    rows.first - source.part_first_row, rows.end - rows.first, *target.session,
                    rows.first - target.part_first_row);
                ++moves[s][static_cast<std::size_t>(how)];
                if (how == halo_move::host_rows)
                    filled[s].emplace_back(t, read_into_host_rows(source, target, rows));
            }
            source.session->wait_for_copies();
        });
        for (const auto& targets : filled)
            for (const auto& [t, above] : targets)
                (above ? blocks_[t].rows_above_fresh : blocks_[t].rows_below_fresh) = true;
        for (const auto& counts : moves)
            for (std::size_t how = 0; how < counts.size(); ++how) moves_[how] += counts[how];
    }

    const std::array<unsigned, 4>& moves() const { return moves_; }

  private:
    /// Reads the rows into the target's host halo rows; returns whether they lie above its block.
    bool read_into_host_rows(const row_block& source, row_block& target, halo_overlap rows) {
        const bool above = rows.first < target.block_first_row;
        const std::span<float> halo = above ? target.halo_above() : target.halo_below();
        const std::uint32_t halo_first_row =
            above ? target.part_first_row : target.block_first_row + target.block_rows;
        source.session->read_rows(
            rows.first - source.part_first_row,
            halo.subspan(std::size_t{rows.first - halo_first_row} * world_.width,
                         std::size_t{rows.end - rows.first} * world_.width));
        return above;
    }

    const world& world_;
    std::vector<row_block>& blocks_;
    std::vector<std::unique_ptr<engine>>& engines_;
    float dt_;
    std::array<unsigned, 4> moves_{};  // by halo_move
};

}  // namespace

std::vector<kiln::device> parse_device_list(std::string_view list) {
    std::vector<kiln::device> chosen;
    for (std::size_t start = 0; start <= list.size();) {
        const std::size_t comma = std::min(list.find(',', start), list.size());
        const std::string term(list.substr(start, comma - start));
        start = comma + 1;
        if (term.empty())
            throw std::invalid_argument("--devices needs comma-separated device specs, got '" +
                                        std::string(list) + "'");
        std::vector<kiln::device> matching = kiln::devices(kiln::filters::from_spec(term));
        if (matching.empty())
            throw std::invalid_argument("--devices: no device matches '" + term + "'");
        // A GPU is seen once per backend (CUDA and NVIDIA's OpenCL): keep the default's only.
        const kiln::backend_kind preferred = kiln::default_device().backend();
        if (std::any_of(matching.begin(), matching.end(),
                        [&](const kiln::device& d) { return d.backend() == preferred; }))
            std::erase_if(matching,
                          [&](const kiln::device& d) { return d.backend() != preferred; });
        chosen.insert(chosen.end(), matching.begin(), matching.end());
    }
    return chosen;
}

std::vector<std::unique_ptr<engine>> make_device_engines(const engine_entry& entry,
                                                         const engine_options& options,
                                                         const std::vector<kiln::device>& devices) {
    // At once, one thread per device: each creates its driver's context and builds its kernel.
    std::vector<std::unique_ptr<engine>> engines(devices.size());
    in_parallel(devices.size(), [&](std::size_t d) {
        engine_options on_device = options;
        on_device.device = std::to_string(devices[d].index());
        engines[d] = entry.create(on_device);
    });
    return engines;
}

stepping_totals step_on_devices(world& w, std::vector<std::unique_ptr<engine>>& engines, float dt,
                                unsigned steps, unsigned halo_rows,
                                const progress_callback& progress) {
    check_world(w);
    const std::vector<std::uint32_t> starts = even_row_starts(w.height, engines.size());
    std::vector<row_block> blocks;
    for (std::size_t b = 0; b < engines.size(); ++b)
        blocks.push_back(
            plan_block(w.width, w.height, starts[b], starts[b + 1] - starts[b], halo_rows));
    device_blocks stepper(w, blocks, engines, dt);
    stepping_totals totals = step_in_rounds(stepper, steps, halo_rows, progress);
    totals.moves = stepper.moves();
    totals.first_start_text = blocks.front().start_text;
    // Every device reads its block straight into the world's rows, all at once.
    const stopwatch finish_clock;
    in_parallel(blocks.size(), [&](std::size_t b) {
        row_block& block = blocks[b];
        block.read_back(
            std::span<float>(w.temperatures)
                .subspan(std::size_t{block.block_first_row} * w.width, block.block_cells()));
    });
    totals.finish_seconds = finish_clock.seconds();
    advance_time(w, dt, steps);
    return totals;
}

}  // namespace kiln::heat
