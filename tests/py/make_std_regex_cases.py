"""Record what libstdc++'s std::regex does with many ECMAScript patterns, as the reference of
gguf-serde's translation of llama-quantize's `--tensor-type` patterns
(gguf-serde/src/ops/quantize/ecmascript/tests.rs, `matches_std_regex_on_the_recorded_cases`).

Usage: python3 make_std_regex_cases.py OUT_JSON

It builds tests/harness/std_regex.cpp with g++ (the compiler of the llama.cpp build: llama-quantize
compiles its patterns with that libstdc++) in a temporary folder and asks it, for each pattern,
whether `std::regex(pattern)` throws (and which `error_type`) and, if not, whether
`std::regex_search` finds it in each of a few names. Nothing else is needed (no Python package).

The patterns are drawn at random (a fixed seed) from a grammar of everything the scanner and
compiler read: characters and bytes above 127, every escape (`\\n`, `\\xHH`, `\\uHHHH`, `\\cX`,
`\\0`, `\\d`, `\\b`, an escaped ordinary character), brackets (negated, ranges, a `-` first or
last, `[:class:]`, `[.name.]`, `[=c=]`, escapes in them), groups, non-capturing groups,
alternatives (some empty), quantifiers (`*`, `+`, `?`, `{n}`, `{n,}`, `{n,m}`, lazy), anchors and
word boundaries; then a share of them damaged (a byte deleted, inserted or replaced) for the
refusals. Look-aheads and back-references, which std::regex takes and we refuse, are left out.
The names of a pattern are short byte strings drawn from the characters that pattern mentions
and a few others (`\\n`, `\\r`, `\\x0b`, `\\xff`, case changes).

It also records the state limit (`_GLIBCXX_REGEX_STATE_LIMIT`, 100000 states) at its edge: for
each of a list of forms (`a{%d}`, `(?:a|b){%d}`, `a{0,%d}`, some followed by an error of their
own: `a{%d})`, `(a{%d}`), the largest n not refused with error_space, found by bisection, and
n + 1, which is; the answer at n is "ok" or the later error (`a{99995})` is error_paren). A
form refused with another error at 200000 already (`a{%d}\\`: error_escape before any state) is
left out.

The answers are those of the libstdc++ of the g++ on the path: llama.cpp's build uses g++ 12
(libstdc++ 12), with which the committed data was made; its version is recorded ("gxx").

Output: {"gxx": VERSION,
         "cases": [[PATTERN_HEX, [NAME_HEX...], "0110" or "error_..."]...],
         "limits": [[PATTERN_HEX, "ok" or "error_..."]...]}
"""
import json
import os
import random
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
HARNESS = os.path.join(HERE, "..", "harness", "std_regex.cpp")

SEED = 28
N_PATTERNS = 2400
NAMES_PER_PATTERN = 8


class Oracle:
    def __init__(self, folder):
        self.exe = os.path.join(folder, "std_regex")
        subprocess.run(["g++", "-std=c++17", "-O1", "-o", self.exe, HARNESS], check=True)

    def ask(self, cases):
        """cases: [(pattern bytes, [name bytes])] -> ["0110" or "error_..."]"""
        h = lambda b: b.hex() if b else "-"
        inp = "".join(" ".join([h(p)] + [h(n) for n in ns]) + "\n" for p, ns in cases)
        # A pattern libstdc++'s backtracking cannot finish would hang here: give up instead.
        out = subprocess.run([self.exe], input=inp.encode(), capture_output=True, check=True, timeout=900).stdout
        lines = out.decode().split("\n")
        assert len(lines) >= len(cases), (len(lines), len(cases))
        return lines[: len(cases)]


ORDINARY = b"abAB019_-.:/ \xe9\xff\x7f]}"
ESCAPES = [b"\\n", b"\\t", b"\\f", b"\\r", b"\\v", b"\\0", b"\\d", b"\\D", b"\\w", b"\\W", b"\\s", b"\\S",
           b"\\.", b"\\\\", b"\\*", b"\\[", b"\\(", b"\\{", b"\\q", b"\\e", b"\\-", b"\\x41", b"\\x2e", b"\\xff",
           b"\\x0a", b"\\u0041", b"\\u00e9", b"\\u0141", b"\\ca", b"\\cZ", b"\\c\\"]
CLASSES = [b"alpha", b"alnum", b"blank", b"cntrl", b"digit", b"graph", b"lower", b"print", b"punct",
           b"space", b"upper", b"xdigit", b"d", b"w", b"s", b"ALPHA", b"Digit"]
COLLATING = [b"a", b"Z", b"space", b"hyphen", b"period", b"tab", b"newline", b"NUL", b"DEL", b"zero",
             b"nine", b"underscore", b"left-square-bracket", b"circumflex", b"vertical-tab"]
