// The kiln engines: naive, resident, packed, tiled and temporal, four kernels behind one host loop.
//
// Every engine uploads the flags and the temperatures, launches its kernel until the steps are
// done, and reads the temperatures back; the engines differ only in the kernel, the flag words
// it reads and its launch plan, which is why they share one engine class and differ by a row
// of `variants` below. naive alone copies the state to and from the host around every launch,
// as the coursework's first OpenCL version did.
#include <algorithm>
#include <cstdint>
#include <deque>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <kiln/kiln.hpp>

#include "engine_kiln.hpp"

namespace kiln::heat {
namespace {

// --- launch plans: tuning as data, picked from the device's properties ----------------------

struct extent {
    std::size_t w;
    std::size_t h;
};

// How one kernel is launched. Every kernel is built with -DHEAT_CELLS_X=cells.w
// -DHEAT_CELLS_Y=cells.h; a work-group of `group` work-items covers a region of group * cells
// cells, of which the tile it writes is all but `halo` cells on every side.
struct launch_plan {
    extent group;
    extent cells;        // cells each work-item computes, across and down
    unsigned halo = 0;   // temporal only: the most steps per launch

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
        // its own. Measured on PoCL 3.1, 2 cores of an AMD EPYC (AVX-512), 1000 x 1000 world:
        // one_cell 32 x 4 = 1024 x 1 = 512 x 2 (1.1e9 cell updates/s) > 64 x 4 > 256 x 1 >
        // 128 x 8 (0.85e9). tiled and temporal have barriers and inner loops and reach about
        // 1e8 in every shape tried (32 x 4 to 1024 x 1 groups, 1 to 64 cells per item).
        return {.one_cell = {.group = {32, 4}, .cells = {1, 1}},
                .tiled = {.group = {32, 4}, .cells = {1, 4}},
                .temporal = {.group = {128, 2}, .cells = {1, 32}, .halo = 8}};
    }
    // GPUs: a row of 32 work-items is one warp (NVIDIA) or half a wavefront (AMD) reading 128
    // contiguous bytes; the rest is measured on an NVIDIA H100 (see docs/benchmarks.md).
    return {.one_cell = {.group = {32, 8}, .cells = {1, 1}},
            .tiled = {.group = {32, 8}, .cells = {1, 4}},
            .temporal = {.group = {32, 16}, .cells = {2, 4}, .halo = 4}};
}

// Makes a plan fit this kernel on this device: the group within the kernel's and the device's
// work-group limits, the temporal region in local memory, and the halo inside the region.
// Local memory each kernel needs per work-group, in floats.
std::size_t no_local_memory(const launch_plan&) { return 0; }
std::size_t tiled_local_floats(const launch_plan& plan) { return (plan.tile_w() + 2) * (plan.tile_h() + 2); }
std::size_t temporal_local_floats(const launch_plan& plan) { return 2 * plan.region_w() * plan.region_h(); }

launch_plan fit_plan(launch_plan plan, const kiln::kernel& kernel, const kiln::device_properties& device,
                     std::size_t (*local_floats)(const launch_plan&)) {
    const std::size_t most = std::min(kernel.max_work_group_size(), device.max_work_group_size);
    auto too_big = [&] {
        return plan.group.w * plan.group.h > most || plan.group.w > device.max_work_item_sizes[0] ||
               plan.group.h > device.max_work_item_sizes[1] ||
               local_floats(plan) * sizeof(float) > device.local_memory_bytes;
    };
    while (too_big() && plan.group.w * plan.group.h > 1) {
        if (plan.group.h > 1) {
            plan.group.h /= 2;
        } else {
            plan.group.w /= 2;
        }
    }
    if (too_big()) throw std::runtime_error("no work-group of this kernel fits the device");
    if (plan.halo > 0) {
        const std::size_t narrowest = std::min(plan.region_w(), plan.region_h());
        if (narrowest < 3) throw std::runtime_error("the device's work-groups are too small for temporal blocking");
        plan.halo = std::min<unsigned>(plan.halo, static_cast<unsigned>((narrowest - 1) / 2));
    }
    return plan;
}

std::size_t groups_to_cover(std::size_t cells, std::size_t cells_per_group) {
    return (cells + cells_per_group - 1) / cells_per_group;
}

// --- the kernels and how each is launched -------------------------------------------------

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
    const kiln::buffer<std::uint32_t, kiln::in>& flags;
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
    return {s.kernel(s.width, s.height, s.inner, s.outer, s.flags, s.state_in, s.state_out)
                .launch(s.queue, s.global(), s.local()),
            1};
}

launched launch_tiled(const step_launch& s) {
    const kiln::local<float> tile(tiled_local_floats(s.plan));
    return {s.kernel(s.width, s.height, s.inner, s.outer, s.flags, s.state_in, s.state_out, tile)
                .launch(s.queue, s.global(), s.local()),
            1};
}

