// SPDX-License-Identifier: Apache-2.0
// The kiln engines: naive, resident, packed, tiled and temporal, four kernels behind one host loop.
//
// Every engine uploads the flags and the temperatures, launches its kernel until the steps are
// done, and reads the temperatures back; the engines differ only in the kernel, the flag words
// it reads and its launch plan, which is why they share one engine class and differ by a row
// of `variants` below. naive alone copies the state to and from the host around every launch,
// as the coursework's first OpenCL version did.
#include "engine_kiln.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <heat_world_kernels.hpp>
#include <kiln/kiln.hpp>
#include <memory>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "huge_pages.hpp"
#include "tool_support.hpp"

namespace kiln::heat {
namespace {

// --- launch plans: tuning as data, picked from the device's properties ----------------------

struct extent {
    std::size_t w;
    std::size_t h;
};

// How one kernel is built and launched. Every kernel is compiled for one work-group shape and
// one number of cells per work-item (-DHEAT_GROUP_W/H, -DHEAT_CELLS_X/Y; see heat_cell.cl): a
// work-group covers a region of group * cells cells, of which the tile it writes is all but
// `halo` cells on every side.
struct launch_plan {
    extent group;
    extent cells;       // cells each work-item computes, across and down
    unsigned halo = 0;  // temporal only: the most steps per launch

