// step_world --devices: the row-block stepper over the devices of one process, the halo rows
// copied between the blocks' sessions through the host.
#include "device_blocks.hpp"

#include <algorithm>
#include <exception>
#include <functional>
#include <kiln/runtime/device.hpp>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>

#include "tool_support.hpp"

namespace kiln::heat {
namespace {

// Runs work(0) ... work(count - 1) at once, one thread each, and rethrows the first failure.
void in_parallel(std::size_t count, const std::function<void(std::size_t)>& work) {
    std::vector<std::exception_ptr> failures(count);
    {
        std::vector<std::jthread> threads;
        for (std::size_t b = 0; b < count; ++b) {
            threads.emplace_back([&work, &failures, b] {
                try {
                    work(b);
                } catch (...) {
                    failures[b] = std::current_exception();
                }
            });
        }
    }
    for (const std::exception_ptr& failure : failures)
        if (failure) std::rethrow_exception(failure);
}

class device_blocks final : public block_stepper {
  public:
    device_blocks(std::vector<row_block>& blocks, std::vector<std::unique_ptr<engine>>& engines,
                  float dt)
        : blocks_(blocks), engines_(engines), dt_(dt) {}

    // The devices work at once, one host thread each, since a session's start and step may
    // wait for its device.
    void start() override {
        in_parallel(blocks_.size(), [&](std::size_t b) {
            if (blocks_[b].block_rows > 0) blocks_[b].start(*engines_[b], dt_);
        });
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

    // Each block's halo rows, read from the sessions of the blocks that own them into the
    // block's host part; the block's next step takes them to its device. One thread per source
    // block, so that the devices' reads overlap and no session is read by two threads.
    void exchange() override {
        in_parallel(blocks_.size(), [&](std::size_t s) {
            const row_block& source = blocks_[s];
            if (source.block_rows == 0) return;
            for (row_block& target : blocks_) {
                if (&source == &target || target.block_rows == 0) continue;
                const std::uint32_t part_end = target.part_first_row + target.part.height;
                const std::uint32_t first = std::max(source.block_first_row, target.part_first_row);
                const std::uint32_t end =
                    std::min(source.block_first_row + source.block_rows, part_end);
                if (first >= end) continue;
                const std::size_t width = target.part.width;
                source.session->read_rows(
                    first - source.part_first_row,
                    std::span<float>(target.part.temperatures)
                        .subspan((first - target.part_first_row) * width, (end - first) * width));
            }
        });
    }

  private:
    std::vector<row_block>& blocks_;
    std::vector<std::unique_ptr<engine>>& engines_;
    float dt_;
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
    std::vector<std::unique_ptr<engine>> engines;
    for (const kiln::device& device : devices) {
        engine_options on_device = options;
        on_device.device = std::to_string(device.index());
        engines.push_back(entry.create(on_device));
    }
    return engines;
}

stepping_totals step_on_devices(world& w, std::vector<std::unique_ptr<engine>>& engines, float dt,
                                unsigned steps, unsigned halo_rows,
                                const progress_callback& progress) {
    check_world(w);
    const std::vector<std::uint32_t> starts = even_row_starts(w.height, engines.size());
    // Cutting the blocks, their uploads (in start) and their read-backs each run on all devices
    // at once, so that a second device halves them as well as the stepping.
    const stopwatch cut_clock;
    std::vector<row_block> blocks(engines.size());
    in_parallel(blocks.size(), [&](std::size_t b) {
        blocks[b] = cut_block(w, starts[b], starts[b + 1] - starts[b], halo_rows);
    });
    const double cut_seconds = cut_clock.seconds();
    device_blocks stepper(blocks, engines, dt);
    stepping_totals totals = step_in_rounds(stepper, steps, halo_rows, progress);
    totals.setup_seconds += cut_seconds;
    const stopwatch finish_clock;
    in_parallel(blocks.size(), [&](std::size_t b) {
        row_block& block = blocks[b];
        block.finish();
        const std::span<const float> rows = block.block_temperatures();
        std::copy(rows.begin(), rows.end(),
                  w.temperatures.begin() +
                      static_cast<std::ptrdiff_t>(std::size_t{block.block_first_row} * w.width));
    });
    totals.finish_seconds = finish_clock.seconds();
    advance_time(w, dt, steps);
    return totals;
}

}  // namespace kiln::heat
