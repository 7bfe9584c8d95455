// SPDX-License-Identifier: Apache-2.0
// Build-option parsing and the NVRTC compile of translated OpenCL C.
#include "backend/cuda/nvrtc_compiler.hpp"

#include <algorithm>
#include <cstring>
#include <optional>
#include <string_view>

#include "backend/cuda/cuda_api.hpp"
#include "backend/cuda/cuda_error.hpp"
#include "backend/cuda/cuda_handles.hpp"
#include "backend/cuda/opencl_c_prelude.hpp"

namespace kiln::detail::cuda {

namespace {

/// Splits like a shell would for simple cases: whitespace separates, quotes group.
std::vector<std::string> split_options(const std::string& text) {
    std::vector<std::string> words;
    std::string word;
    bool in_word = false;
    char quote = 0;
    for (char c : text) {
        if (quote != 0) {
            if (c == quote)
                quote = 0;
            else
                word += c;
        } else if (c == '"' || c == '\'') {
            quote = c;
            in_word = true;
        } else if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
            if (in_word) words.push_back(std::move(word));
            word.clear();
            in_word = false;
        } else {
            word += c;
            in_word = true;
        }
    }
    if (in_word) words.push_back(std::move(word));
    return words;
}

[[noreturn]] void reject_option(const std::string& option, const std::string& why) {
    throw build_error(
        "kiln CUDA build options", NVRTC_ERROR_INVALID_OPTION, "NVRTC_ERROR_INVALID_OPTION",
        "build option '" + option + "' " + why +
            "\nThe CUDA backend accepts -D, -I, -w, -Werror, -g, -cl-std=CL1.0..CL3.0, "
            "-cl-fast-relaxed-math, -cl-mad-enable, -cl-unsafe-math-optimizations, "
            "-cl-finite-math-only, -cl-no-signed-zeros, -cl-denorms-are-zero, "
            "-cl-single-precision-constant, -cl-fp32-correctly-rounded-divide-sqrt, "
            "-cl-opt-disable, -cl-kernel-arg-info, -cl-strict-aliasing, "
            "-cl-uniform-work-group-size, -cl-no-subgroup-ifp and NVIDIA's "
            "-cl-nv-maxrregcount N (see docs/cuda.md).\n");
}

/// The value of "-Dx" / "-D x" style options; advances `i` past a separate value.
std::string option_value(const std::vector<std::string>& words, std::size_t& i,
                         std::size_t prefix) {
    if (words[i].size() > prefix) return words[i].substr(prefix);
    if (i + 1 >= words.size()) reject_option(words[i], "needs a value");
    return words[++i];
}

std::string read_log(nvrtcProgram program) {
    std::size_t size = 0;
    if (nvrtc()->nvrtcGetProgramLogSize(program, &size) != NVRTC_SUCCESS || size <= 1) return {};
    std::string log(size, '\0');
    if (nvrtc()->nvrtcGetProgramLog(program, log.data()) != NVRTC_SUCCESS) return {};
    log.resize(std::strlen(log.c_str()));
    return log;
}

const nvrtc_api& loaded_nvrtc() {
    const auto* api = nvrtc();
    if (api == nullptr)
        throw error(
            "nvrtcCreateProgram", 0, "KILN_NVRTC_NOT_FOUND",
            "the CUDA backend compiles kernels with NVRTC, and " + nvrtc_load_failure() +
                "\n(set CUDA_PATH to the CUDA toolkit, or add its lib64 to LD_LIBRARY_PATH)");
    return *api;
}

}  // namespace

