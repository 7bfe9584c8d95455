// SPDX-License-Identifier: Apache-2.0
// Every GEMM kernel text that the plan writes from the tuning rows, on the device classes the
// tests know, by program key and hash (tests/algo/data/gemm_kernel_texts.txt). A refactor of the
// GEMM module keeps each text, or its commit says why one changed: after a change made on
// purpose, KILN_GEMM_TEXTS_WRITE=1 rewrites the file.
#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <kiln/error.hpp>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "algo/gemm/gemm_float8.hpp"
#include "algo/gemm/gemm_k_major.hpp"
#include "algo/gemm/gemm_plan.hpp"
#include "algo/gemm/gemm_strategies.hpp"
#include "algo/gemm/gemm_warpgroup_layout.hpp"
#include "algo/written_devices.hpp"
#include "backend/fnv1a.hpp"

namespace {

using kiln::detail::gemm_element;
using kiln::detail::gemm_strategy;
using kiln::detail::gemm_types;

const char* const texts_file = KILN_GEMM_TEXTS_FILE;

std::string hash_of(const std::string& text) {
    std::ostringstream out;
    out << std::hex << kiln::detail::fnv1a(text.data(), text.size());
    return out.str();
}

struct device_class {
    std::string name;
    kiln::device_properties props;
};

std::vector<device_class> device_classes() {
    auto nvidia = kiln::test::written_by_hand(kiln::device_type::gpu, "NVIDIA Corporation");
    nvidia.compute_capability_major = 9;
    nvidia.shared_memory_per_block_bytes = 227 * 1024;
    auto hopper_cuda = nvidia;
    hopper_cuda.backend = kiln::backend_kind::cuda;
    hopper_cuda.sub_group_size = 32;
    hopper_cuda.extensions = {"cl_khr_subgroups", "cl_khr_subgroup_ballot",
                              "cl_khr_subgroup_shuffle", "cl_khr_subgroup_shuffle_relative"};
    auto ampere_cuda = hopper_cuda;
    ampere_cuda.compute_capability_major = 8;
    ampere_cuda.shared_memory_per_block_bytes = 163 * 1024;
    auto amd = kiln::test::written_by_hand(kiln::device_type::gpu, "Advanced Micro Devices, Inc.");
    amd.sub_group_size = 64;
    amd.extensions = {"cl_khr_subgroups", "cl_khr_subgroup_ballot",
                      "cl_khr_subgroup_shuffle_relative"};
    auto other_accelerator =
        kiln::test::written_by_hand(kiln::device_type::accelerator, "some vendor");
    return {{"hopper cuda", hopper_cuda},
            {"ampere cuda", ampere_cuda},
            {"hopper opencl", nvidia},
            {"amd gpu", amd},
            {"pocl cpu", kiln::test::written_by_hand(kiln::device_type::cpu, "pocl")},
            {"accelerator", other_accelerator}};
}

// C's type and the inputs', as gemm_types_of makes them (B's where it differs from A's: FP8).
struct element_types {
    gemm_element c, inputs;
    bool tf32 = false;
    std::optional<gemm_element> b_inputs{};
    gemm_types types() const {
        return {inputs, b_inputs.value_or(inputs), c,
                c == gemm_element::f64 ? gemm_element::f64 : gemm_element::f32};
    }
};

// Each kernel's key and text, from every plan of `props` and every choice its run function
// makes from the operands (layouts, vector loads, reproducible products).
class kernel_texts {
  public:
    void add_plans(const kiln::device_properties& props) {
        const element_types kinds[] = {
            {gemm_element::f32, gemm_element::f32},
            {gemm_element::f64, gemm_element::f64},
            {gemm_element::f32, gemm_element::bf16},
            {gemm_element::f32, gemm_element::f16},
            {gemm_element::f16, gemm_element::f16},
            {gemm_element::bf16, gemm_element::bf16},
            {gemm_element::f32, gemm_element::f32, true},
            // FP8 reaches the plans as it is where wgmma takes it (else it is widened first).
            {gemm_element::bf16, gemm_element::e4m3},
            {gemm_element::f32, gemm_element::e5m2},
            {gemm_element::bf16, gemm_element::e4m3, false, gemm_element::e5m2}};
        const gemm_strategy strategies[] = {gemm_strategy::automatic, gemm_strategy::simt,
                                            gemm_strategy::tensor_cores,
                                            gemm_strategy::warpgroup_mma, gemm_strategy::cpu_tiles};
        struct extent {
            std::size_t rows, columns, depth;
        };
        const extent extents[] = {{0, 0, 0}, {4096, 4096, 4096}, {64, 64, 64}, {1000, 3000, 77}};
        for (const element_types& kind : kinds)
            for (const gemm_strategy forced : strategies)
                for (const bool layout : {false, true})
                    for (const extent& e : extents) {
                        kiln::detail::gemm_plan_input input{.element = kind.c,
                                                            .forced = forced,
                                                            .inputs = kind.inputs,
                                                            .allow_tf32 = kind.tf32,
                                                            .tensor_core_layout = layout,
                                                            .rows = e.rows,
                                                            .columns = e.columns,
                                                            .depth = e.depth};
                        kiln::detail::gemm_plan plan;
                        try {
                            plan = kiln::detail::plan_gemm(props, input);
                        } catch (const kiln::invalid_argument_error&) {
                            continue;  // a strategy the device cannot run
                        }
                        if (kiln::detail::is_float8(kind.inputs) &&
                            plan.strategy != gemm_strategy::warpgroup_mma)
                            continue;
                        add_plan(props, plan, kind.types());
                    }
    }