BRACKET_CHARS = b"abcxyzAZ019_.-*+?()|{}^$ \xe9\xff"
BRACKET_ESCAPES = [b"\\b", b"\\n", b"\\d", b"\\w", b"\\s", b"\\D", b"\\W", b"\\S", b"\\]", b"\\\\",
                   b"\\-", b"\\x41", b"\\x80", b"\\u0061", b"\\ca", b"\\0", b"\\t"]


def bracket_item(r):
    k = r.random()
    if k < 0.35:
        return bytes([r.choice(BRACKET_CHARS)])
    if k < 0.55:
        a, b = sorted(r.sample(range(len(BRACKET_CHARS)), 2))
        lo, hi = BRACKET_CHARS[a], BRACKET_CHARS[b]
        if r.random() < 0.8:
            lo, hi = min(lo, hi), max(lo, hi)
            if r.random() < 0.5:
                lo, hi = r.choice([(ord("a"), ord("f")), (ord("0"), ord("5")), (ord("A"), ord("Z")), (0x80, 0xff), (ord("!"), ord("/"))])
        return bytes([lo]) + b"-" + bytes([hi])
    if k < 0.7:
        return b"[:" + r.choice(CLASSES) + b":]"
    if k < 0.78:
        return b"[." + r.choice(COLLATING) + b".]"
    if k < 0.84:
        return b"[=" + r.choice([b"a", b"b", b"Z", b"space", b"zero"]) + b"=]"
    return r.choice(BRACKET_ESCAPES)


def bracket(r):
    out = b"[" + (b"^" if r.random() < 0.35 else b"")
    if r.random() < 0.1:
        out += b"-"
    if r.random() < 0.05:
        out += b"]"  # "[]" or "[^]", or "]" first
        return out
    for _ in range(r.randint(1, 4)):
        out += bracket_item(r)
    if r.random() < 0.1:
        out += b"-"
    return out + b"]"


def quantifier(r):
    k = r.random()
    if k < 0.25:
        q = b"*"
    elif k < 0.45:
        q = b"+"
    elif k < 0.65:
        q = b"?"
    else:
        n = r.choice([0, 1, 2, 3, 5])
        kk = r.random()
        if kk < 0.4:
            q = b"{%d}" % n
        elif kk < 0.6:
            q = b"{%d,}" % n
        else:
            q = b"{%d,%d}" % (n, n + r.choice([0, 1, 2, -1]))
    if r.random() < 0.2:
        q += b"?"
    return q


def atom(r, depth):
    k = r.random()
    if k < 0.35:
        return bytes([r.choice(ORDINARY)])
    if k < 0.55:
        return r.choice(ESCAPES)
    if k < 0.62:
        return b"."
    if k < 0.8:
        return bracket(r)
    if depth > 2:
        return b"x"
    open_ = b"(?:" if r.random() < 0.4 else b"("
    return open_ + disjunction(r, depth + 1) + b")"


def term(r, depth):
    k = r.random()
    if k < 0.12:
        return r.choice([b"^", b"$", b"\\b", b"\\B"])
    a = atom(r, depth)
    if r.random() < 0.35:
        a += quantifier(r)
        if r.random() < 0.05:
            a += quantifier(r)
    return a


def alternative(r, depth):
    return b"".join(term(r, depth) for _ in range(r.randint(0 if depth else 1, 4)))


def disjunction(r, depth=0):
    alts = [alternative(r, depth)]
    while r.random() < 0.2:
        alts.append(alternative(r, depth))
    return b"|".join(alts)


def damage(r, p):
    if not p:
        return p
    i = r.randrange(len(p))
    k = r.random()
    if k < 0.4:
        return p[:i] + p[i + 1:]
    if k < 0.7:
        return p[:i] + bytes([r.choice(b"\\[](){},-^$*+?|:.=x0")]) + p[i:]
    return p[:i] + bytes([r.choice(b"\\[](){},-^$*+?|:.=x0")]) + p[i + 1:]


NAME_EXTRA = b"aA0_-. \n\r\x0b\x0c\t\x08\xff\xe9\x80zZ"


def names(r, pattern):
    pool = sorted(set(pattern) | set(NAME_EXTRA))
    out = [b""]
    for _ in range(NAMES_PER_PATTERN - 1):
        n = bytes(r.choice(pool) for _ in range(r.randint(1, 6)))
        if r.random() < 0.3:
            n = n.swapcase()
        out.append(n)
    return out


def has_unsupported(p):
    # back-references (\1..\9 outside a bracket; a bracket's are refused by std::regex anyway) and
    # look-aheads, which we refuse on purpose (the regex crate has neither); `\cX` is three bytes
    # (`\c\1` is `\c\` then `\1`)
    i = 0
    while i < len(p):
        if p[i] == ord("\\") and i + 1 < len(p):
            if ord("1") <= p[i + 1] <= ord("9"):
                return True
            i += 3 if p[i + 1] == ord("c") else 2
            continue
        if p[i:i + 3] in (b"(?=", b"(?!"):
            return True
        i += 1
    return False