build_options parse_build_options(const std::string& options) {
    build_options result;
    const auto words = split_options(options);
    std::string opencl_c_version = "120";
    for (std::size_t i = 0; i < words.size(); ++i) {
        const std::string& word = words[i];
        if (word.starts_with("-D")) {
            const std::string definition = option_value(words, i, 2);
            const auto equals = definition.find('=');
            const std::string name = definition.substr(0, equals);
            const std::string value =
                equals == std::string::npos ? "1" : definition.substr(equals + 1);
            if (name.empty()) reject_option(word, "defines no name");
            result.translation.macros.emplace_back(name, value);
            result.nvrtc_options.push_back("-D" + name + "=" + value);
        } else if (word.starts_with("-I")) {
            result.translation.include_directories.emplace_back(option_value(words, i, 2));
        } else if (word == "-w") {
            result.nvrtc_options.push_back("-w");
        } else if (word == "-Werror") {
            result.warnings_are_errors = true;
        } else if (word == "-g") {
            result.nvrtc_options.push_back("-lineinfo");
        } else if (word.starts_with("-cl-std=")) {
            static const std::array<std::pair<std::string_view, std::string_view>, 5> versions{
                {{"CL1.0", "100"},
                 {"CL1.1", "110"},
                 {"CL1.2", "120"},
                 {"CL2.0", "200"},
                 {"CL3.0", "300"}}};
            const auto version = std::string_view(word).substr(8);
            auto found = std::find_if(versions.begin(), versions.end(),
                                      [&](auto& v) { return v.first == version; });
            if (found == versions.end())
                reject_option(word, "names an OpenCL C version kiln does not know");
            opencl_c_version = std::string(found->second);
        } else if (word == "-cl-fast-relaxed-math") {
            result.nvrtc_options.push_back("--use_fast_math");
            result.nvrtc_options.push_back("-D__FAST_RELAXED_MATH__=1");
        } else if (word == "-cl-unsafe-math-optimizations") {
            result.nvrtc_options.push_back("--use_fast_math");
        } else if (word == "-cl-mad-enable") {
            result.nvrtc_options.push_back("--fmad=true");
        } else if (word == "-cl-denorms-are-zero") {
            result.nvrtc_options.push_back("--ftz=true");
        } else if (word == "-cl-fp32-correctly-rounded-divide-sqrt") {
            result.nvrtc_options.push_back("--prec-div=true");
            result.nvrtc_options.push_back("--prec-sqrt=true");
        } else if (word == "-cl-opt-disable") {
            result.nvrtc_options.push_back("--device-debug");
        } else if (word.starts_with("-cl-nv-maxrregcount")) {
            // NVIDIA's OpenCL option (cl_nv_compiler_options), "-cl-nv-maxrregcount N" or "=N".
            std::string count = option_value(words, i, 19);
            if (count.starts_with('=')) count.erase(0, 1);
            if (count.empty() || count.find_first_not_of("0123456789") != std::string::npos)
                reject_option(word, "needs a number of registers");
            result.nvrtc_options.push_back("--maxrregcount=" + count);
            result.translation.register_limit = true;
        } else if (word == "-cl-single-precision-constant") {
            result.translation.single_precision_constants = true;
        } else if (word == "-cl-finite-math-only" || word == "-cl-no-signed-zeros" ||
                   word == "-cl-kernel-arg-info" || word == "-cl-strict-aliasing" ||
                   word == "-cl-uniform-work-group-size" || word == "-cl-no-subgroup-ifp") {
            // Permissions or requests NVRTC has no separate switch for; correct code is unaffected.
        } else {
            reject_option(word, "is not supported by the CUDA backend");
        }
    }
    result.nvrtc_options.push_back("-D__OPENCL_C_VERSION__=" + opencl_c_version);
    return result;
}

target_architecture choose_architecture(int compute_capability) {
    const auto& api = loaded_nvrtc();
    int count = 0;
    check(api.nvrtcGetNumSupportedArchs(&count), "nvrtcGetNumSupportedArchs");
    std::vector<int> supported(static_cast<std::size_t>(count));
    if (count > 0) check(api.nvrtcGetSupportedArchs(supported.data()), "nvrtcGetSupportedArchs");
    if (std::find(supported.begin(), supported.end(), compute_capability) != supported.end())
        return {compute_capability, true};
    const auto older = std::find_if(supported.rbegin(), supported.rend(),
                                    [&](int a) { return a < compute_capability; });
    if (older == supported.rend())
        throw error("nvrtcGetSupportedArchs", 0, "KILN_ARCHITECTURE_UNSUPPORTED",
                    "NVRTC cannot compile for compute capability " +
                        std::to_string(compute_capability / 10) + "." +
                        std::to_string(compute_capability % 10) +
                        ", nor for any older architecture");
    return {*older, false};
}