    /// The passes that widen FP8 operands before any of those kernels and round a float product
    /// into an FP8 C after them (gemm_float8.hpp), and that copy TF32 and FP8 operands into the
    /// K-major layout (gemm_k_major.hpp): the same text on every device.
    void add_operand_copies() {
        for (const gemm_element from : {gemm_element::e4m3, gemm_element::e5m2}) {
            for (const gemm_element to : {gemm_element::f32, gemm_element::bf16, gemm_element::f16})
                add_kernel(kiln::detail::gemm_widening_kernel{from, to});
            add_kernel(kiln::detail::gemm_narrowing_kernel{from});
        }
        for (const gemm_element element :
             {gemm_element::f32, gemm_element::e4m3, gemm_element::e5m2})
            for (const bool transposes : {false, true})
                add_kernel(kiln::detail::gemm_k_major_kernel{element, transposes});
    }

    const std::map<std::string, std::string>& hashes() const { return hashes_; }

  private:
    // Plans share most kernels: each key's text is written once.
    template <class Kernel>
    void add_kernel(const Kernel& kernel) {
        const std::string key = kernel.key();
        if (hashes_.contains(key)) return;
        std::string text;
        try {
            text = kernel.source();
        } catch (const kiln::invalid_argument_error& e) {
            text = std::string("refused: ") + e.what();
        }
        hashes_.emplace(key, hash_of(text));
    }

    // As run_simt_gemm, run_cpu_tiles_gemm, run_tensor_core_gemm and run_warpgroup_gemm build
    // their kernels, over every layout and every outcome of the operands' alignment.
    void add_plan(const kiln::device_properties& props, const kiln::detail::gemm_plan& plan,
                  const gemm_types& types) {
        const auto target = kiln::detail::target_features_for(props);
        for (const bool a_transposed : {false, true})
            for (const bool b_transposed : {false, true}) {
                switch (plan.strategy) {
                    case gemm_strategy::simt:
                        add_simt(props, plan.simt, types, a_transposed, b_transposed);
                        break;
                    case gemm_strategy::cpu_tiles:
                        add_kernel(kiln::detail::gemm_cpu_kernel{plan.cpu, types, a_transposed,
                                                                 b_transposed});
                        break;
                    case gemm_strategy::tensor_cores: {
                        kiln::detail::gemm_tensor_kernel kernel{
                            plan.tensor,
                            types,
                            a_transposed,
                            b_transposed,
                            target,
                            types.a == gemm_element::f64 && props.compute_capability_major >= 9};
                        kernel.dynamic_stages =
                            target.vocabulary == kiln::detail::vocabulary_target::cuda_prelude &&
                            kernel.stage_bytes() > props.local_memory_bytes;
                        add_kernel(kernel);
                        break;
                    }
                    case gemm_strategy::warpgroup_mma:
                        // TF32 and FP8 run the K-major layout alone (copies make it).
                        if (!kiln::detail::warpgroup_transposes_inputs(types) &&
                            (a_transposed || !b_transposed))
                            break;
                        add_kernel(kiln::detail::gemm_warpgroup_kernel{plan.warpgroup, types,
                                                                       a_transposed, b_transposed});
                        break;
                    case gemm_strategy::automatic:
                    case gemm_strategy::host_blas:
                        break;
                }
            }
    }