    std::size_t region_w() const { return group.w * cells.w; }
    std::size_t region_h() const { return group.h * cells.h; }
    std::size_t tile_w() const { return region_w() - 2 * halo; }
    std::size_t tile_h() const { return region_h() - 2 * halo; }
};

struct device_tuning {
    launch_plan one_cell;  // heat_step and heat_step_packed: one work-item per cell
    launch_plan tiled;
    launch_plan temporal;
};

device_tuning choose_tuning(const kiln::device_properties& device) {
    if (device.type == kiln::device_type::cpu) {
        // PoCL's CPU device runs a work-group as a loop over its work-items and vectorises that
        // loop when it is the innermost one, i.e. when the kernel has no loop and no barrier of
        // its own; wide groups amortise its per-group cost. Measured with PoCL 3.1 on 2 cores
        // of an AMD EPYC (AVX-512), 1000 x 1000 world, 2026-11-21: one_cell 64 x 4 and 1024 x 1
        // ~9.6e8 cell updates/s, 32 x 4, 256 x 1, 128 x 8 6.5e8 to 7.9e8. tiled and temporal
        // have a barrier and loops and reach 1e8 to 2e8 in every shape tried; the best were
        // tiled 128 x 2 groups of 1 x 8 cells (1.7e8), temporal 128 x 2 groups of 1 x 32 cells
        // with halo 8 (1.9e8).
        return {.one_cell = {.group = {64, 4}, .cells = {1, 1}},
                .tiled = {.group = {128, 2}, .cells = {1, 8}},
                .temporal = {.group = {128, 2}, .cells = {1, 32}, .halo = 8}};
    }
    // GPUs. Rows of 32 work-items: one NVIDIA warp, half an AMD wavefront, 128 contiguous bytes
    // per load. Measured on an NVIDIA H100 80GB HBM3 (CUDA backend, 5000^2 and 8192^2 worlds,
    // 1000 steps, copy bandwidth 3.0 TB/s), 2026-11-21:
    // - one_cell 32 x 4: 1.72e11 cell updates/s at 8192^2, ahead of 64 x 4, 128 x 2, 256 x 1
    //   (1.68e11 to 1.70e11), 32 x 8 (1.66e11), 64 x 8, 16 x 16 (1.57e11), 32 x 32 (1.34e11).
    // - tiled 32 x 8 groups of 2 x 4 cells (a 64 x 32 tile), flags as bytes: 2.51e11 at
    //   8192^2, 2.35e11 at 5000^2; 64 x 4 groups within 2%; 2 x 2 cells 15% slower; the same
    //   kernel reading 32-bit flag words 8% to 10% slower; 1 x 8 and 1 x 4 cells 10% slower,
    //   2 x 8 and 4 x 4 cells 20% slower (registers).
    // - temporal: the largest region the work-group's local memory holds twice, halo 4 or 5.
    //   H100, 8192^2 and 16384^2 x 1000 steps, 2026-11-24 (docs/dev/benchmark-notes.md, heat
    //   world): CUDA (80 KiB and more) 64 x 8 groups of 2 x 10 cells, halo 5: 1.55-1.56 times the
    //   bound (2 x 8 cells, halo 4: 1.50); NVIDIA's OpenCL (48 KiB) 32 x 8 groups of 2 x 11
    //   cells (44 KiB), halo 4: 1.52-1.55 (halo 3 and 5 within 2%; 64 x 4 of 2 x 8: 1.46-1.49).
    const std::uint64_t local_bytes =
        std::max(device.local_memory_bytes, device.shared_memory_per_block_bytes);
    const launch_plan temporal = local_bytes >= 80 * 1024
                                     ? launch_plan{.group = {64, 8}, .cells = {2, 10}, .halo = 5}
                                     : launch_plan{.group = {32, 8}, .cells = {2, 11}, .halo = 4};
    return {.one_cell = {.group = {32, 4}, .cells = {1, 1}},
            .tiled = {.group = {32, 8}, .cells = {2, 4}},
            .temporal = temporal};
}

// KILN_HEAT_TEMPORAL_PLAN=GWxGH/CXxCY/HALO (e.g. 64x8/2x8/4) replaces the temporal engine's
// plan on every device, for tuning sweeps (heat_world_bench); a malformed value is an error.
std::optional<launch_plan> temporal_plan_from_environment() {
    const char* text = std::getenv("KILN_HEAT_TEMPORAL_PLAN");
    if (text == nullptr) return std::nullopt;
    launch_plan plan;
    char x1 = 0, slash1 = 0, x2 = 0, slash2 = 0;
    std::istringstream in(text);
    if (!(in >> plan.group.w >> x1 >> plan.group.h >> slash1 >> plan.cells.w >> x2 >>
          plan.cells.h >> slash2 >> plan.halo) ||
        x1 != 'x' || x2 != 'x' || slash1 != '/' || slash2 != '/' || !(in >> std::ws).eof() ||
        plan.group.w * plan.group.h * plan.cells.w * plan.cells.h == 0 || plan.halo == 0)
        throw std::invalid_argument(
            std::string("KILN_HEAT_TEMPORAL_PLAN must read GWxGH/CXxCY/HALO, "
                        "e.g. 64x8/2x8/4, not '") +
            text + "'");
    return plan;
}

device_tuning tuning_for(const kiln::device_properties& device) {
    device_tuning tuning = choose_tuning(device);
    if (const std::optional<launch_plan> plan = temporal_plan_from_environment())
        tuning.temporal = *plan;
    return tuning;
}

// Local memory each kernel needs per work-group, in floats.
std::size_t no_local_memory(const launch_plan&) {
    return 0;
}
std::size_t tiled_local_floats(const launch_plan& plan) {
    return (plan.tile_w() + 2) * (plan.tile_h() + 2);
}
std::size_t temporal_local_floats(const launch_plan& plan) {
    return 2 * plan.region_w() * plan.region_h();
}

// Makes a plan fit the device: the work-group within its limits, the kernel's local memory
// within what a work-group may have, and the halo inside the region.
launch_plan fit_plan(launch_plan plan, const kiln::device_properties& device,
                     std::size_t (*local_floats)(const launch_plan&)) {
    // CUDA devices give local-memory arguments up to their opt-in maximum, beyond the 48 KiB
    // that local_memory_bytes (the limit of local arrays) reports.
    const std::uint64_t local_bytes =
        std::max(device.local_memory_bytes, device.shared_memory_per_block_bytes);
    auto too_big = [&] {
        return plan.group.w * plan.group.h > device.max_work_group_size ||
               plan.group.w > device.max_work_item_sizes[0] ||
               plan.group.h > device.max_work_item_sizes[1] ||
               local_floats(plan) * sizeof(float) > local_bytes;
    };
    while (too_big() && plan.group.w * plan.group.h > 1) {
        if (plan.group.h > 1) {
            plan.group.h /= 2;
        } else {
            plan.group.w /= 2;
        }
    }
    if (too_big())
        throw std::runtime_error("no work-group of the heat-world kernels fits the device");
    if (plan.halo > 0) {
        const std::size_t narrowest = std::min(plan.region_w(), plan.region_h());
        if (narrowest < 3)
            throw std::runtime_error(
                "the device's work-groups are too small for temporal blocking");
        plan.halo = std::min<unsigned>(plan.halo, static_cast<unsigned>((narrowest - 1) / 2));
    }
    return plan;
}

std::size_t groups_to_cover(std::size_t cells, std::size_t cells_per_group) {
    return (cells + cells_per_group - 1) / cells_per_group;
}

// --- the kernels and how each is launched -------------------------------------------------

// The flags a kernel reads: the world's own (0 normal, 1 fixed, 2 insulator), or the packed
// words of pack_neighbour_flags, as 32-bit words or, since they use six bits, as bytes; a byte
// per cell makes a step move 9 bytes per cell update instead of 12.
enum class flag_layout { world, packed_words, packed_bytes };

// One of the two holds the flags, the other is empty.
struct flag_buffers {
    kiln::buffer<std::uint32_t, kiln::in> words;
    kiln::buffer<std::uint8_t, kiln::in> bytes;
};

// Host memory for packed flags, left uninitialised and marked for huge pages: the packing's
// threads then take its page faults in parallel, where zeroing it first on one thread cost more
// than the packing itself (0.8 s for a 16384^2 world's words).
std::unique_ptr<std::uint32_t[]> packing_memory(std::size_t words) {
    auto memory = std::make_unique_for_overwrite<std::uint32_t[]>(words);
    advise_huge_pages(memory.get(), words * sizeof(std::uint32_t));
    return memory;
}

// Packs the flags on every core and starts their upload; the host words live in `staged` until
// the returned event. Writes that return at once go through pinned staging with the copies into
// it spread over several threads (twice a blocking write's speed from ordinary memory), and let
// the temperatures' upload run meanwhile.
kiln::event upload_flags(const kiln::queue& queue, const world_rows& w, flag_layout layout,
                         flag_buffers& flags, std::unique_ptr<std::uint32_t[]>& staged,
                         double& pack_seconds) {
    const stopwatch pack_clock;
    const std::size_t cells = w.cell_count();
    switch (layout) {
        case flag_layout::world:
            flags.words = kiln::buffer<std::uint32_t, kiln::in>(queue, cells);
            return flags.words.write_async(queue, 0, w.flags());
        case flag_layout::packed_words: {
            staged = packing_memory(cells);
            const std::span<std::uint32_t> words(staged.get(), cells);
            pack_neighbour_flags_into(w, words);
            pack_seconds = pack_clock.seconds();
            flags.words = kiln::buffer<std::uint32_t, kiln::in>(queue, cells);
            return flags.words.write_async(queue, 0, std::span<const std::uint32_t>(words));
        }
        case flag_layout::packed_bytes: {
            staged = packing_memory((cells + 3) / 4);
            const std::span<std::uint8_t> bytes(reinterpret_cast<std::uint8_t*>(staged.get()),
                                                cells);
            pack_neighbour_flags_into(w, bytes);
            pack_seconds = pack_clock.seconds();
            flags.bytes = kiln::buffer<std::uint8_t, kiln::in>(queue, cells);
            return flags.bytes.write_async(queue, 0, std::span<const std::uint8_t>(bytes));
        }
    }
    throw std::logic_error("unknown flag layout");
}

// Everything one launch needs. The kernels take the world's size as 32-bit uints (world sizes
// are uint32_t) and index with size_t.
struct step_launch {
    const kiln::queue& queue;
    const kiln::kernel& kernel;
    const launch_plan& plan;
    std::uint32_t width;
    std::uint32_t height;
    float inner;
    float outer;
    const flag_buffers& flags;
    const kiln::buffer<float>& state_in;
    const kiln::buffer<float>& state_out;
    unsigned steps_left;