def limit_cases(oracle):
    """For each piece, the largest n that std::regex takes, by bisection."""
    pieces = [
        (b"", b"a{%d}"), (b"", b"[ab]{%d}"), (b"", b"(a){%d}"), (b"", b"(?:a){%d}"), (b"", b"(?:a|b){%d}"),
        (b"", b"(?:a|b|){%d}"), (b"", b"(a|b){%d}"), (b"", b"(?:a*){%d}"), (b"", b"(?:a+){%d}"),
        (b"", b"(?:a?){%d}"), (b"", b"(?:a*?){%d}"), (b"", b"(?:^){%d}"), (b"", b"(?:\\b){%d}"),
        (b"", b"(?:a{2}){%d}"), (b"", b"(?:a{2,}){%d}"), (b"", b"(?:a{1,3}){%d}"), (b"", b"(?:a{0,2}){%d}"),
        (b"", b"(?:ab){%d}"), (b"", b"(?:){%d}"), (b"", b"a{%d,}"), (b"", b"a{0,%d}"), (b"", b"(?:ab){0,%d}"),
        (b"", b"(?:ab){1,%d}"), (b"", b"(?:a|b){2,%d}"), (b"xyz", b"a{%d}"), (b"(a)(b)|c", b"d{%d}"),
        (b"", b"(?:(?:a){3}){%d}"), (b"", b"(?:(a)|b){%d}"), (b"", b"(?:\\d|[[:alpha:]]){%d}"),
        (b"", b"a{%d}b{2}"), (b"", b"(?:a{2,}b){%d}"), (b"", b"(?:a{2,3}?){%d}"),
        # an error after the states: is the limit reached first (std::regex throws at the insertion)?
        (b"", b"a{%d})"), (b"", b"(a{%d}"), (b"", b"(?:a{%d}"), (b"", b"a{%d}{"), (b"", b"a{%d}{2,1}"),
        (b"", b"a{%d,1}"), (b"", b"a{2,%d})"), (b"", b"a{%d}|)"), (b"", b"a{%d}["), (b"", b"a{%d}\\"),
        (b"", b"a{%d}b)"), (b"", b"(a){%d})"), (b"", b"(?:a){%d})"), (b"", b"a{%d}(b"), (b"", b"a{%d}(?:b"),
        (b"", b"a{%d}*)"), (b"", b"a{%d}?)"), (b"", b"a{%d}\\b)"), (b"", b"a{%d}(?=b)"), (b"", b"a{%d}(?=b"),
        (b"", b"a{%d,}{"), (b"", b"(?:a|b){%d})"), (b"", b"a{%d}[[:foo:]]"), (b"", b"a{%d}\\2"),
    ]
    out = []
    for prefix, form in pieces:
        lo, hi = 0, 200000  # lo taken, hi refused
        if oracle.ask([(prefix + form % hi, [])])[0] != "error_space":
            continue
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if oracle.ask([(prefix + form % mid, [])])[0] == "error_space":
                hi = mid
            else:
                lo = mid
        for n in (lo, hi):
            v = oracle.ask([(prefix + form % n, [])])[0]
            out.append([(prefix + form % n).hex(), "ok" if not v.startswith("error") else v])
    return out


def main():
    out_path = sys.argv[1]
    r = random.Random(SEED)
    patterns, seen = [], set()
    while len(patterns) < N_PATTERNS:
        p = disjunction(r)
        if r.random() < 0.3:
            p = damage(r, p)
        if p in seen or has_unsupported(p) or len(p) > 60:
            continue
        seen.add(p)
        patterns.append(p)
    with tempfile.TemporaryDirectory() as d:
        oracle = Oracle(d)
        cases = [(p, names(r, p)) for p in patterns]
        answers = oracle.ask(cases)
        rows = []
        for (p, ns), a in zip(cases, answers):
            rows.append([p.hex(), [] if a.startswith("error") else [n.hex() for n in ns], a])
        limits = limit_cases(oracle)
    gxx = subprocess.run(["g++", "-dumpfullversion"], capture_output=True, text=True, check=True).stdout.strip()
    with open(out_path, "w") as f:
        json.dump({"gxx": gxx, "cases": rows, "limits": limits}, f, separators=(",", ":"))
        f.write("\n")
    errors = sum(1 for r_ in rows if r_[2].startswith("error"))
    print(f"{len(rows)} patterns ({errors} refused), {len(limits)} limit cases", file=sys.stderr)


if __name__ == "__main__":
    main()
