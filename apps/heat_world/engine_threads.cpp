// SPDX-License-Identifier: Apache-2.0
// The threads engine: the reference step over bands of rows, one band per core, no kiln.
//
// Compiled like the reference (no fast-math, -ffp-contract=off) and doing the same float
// operations in the same order, so its results equal the reference's bit for bit.
#include <algorithm>
#include <barrier>
#include <latch>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>

#include "engine.hpp"

namespace kiln::heat {
namespace {

// Below this many cells a step takes about as long as waking the threads, so one thread does it.
constexpr std::size_t min_cells_for_threads = std::size_t{1} << 15;

struct step_constants {
    const std::uint32_t* packed;  // pack_neighbour_flags: one flag read per cell, no bounds tests
    std::size_t width;
    float inner;
    float outer;
};

void step_cells(const step_constants& c, const float* now, float* next, std::size_t begin,
                std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) {
        const std::uint32_t flags = c.packed[i];
        if (flags & packed_held) {
            next[i] = now[i];
            continue;
        }
        float contrib = c.inner;
        float acc = c.inner * now[i];
        // A blocked bit is set for every neighbour outside the world, so these reads stay inside.
        if (!(flags & packed_up_blocked)) {
            contrib += c.outer;
            acc += c.outer * now[i - c.width];
        }
        if (!(flags & packed_down_blocked)) {
            contrib += c.outer;
            acc += c.outer * now[i + c.width];
        }
        if (!(flags & packed_left_blocked)) {
            contrib += c.outer;
            acc += c.outer * now[i - 1];
        }
        if (!(flags & packed_right_blocked)) {
            contrib += c.outer;
            acc += c.outer * now[i + 1];
        }
        next[i] = std::min(1.0f, std::max(0.0f, acc / contrib));
    }
}

class threads_engine final : public engine {
  public:
    explicit threads_engine(unsigned threads)
        : threads_(threads != 0 ? threads : std::max(1u, std::thread::hardware_concurrency())) {
        if (threads > max_threads) {
            throw std::invalid_argument("the threads engine takes at most " +
                                        std::to_string(max_threads) + " threads, not " +
                                        std::to_string(threads));
        }
    }

    std::string_view name() const override { return "threads"; }

    std::string description() const override {
        return "threads (up to " + std::to_string(threads_) + " threads)";
    }

    void run(world& w, float dt, unsigned steps, const progress_callback& progress) override {
        check_world(w);
        const std::vector<std::uint32_t> packed = pack_neighbour_flags(w);
        const float outer = w.alpha * dt;
        const float inner = 1 - outer / 4;
        const step_constants constants{packed.data(), w.width, inner, outer};
        const std::size_t cells = w.cell_count();
        std::vector<float> spare(cells);
        float* now = w.temperatures.data();
        float* next = spare.data();

        std::size_t bands = std::min<std::size_t>(threads_, w.height);
        if (cells < min_cells_for_threads) bands = 1;

        if (bands <= 1 || steps == 0) {
            for (unsigned step = 0; step < steps; ++step) {
                step_cells(constants, now, next, 0, cells);
                std::swap(now, next);
                if (progress) progress(step + 1);
            }
        } else {
            unsigned steps_done = 0;
            // Runs on one thread once every band has finished a step, before any starts the next.
            auto on_step_done = [&]() noexcept {
                std::swap(now, next);
                ++steps_done;
                if (progress) progress(steps_done);
            };
            std::barrier sync(static_cast<std::ptrdiff_t>(bands), on_step_done);
            auto work = [&](std::size_t band) {
                const std::size_t first_row = w.height * band / bands;
                const std::size_t end_row = w.height * (band + 1) / bands;
                for (unsigned step = 0; step < steps; ++step) {
                    step_cells(constants, now, next, first_row * w.width, end_row * w.width);
                    sync.arrive_and_wait();
                }
            };
            // Helpers wait for every thread to exist, so that a failure to start one cannot
            // leave the others blocked in the barrier for a partner that never comes.
            std::latch started(1);
            bool start_failed = false;
            {
                std::vector<std::jthread> helpers;
                try {
                    helpers.reserve(bands - 1);
                    for (std::size_t band = 1; band < bands; ++band) {
                        try {
                            helpers.emplace_back([&, band] {
                                started.wait();
                                if (!start_failed) work(band);
                            });
                        } catch (const std::system_error& e) {
                            throw std::runtime_error(
                                "the threads engine could not start thread " +
                                std::to_string(band + 1) + " of " + std::to_string(bands) + ": " +
                                e.code().message() +
                                " (a limit on threads or memory was reached; ask for fewer "
                                "threads)");
                        }
                    }
                } catch (...) {
                    start_failed = true;
                    started.count_down();
                    throw;
                }
                started.count_down();
                work(0);
            }  // joins the helpers
        }
        if (now != w.temperatures.data()) w.temperatures.swap(spare);
        advance_time(w, dt, steps);
        if (progress && steps == 0) progress(0);
    }

  private:
    unsigned threads_;
};

}  // namespace

std::unique_ptr<engine> make_threads_engine(unsigned threads) {
    return std::make_unique<threads_engine>(threads);
}

}  // namespace kiln::heat
