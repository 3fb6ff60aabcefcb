// What llama-quantize's `--tensor-type` patterns do under libstdc++'s std::regex: the oracle of
// gguf-serde's ECMAScript translation (gguf-serde/src/ops/quantize/ecmascript/tests.rs).
//
// Each input line is a pattern and the names to search, each as hexadecimal bytes, separated by
// spaces (a pattern or name may be empty: "-"). Each output line is the std::regex_error's code
// name if `std::regex(pattern)` throws, else one 0 or 1 per name: whether
// `std::regex_search(name, re)` finds the pattern, as llama-quantize calls it (ECMAScript, the
// classic locale, `char`).
//
//   g++ -std=c++17 -O1 -o std_regex tests/harness/std_regex.cpp
//   h() { printf %s "$1" | xxd -p | tr -d '\n'; }
//   echo "$(h 'a{2,3}') $(h aa) $(h a)" | ./std_regex        # prints 10
#include <iostream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

static std::string unhex(const std::string &h) {
    std::string out;
    if (h == "-") return out;
    for (size_t i = 0; i + 1 < h.size(); i += 2) out.push_back(static_cast<char>(std::stoi(h.substr(i, 2), nullptr, 16)));
    return out;
}

static const char *code_name(std::regex_constants::error_type c) {
    using namespace std::regex_constants;
    switch (c) {
    case error_collate: return "error_collate";
    case error_ctype: return "error_ctype";
    case error_escape: return "error_escape";
    case error_backref: return "error_backref";
    case error_brack: return "error_brack";
    case error_paren: return "error_paren";
    case error_brace: return "error_brace";
    case error_badbrace: return "error_badbrace";
    case error_range: return "error_range";
    case error_space: return "error_space";
    case error_badrepeat: return "error_badrepeat";
    case error_complexity: return "error_complexity";
    case error_stack: return "error_stack";
    default: return "error_other";
    }
}

int main() {
    std::string line;
    while (std::getline(std::cin, line)) {
        std::istringstream in(line);
        std::string p;
        in >> p;
        std::vector<std::string> names;
        for (std::string n; in >> n;) names.push_back(unhex(n));
        try {
            std::regex re(unhex(p));
            for (const auto &n : names) std::cout << (std::regex_search(n, re) ? '1' : '0');
            std::cout << '\n';
        } catch (const std::regex_error &e) {
            std::cout << code_name(e.code()) << '\n';
        }
    }
}
