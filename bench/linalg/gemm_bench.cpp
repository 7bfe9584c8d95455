// SPDX-License-Identifier: Apache-2.0
// kiln::gemm beside cuBLAS (GPUs) and OpenBLAS (CPUs) on the same shapes, in one process.
//
//     gemm_bench [work...]      (every work of bench/linalg/gemm_workloads.hpp by default)
//
// On each device kiln sees: GPUs run the GPU works (SGEMM 4096^3 and 8192^3, DGEMM 4096^3, odd
// shapes, a batch of 4096 64^3 products; bf16 and fp16 inputs with a float C, 4096^3 and 8192^3,
// beside cublasGemmEx; bf16 in and out, plain and with bias and ReLU in the epilogue, beside
// cublasLtMatmul and beside each other; E4M3 inputs with a bf16 C beside cublasLtMatmul's FP8
// product, which compute capability 8.9 and later have, as the plan runs them and with FP8 fast
// accumulation allowed) beside cuBLAS
// (bench/linalg/cublas_gemm_reference.cu, run by this program where it was built; TF32 off on both
// sides but for tf32_4096 and tf32_8192, which allow it on both sides); CPUs run SGEMM 2048^3
// through the plan's choice and each CPU strategy forced, beside OpenBLAS called directly on as
// many threads as the device has compute units. Prints one markdown table: TFLOP/s (2 m n k per
// product, best of batches of back-to-back products, wall clock) and the ratio to the reference. On
// GPUs SGEMM and DGEMM 4096^3 and the batch run again under SIMT tiles, forced, so that one run
// tells which tiles suit the device: every tuning row's and the bench's candidates, or only those
// KILN_GEMM_BENCH_TILES lists ("128x128x16 t8x8 v4 r4;64x64x8 t4x4 v2", as keys print), which run
// on every float and double work named.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <kiln/kiln.hpp>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "algo/gemm/gemm_plan.hpp"
#include "gemm_workloads.hpp"
#include "ratio_rows.hpp"
#include "report_start.hpp"
#include "timing.hpp"

#ifdef KILN_GEMM_BENCH_OPENBLAS
#include <cblas.h>
extern "C" void openblas_set_num_threads(int);
#endif