    kiln::range global() const {
        return {groups_to_cover(width, plan.tile_w()) * plan.group.w,
                groups_to_cover(height, plan.tile_h()) * plan.group.h};
    }
    kiln::range local() const { return {plan.group.w, plan.group.h}; }
};

struct launched {
    kiln::event done;
    unsigned steps;  // steps this launch takes
};

launched launch_one_cell_per_item(const step_launch& s) {
    return {s.kernel(s.width, s.height, s.inner, s.outer, s.flags.words, s.state_in, s.state_out)
                .launch(s.queue, s.global(), s.local()),
            1};
}

launched launch_tiled(const step_launch& s) {
    const kiln::local<float> tile(tiled_local_floats(s.plan));
    return {
        s.kernel(s.width, s.height, s.inner, s.outer, s.flags.bytes, s.state_in, s.state_out, tile)
            .launch(s.queue, s.global(), s.local()),
        1};
}

launched launch_temporal(const step_launch& s) {
    const unsigned steps = std::min(s.plan.halo, s.steps_left);
    const kiln::local<float> region(temporal_local_floats(s.plan));
    return {s.kernel(s.width, s.height, s.inner, s.outer, s.plan.halo, steps, s.flags.words,
                     s.state_in, s.state_out, region)
                .launch(s.queue, s.global(), s.local()),
            steps};
}

struct engine_variant {
    std::string_view name;
    std::string_view summary;
    std::string_view kernel_file;  // built after heat_cell.cl, which every kernel uses
    std::string_view kernel_name;
    launch_plan device_tuning::*plan;
    std::size_t (*local_floats)(const launch_plan&);
    flag_layout flags;
    bool copies_every_step;  // the state goes to the device and back around every launch
    launched (*launch)(const step_launch&);
    // default_rank on a GPU and on a CPU device (nullopt: never the default there).
    std::optional<int> gpu_rank;
    std::optional<int> cpu_rank;
};

// The ranks put the fastest engine first, against threads' 10 (docs/benchmarks.md has the
// tables). On a GPU every kiln engine but naive beats threads by far, in the order temporal
// (2.6e11 cell updates/s on an H100), tiled (2.3e11 to 2.5e11), packed (1.7e11), resident
// (1.3e11); naive (1.5e9) is slower than threads there. On a CPU device the kiln engines share
// the cores that threads uses, so only one that beats threads may rank above it: packed, which
// PoCL vectorises across work-items, ran at 1.08e9 against threads' 4.9e8 on the same 2 cores
// (1000 x 1000 world, 100 steps); resident (3.8e8), naive (2.7e8), tiled (1.8e8) and temporal
// (1.1e8 to 1.9e8) are slower than threads there and are never the default.
const engine_variant variants[] = {
    {.name = "naive",
     .summary = "kiln: one kernel per step, state copied to and from the host every step",
     .kernel_file = "heat_step.cl",
     .kernel_name = "heat_step",
     .plan = &device_tuning::one_cell,
     .local_floats = no_local_memory,
     .flags = flag_layout::world,
     .copies_every_step = true,
     .launch = launch_one_cell_per_item,
     .gpu_rank = std::nullopt,
     .cpu_rank = std::nullopt},
    {.name = "resident",
     .summary = "kiln: state stays on the device, two buffers swapped",
     .kernel_file = "heat_step.cl",
     .kernel_name = "heat_step",
     .plan = &device_tuning::one_cell,
     .local_floats = no_local_memory,
     .flags = flag_layout::world,
     .copies_every_step = false,
     .launch = launch_one_cell_per_item,
     .gpu_rank = 11,
     .cpu_rank = std::nullopt},
    {.name = "packed",
     .summary =
         "kiln: neighbours' insulator bits packed into each flag word, one flag read per cell",
     .kernel_file = "heat_step_packed.cl",
     .kernel_name = "heat_step_packed",
     .plan = &device_tuning::one_cell,
     .local_floats = no_local_memory,
     .flags = flag_layout::packed_words,
     .copies_every_step = false,
     .launch = launch_one_cell_per_item,
     .gpu_rank = 12,
     .cpu_rank = 11},
    {.name = "tiled",
     .summary = "kiln: tiles in local memory, several cells per work-item",
     .kernel_file = "heat_step_tiled.cl",
     .kernel_name = "heat_step_tiled",
     .plan = &device_tuning::tiled,
     .local_floats = tiled_local_floats,
     .flags = flag_layout::packed_bytes,
     .copies_every_step = false,
     .launch = launch_tiled,
     .gpu_rank = 13,
     .cpu_rank = std::nullopt},
    {.name = "temporal",
     .summary = "kiln: several steps per launch, tiles with halos in local memory",
     .kernel_file = "heat_step_temporal.cl",
     .kernel_name = "heat_step_temporal",
     .plan = &device_tuning::temporal,
     .local_floats = temporal_local_floats,
     .flags = flag_layout::packed_words,
     .copies_every_step = false,
     .launch = launch_temporal,
     .gpu_rank = 14,
     .cpu_rank = std::nullopt},
};

// Enough launches queued ahead to hide the host's launch overhead, few enough that progress
// stays current and a long run does not hold thousands of events.
constexpr std::size_t launches_in_flight = 16;

// kiln::select_device's choice, but with the one-line error the tools print: no device matches.
kiln::device choose_device(const engine_options& options) {
    if (options.device.empty()) return kiln::default_device();
    const std::vector<kiln::device> matching =
        kiln::devices(kiln::filters::from_spec(options.device));
    if (!matching.empty()) return matching.front();
    throw std::invalid_argument("no device matches '" + options.device +
                                "' (devices: " + device_list_text() + ")");
}

kiln::kernel build_kernel(const engine_variant& variant, const kiln::device& device,
                          const launch_plan& plan) {
    // Correctly rounded division makes acc / contrib the reference's to the last bit; without
    // it OpenCL allows 2.5 ulp. Devices that cannot round correctly ignore the request.
    std::string options =
        "-cl-fp32-correctly-rounded-divide-sqrt -DHEAT_GROUP_W=" + std::to_string(plan.group.w) +
        " -DHEAT_GROUP_H=" + std::to_string(plan.group.h) +
        " -DHEAT_CELLS_X=" + std::to_string(plan.cells.w) +
        " -DHEAT_CELLS_Y=" + std::to_string(plan.cells.h);
    // NVIDIA's OpenCL compiles to PTX and takes inline PTX: its correctly rounded reciprocal
    // makes the division cheap (heat_cell.cl, heat_divide).
    const kiln::device_properties& props = device.properties();
    if (props.backend == kiln::backend_kind::opencl && props.type == kiln::device_type::gpu &&
        props.vendor.find("NVIDIA") != std::string::npos)
        options += " -DHEAT_PTX_RECIPROCAL";
    else if (std::getenv("KILN_HEAT_RECIPROCAL_DIVISION") != nullptr)
        options += " -DHEAT_RECIPROCAL_BY_DIVISION";
    // The kernels are the ones embedded at build time, never files found at run time. The #line
    // directives make compiler messages name the kernel file, as program::from_files does.
    std::vector<std::string> sources;
    for (std::string_view file : {std::string_view("heat_cell.cl"), variant.kernel_file})
        sources.push_back("#line 1 \"" + std::string(file) + "\"\n" +
                          std::string(kernels::embedded_file(file)));
    kiln::kernel kernel =
        kiln::program(device, std::move(sources), options).kernel(variant.kernel_name);
    if (kernel.max_work_group_size() < plan.group.w * plan.group.h) {
        throw std::runtime_error(std::string(variant.kernel_name) + " cannot run work-groups of " +
                                 std::to_string(plan.group.w) + " x " +
                                 std::to_string(plan.group.h) + " on " + device.name());
    }
    return kernel;
}

// The state of one world on the device between launches: a kiln engine's run() and its
// stepping sessions (step_world --devices and step_world_mpi step, exchange halo rows, and step
// again). `owner`, the world that finish() brings up to date, is the whole of `rows` or, for a
// session on rows of a larger world, none (never for the variant that copies every step, which
// keeps the state in the owner between launches).
class kiln_session final : public stepping_session {
  public:
    kiln_session(const engine_variant& variant, const kiln::queue& queue, const launch_plan& plan,
                 const kiln::kernel& kernel, world* owner, const world_rows& rows, float dt)
        : variant_(variant),
          queue_(queue),
          plan_(plan),
          kernel_(kernel),
          world_(owner),
          width_(rows.source.width),
          height_(rows.rows),
          outer_(rows.source.alpha * dt),
          inner_(1 - outer_ / 4),
          now_(queue, rows.cell_count()),
          next_(queue, rows.cell_count()) {
        allocate_seconds_ = started_.seconds();
        const stopwatch upload_clock;
        const kiln::event temperatures_sent = now_.write_async(queue_, 0, rows.temperatures());
        std::unique_ptr<std::uint32_t[]> staged_flags;
        upload_flags(queue_, rows, variant.flags, flags_, staged_flags, pack_seconds_).wait();
        temperatures_sent.wait();
        upload_seconds_ = upload_clock.seconds() - pack_seconds_;
        uploaded_bytes_ =
            rows.temperatures().size_bytes() + flags_.words.size() * 4 + flags_.bytes.size();
    }