    void add_simt(const kiln::device_properties& props, kiln::detail::gemm_simt_tiles tiles,
                  const gemm_types& types, bool a_transposed, bool b_transposed) {
        const bool floats = types.a == gemm_element::f32 && types.b == gemm_element::f32 &&
                            types.accumulator == gemm_element::f32;
        if (!floats || !kiln::detail::has_nvidia_tensor_cores(props)) tiles.copy_stages = 0;
        for (const bool rounded : {false, true})
            for (const bool a_vectors : {false, true})
                for (const bool b_vectors : {false, true}) {
                    kiln::detail::gemm_simt_kernel kernel{tiles,        types,     a_transposed,
                                                          b_transposed, a_vectors, b_vectors};
                    kernel.rounded_products = rounded;
                    if (tiles.copy_stages > 0)
                        kernel.target = kiln::detail::target_features_for(props);
                    add_kernel(kernel);
                }
    }

    std::map<std::string, std::string> hashes_;
};

std::map<std::string, std::string> read_recorded() {
    std::map<std::string, std::string> recorded;
    std::ifstream in(texts_file);
    std::string line;
    while (std::getline(in, line)) {
        if (line.empty() || line[0] == '#') continue;
        const auto space = line.find(' ');
        recorded.emplace(line.substr(space + 1), line.substr(0, space));
    }
    return recorded;
}

TEST(gemm_kernel_texts, are_the_recorded_ones_on_every_device_class) {
    kernel_texts texts;
    for (const device_class& c : device_classes()) {
        SCOPED_TRACE(c.name);
        texts.add_plans(c.props);
    }
    texts.add_operand_copies();
    const auto& current = texts.hashes();
    // Every family of kernels is reached.
    for (const char* family : {"kiln_gemm_simt", "kiln_gemm_cpu", "kiln_gemm_tensor",
                               "kiln_gemm_warpgroup", "kiln_gemm_widen", "kiln_gemm_k_major"}) {
        const auto from = current.lower_bound(family);
        EXPECT_TRUE(from != current.end() && from->first.starts_with(family)) << family;
    }
    if (std::getenv("KILN_GEMM_TEXTS_WRITE") != nullptr) {
        std::ofstream out(texts_file);
        out << "# tests/algo/gemm_texts_test.cpp: the FNV-1a hash of each GEMM kernel's text, "
               "by program key\n";
        for (const auto& [key, hash] : current) out << hash << ' ' << key << '\n';
        GTEST_SKIP() << "wrote " << current.size() << " hashes to " << texts_file;
    }
    const auto recorded = read_recorded();
    ASSERT_FALSE(recorded.empty()) << "no hashes in " << texts_file;
    std::size_t changed = 0;
    for (const auto& [key, hash] : current) {
        const auto found = recorded.find(key);
        if (found == recorded.end())
            ADD_FAILURE() << "a kernel not recorded: " << key;
        else if (found->second != hash && ++changed <= 20)
            ADD_FAILURE() << "the text of " << key << " changed";
    }
    EXPECT_EQ(changed, 0u) << "kernel texts changed";
    for (const auto& [key, hash] : recorded)
        EXPECT_TRUE(current.contains(key)) << "a recorded kernel no longer written: " << key;
}

}  // namespace