namespace {

using gemm_workloads::workload;
using kiln::detail::gemm_strategy;

/// cuBLAS's seconds per work, from the reference program's `cublas <work> <s>` lines.
std::map<std::string, double> cublas_reference(const std::vector<workload>& works) {
    std::map<std::string, double> times;
#ifdef KILN_GEMM_CUBLAS_REFERENCE
    std::string command = KILN_GEMM_CUBLAS_REFERENCE;
    for (const workload& w : works) command += " " + w.name;
    if (FILE* pipe = popen(command.c_str(), "r")) {
        char name[64];
        double seconds = 0;
        while (std::fscanf(pipe, "cublas %63s %lf\n", name, &seconds) == 2) times[name] = seconds;
        pclose(pipe);
    }
#else
    (void)works;
#endif
    return times;
}

/// Best seconds per call of `work`: batches of as many calls as fill about a quarter second.
template <class Work>
double time_calls(const kiln::queue& q, Work&& work) {
    const double once = kiln::bench::best_seconds_per_call(q, 1, 1, work);
    const int calls = int(std::clamp(0.25 / std::max(once, 1e-6), 1.0, 50.0));
    return kiln::bench::best_seconds_per_call(q, 3, calls, work);
}

template <class T>
double time_kiln(const kiln::queue& q, const workload& w, bool allow_tf32 = false) {
    const kiln::matrix<T> a(q, w.m, w.k, w.batch,
                            gemm_workloads::values<T>(w.m * w.k * w.batch, 1));
    const kiln::matrix<T> b(q, w.k, w.n, w.batch,
                            gemm_workloads::values<T>(w.k * w.n * w.batch, 2));
    const kiln::matrix<T> c(q, w.m, w.n, w.batch);
    return time_calls(q, [&] {
        if (w.batch > 1)
            kiln::gemm_batched(c, a, b);
        else
            kiln::gemm(c, a, b, {.allow_tf32 = allow_tf32});
    });
}

/// 16-bit inputs of `Input`, a float C.
template <class Input>
double time_kiln_binary16(const kiln::queue& q, const workload& w) {
    const kiln::matrix<Input> a(q, w.m, w.k, gemm_workloads::values<Input>(w.m * w.k, 1));
    const kiln::matrix<Input> b(q, w.k, w.n, gemm_workloads::values<Input>(w.k * w.n, 2));
    const kiln::matrix<float> c(q, w.m, w.n);
    return time_calls(q, [&] { kiln::gemm(c, a, b); });
}

/// bf16 inputs and output, plain or with a bias per column and the ReLU in the epilogue.
double time_kiln_bf16_out(const kiln::queue& q, const workload& w) {
    using kiln::bfloat16;
    const kiln::matrix<bfloat16> a(q, w.m, w.k, gemm_workloads::values<bfloat16>(w.m * w.k, 1));
    const kiln::matrix<bfloat16> b(q, w.k, w.n, gemm_workloads::values<bfloat16>(w.k * w.n, 2));
    const kiln::matrix<bfloat16> c(q, w.m, w.n);
    const kiln::vector<float> bias(q, gemm_workloads::values<float>(w.n, 3));
    if (w.inputs == gemm_workloads::inputs::bf16_out)
        return time_calls(q, [&] { kiln::gemm(c, a, b); });
    return time_calls(q, [&] {
        kiln::gemm(c, a, b, {},
                   KILN_LAMBDA((float value, kiln::uint row, kiln::uint column), (bias), {
                       (void)row;
                       return fmax(value + bias[column], 0.0f);
                   }));
    });
}

/// E4M3 A (m x k) and B read transposed from n x k, a bf16 C: cuBLASLt's FP8 layout; with `fast`,
/// on FP8 tensor cores where the device has them (allow_float8_fast_accumulation).
double time_kiln_e4m3(const kiln::queue& q, const workload& w, bool fast = false) {
    using kiln::float8_e4m3;
    const kiln::matrix<float8_e4m3> a(q, w.m, w.k,
                                      gemm_workloads::values<float8_e4m3>(w.m * w.k, 1));
    const kiln::matrix<float8_e4m3> bt(q, w.n, w.k,
                                       gemm_workloads::values<float8_e4m3>(w.n * w.k, 2));
    const kiln::matrix<kiln::bfloat16> c(q, w.m, w.n);
    return time_calls(q, [&] {
        kiln::gemm(c, a, kiln::transposed(bt), {.allow_float8_fast_accumulation = fast});
    });
}

double time_kiln(const kiln::queue& q, const workload& w) {
    switch (w.inputs) {
        case gemm_workloads::inputs::e4m3_bf16_out:
            return time_kiln_e4m3(q, w);
        case gemm_workloads::inputs::bf16_out:
        case gemm_workloads::inputs::bf16_bias_relu:
            return time_kiln_bf16_out(q, w);
        case gemm_workloads::inputs::bf16:
            return time_kiln_binary16<kiln::bfloat16>(q, w);
        case gemm_workloads::inputs::f16:
            return time_kiln_binary16<kiln::half>(q, w);
        case gemm_workloads::inputs::tf32:
            return time_kiln<float>(q, w, true);
        case gemm_workloads::inputs::as_output:
            break;
    }
    return w.double_precision ? time_kiln<double>(q, w) : time_kiln<float>(q, w);
}

/// OpenBLAS on host arrays, on `threads` threads; 0 where it was not linked.
double time_openblas(const workload& w, unsigned threads) {
#ifdef KILN_GEMM_BENCH_OPENBLAS
    openblas_set_num_threads(int(threads));
    const auto a = gemm_workloads::values<float>(w.m * w.k, 1),
               b = gemm_workloads::values<float>(w.k * w.n, 2);
    std::vector<float> c(w.m * w.n);
    const auto multiply = [&] {
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, int(w.m), int(w.n), int(w.k), 1.0f,
                    a.data(), int(w.k), b.data(), int(w.n), 0.0f, c.data(), int(w.n));
    };
    multiply();
    return kiln::bench::best_host_seconds(3, multiply);
#else
    (void)w, (void)threads;
    return 0;
#endif
}