compiled_image compile_with_nvrtc(const std::string& source, const build_options& options,
                                  target_architecture arch,
                                  std::span<const prelude_header> prelude) {
    const auto& api = loaded_nvrtc();
    nvrtcProgram raw = nullptr;
    // The prelude's views are embedded literals: their data() is terminated.
    std::vector<std::string> names;
    std::vector<const char*> header_names, header_texts;
    for (const auto& header : prelude) names.emplace_back(header.name);
    for (std::size_t i = 0; i < prelude.size(); ++i) {
        header_names.push_back(names[i].c_str());
        header_texts.push_back(prelude[i].text.data());
    }
    check(api.nvrtcCreateProgram(&raw, source.c_str(), "kiln_opencl_program.cu",
                                 static_cast<int>(prelude.size()), header_texts.data(),
                                 header_names.data()),
          "nvrtcCreateProgram");
    nvrtc_program_handle program(raw);

    std::vector<std::string> words{
        std::string("--gpu-architecture=") + (arch.cubin ? "sm_" : "compute_") +
            std::to_string(arch.number) + (arch.cubin && arch.number == 90 ? "a" : ""),
        "--std=c++20",
        // Unannotated functions in OpenCL C are device functions.
        "-default-device",
        // "expression has no effect": what an untranslated (float4)(a, b, c, d) would produce,
        // silently keeping only d. Better an error than a wrong vector.
        "--diag-error=174",
        // OpenCL compilers do not warn about unused variables by default either.
        "--diag-suppress=177,550"};
    words.insert(words.end(), options.nvrtc_options.begin(), options.nvrtc_options.end());
    std::vector<const char*> argv;
    for (const auto& word : words) argv.push_back(word.c_str());

    const nvrtcResult result =
        api.nvrtcCompileProgram(program.get(), static_cast<int>(argv.size()), argv.data());
    std::string log = explain_compiler_log(read_log(program.get()));
    if (result == NVRTC_ERROR_COMPILATION)
        throw build_error("nvrtcCompileProgram", result, api.nvrtcGetErrorString(result), log);
    check(result, "nvrtcCompileProgram", log);
    if (options.warnings_are_errors && log.find("warning") != std::string::npos)
        throw build_error("nvrtcCompileProgram", NVRTC_ERROR_COMPILATION, "NVRTC_ERROR_COMPILATION",
                          log + "(-Werror: warnings are errors)\n");

    compiled_image compiled;
    compiled.is_cubin = arch.cubin;
    std::size_t size = 0;
    if (arch.cubin) {
        check(api.nvrtcGetCUBINSize(program.get(), &size), "nvrtcGetCUBINSize");
        compiled.image.resize(size);
        check(api.nvrtcGetCUBIN(program.get(), reinterpret_cast<char*>(compiled.image.data())),
              "nvrtcGetCUBIN");
    } else {
        check(api.nvrtcGetPTXSize(program.get(), &size), "nvrtcGetPTXSize");
        compiled.image.resize(size);
        check(api.nvrtcGetPTX(program.get(), reinterpret_cast<char*>(compiled.image.data())),
              "nvrtcGetPTX");
    }
    return compiled;
}

std::string nvrtc_version_string() {
    const auto* api = nvrtc();
    int major = 0, minor = 0;
    if (api == nullptr || api->nvrtcVersion(&major, &minor) != NVRTC_SUCCESS)
        return "NVRTC not found";
    return "NVRTC " + std::to_string(major) + "." + std::to_string(minor);
}

}  // namespace kiln::detail::cuda