    void step(unsigned steps) override { step(steps, {}); }
    void launch_steps(unsigned steps) override {
        launch(steps, {});
        queue_.flush();
    }
    void finish_steps() override { queue_.finish(); }

    void step(unsigned steps, const progress_callback& progress) {
        launch(steps, progress);
        queue_.finish();
        if (progress) progress(steps);
    }

    // Enqueues the launches of `steps` steps, waiting only to keep launches_in_flight queued.
    void launch(unsigned steps, const progress_callback& progress) {
        // Launches not yet seen complete, with the number of steps done once each has.
        std::deque<std::pair<kiln::event, unsigned>> pending;
        unsigned launched_steps = 0;
        while (launched_steps < steps) {
            if (variant_.copies_every_step) now_.write(queue_, world_->temperatures);
            const launched step = variant_.launch({.queue = queue_,
                                                   .kernel = kernel_,
                                                   .plan = plan_,
                                                   .width = width_,
                                                   .height = height_,
                                                   .inner = inner_,
                                                   .outer = outer_,
                                                   .flags = flags_,
                                                   .state_in = now_,
                                                   .state_out = next_,
                                                   .steps_left = steps - launched_steps});
            launched_steps += step.steps;
            if (variant_.copies_every_step) {
                next_.read(queue_, world_->temperatures, step.done);
            } else {
                std::swap(now_, next_);
            }
            pending.emplace_back(step.done, launched_steps);
            if (pending.size() > launches_in_flight) pending.front().first.wait();
            while (!pending.empty() && pending.front().first.done()) {
                if (progress) progress(pending.front().second);
                pending.pop_front();
            }
        }
    }