void row(const std::string& device, const workload& w, const std::string& strategy, double seconds,
         double reference, const char* reference_name) {
    std::printf("| %s | %s | %s | %.3f | ", device.c_str(), w.name.c_str(), strategy.c_str(),
                w.flops() / seconds / 1e12);
    if (reference > 0) {
        std::printf("%s %.3f | %.2fx |\n", reference_name, w.flops() / reference / 1e12,
                    reference / seconds);
        kiln::bench::record_ratio(w.name + ", " + strategy, reference / seconds,
                                  kiln::bench::measure::speed, reference_name);
    } else
        std::printf("%s missing | |\n", reference_name);
    std::fflush(stdout);
}

/// The tensor-core tiles KILN_GEMM_BENCH_TENSOR_TILES lists ("128x128x8 w64x32 s2;..."), forced
/// on DGEMM and the 16-bit products at 4096^3; none without it.
std::vector<kiln::detail::gemm_tensor_tiles> tensor_tiles_to_sweep() {
    std::vector<kiln::detail::gemm_tensor_tiles> sweep;
    if (const char* listed = std::getenv("KILN_GEMM_BENCH_TENSOR_TILES")) {
        std::stringstream keys(listed);
        for (std::string key; std::getline(keys, key, ';');) {
            if (const auto t = kiln::detail::parse_gemm_tensor_tiles(key))
                sweep.push_back(*t);
            else
                std::fprintf(stderr, "gemm_bench: KILN_GEMM_BENCH_TENSOR_TILES: no tiles in '%s'\n",
                             key.c_str());
        }
    }
    return sweep;
}

/// The warpgroup tiles KILN_GEMM_BENCH_WARPGROUP_TILES lists ("256x128 s4 tma;256x128 s4;..."),
/// forced on the 16-bit, TF32 and FP8 (fast accumulation) products; none without it.
std::vector<kiln::detail::gemm_warpgroup_tiles> warpgroup_tiles_to_sweep() {
    std::vector<kiln::detail::gemm_warpgroup_tiles> sweep;
    if (const char* listed = std::getenv("KILN_GEMM_BENCH_WARPGROUP_TILES")) {
        std::stringstream keys(listed);
        for (std::string key; std::getline(keys, key, ';');) {
            const auto t = kiln::detail::parse_gemm_warpgroup_tiles(key);
            if (t && t->fits_together())
                sweep.push_back(*t);
            else
                std::fprintf(stderr,
                             "gemm_bench: KILN_GEMM_BENCH_WARPGROUP_TILES: no tiles in '%s'\n",
                             key.c_str());
        }
    }
    return sweep;
}

/// Shapes beyond the rows', after the worklogs: deeper k tiles, 128x256 blocks (staged in
/// registers, and copied by cp.async on NVIDIA GPUs), 64x64 blocks for the batch's 64^3 products,
/// and DGEMM shapes of 16-32 doubles per thread.
constexpr const char* candidate_tiles[] = {
    "128x128x16 t8x8 v4 r4",    "128x256x8 t8x16 v4 r4",    "256x128x8 t16x8 v4 r4",
    "256x128x8 t16x8 v4 s3 r4", "128x128x16 t8x8 v4 s2 r4", "128x64x16 t8x4 v4 r4",
    "64x128x16 t4x8 v4 r4",     "64x64x16 t4x4 v4 r4",      "64x64x8 t8x8 v4 r4",
    "64x64x16 t8x8 v4 r4",      "64x64x8 t8x4 v4 r4",       "64x64x16 t4x4 v2",
    "128x64x8 t8x4 v2 r4",      "64x128x8 t4x8 v2 r4",      "128x64x16 t8x4 v2 r4",
    "64x64x8 t8x4 v2 r4",       "128x128x8 t8x8 v2 r4"};

