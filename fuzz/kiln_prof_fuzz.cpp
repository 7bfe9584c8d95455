// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: kiln-prof's reader and drawing given arbitrary bytes must either reject them
// with a one-line trace_error or return a picture that is well-formed XML, in bounded time and
// memory (scripts/fuzz.sh's -timeout and -rss_limit_mb turn a hang or a runaway into a finding).
#include <libxml/parser.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "kiln_prof_draw.hpp"

namespace {

[[noreturn]] void broken(const char* what, const std::string& detail) {
    std::fprintf(stderr, "kiln_prof_fuzz: %s: %s\n", what, detail.c_str());
    std::abort();
}

/// libxml2 is strict about XML 1.0: raw control characters, broken UTF-8 and unbalanced tags
/// all fail here.
void check_well_formed(const std::string& text, const char* format) {
    xmlDocPtr doc = xmlReadMemory(text.data(), static_cast<int>(text.size()), "picture", nullptr,
                                  XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
    if (doc == nullptr) broken("the picture is not well-formed XML", format);
    xmlFreeDoc(doc);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace kiln::prof;
    const std::string_view bytes(reinterpret_cast<const char*>(data), size);
    for (const picture_format format : {picture_format::svg, picture_format::html}) {
        const char* format_name = format == picture_format::svg ? "svg" : "html";
        try {
            const picture p = draw_trace(bytes, "fuzz.json", format);
            check_well_formed(p.text, format_name);
        } catch (const trace_error& e) {
            const std::string message = e.what();
            if (message.empty() || message.find('\n') != std::string::npos)
                broken("the error is not one line", message);
            return 0;  // the other format would read the same bytes and refuse them too
        }
    }
    return 0;
}
