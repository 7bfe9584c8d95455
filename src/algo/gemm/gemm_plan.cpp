// SPDX-License-Identifier: Apache-2.0
// The GEMM module's plan (gemm_plan.hpp).
#include "gemm_plan.hpp"

#include <algorithm>
#include <kiln/detail/target_features.hpp>
#include <kiln/error.hpp>
#include <string>

#include "gemm_strategies.hpp"

namespace kiln::detail {
namespace {

bool simt_fits(const gemm_simt_tiles& t, const device_properties& props,
               std::size_t accumulator_bytes) {
    return t.work_group_size() <= props.max_work_group_size &&
           t.work_group_size() <= props.max_work_item_sizes[0] &&
           (props.local_memory_bytes == 0 ||
            t.local_bytes(accumulator_bytes) <= props.local_memory_bytes);
}

}  // namespace

bool has_nvidia_tensor_cores(const device_properties& props) {
    return is_nvidia_gpu(props) && props.compute_capability_major >= 8;
}

bool has_warpgroup_mma(const device_properties& props) {
    return is_nvidia_gpu(props) &&
           target_features_for(props).vocabulary == vocabulary_target::cuda_prelude &&
           props.compute_capability_major == 9 && props.compute_capability_minor == 0;
}

bool gemm_strategy_runs_on(gemm_strategy strategy, const device_properties& props, bool host_blas) {
    switch (strategy) {
        case gemm_strategy::tensor_cores:
            return has_nvidia_tensor_cores(props);
        case gemm_strategy::warpgroup_mma:
            return has_warpgroup_mma(props);
        case gemm_strategy::automatic:
        case gemm_strategy::simt:
        case gemm_strategy::cpu_tiles:
            return true;
        case gemm_strategy::host_blas:
            return host_blas && props.type == device_type::cpu && props.unified_memory;
    }
    return false;
}

gemm_plan plan_gemm(const device_properties& props, const gemm_plan_input& input) {
    const bool is_double = input.element == gemm_element::f64;
    gemm_plan plan;
    plan.tuning = tuning_table<algorithm::gemm_rows>::tuning_for(props, input.tuning);
    const gemm_tuning& tuning = plan.tuning;
    plan.strategy = input.forced != gemm_strategy::automatic ? input.forced : tuning.strategy;
    if (!gemm_strategy_runs_on(plan.strategy, props, input.host_blas)) {
        if (input.forced != gemm_strategy::automatic)
            throw invalid_argument_error(
                "kiln::gemm", std::string(to_string(plan.strategy)) + " cannot run on " +
                                  props.name + " (OpenBLAS " +
                                  (input.host_blas ? "loaded" : "missing or sizes past int") + ")");
        // The CPU rows' choice without OpenBLAS: the kernels written for CPUs.
        plan.strategy = gemm_strategy::cpu_tiles;
    }
    const bool short_depth = !is_double && input.depth != 0 && input.depth <= tuning.short_depth;
    plan.simt = is_double ? tuning.simt_double : short_depth ? tuning.simt_short : tuning.simt;
    const std::size_t accumulator_bytes = is_double ? 8 : 4;
    // A device that cannot hold the row's tiles takes the fallback row's, which every OpenCL
    // device can (256 work-items, 2-4 KiB).
    if (!input.tuning && !simt_fits(plan.simt, props, accumulator_bytes))
        plan.simt = algorithm::gemm_rows::rows().back().tuning.simt;
    // Blocks of at least twice C's rows (columns) leave most work-items idle, as 128x128 blocks do
    // on a batch of 64^3 products: halved with their thread tiles while the kernel can be written.
    const auto shrink = [&](std::size_t gemm_simt_tiles::*block,
                            std::size_t gemm_simt_tiles::*thread, std::size_t extent) {
        while (extent != 0 && plan.simt.*block >= 2 * extent && plan.simt.*thread >= 2) {
            gemm_simt_tiles halved = plan.simt;
            halved.*block /= 2;
            halved.*thread /= 2;
            if (!halved.fits_together()) break;
            plan.simt = halved;
        }
    };
    if (!input.tuning) {
        shrink(&gemm_simt_tiles::block_rows, &gemm_simt_tiles::thread_rows, input.rows);
        shrink(&gemm_simt_tiles::block_columns, &gemm_simt_tiles::thread_columns, input.columns);
    }
    while (plan.simt.work_group_size() > props.max_work_group_size &&
           plan.simt.thread_rows < plan.simt.block_rows)
        plan.simt.thread_rows *= 2;
    if (!plan.simt.fits_together())
        throw invalid_argument_error(
            "kiln::gemm", "SIMT tiles " + plan.simt.key() + " do not divide into whole loads");
    plan.cpu = tuning.cpu;
    // The same register bytes per vector for doubles.
    if (is_double && plan.cpu.vector_width > 1) plan.cpu.vector_width /= 2;
    plan.cpu.work_group_size = std::min(plan.cpu.work_group_size, props.max_work_group_size);
    const bool tf32 =
        input.allow_tf32 && input.element == gemm_element::f32 && input.inputs == gemm_element::f32;
    plan.tensor = is_double ? tuning.tensor_double : tf32 ? tuning.tensor_tf32 : tuning.tensor;
    // Deeper tiles for doubles where the CUDA backend stages them in dynamic local memory: their
    // stages, padded as each layout's fragment reads want, must fit what a work-group may have.
    if (is_double && tuning.tensor_double_deep &&
        target_features_for(props).vocabulary == vocabulary_target::cuda_prelude) {
        const gemm_tensor_tiles& deep = *tuning.tensor_double_deep;
        const gemm_types doubles{gemm_element::f64, gemm_element::f64, gemm_element::f64,
                                 gemm_element::f64};
        std::size_t bytes = 0;
        for (const bool a_transposed : {false, true})
            for (const bool b_transposed : {false, true})
                bytes = std::max(bytes, gemm_tensor_kernel{deep, doubles, a_transposed,
                                                           b_transposed, target_features_for(props)}
                                            .stage_bytes());
        if (bytes <= props.shared_memory_per_block_bytes) plan.tensor = deep;
    }
    // TF32 and FP8 on wgmma: the tile-map kernel alone (one work-item's copies of whole tiles
    // cost the same for every width), its operands copied first where they lie with k outer.
    const bool k_major_inputs = tf32 || is_float8(input.inputs);
    const bool k_major_warpgroup =
        k_major_inputs && has_warpgroup_mma(props) && tuning.warpgroup.tile_maps &&
        tuning.warpgroup.fits_together() &&
        tuning.warpgroup.local_bytes() <= props.shared_memory_per_block_bytes &&
        (plan.strategy == gemm_strategy::warpgroup_mma || input.forced == gemm_strategy::automatic);
    if (k_major_warpgroup) {
        plan.strategy = gemm_strategy::warpgroup_mma;
        plan.warpgroup = tuning.warpgroup;
        plan.k_major_a = !input.a_k_major;
        plan.k_major_b = !input.b_k_major;
    } else if (is_16_bit(input.inputs) || is_double || tf32) {
        // 16-bit inputs, doubles and floats allowed TF32: the tensor cores where the device has
        // them and the layout lets the kernel copy by 16 bytes, else the SIMT kernel (converting
        // 16-bit elements to float).
        const bool tensor = has_nvidia_tensor_cores(props) && input.tensor_core_layout &&
                            (plan.strategy == gemm_strategy::tensor_cores ||
                             plan.strategy == gemm_strategy::warpgroup_mma ||
                             input.forced == gemm_strategy::automatic);
        plan.warpgroup = tuning.warpgroup;
        if (!plan.warpgroup.fits_together())
            throw invalid_argument_error("kiln::gemm", "warpgroup tiles " + plan.warpgroup.key() +
                                                           " are not a shape the kernel takes");
        // wgmma takes 16-bit inputs here; forced for doubles, or for TF32 where the row's tiles
        // are not tile maps, mma.sync runs them.
        const bool warpgroup = tensor && is_16_bit(input.inputs) && has_warpgroup_mma(props) &&
                               plan.strategy != gemm_strategy::tensor_cores &&
                               plan.warpgroup.local_bytes() <= props.shared_memory_per_block_bytes;
        if (warpgroup)
            plan.strategy = gemm_strategy::warpgroup_mma;
        else if (tensor)
            plan.strategy = gemm_strategy::tensor_cores;
        else if (is_16_bit(input.inputs) || plan.strategy == gemm_strategy::tensor_cores ||
                 plan.strategy == gemm_strategy::warpgroup_mma)
            plan.strategy = gemm_strategy::simt;
    } else if (plan.strategy == gemm_strategy::tensor_cores ||
               plan.strategy == gemm_strategy::warpgroup_mma) {
        plan.strategy = gemm_strategy::simt;  // floats stay floats unless TF32 is allowed
    }
    // Tiles the kernels cannot take are refused here, not at their first launch.
    const std::size_t input_bytes = is_16_bit(input.inputs) ? 2 : is_double ? 8 : 4;
    if (plan.strategy == gemm_strategy::tensor_cores && !plan.tensor.fits_together(input_bytes))
        throw invalid_argument_error("kiln::gemm", "tensor-core tiles " + plan.tensor.key() +
                                                       " are not a shape the kernel takes");
    if (plan.strategy == gemm_strategy::cpu_tiles && !plan.cpu.fits_together())
        throw invalid_argument_error(
            "kiln::gemm", "CPU tiles " + plan.cpu.key() + " are not a shape the kernel takes");
    // Copying A (m x k) reads and writes 8 m k bytes for floats, the product does 2 m n k
    // operations: at the H200's 4 TB/s and 40 TFLOP/s the copy costs 2 m k 10^-12 s against
    // m n k 5 10^-14, under 4% from n = 1024 on; and the whole product must outlast the copy's
    // launch (2^32 m n k: about 200 us).
    if (plan.strategy == gemm_strategy::simt && plan.simt.vector_width > 1 &&
        double(input.rows) * double(input.columns) * double(input.depth) >= 0x1p32) {
        plan.align_a = input.a_copy_aligns && input.columns >= 1024;
        plan.align_b = input.b_copy_aligns && input.rows >= 1024;
    }
    return plan;
}

}  // namespace kiln::detail