launched launch_temporal(const step_launch& s) {
    const unsigned steps = std::min(s.plan.halo, s.steps_left);
    const kiln::local<float> region(temporal_local_floats(s.plan));
    return {s.kernel(s.width, s.height, s.inner, s.outer, s.plan.halo, steps, s.flags, s.state_in, s.state_out,
                     region)
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
    bool packed_flags;       // pack_neighbour_flags words instead of the world's own flags
    bool copies_every_step;  // the state goes to the device and back around every launch
    launched (*launch)(const step_launch&);
    // default_rank on a GPU and on a CPU device; see the measurements in docs/benchmarks.md.
    std::optional<int> gpu_rank;
    std::optional<int> cpu_rank;
};

const engine_variant variants[] = {
    {.name = "naive",
     .summary = "kiln: one kernel per step, state copied to and from the host every step",
     .kernel_file = "heat_step.cl",
     .kernel_name = "heat_step",
     .plan = &device_tuning::one_cell,
     .local_floats = no_local_memory,
     .packed_flags = false,
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
     .packed_flags = false,
     .copies_every_step = false,
     .launch = launch_one_cell_per_item,
     .gpu_rank = 11,
     .cpu_rank = std::nullopt},
    {.name = "packed",
     .summary = "kiln: neighbours' insulator bits packed into each flag word, one flag read per cell",
     .kernel_file = "heat_step_packed.cl",
     .kernel_name = "heat_step_packed",
     .plan = &device_tuning::one_cell,
     .local_floats = no_local_memory,
     .packed_flags = true,
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
     .packed_flags = true,
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
     .packed_flags = true,
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
    const std::vector<kiln::device> matching = kiln::devices(kiln::filters::from_spec(options.device));
    if (!matching.empty()) return matching.front();
    std::string known;
    for (const kiln::device& device : kiln::devices()) {
        known += (known.empty() ? "" : ", ") + std::to_string(device.index()) + ": " + device.name() + " (" +
                 std::string(kiln::to_string(device.backend())) + ", " +
                 std::string(kiln::to_string(device.type())) + ")";
    }
    throw std::invalid_argument("no device matches '" + options.device + "' (devices: " +
                                (known.empty() ? "none" : known) + ")");
}

kiln::kernel build_kernel(const engine_variant& variant, const kiln::device& device, const launch_plan& plan) {
    // Correctly rounded division makes acc / contrib the reference's to the last bit; without
    // it OpenCL allows 2.5 ulp. Devices that cannot round correctly ignore the request.
    const std::string options = "-cl-fp32-correctly-rounded-divide-sqrt -DHEAT_CELLS_X=" +
                                std::to_string(plan.cells.w) + " -DHEAT_CELLS_Y=" + std::to_string(plan.cells.h);
    return kiln::program::from_files(device, {"heat_cell.cl", variant.kernel_file}, options)
        .kernel(variant.kernel_name);
}

class kiln_engine final : public engine {
public:
    kiln_engine(const engine_variant& variant, const kiln::device& device)
        : variant_(variant),
          device_(device),
          queue_(device_),
          plan_(choose_tuning(device_.properties()).*variant.plan),
          // Built here rather than in run(), so that step_world fails before reading its input.
          kernel_(build_kernel(variant, device_, plan_)) {
        plan_ = fit_plan(plan_, kernel_, device_.properties(), variant.local_floats);
    }

    std::string_view name() const override { return variant_.name; }

    std::string description() const override {
        std::string text = std::string(variant_.name) + " on " + device_.name() + " (" +
                           std::string(kiln::to_string(device_.backend())) + "), work-groups of " +
                           std::to_string(plan_.group.w) + " x " + std::to_string(plan_.group.h);
        if (plan_.cells.w * plan_.cells.h > 1) {
            text += ", " + std::to_string(plan_.cells.w) + " x " + std::to_string(plan_.cells.h) + " cells each";
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
        const float outer = w.alpha * dt;
        const float inner = 1 - outer / 4;
        const kiln::buffer<std::uint32_t, kiln::in> flags =
            variant_.packed_flags ? kiln::buffer<std::uint32_t, kiln::in>(queue_, pack_neighbour_flags(w))
                                  : kiln::buffer<std::uint32_t, kiln::in>(queue_, w.flags);
        kiln::buffer<float> now(queue_, w.temperatures);
        kiln::buffer<float> next(queue_, w.cell_count());

        // Launches not yet seen complete, with the number of steps done once each has.
        std::deque<std::pair<kiln::event, unsigned>> pending;
        unsigned launched_steps = 0;
        while (launched_steps < steps) {
            if (variant_.copies_every_step) now.write(queue_, w.temperatures);
            const launched step = variant_.launch({.queue = queue_,
                                                   .kernel = kernel_,
                                                   .plan = plan_,
                                                   .width = w.width,
                                                   .height = w.height,
                                                   .inner = inner,
                                                   .outer = outer,
                                                   .flags = flags,
                                                   .state_in = now,
                                                   .state_out = next,
                                                   .steps_left = steps - launched_steps});
            launched_steps += step.steps;
            if (variant_.copies_every_step) {
                next.read(queue_, w.temperatures, step.done);
            } else {
                std::swap(now, next);
            }
            pending.emplace_back(step.done, launched_steps);
            if (pending.size() > launches_in_flight) pending.front().first.wait();
            while (!pending.empty() && pending.front().first.done()) {
                if (progress) progress(pending.front().second);
                pending.pop_front();
            }
        }
        queue_.finish();
        if (progress) progress(steps);
        if (!variant_.copies_every_step) now.read(queue_, w.temperatures);
        advance_time(w, dt, steps);
    }

private:
    const engine_variant& variant_;
    kiln::device device_;
    kiln::queue queue_;
    launch_plan plan_;
    kiln::kernel kernel_;
};

}  // namespace

void register_kiln_engines(engine_registry& registry) {
    for (const engine_variant& variant : variants) {
        registry.add({.name = std::string(variant.name),
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