/// The tiles to force: KILN_GEMM_BENCH_TILES's, else each row's (float and double, local reads
/// either way where the thread tiles allow both) and the candidates, each once.
std::vector<kiln::detail::gemm_simt_tiles> tiles_to_sweep() {
    std::vector<kiln::detail::gemm_simt_tiles> sweep;
    const auto add = [&](const kiln::detail::gemm_simt_tiles& t) {
        if (!t.fits_together()) return;
        for (const auto& seen : sweep)
            if (seen.key() == t.key()) return;
        sweep.push_back(t);
    };
    if (const char* listed = std::getenv("KILN_GEMM_BENCH_TILES")) {
        std::stringstream keys(listed);
        for (std::string key; std::getline(keys, key, ';');) {
            if (const auto t = kiln::detail::parse_gemm_simt_tiles(key))
                add(*t);
            else
                std::fprintf(stderr, "gemm_bench: KILN_GEMM_BENCH_TILES: no tiles in '%s'\n",
                             key.c_str());
        }
        return sweep;
    }
    for (const auto& tuning_row : kiln::detail::algorithm::gemm_rows::rows())
        for (kiln::detail::gemm_simt_tiles t :
             {tuning_row.tuning.simt, tuning_row.tuning.simt_double})
            for (int flip = 0; flip < 2; ++flip, t.vector_reads = !t.vector_reads) add(t);
    for (const char* key : candidate_tiles) add(*kiln::detail::parse_gemm_simt_tiles(key));
    return sweep;
}

/// A row of `w` under `strategy` and `tiles`, forced in the device's row's tuning; a failure
/// (tiles the device cannot take) is a row too.
template <class Tiles>
void forced_row(const kiln::queue& q, const std::string& device, const workload& w,
                gemm_strategy strategy, const std::string& name, const Tiles& tiles,
                double reference, bool float8_fast_accumulation = false) {
    const kiln::detail::scoped_gemm_strategy forced_strategy(strategy);
    const kiln::detail::gemm_tuning device_row =
        kiln::detail::tuning_table<kiln::detail::algorithm::gemm_rows>::tuning_for(
            q.device().properties(), std::nullopt);
    const kiln::detail::scoped_algorithm_policy forced(
        kiln::detail::algorithm::gemm, kiln::detail::gemm_tuning_with(device_row, tiles));
    try {
        const double seconds =
            float8_fast_accumulation ? time_kiln_e4m3(q, w, true) : time_kiln(q, w);
        row(device, w, name + " " + tiles.key(), seconds, reference,
            float8_fast_accumulation ? "cuBLASLt" : "cuBLAS");
    } catch (const std::exception& e) {
        std::printf("| %s | %s | %s %s | failed: %s | | |\n", device.c_str(), w.name.c_str(),
                    name.c_str(), tiles.key().c_str(), e.what());
    }
}

bool wanted(const std::vector<std::string>& names, const workload& w) {
    return names.empty() || std::find(names.begin(), names.end(), w.name) != names.end();
}

}  // namespace