    // The variant that copies every step keeps the state in the world between launches.
    void read_rows(std::uint32_t first_row, std::span<float> rows) override {
        const std::size_t offset = std::size_t{first_row} * width_;
        if (variant_.copies_every_step) {
            std::copy_n(world_->temperatures.begin() + static_cast<std::ptrdiff_t>(offset),
                        rows.size(), rows.begin());
        } else if (!rows.empty()) {
            now_.read(queue_, offset, rows);
        }
    }
    void write_rows(std::uint32_t first_row, std::span<const float> rows) override {
        const std::size_t offset = std::size_t{first_row} * width_;
        if (variant_.copies_every_step) {
            std::copy(rows.begin(), rows.end(),
                      world_->temperatures.begin() + static_cast<std::ptrdiff_t>(offset));
        } else if (!rows.empty()) {
            now_.write(queue_, offset, rows);
        }
    }
    halo_move copy_rows_to(std::uint32_t first_row, std::uint32_t rows, stepping_session& target,
                           std::uint32_t target_row) override {
        auto* to = dynamic_cast<kiln_session*>(&target);
        if (to == nullptr || variant_.copies_every_step || to->variant_.copies_every_step)
            return halo_move::host_rows;
        copies_.push_back(now_.copy_to(queue_, std::size_t{first_row} * width_, to->now_,
                                       std::size_t{target_row} * to->width_,
                                       std::size_t{rows} * width_));
        switch (kiln::copy_route_between(queue_.device(), to->queue_.device())) {
            case kiln::copy_route::within_device:
                return halo_move::within_device;
            case kiln::copy_route::peer_to_peer:
                return halo_move::peer_to_peer;
            case kiln::copy_route::staged:
                return halo_move::staged;
        }
        throw std::logic_error("unknown copy route");
    }
    void wait_for_copies() override {
        for (const kiln::event& copy : copies_) copy.wait();
        copies_.clear();
    }
    void finish() override {
        if (world_ != nullptr && !variant_.copies_every_step)
            now_.read(queue_, world_->temperatures);
    }
    std::string start_text() const override {
        char text[200];
        std::snprintf(text, sizeof text,
                      "buffers allocated in %.3f s, flags packed in %.3f s, %.3f GB uploaded in "
                      "%.3f s (%.1f GB/s)",
                      allocate_seconds_, pack_seconds_, static_cast<double>(uploaded_bytes_) / 1e9,
                      upload_seconds_,
                      upload_seconds_ > 0
                          ? static_cast<double>(uploaded_bytes_) / 1e9 / upload_seconds_
                          : 0.0);
        return text;
    }

