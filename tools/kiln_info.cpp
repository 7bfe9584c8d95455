// kiln-info: lists every device kiln sees, with its properties, and marks the default.
#include <cstring>
#include <iostream>
#include <kiln/kiln.hpp>

namespace {

void print_usage() {
    std::cout
        << "usage: kiln-info [--json] [--help]\n"
           "Lists every OpenCL and CUDA device kiln can use, with the properties portable code\n"
           "needs, and marks the default device (KILN_DEVICE overrides it, e.g. gpu, cpu,\n"
           "cuda, nvidia, 0).\n"
           "  --json   one JSON object: {\"default\": index, \"devices\": [...]}\n";
}

}  // namespace

int main(int argc, char** argv) {
    bool json = false;
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--json") == 0) {
            json = true;
        } else if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0) {
            print_usage();
            return 0;
        } else {
            std::cerr << "kiln-info: unknown argument '" << argv[i] << "' (try --help)\n";
            return 1;
        }
    }
    try {
        const auto& all = kiln::devices();
        long default_index = -1;
        std::string default_problem;
        try {
            default_index = static_cast<long>(kiln::default_device().index());
        } catch (const kiln::error& e) {
            default_problem = e.what();
        }
        if (json) {
            std::cout << "{\"default\": " << default_index << ", \"devices\": [";
            for (std::size_t i = 0; i < all.size(); ++i)
                std::cout << (i ? ", " : "") << all[i].to_json();
            std::cout << "]}\n";
        } else {
            if (all.empty()) std::cout << "No devices found.\n";
            for (const auto& dev : all) {
                std::cout << "[" << dev.index() << "]"
                          << (static_cast<long>(dev.index()) == default_index ? " (default) " : " ")
                          << dev.summary() << "\n";
            }
            if (!default_problem.empty())
                std::cout << "No default device: " << default_problem << "\n";
        }
        return all.empty() ? 1 : 0;
    } catch (const std::exception& e) {
        std::cerr << "kiln-info: " << e.what() << "\n";
        return 1;
    }
}
