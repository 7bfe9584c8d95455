// SPDX-License-Identifier: Apache-2.0
// The lexer of the OpenCL C translation: tokens that keep line structure, #include names apart.
#include <array>
#include <cctype>

#include "backend/cuda/opencl_c_translator.hpp"

namespace kiln::detail::cuda::opencl_c {

namespace {

class lexer {
  public:
    lexer(std::string_view text, std::size_t file, const std::string& file_name)
        : text_(text), file_(file), file_name_(file_name) {}

    std::vector<token> run() {
        std::vector<token> tokens;
        bool line_start = true;
        bool in_directive = false;
        bool expect_header_name = false;
        while (true) {
            std::string leading;
            const bool newline = skip_trivia(leading);
            if (newline) {
                line_start = true;
                in_directive = false;
            }
            if (pos_ >= text_.size()) {
                token end;
                end.kind = token_kind::generated;
                end.leading = std::move(leading);
                end.line = line_;
                end.file = file_;
                tokens.push_back(std::move(end));
                return tokens;
            }
            token t;
            t.leading = std::move(leading);
            t.line = line_;
            t.file = file_;
            t.starts_line = line_start;
            if (line_start && text_[pos_] == '#') in_directive = true;
            t.in_directive = in_directive;
            line_start = false;
            if (expect_header_name && (text_[pos_] == '<' || text_[pos_] == '"')) {
                lex_header_name(t);
            } else {
                lex_token(t);
            }
            expect_header_name = in_directive && t.kind == token_kind::identifier &&
                                 t.text == "include" && tokens.size() >= 1 &&
                                 tokens.back().is("#") && tokens.back().starts_line;
            tokens.push_back(std::move(t));
        }
    }

  private:
    // Returns whether an unescaped newline was crossed (it ends a directive).
    bool skip_trivia(std::string& leading) {
        bool newline = false;
        while (pos_ < text_.size()) {
            const char c = text_[pos_];
            if (c == '\n') {
                newline = true;
                leading += c;
                ++line_;
                ++pos_;
            } else if (c == '\\' && pos_ + 1 < text_.size() &&
                       (text_[pos_ + 1] == '\n' ||
                        (text_[pos_ + 1] == '\r' && pos_ + 2 < text_.size() &&
                         text_[pos_ + 2] == '\n'))) {
                const std::size_t length = text_[pos_ + 1] == '\n' ? 2 : 3;
                leading.append(text_.substr(pos_, length));
                ++line_;
                pos_ += length;
            } else if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
                leading += c;
                ++pos_;
            } else if (text_.substr(pos_, 2) == "//") {
                while (pos_ < text_.size() && text_[pos_] != '\n') {
                    // A backslash at the end of a // comment continues it, as in C.
                    if (text_[pos_] == '\\' && pos_ + 1 < text_.size() && text_[pos_ + 1] == '\n') {
                        leading += "\\\n";
                        ++line_;
                        pos_ += 2;
                        continue;
                    }
                    ++pos_;
                }
                leading += ' ';
            } else if (text_.substr(pos_, 2) == "/*") {
                const int start_line = line_;
                const auto end = text_.find("*/", pos_ + 2);
                if (end == std::string_view::npos)
                    fail(file_name_, start_line, "unterminated /* comment");
                leading += ' ';
                for (auto i = pos_; i < end; ++i) {
                    if (text_[i] == '\n') {
                        leading += '\n';
                        ++line_;
                    }
                }
                pos_ = end + 2;
            } else {
                break;
            }
        }
        return newline;
    }

    void lex_header_name(token& t) {
        const char close = text_[pos_] == '<' ? '>' : '"';
        const auto end = text_.find(close, pos_ + 1);
        const auto line_end = text_.find('\n', pos_);
        if (end == std::string_view::npos || (line_end != std::string_view::npos && end > line_end))
            fail(file_name_, line_, "unterminated file name in #include");
        t.kind = token_kind::header_name;
        t.text = std::string(text_.substr(pos_, end + 1 - pos_));
        pos_ = end + 1;
    }

    void lex_token(token& t) {
        const char c = text_[pos_];
        const std::size_t start = pos_;
        if (is_identifier_start(c)) {
            while (pos_ < text_.size() && is_identifier_char(text_[pos_])) ++pos_;
            const auto word = text_.substr(start, pos_ - start);
            // Encoding prefixes belong to the literal that follows.
            if (pos_ < text_.size() && (text_[pos_] == '"' || text_[pos_] == '\'') &&
                (word == "L" || word == "u" || word == "U" || word == "u8")) {
                lex_literal(t, start);
                return;
            }
            t.kind = token_kind::identifier;
        } else if (std::isdigit(static_cast<unsigned char>(c)) ||
                   (c == '.' && pos_ + 1 < text_.size() &&
                    std::isdigit(static_cast<unsigned char>(text_[pos_ + 1])))) {
            ++pos_;
            while (pos_ < text_.size()) {
                const char d = text_[pos_];
                if ((d == '+' || d == '-') &&
                    std::string_view("eEpP").find(text_[pos_ - 1]) != std::string_view::npos) {
                    ++pos_;
                } else if (is_identifier_char(d) || d == '.') {
                    ++pos_;
                } else {
                    break;
                }
            }
            t.kind = token_kind::number;
        } else if (c == '"' || c == '\'') {
            lex_literal(t, start);
            return;
        } else {
            static constexpr std::array punctuators{
                "...", "<<=", ">>=", "->", "++", "--", "<<", ">>", "<=", ">=", "==", "!=",
                "&&",  "||",  "*=",  "/=", "%=", "+=", "-=", "&=", "^=", "|=", "##", "::"};
            std::size_t length = 1;
            for (std::string_view p : punctuators) {
                if (text_.substr(pos_, p.size()) == p) {
                    length = p.size();
                    break;
                }
            }
            pos_ += length;
            t.kind = token_kind::punctuator;
        }
        t.text = std::string(text_.substr(start, pos_ - start));
    }

    void lex_literal(token& t, std::size_t start) {
        while (text_[pos_] != '"' && text_[pos_] != '\'') ++pos_;
        const char quote = text_[pos_++];
        while (true) {
            if (pos_ >= text_.size() || text_[pos_] == '\n')
                fail(file_name_, line_,
                     quote == '"' ? "unterminated string literal"
                                  : "unterminated character literal");
            if (text_[pos_] == '\\') {
                pos_ += 2;
                continue;
            }
            if (text_[pos_++] == quote) break;
        }
        t.kind = token_kind::literal;
        t.text = std::string(text_.substr(start, pos_ - start));
    }

    std::string_view text_;
    std::size_t file_;
    const std::string& file_name_;
    std::size_t pos_ = 0;
    int line_ = 1;
};

}  // namespace

[[noreturn]] void fail(const std::string& file, int line, const std::string& message) {
    throw build_error("OpenCL C translation", 0, "KILN_TRANSLATION_ERROR",
                      file + "(" + std::to_string(line) + "): error: " + message + "\n");
}

bool is_identifier_start(char c) {
    return std::isalpha(static_cast<unsigned char>(c)) || c == '_';
}
bool is_identifier_char(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

std::vector<token> lex(std::string_view text, std::size_t file, const std::string& file_name) {
    return lexer(text, file, file_name).run();
}

}  // namespace kiln::detail::cuda::opencl_c