  private:
    const engine_variant& variant_;
    const kiln::queue& queue_;
    const launch_plan& plan_;
    const kiln::kernel& kernel_;
    world* world_;
    const std::uint32_t width_;
    const std::uint32_t height_;
    const float outer_;  // as the original: outer = alpha * dt, inner = 1 - outer / 4
    const float inner_;
    const stopwatch started_;  // before the buffers, which it times
    flag_buffers flags_;
    kiln::buffer<float> now_;
    kiln::buffer<float> next_;
    std::vector<kiln::event> copies_;  // started by copy_rows_to, not yet waited for
    double allocate_seconds_ = 0;
    double pack_seconds_ = 0;
    double upload_seconds_ = 0;
    std::size_t uploaded_bytes_ = 0;
};

class kiln_engine final : public engine {
  public:
    kiln_engine(const engine_variant& variant, const kiln::device& device)
        : variant_(variant),
          device_(device),
          queue_(device_),
          plan_(fit_plan(tuning_for(device_.properties()).*variant.plan, device_.properties(),
                         variant.local_floats)),
          // Built here rather than in run(), so that step_world fails before reading its input.
          kernel_(build_kernel(variant, device_, plan_)) {}

    std::string_view name() const override { return variant_.name; }

    std::string description() const override {
        std::string text = std::string(variant_.name) + " on " + device_.name() + " (" +
                           std::string(kiln::to_string(device_.backend())) + "), work-groups of " +
                           std::to_string(plan_.group.w) + " x " + std::to_string(plan_.group.h);
        if (plan_.cells.w * plan_.cells.h > 1) {
            text += ", " + std::to_string(plan_.cells.w) + " x " + std::to_string(plan_.cells.h) +
                    " cells each";
        }
        if (plan_.halo > 0) text += ", up to " + std::to_string(plan_.halo) + " steps per launch";
        return text;
    }

