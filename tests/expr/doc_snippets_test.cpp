// SPDX-License-Identifier: Apache-2.0
// The documents in docs/ and its folders quote code that the tests and examples compile: every
// region between a begin marker (a comment "[doc:" name "]") and an end marker (a comment
// "[/doc]") in tests/expr, examples/expr, tests/algo, examples/algo, tests/runtime, tests/mpi,
// examples (its own files, not its folders; sources and headers), examples/interop and
// tests/interop must appear verbatim in one of them, less the region's common indentation.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

const std::filesystem::path source_dir = KILN_SOURCE_DIR;
// Assembled, so that this file does not mark regions of its own.
const std::string begin_marker = std::string("// [") + "doc:";
const std::string end_marker = std::string("// [") + "/doc]";

std::string read_file(const std::filesystem::path& path) {
    std::ifstream in(path);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

struct snippet {
    std::string name, origin, text;
};

std::vector<snippet> snippets_in(const std::filesystem::path& file) {
    std::vector<snippet> found;
    std::istringstream lines(read_file(file));
    std::string line;
    std::vector<std::string> region;
    std::string name;
    bool inside = false;
    while (std::getline(lines, line)) {
        const auto start = line.find(begin_marker);
        if (start != std::string::npos) {
            const auto name_start = start + begin_marker.size();
            name = line.substr(name_start, line.find(']', name_start) - name_start);
            region.clear();
            inside = true;
        } else if (line.find(end_marker) != std::string::npos && inside) {
            std::size_t indent = std::string::npos;
            for (const auto& l : region)
                if (l.find_first_not_of(' ') != std::string::npos)
                    indent = std::min(indent, l.find_first_not_of(' '));
            std::string text;
            for (const auto& l : region) text += (l.size() > indent ? l.substr(indent) : "") + "\n";
            found.push_back({name, file.filename().string(), text});
            inside = false;
        } else if (inside) {
            region.push_back(line);
        }
    }
    return found;
}

TEST(doc_snippets, every_marked_region_is_quoted_in_a_document) {
    std::vector<std::pair<std::string, std::string>> documents;  // (name, text)
    // docs/ and its folders: docs/dev quotes the tests that look beneath the public API.
    for (const auto& entry : std::filesystem::recursive_directory_iterator(source_dir / "docs"))
        if (entry.path().extension() == ".md")
            documents.emplace_back(entry.path().filename().string(), read_file(entry.path()));
    ASSERT_FALSE(documents.empty()) << "docs/ is missing";
    std::size_t checked = 0;
    for (const char* dir :
         {"tests/expr", "examples/expr", "tests/algo", "examples/algo", "tests/runtime",
          "tests/mpi", "tests/kernels", "examples", "examples/interop", "tests/interop"}) {
        for (const auto& entry : std::filesystem::directory_iterator(source_dir / dir)) {
            if (entry.path().extension() != ".cpp" && entry.path().extension() != ".hpp") continue;
            for (const auto& s : snippets_in(entry.path())) {
                ++checked;
                EXPECT_TRUE(std::any_of(
                    documents.begin(), documents.end(),
                    [&](const auto& d) { return d.second.find(s.text) != std::string::npos; }))
                    << "no document in docs/ quotes region " << s.name << " of " << s.origin
                    << ":\n"
                    << s.text;
            }
        }
    }
    EXPECT_GE(checked, 14u) << "the markers went missing";
}

}  // namespace
