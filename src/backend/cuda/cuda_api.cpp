// SPDX-License-Identifier: Apache-2.0
// Loading libcuda and libnvrtc at run time and resolving their entry points once.
#include "backend/cuda/cuda_api.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <vector>

namespace kiln::detail::cuda {

namespace {

#define KILN_CUDA_STRINGIFY_EXPANDED(name) KILN_CUDA_STRINGIFY(name)
#define KILN_CUDA_STRINGIFY(name) #name

/// Opens the first library that loads; `failure` collects why the others did not. The handle is
/// never closed: the entry points must stay valid until the process ends, destructors included.
void* open_first(const std::vector<std::string>& candidates, std::string& failure) {
    for (const auto& candidate : candidates) {
        if (void* library = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL)) return library;
        const char* why = dlerror();
        failure += "\n  " + candidate + ": " + (why != nullptr ? why : "not loadable");
    }
    return nullptr;
}

template <class Table>
bool resolve(void* library, const char* name, Table& member) {
    member = reinterpret_cast<Table>(dlsym(library, name));
    return member != nullptr;
}

std::vector<std::string> nvrtc_candidates() {
    const std::string versioned = "libnvrtc.so." + std::to_string(CUDA_VERSION / 1000);
    std::vector<std::string> names{versioned, "libnvrtc.so"};
    std::vector<std::string> directories;
    if (const char* cuda_path = std::getenv("CUDA_PATH");
        cuda_path != nullptr && *cuda_path != '\0')
        directories.push_back(std::string(cuda_path) + "/lib64/");
    directories.emplace_back("/usr/local/cuda/lib64/");
    for (const auto& directory : directories) {
        names.push_back(directory + versioned);
        names.push_back(directory + "libnvrtc.so");
    }
    return names;
}

struct loaded_nvrtc {
    nvrtc_api api;
    bool usable = false;
    std::string failure;
};

const loaded_nvrtc& nvrtc_library() {
    static const loaded_nvrtc loaded = [] {
        loaded_nvrtc result;
        void* library = open_first(nvrtc_candidates(), result.failure);
        if (library == nullptr) {
            result.failure = "libnvrtc could not be loaded:" + result.failure;
            return result;
        }
        bool complete = true;
#define KILN_CUDA_RESOLVE(name)                                                                    \
    if (!resolve(library, KILN_CUDA_STRINGIFY_EXPANDED(name), result.api.name)) {                  \
        complete = false;                                                                          \
        result.failure += std::string("\n  libnvrtc lacks ") + KILN_CUDA_STRINGIFY_EXPANDED(name); \
    }
        KILN_NVRTC_FUNCTIONS(KILN_CUDA_RESOLVE)
#undef KILN_CUDA_RESOLVE
        result.usable = complete;
        return result;
    }();
    return loaded;
}

}  // namespace

const driver_api* driver() {
    static const driver_api* const table = []() -> const driver_api* {
        std::string ignored;
        void* library = open_first({"libcuda.so.1"}, ignored);
        if (library == nullptr) return nullptr;
        static driver_api api;
        bool complete = true;
#define KILN_CUDA_RESOLVE(name) \
    complete = resolve(library, KILN_CUDA_STRINGIFY_EXPANDED(name), api.name) && complete;
        KILN_CUDA_DRIVER_FUNCTIONS(KILN_CUDA_RESOLVE)
#undef KILN_CUDA_RESOLVE
        return complete ? &api : nullptr;
    }();
    return table;
}

namespace {

/// A table of libcuda entry points beyond driver()'s, resolved once; nullptr where one is
/// missing.
template <class Api, class Resolve>
const Api* optional_driver_table(Resolve resolve_all) {
    if (driver() == nullptr) return nullptr;
    // Already open: dlopen hands back the same library.
    std::string ignored;
    void* library = open_first({"libcuda.so.1"}, ignored);
    if (library == nullptr) return nullptr;
    static Api api;
    return resolve_all(library, api) ? &api : nullptr;
}

}  // namespace

#define KILN_CUDA_RESOLVE(name) \
    complete = resolve(library, KILN_CUDA_STRINGIFY_EXPANDED(name), api.name) && complete;

const graph_api* graph_driver() {
    static const graph_api* const table =
        optional_driver_table<graph_api>([](void* library, graph_api& api) {
            bool complete = true;
            KILN_CUDA_GRAPH_FUNCTIONS(KILN_CUDA_RESOLVE)
            return complete;
        });
    return table;
}

const tile_map_api* tile_map_driver() {
    static const tile_map_api* const table =
        optional_driver_table<tile_map_api>([](void* library, tile_map_api& api) {
            bool complete = true;
            KILN_CUDA_TILE_MAP_FUNCTIONS(KILN_CUDA_RESOLVE)
            return complete;
        });
    return table;
}

const interop_api* interop_driver() {
    static const interop_api* const table =
        optional_driver_table<interop_api>([](void* library, interop_api& api) {
            bool complete = true;
            KILN_CUDA_INTEROP_FUNCTIONS(KILN_CUDA_RESOLVE)
            return complete;
        });
    return table;
}

#undef KILN_CUDA_RESOLVE

const nvrtc_api* nvrtc() {
    const auto& loaded = nvrtc_library();
    return loaded.usable ? &loaded.api : nullptr;
}

const std::string& nvrtc_load_failure() {
    return nvrtc_library().failure;
}

}  // namespace kiln::detail::cuda