int main(int argc, char** argv) {
    const std::vector<std::string> names(argv + 1, argv + argc);
    std::vector<workload> gpu_works, cpu_works;
    for (const workload& w : gemm_workloads::gpu_workloads())
        if (wanted(names, w)) gpu_works.push_back(w);
    for (const workload& w : gemm_workloads::binary16_workloads())
        if (wanted(names, w)) gpu_works.push_back(w);
    for (const workload& w : gemm_workloads::epilogue_workloads())
        if (wanted(names, w)) gpu_works.push_back(w);
    for (const workload& w : gemm_workloads::float8_workloads())
        if (wanted(names, w)) gpu_works.push_back(w);
    for (const workload& w : gemm_workloads::cpu_workloads())
        if (wanted(names, w)) cpu_works.push_back(w);
    std::vector<kiln::device> devices;
    try {
        devices = kiln::bench::devices_chosen();
    } catch (const std::exception& e) {
        std::fprintf(stderr, "gemm_bench: %s\n", e.what());
        return 1;
    }
    const std::vector<kiln::detail::gemm_simt_tiles> sweep = tiles_to_sweep();
    const std::vector<kiln::detail::gemm_tensor_tiles> tensor_sweep = tensor_tiles_to_sweep();
    const std::vector<kiln::detail::gemm_warpgroup_tiles> warpgroup_sweep =
        warpgroup_tiles_to_sweep();
    bool any_gpu = false;
    for (const kiln::device& dev : devices)
        any_gpu = any_gpu || dev.properties().type == kiln::device_type::gpu;
    const std::map<std::string, double> cublas = any_gpu && !gpu_works.empty()
                                                     ? cublas_reference(gpu_works)
                                                     : std::map<std::string, double>{};

    std::printf(
        "| device | work | kiln strategy | kiln TFLOP/s | reference TFLOP/s | kiln / "
        "reference |\n|---|---|---|---|---|---|\n");
    for (const kiln::device& dev : devices) {
        const kiln::queue q(dev);
        kiln::bench::record_rows_of(dev, "GEMM");
        const std::string device =
            dev.name() + " (" + std::string(kiln::to_string(dev.backend())) + ")";
        if (dev.properties().type == kiln::device_type::gpu) {
            double plain_bf16_out = 0;
            for (const workload& w : gpu_works) {
                if (w.double_precision && !dev.properties().double_precision) continue;
                const auto found = cublas.find(w.name);
                const double reference = found == cublas.end() ? 0 : found->second;
                const double seconds = time_kiln(q, w);
                row(device, w, "plan", seconds, reference,
                    w.inputs == gemm_workloads::inputs::bf16_out ||
                            w.inputs == gemm_workloads::inputs::bf16_bias_relu ||
                            w.inputs == gemm_workloads::inputs::e4m3_bf16_out
                        ? "cuBLASLt"
                        : "cuBLAS");
                if (w.inputs == gemm_workloads::inputs::e4m3_bf16_out)
                    row(device, w, "plan, FP8 fast accumulation", time_kiln_e4m3(q, w, true),
                        reference, "cuBLASLt");
                // The epilogue's cost: its product beside the plain one, timed in this run.
                if (w.inputs == gemm_workloads::inputs::bf16_out) plain_bf16_out = seconds;
                if (w.inputs == gemm_workloads::inputs::bf16_bias_relu && plain_bf16_out > 0)
                    row(device, w, "plan, against kiln's plain bf16_out_4096", seconds,
                        plain_bf16_out, "kiln plain");
                if (w.name == "dgemm_4096" || w.name == "bf16_4096" || w.name == "f16_4096" ||
                    w.inputs == gemm_workloads::inputs::tf32)
                    for (const kiln::detail::gemm_tensor_tiles& tiles : tensor_sweep)
                        forced_row(q, device, w, gemm_strategy::tensor_cores, "tensor", tiles,
                                   reference);
                const bool float8 = w.inputs == gemm_workloads::inputs::e4m3_bf16_out;
                if (w.name.starts_with("bf16_") || w.name.starts_with("f16_") ||
                    w.name.starts_with("tf32_") || float8)
                    for (const kiln::detail::gemm_warpgroup_tiles& tiles : warpgroup_sweep)
                        forced_row(q, device, w, gemm_strategy::warpgroup_mma,
                                   float8 ? "warpgroup, FP8 fast accumulation" : "warpgroup", tiles,
                                   reference, float8);
                // Listed tiles run on every work named; the default sweep on three of them.
                if (std::getenv("KILN_GEMM_BENCH_TILES") == nullptr && w.name != "sgemm_4096" &&
                    w.name != "dgemm_4096" && w.name != "sgemm_batched_4096x64")
                    continue;
                if (w.inputs != gemm_workloads::inputs::as_output) continue;
                const std::size_t element_bytes = w.double_precision ? 8 : 4;
                for (const kiln::detail::gemm_simt_tiles& tiles : sweep) {
                    const std::size_t local_bytes = tiles.local_bytes(element_bytes);
                    if (tiles.work_group_size() > dev.properties().max_work_group_size ||
                        (dev.properties().local_memory_bytes != 0 &&
                         local_bytes > dev.properties().local_memory_bytes))
                        continue;
                    forced_row(q, device, w, gemm_strategy::simt, "simt", tiles, reference);
                }
            }
            continue;
        }
        for (const workload& w : cpu_works) {
            const double openblas = time_openblas(w, std::max(1u, dev.properties().compute_units));
            row(device, w, "plan", time_kiln(q, w), openblas, "OpenBLAS");
            // The strategies for CPUs, each forced (SIMT's barriers cost PoCL seconds here).
            for (gemm_strategy s : kiln::detail::gemm_strategies_for(dev)) {
                if (s == gemm_strategy::simt) continue;
                const kiln::detail::scoped_gemm_strategy forced(s);
                row(device, w, std::string(kiln::detail::to_string(s)), time_kiln(q, w), openblas,
                    "OpenBLAS");
            }
        }
    }
    return 0;
}
