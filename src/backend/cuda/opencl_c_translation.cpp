// SPDX-License-Identifier: Apache-2.0
// The OpenCL C to CUDA C++ rewrite: reading the sources, declarations seen anywhere, the output.
#include "backend/cuda/opencl_c_translation.hpp"

#include <algorithm>
#include <fstream>
#include <sstream>

#include "backend/cuda/opencl_c_prelude.hpp"
#include "backend/cuda/opencl_c_translator.hpp"

namespace kiln::detail::cuda {

namespace opencl_c {

namespace {

std::string c_string_literal(std::string_view text) {
    std::string out = "\"";
    for (char c : text) {
        if (c == '"' || c == '\\') out += '\\';
        out += c;
    }
    return out + "\"";
}

}  // namespace

translation translator::run(std::span<const std::string> sources) {
    std::vector<std::size_t> source_starts;
    for (std::size_t i = 0; i < sources.size(); ++i) {
        source_starts.push_back(tokens_.size());
        files_.push_back({source_file_name(i), {}});
        std::vector<std::string> include_stack;
        append_file(sources[i], files_.size() - 1, include_stack);
    }
    collect_declarations();
    rewrite();
    finish_kernel_prologues();

    translation result;
    std::string& out = result.source;
    out += "#include \"" + std::string(opencl_c_prelude_name) + "\"\nnamespace kiln_opencl {\n";
    std::size_t next_source = 0;
    for (std::size_t i = 0; i < tokens_.size(); ++i) {
        while (next_source < source_starts.size() && source_starts[next_source] == i)
            out += "\n#line 1 " + c_string_literal(source_file_name(next_source++)) + "\n";
        const token& t = tokens_[i];
        out += t.leading;
        out += t.prefix;
        out += t.output_text();
        out += t.suffix;
    }
    out += "\n}  // namespace kiln_opencl\n";
    result.kernels = std::move(kernels_);
    result.contraction_off = contraction_off_;
    return result;
}

void translator::append_file(std::string_view text, std::size_t file,
                             std::vector<std::string>& include_stack) {
    auto tokens = lex(text, file, files_[file].name);
    for (std::size_t i = 0; i < tokens.size(); ++i) {
        token& t = tokens[i];
        const bool include = t.is("#") && t.starts_line && i + 2 < tokens.size() &&
                             tokens[i + 1].in_directive && tokens[i + 1].is("include");
        if (!include) {
            tokens_.push_back(std::move(t));
            continue;
        }
        const token& target = tokens[i + 2];
        if (target.kind != token_kind::header_name || !target.in_directive ||
            tokens[i + 2].starts_line)
            fail(files_[file].name, t.line,
                 "#include needs a file name in \"\" or <>; a macro is not supported");
        const std::string wanted = target.text.substr(1, target.text.size() - 2);
        const auto path = find_include(
            wanted, target.text.front() == '"' ? files_[file].directory : std::filesystem::path());
        if (!path) {
            std::string searched;
            for (const auto& dir : options_.include_directories) searched += " " + dir.string();
            fail(files_[file].name, t.line,
                 "cannot open include file \"" + wanted + "\" (searched:" +
                     (searched.empty() ? std::string(" no -I directories") : searched) + ")");
        }
        const int directive_line = target.line;
        token hash = std::move(t);
        token name = std::move(tokens[i + 1]);
        token file_token = tokens[i + 2];
        i += 2;
        const std::string canonical = std::filesystem::weakly_canonical(*path).string();
        const bool recursive =
            std::find(include_stack.begin(), include_stack.end(), canonical) != include_stack.end();
        // A file that includes itself (directly or not) was meant to be guarded: the inner
        // copy would be empty anyway, so it is left out.
        hash.replacement = recursive ? "" : "#line 1 " + c_string_literal(path->string()) + "\n";
        name.replacement = "";
        file_token.replacement = "";
        tokens_.push_back(std::move(hash));
        tokens_.push_back(std::move(name));
        tokens_.push_back(std::move(file_token));
        if (recursive) continue;

        std::ifstream in(*path, std::ios::binary);
        std::stringstream contents;
        contents << in.rdbuf();
        files_.push_back({path->string(), path->parent_path()});
        include_stack.push_back(canonical);
        append_file(contents.str(), files_.size() - 1, include_stack);
        include_stack.pop_back();
        token back;
        back.kind = token_kind::generated;
        back.text = "\n#line " + std::to_string(directive_line + 1) + " " +
                    c_string_literal(files_[file].name);
        back.file = file;
        back.line = directive_line;
        tokens_.push_back(std::move(back));
    }
}

std::optional<std::filesystem::path> translator::find_include(
    const std::string& name, const std::filesystem::path& local_dir) {
    std::error_code ignored;
    std::vector<std::filesystem::path> candidates;
    // Never the current directory unless named (-I .): a file planted where the program
    // runs must not become part of its kernels (docs/reliability.md).
    if (std::filesystem::path(name).is_absolute()) candidates.emplace_back(name);
    if (!local_dir.empty()) candidates.push_back(local_dir / name);
    for (const auto& dir : options_.include_directories) candidates.push_back(dir / name);
    for (const auto& candidate : candidates)
        if (std::filesystem::is_regular_file(candidate, ignored)) return candidate;
    return std::nullopt;
}

void translator::record_alias(const std::string& name, const std::string& value) {
    if (!value.empty() && is_identifier_start(value[0]) &&
        std::all_of(value.begin(), value.end(), is_identifier_char))
        aliases_[name].insert(value);
}

void translator::collect_declarations() {
    for (std::size_t i = 0; i < tokens_.size(); ++i) {
        const token& t = tokens_[i];
        if (!t.in_directive && is_kernel_keyword(t)) {
            if (auto name = kernel_name_index(i))
                kernel_names_.insert(resolved(tokens_[*name].text));
        } else if (t.is("#") && t.starts_line && next(i).is("define") &&
                   next(next_index(i)).kind == token_kind::identifier) {
            const std::size_t name = next_index(next_index(i));
            const std::size_t body = next_index(name);
            const bool function_like = tokens_[body].is("(") && tokens_[body].leading.empty();
            const bool single_token =
                tokens_[body].in_directive && !tokens_[body].starts_line &&
                !(tokens_[next_index(body)].in_directive && !tokens_[next_index(body)].starts_line);
            if (!function_like && single_token && tokens_[body].kind == token_kind::identifier)
                record_alias(tokens_[name].text, tokens_[body].text);
        } else if (!t.in_directive && t.is("typedef") && next(i).kind == token_kind::identifier &&
                   next(next_index(i)).kind == token_kind::identifier &&
                   next(next_index(next_index(i))).is(";")) {
            record_alias(next(next_index(i)).text, next(i).text);
        } else if (!t.in_directive && (t.is("struct") || t.is("union"))) {
            std::size_t j = next_index(i);
            if (tokens_[j].kind == token_kind::identifier) j = next_index(j);
            if (!tokens_[j].is("{")) continue;
            const std::size_t close = matching(j);
            for (std::size_t k = j + 1; k < close; ++k) {
                if (tokens_[k].kind != token_kind::identifier) continue;
                const token& after = next(k);
                if (after.is(";") || after.is(",") || after.is("[") || after.is(":"))
                    struct_members_.insert(tokens_[k].text);
            }
        }
    }
}

const std::set<std::string>& translator::meanings(const std::string& name) const {
    if (auto cached = meanings_cache_.find(name); cached != meanings_cache_.end())
        return cached->second;
    std::set<std::string> result{name};
    std::vector<std::string> pending{name};
    while (!pending.empty() && result.size() < 64) {
        const std::string current = pending.back();
        pending.pop_back();
        auto found = aliases_.find(current);
        if (found == aliases_.end()) continue;
        for (const auto& target : found->second)
            if (result.insert(target).second) pending.push_back(target);
    }
    return meanings_cache_.emplace(name, std::move(result)).first->second;
}

bool translator::means_any(const token& t, std::initializer_list<std::string_view> words) const {
    if (t.kind != token_kind::identifier) return false;
    for (const auto& meaning : meanings(t.text))
        if (std::find(words.begin(), words.end(), meaning) != words.end()) return true;
    return false;
}

bool translator::means_vector_type(const token& t) const {
    if (t.kind != token_kind::identifier) return false;
    for (const auto& meaning : meanings(t.text))
        if (is_vector_type(meaning)) return true;
    return false;
}

std::string translator::resolved(const std::string& name) const {
    std::string current = name;
    for (int depth = 0; depth < 16; ++depth) {
        auto found = aliases_.find(current);
        if (found == aliases_.end() || found->second.size() != 1) break;
        current = *found->second.begin();
    }
    return current;
}

std::size_t translator::matching(std::size_t open) const {
    const std::string& opening = tokens_[open].text;
    const std::string closing = opening == "(" ? ")" : opening == "[" ? "]" : "}";
    int depth = 0;
    for (std::size_t i = open; i < tokens_.size(); ++i) {
        const token& t = tokens_[i];
        if (t.kind == token_kind::generated || t.in_directive != tokens_[open].in_directive)
            continue;
        if (t.is(opening)) ++depth;
        if (t.is(closing) && --depth == 0) return i;
    }
    fail(file_name(tokens_[open]), tokens_[open].line, "'" + opening + "' is never closed");
}

}  // namespace opencl_c

std::string source_file_name(std::size_t index) {
    return "source_" + std::to_string(index + 1);
}

std::size_t constant_area_bytes(std::size_t constant_parameters, bool program_scope_constants) {
    if (constant_parameters == 0) return 0;
    const std::size_t budget =
        program_scope_constants ? constant_areas_with_variables_bytes : constant_areas_alone_bytes;
    return budget / constant_parameters / 16 * 16;
}

std::string constant_area_symbol(const std::string& kernel_symbol, std::size_t position) {
    return "kiln_constant_" + kernel_symbol + "_" + std::to_string(position);
}

translation translate_opencl_c(std::span<const std::string> sources,
                               const translation_options& options) {
    return opencl_c::translator(options).run(sources);
}

}  // namespace kiln::detail::cuda