    void run(world& w, float dt, unsigned steps, const progress_callback& progress) override {
        check_world(w);
        if (steps == 0) {
            if (progress) progress(0);
            return;
        }
        kiln_session session(variant_, queue_, plan_, kernel_, &w, world_rows{w, 0, w.height}, dt);
        session.step(steps, progress);
        session.finish();
        advance_time(w, dt, steps);
    }

    std::unique_ptr<stepping_session> start(world& w, float dt) override {
        check_world(w);
        return std::make_unique<kiln_session>(variant_, queue_, plan_, kernel_, &w,
                                              world_rows{w, 0, w.height}, dt);
    }

    std::unique_ptr<stepping_session> start_rows(const world_rows& rows, float dt) override {
        if (variant_.copies_every_step) return engine::start_rows(rows, dt);
        return std::make_unique<kiln_session>(variant_, queue_, plan_, kernel_, nullptr, rows, dt);
    }

    const kiln::device* device() const override { return &device_; }

  private:
    const engine_variant& variant_;
    kiln::device device_;
    kiln::queue queue_;
    launch_plan plan_;
    kiln::kernel kernel_;
};

}  // namespace

std::string device_list_text() {
    std::string known;
    for (const kiln::device& device : kiln::devices()) {
        known += (known.empty() ? "" : ", ") + std::to_string(device.index()) + ": " +
                 device.name() + " (" + std::string(kiln::to_string(device.backend())) + ", " +
                 std::string(kiln::to_string(device.type())) + ")";
    }
    return known.empty() ? "none" : known;
}

void register_kiln_engines(engine_registry& registry) {
    for (const engine_variant& variant : variants) {
        registry.add(
            {.name = std::string(variant.name),
             .summary = std::string(variant.summary),
             .uses_device = true,
             .create = [&variant](const engine_options& options) -> std::unique_ptr<engine> {
                 return std::make_unique<kiln_engine>(variant, choose_device(options));
             },
             .default_rank = [&variant](const engine_options& options) -> std::optional<int> {
                 try {
                     return choose_device(options).is_cpu() ? variant.cpu_rank : variant.gpu_rank;
                 } catch (const std::exception&) {
                     return std::nullopt;  // no usable device: leave the default to the host
                 }
             }});
    }
}

}  // namespace kiln::heat
