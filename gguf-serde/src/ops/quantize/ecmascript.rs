//! llama-quantize's `--tensor-type` patterns: ECMAScript regular expressions as C++'s `std::regex`
//! reads them in llama.cpp's builds (libstdc++, `char`, the classic "C" locale), translated to
//! the syntax of [`regex::bytes`] with Unicode off, so that a pattern matches a tensor name's
//! bytes where `std::regex_search` matches them and is refused where `std::regex` refuses it.
//!
//! The grammar and its readings follow libstdc++'s `<regex>` (GCC 12: `regex_scanner.tcc`,
//! `regex_compiler.tcc`, `regex.tcc`), checked by differential tests against a program built with
//! it; where libstdc++ departs from ECMA-262 it is followed, since llama-quantize is what a user
//! compares with:
//!
//! - every byte is one character: a byte above 127 is an ordinary character (no class holds it:
//!   `\w`, `\d`, `\s`, `[[:alpha:]]` are ASCII), and `\uHHHH` is the byte of its low 8 bits
//!   (`\u00ff` is the byte FF, `\u0141` is `A`);
//! - `\cX` is the character X itself (not a control character); `\0` is NUL; `\xHH` takes exactly
//!   two hexadecimal digits (`\x{ff}` is refused); any other escaped character stands for itself
//!   (`\q` is `q`);
//! - in a bracket, `\b` is backspace, ranges compare `char`s as signed numbers (`[\x80-\xff]` is a
//!   range, `[a-\xff]` and `[\x00-\xff]` are refused as reversed), `[[:name:]]`, `[[.name.]]`
//!   (POSIX collating names: `[[.space.]]`) and `[[=c=]]` (c and its other case) are taken, a `-`
//!   that cannot end a range is literal (`[a-z-0]`), and `[]` matches nothing, `[^]` any byte;
//! - `.` is any byte but `\n` and `\r`; `^` and `$` are the ends of the name only; `\b` and `\B` are
//!   ASCII word boundaries; `]` and `}` alone are ordinary characters, `{` always opens a count;
//! - quantifiers may follow one another (`a**`), not an assertion (`^*`); counts are read as C
//!   `int`s, as libstdc++ reads them, and a pattern of more than 100,000 automaton states
//!   (`_GLIBCXX_REGEX_STATE_LIMIT`: `a{100000}`) is refused.
//!
//! Not translated, refused though `std::regex` takes them: look-aheads (`(?=…)`, `(?!…)`) and
//! back-references (`\1`), which the `regex` crate has not; and patterns nested deeper than the
//! `regex` crate compiles (about 120 quantifiers on one atom, `a***…`, or 200 nested groups:
//! [`PatternProblem::TooDeep`]).

use crate::ops::error::PatternProblem;

mod classes;
use classes::{class_by_name, collating_name, ByteSet};

/// Why a pattern is refused, and where: [`problem`](Self::problem) at byte
/// [`offset`](Self::offset) of the pattern.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct PatternError {
    pub(crate) offset: usize,
    pub(crate) problem: PatternProblem,
}

/// libstdc++'s `_GLIBCXX_REGEX_STATE_LIMIT`.
const STATE_LIMIT: u64 = 100_000;

/// A token of libstdc++'s ECMAScript scanner.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Tok {
    Eof,
    /// An ordinary character, or one given by an escape (`\n`, `\x41`, `\u0041`, `\ca`).
    Char(u8),
    Any,
    LineBegin,
    LineEnd,
    WordBound {
        negated: bool,
    },
    LookAhead,
    Group {
        capturing: bool,
    },
    GroupEnd,
    Bracket {
        negated: bool,
    },
    BracketEnd,
    Dash,
    Collating(Vec<u8>),
    ClassName(Vec<u8>),
    Equivalence(Vec<u8>),
    /// `\d`, `\D`, `\s`, `\S`, `\w`, `\W`.
    QuotedClass(u8),
    Backref(Vec<u8>),
    Star,
    Plus,
    Question,
    Or,
    CountBegin,
    CountEnd,
    Comma,
    Count(Vec<u8>),
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum State {
    Normal,
    Bracket,
    Brace,
}

struct Scanner<'a> {
    p: &'a [u8],
    at: usize,
    state: State,
}

type Res<T> = Result<T, PatternError>;

impl Scanner<'_> {
    fn err<T>(&self, problem: PatternProblem) -> Res<T> {
        Err(PatternError { offset: self.at, problem })
    }

    fn peek(&self) -> Option<u8> {
        self.p.get(self.at).copied()
    }

    fn bump(&mut self) -> Option<u8> {
        let c = self.peek()?;
        self.at += 1;
        Some(c)
    }

    /// The next token and the offset where it starts.
    fn next(&mut self) -> Res<(Tok, usize)> {
        let start = self.at;
        if self.at >= self.p.len() {
            return Ok((Tok::Eof, start));
        }
        let tok = match self.state {
            State::Normal => self.normal()?,
            State::Bracket => self.bracket()?,
            State::Brace => self.brace()?,
        };
        Ok((tok, start))
    }

    fn normal(&mut self) -> Res<Tok> {
        let Some(c) = self.bump() else { return Ok(Tok::Eof) };
        Ok(match c {
            b'\\' => {
                if self.peek().is_none() {
                    return self.err(PatternProblem::Escape);
                }
                self.escape()?
            }
            b'(' if self.peek() == Some(b'?') => {
                self.at += 1;
                match self.bump() {
                    Some(b':') => Tok::Group { capturing: false },
                    Some(b'=' | b'!') => Tok::LookAhead,
                    _ => return self.err(PatternProblem::Paren),
                }
            }
            b'(' => Tok::Group { capturing: true },
            b')' => Tok::GroupEnd,
            b'[' => {
                self.state = State::Bracket;
                let negated = self.peek() == Some(b'^');
                if negated {
                    self.at += 1;
                }
                Tok::Bracket { negated }
            }
            b'{' => {
                self.state = State::Brace;
                Tok::CountBegin
            }
            b'^' => Tok::LineBegin,
            b'$' => Tok::LineEnd,
            b'.' => Tok::Any,
            b'*' => Tok::Star,
            b'+' => Tok::Plus,
            b'?' => Tok::Question,
            b'|' => Tok::Or,
            other => Tok::Char(other),
        })
    }

    /// After a `\` (in or out of a bracket).
    fn escape(&mut self) -> Res<Tok> {
        let Some(c) = self.bump() else { return self.err(PatternProblem::Escape) };
        let table = match c {
            b'0' => Some(0),
            b'b' if self.state == State::Bracket => Some(8),
            b'f' => Some(0x0c),
            b'n' => Some(b'\n'),
            b'r' => Some(b'\r'),
            b't' => Some(b'\t'),
            b'v' => Some(0x0b),
            _ => None,
        };
        if let Some(b) = table {
            return Ok(Tok::Char(b));
        }
        Ok(match c {
            b'b' | b'B' => Tok::WordBound { negated: c == b'B' },
            b'd' | b'D' | b's' | b'S' | b'w' | b'W' => Tok::QuotedClass(c),
            b'c' => match self.bump() {
                Some(x) => Tok::Char(x),
                None => return self.err(PatternProblem::Escape),
            },
            b'x' | b'u' => {
                let mut v: u32 = 0;
                for _ in 0..if c == b'x' { 2 } else { 4 } {
                    let Some(d) = self.peek().and_then(|d| char::from(d).to_digit(16)) else {
                        return self.err(PatternProblem::Escape);
                    };
                    self.at += 1;
                    v = v * 16 + d;
                }
                // Assigned to a `char`: the low 8 bits.
                Tok::Char(v.to_le_bytes()[0])
            }
            b'1'..=b'9' => {
                let from = self.at - 1;
                while self.peek().is_some_and(|d| d.is_ascii_digit()) {
                    self.at += 1;
                }
                Tok::Backref(self.p.get(from..self.at).unwrap_or_default().to_vec())
            }
            other => Tok::Char(other),
        })
    }

    fn bracket(&mut self) -> Res<Tok> {
        let Some(c) = self.bump() else { return self.err(PatternProblem::Bracket) };
        Ok(match c {
            b'-' => Tok::Dash,
            b'[' => match self.peek() {
                None => return self.err(PatternProblem::Bracket),
                Some(k @ (b'.' | b':' | b'=')) => {
                    self.at += 1;
                    let name = self.class_name(k)?;
                    match k {
                        b'.' => Tok::Collating(name),
                        b':' => Tok::ClassName(name),
                        _ => Tok::Equivalence(name),
                    }
                }
                Some(_) => Tok::Char(b'['),
            },
            b']' => {
                self.state = State::Normal;
                Tok::BracketEnd
            }
            b'\\' => self.escape()?,
            other => Tok::Char(other),
        })
    }

    /// The name of `[[:name:]]` (`k` is `:`), `[[.name.]]` or `[[=name=]]`, after its `[[k`.
    fn class_name(&mut self, k: u8) -> Res<Vec<u8>> {
        let from = self.at;
        while self.peek().is_some_and(|c| c != k) {
            self.at += 1;
        }
        let name = self.p.get(from..self.at).unwrap_or_default().to_vec();
        if self.bump() != Some(k) || self.bump() != Some(b']') {
            return self.err(if k == b':' { PatternProblem::Ctype } else { PatternProblem::Collate });
        }
        Ok(name)
    }

    fn brace(&mut self) -> Res<Tok> {
        let Some(c) = self.bump() else { return self.err(PatternProblem::Brace) };
        Ok(match c {
            b'0'..=b'9' => {
                let from = self.at - 1;
                while self.peek().is_some_and(|d| d.is_ascii_digit()) {
                    self.at += 1;
                }
                Tok::Count(self.p.get(from..self.at).unwrap_or_default().to_vec())
            }
            b',' => Tok::Comma,
            b'}' => {
                self.state = State::Normal;
                Tok::CountEnd
            }
            _ => return self.err(PatternProblem::BadBrace),
        })
    }
}

/// A compiled piece: its `regex` syntax, the libstdc++ automaton states a copy of it takes, and
/// the nesting depth of its syntax as the `regex` crate's parser counts it (each group,
/// repetition, alternation, concatenation and bracketed class one level).
struct Piece {
    re: String,
    states: u64,
    depth: u32,
}

/// The deepest syntax a translation may have: below the `regex` crate's default nesting limit
/// (250), which keeps its recursive compiler within a thread's stack. Deeper is
/// [`PatternProblem::TooDeep`].
const MAX_DEPTH: u32 = 240;

/// The deepest nesting of groups and look-aheads the (recursive) compiler enters.
const MAX_GROUPS: usize = 200;

/// The compiler, as libstdc++'s `_Compiler`: recursive descent over the scanner's tokens, one
/// token ahead.
struct Compiler<'a> {
    scanner: Scanner<'a>,
    tok: Tok,
    at: usize,
    /// Automaton states inserted so far (unreachable ones, the originals of `{n}`, included).
    inserted: u64,
    /// Capturing groups opened so far (the whole match, group 0, included) and those still open.
    groups: usize,
    open: Vec<usize>,
    /// The first construct std::regex takes that we cannot translate.
    unsupported: Option<PatternError>,
    /// Groups and look-aheads open around the current token.
    nesting: usize,
}

impl Compiler<'_> {
    fn advance(&mut self) -> Res<()> {
        (self.tok, self.at) = self.scanner.next()?;
        Ok(())
    }

    fn err<T>(&self, problem: PatternProblem) -> Res<T> {
        Err(PatternError { offset: self.at, problem })
    }

    /// Takes the current token if `f` accepts it.
    fn take(&mut self, f: impl Fn(&Tok) -> bool) -> Res<Option<Tok>> {
        if !f(&self.tok) {
            return Ok(None);
        }
        let t = std::mem::replace(&mut self.tok, Tok::Eof);
        self.advance()?;
        Ok(Some(t))
    }

    fn is(&mut self, t: &Tok) -> Res<bool> {
        Ok(self.take(|x| x == t)?.is_some())
    }

    /// Inserts `n` automaton states, refusing the pattern (`error_space`) once there are more
    /// than the limit, where libstdc++'s `_M_insert_state` throws: at the insertion, so that an
    /// error found later in the pattern (an unbalanced `)`, a bad count) is not reached.
    fn insert(&mut self, n: u64) -> Res<()> {
        self.inserted = self.inserted.saturating_add(n);
        if self.inserted > STATE_LIMIT {
            return self.err(PatternProblem::Space);
        }
        Ok(())
    }

    /// The disjunction inside a group or look-ahead, its opening taken: refused
    /// ([`PatternProblem::TooDeep`]) past [`MAX_GROUPS`] levels, before the recursion goes on.
    fn group_content(&mut self) -> Res<Piece> {
        if self.nesting >= MAX_GROUPS {
            return self.err(PatternProblem::TooDeep);
        }
        self.nesting += 1;
        let inner = self.disjunction();
        self.nesting -= 1;
        inner
    }

    /// `piece`, unless its syntax is nested deeper than [`MAX_DEPTH`].
    fn within_depth(&self, piece: Piece) -> Res<Piece> {
        if piece.depth > MAX_DEPTH {
            return self.err(PatternProblem::TooDeep);
        }
        Ok(piece)
    }

    fn disjunction(&mut self) -> Res<Piece> {
        let first = self.alternative()?;
        let mut alts = vec![first.re];
        let mut states = first.states;
        let mut depth = first.depth;
        while self.is(&Tok::Or)? {
            let next = self.alternative()?;
            alts.push(next.re);
            depth = depth.max(next.depth);
            // An end and an alternation state per `|`.
            self.insert(2)?;
            states = states.saturating_add(next.states).saturating_add(2);
        }
        if alts.len() == 1 {
            return Ok(Piece { re: alts.pop().unwrap_or_default(), states, depth });
        }
        // A group holding an alternation.
        self.within_depth(Piece { re: format!("(?:{})", alts.join("|")), states, depth: depth + 2 })
    }

    fn alternative(&mut self) -> Res<Piece> {
        let mut re = String::new();
        let mut states = 1u64;
        let (mut depth, mut terms) = (0, 0);
        while let Some(t) = self.term()? {
            re.push_str(&t.re);
            states = states.saturating_add(t.states);
            depth = depth.max(t.depth);
            terms += 1;
        }
        // More than one term is a concatenation.
        let depth = if terms > 1 { depth + 1 } else { depth };
        // The empty alternative that ends every sequence.
        self.insert(1)?;
        self.within_depth(Piece { re, states, depth })
    }

    fn term(&mut self) -> Res<Option<Piece>> {
        if let Some(a) = self.assertion()? {
            return Ok(Some(a));
        }
        let Some(mut atom) = self.atom()? else { return Ok(None) };
        while self.quantifier(&mut atom)? {}
        Ok(Some(atom))
    }

    fn assertion(&mut self) -> Res<Option<Piece>> {
        let re = match &self.tok {
            Tok::LineBegin => "^",
            Tok::LineEnd => "$",
            Tok::WordBound { negated: false } => "\\b",
            Tok::WordBound { negated: true } => "\\B",
            Tok::LookAhead => {
                let at = self.at;
                self.advance()?;
                let inner = self.group_content()?;
                if !self.is(&Tok::GroupEnd)? {
                    return self.err(PatternProblem::Paren);
                }
                self.insert(2)?;
                self.unsupported.get_or_insert(PatternError { offset: at, problem: PatternProblem::LookAhead });
                return Ok(Some(Piece { re: String::new(), states: inner.states.saturating_add(2), depth: 0 }));
            }
            _ => return Ok(None),
        };
        self.advance()?;
        self.insert(1)?;
        Ok(Some(Piece { re: re.to_owned(), states: 1, depth: 0 }))
    }

    /// Applies the quantifier that follows `atom`, if one does (whether one did).
    fn quantifier(&mut self, atom: &mut Piece) -> Res<bool> {
        let Piece { re, states, depth } = atom;
        let states = *states;
        // A group and a repetition around the atom.
        let depth = *depth + 2;
        let wrap = |op: &str| format!("(?:{re}){op}");
        // A `?` after a quantifier makes it lazy, which changes no match's existence.
        let piece = match &self.tok {
            Tok::Star | Tok::Plus | Tok::Question => {
                let extra = if self.tok == Tok::Question { 2 } else { 1 };
                let op = match self.tok {
                    Tok::Star => "*",
                    Tok::Plus => "+",
                    _ => "?",
                };
                self.advance()?;
                self.is(&Tok::Question)?;
                self.insert(extra)?;
                Piece { re: wrap(op), states: states.saturating_add(extra), depth }
            }
            Tok::CountBegin => {
                self.advance()?;
                let Some(Tok::Count(min)) = self.take(|t| matches!(t, Tok::Count(_)))? else {
                    return self.err(PatternProblem::BadBrace);
                };
                let min = c_int(&min);
                // The empty state that starts the whole, inserted once the first count is read.
                self.insert(1)?;
                let mut max = None;
                let mut unbounded = false;
                if self.is(&Tok::Comma)? {
                    match self.take(|t| matches!(t, Tok::Count(_)))? {
                        Some(Tok::Count(m)) => max = Some(c_int(&m)),
                        _ => unbounded = true,
                    }
                }
                if !self.is(&Tok::CountEnd)? {
                    return self.err(PatternProblem::Brace);
                }
                self.is(&Tok::Question)?;
                // libstdc++ copies the atom min times (the state limit checked as it goes, before
                // the order of the counts), then once more with a repeat state (`{n,}`), or
                // (max - min) times each with a repeat state after an empty state that ends the
                // whole. A negative min (a count past `int`) makes no copy.
                let copies = u64::try_from(min.max(0)).unwrap_or(0);
                let copied = copies.saturating_mul(states);
                self.insert(copied)?;
                let optional = match max {
                    Some(m) => {
                        let n = i64::from(m) - i64::from(min);
                        if n < 0 {
                            return self.err(PatternProblem::BadBrace);
                        }
                        u64::try_from(n).unwrap_or(0)
                    }
                    None => 0,
                };
                let tail = if unbounded {
                    states.saturating_add(1)
                } else {
                    optional.saturating_mul(states.saturating_add(1)).saturating_add(1)
                };
                self.insert(tail)?;
                // The starting empty state, the copies, the rest.
                let total = copied.saturating_add(1).saturating_add(tail);
                let re = if unbounded {
                    format!("(?:{re}){{{copies},}}")
                } else {
                    format!("(?:{re}){{{copies},{}}}", copies + optional)
                };
                Piece { re, states: total, depth }
            }
            _ => return Ok(false),
        };
        *atom = self.within_depth(piece)?;
        Ok(true)
    }

    fn atom(&mut self) -> Res<Option<Piece>> {
        // A matcher: one state; a literal byte, or a bracketed class (one level).
        let one = |c: &mut Self, re: String| -> Res<Piece> {
            c.insert(1)?;
            let depth = u32::from(re.starts_with('['));
            Ok(Piece { re, states: 1, depth })
        };
        let at = self.at;
        let piece = match std::mem::replace(&mut self.tok, Tok::Eof) {
            Tok::Any => {
                self.advance()?;
                one(self, ByteSet::of(|c| c != b'\n' && c != b'\r').to_class())?
            }
            Tok::Char(c) => {
                self.advance()?;
                one(self, format!("\\x{c:02x}"))?
            }
            Tok::Backref(digits) => {
                self.advance()?;
                // Read as a count is (a C `int`, wrapping); a negative one is no group.
                let index = usize::try_from(c_int(&digits)).ok();
                match index {
                    Some(i) if i < self.groups && !self.open.contains(&i) => {
                        self.unsupported
                            .get_or_insert(PatternError { offset: at, problem: PatternProblem::BackReference });
                    }
                    _ => return Err(PatternError { offset: at, problem: PatternProblem::Backref }),
                }
                one(self, String::new())?
            }
            Tok::QuotedClass(c) => {
                self.advance()?;
                let f = class_by_name(&[c]).unwrap_or(|_| false);
                let negated = c.is_ascii_uppercase();
                one(self, ByteSet::of(|b| f(b) != negated).to_class())?
            }
            Tok::Group { capturing } => {
                self.advance()?;
                // The group's first state (a capturing group's begin, an empty state for
                // `(?:`) comes before its content; a capturing group's end after.
                self.insert(1)?;
                if capturing {
                    self.open.push(self.groups);
                    self.groups += 1;
                }
                let inner = self.group_content()?;
                if !self.is(&Tok::GroupEnd)? {
                    return self.err(PatternProblem::Paren);
                }
                if capturing {
                    self.open.pop();
                }
                let extra = if capturing { 2 } else { 1 };
                self.insert(extra - 1)?;
                self.within_depth(Piece {
                    re: format!("(?:{})", inner.re),
                    states: inner.states.saturating_add(extra),
                    depth: inner.depth + 1,
                })?
            }
            Tok::Bracket { negated } => {
                self.advance()?;
                let set = self.bracket(negated)?;
                one(self, set.to_class())?
            }
            other => {
                self.tok = other;
                return Ok(None);
            }
        };
        Ok(Some(piece))
    }

    /// The bytes a bracket expression matches, its `[` or `[^` taken.
    fn bracket(&mut self, negated: bool) -> Res<ByteSet> {
        let mut chars: Vec<u8> = Vec::new();
        // Ranges, as signed `char`s.
        let mut ranges: Vec<(i8, i8)> = Vec::new();
        let mut classes: Vec<fn(u8) -> bool> = Vec::new();
        let mut negated_classes: Vec<fn(u8) -> bool> = Vec::new();
        let mut equivalent: Vec<u8> = Vec::new();
        // The last item: a character not yet added (it may start a range), or a class.
        #[derive(Clone, Copy, PartialEq)]
        enum Last {
            None,
            Char(u8),
            Class,
        }
        let mut last = Last::None;
        let range = |l: u8, r: u8, at: usize| -> Res<(i8, i8)> {
            let (l, r) = (i8::from_le_bytes([l]), i8::from_le_bytes([r]));
            if l > r {
                return Err(PatternError { offset: at, problem: PatternProblem::Range });
            }
            Ok((l, r))
        };
        let push_char = |last: &mut Last, chars: &mut Vec<u8>, c: u8| {
            if let Last::Char(p) = *last {
                chars.push(p);
            }
            *last = Last::Char(c);
        };
        let push_class = |last: &mut Last, chars: &mut Vec<u8>| {
            if let Last::Char(p) = *last {
                chars.push(p);
            }
            *last = Last::Class;
        };
        loop {
            let at = self.at;
            match std::mem::replace(&mut self.tok, Tok::Eof) {
                Tok::BracketEnd => {
                    self.advance()?;
                    break;
                }
                Tok::Collating(name) => {
                    self.advance()?;
                    let Some(c) = collating_name(&name) else {
                        return Err(PatternError { offset: at, problem: PatternProblem::Collate });
                    };
                    chars.push(c);
                    push_char(&mut last, &mut chars, c);
                }
                Tok::Equivalence(name) => {
                    self.advance()?;
                    push_class(&mut last, &mut chars);
                    let Some(c) = collating_name(&name) else {
                        return Err(PatternError { offset: at, problem: PatternProblem::Collate });
                    };
                    equivalent.push(c.to_ascii_lowercase());
                }
                Tok::ClassName(name) => {
                    self.advance()?;
                    push_class(&mut last, &mut chars);
                    let Some(f) = class_by_name(&name) else {
                        return Err(PatternError { offset: at, problem: PatternProblem::Collate });
                    };
                    classes.push(f);
                }
                Tok::Char(c) => {
                    self.advance()?;
                    push_char(&mut last, &mut chars, c);
                }
                Tok::Dash => {
                    self.advance()?;
                    if self.is(&Tok::BracketEnd)? {
                        push_char(&mut last, &mut chars, b'-');
                        break;
                    }
                    match last {
                        Last::Class => return Err(PatternError { offset: at, problem: PatternProblem::Range }),
                        Last::Char(l) => {
                            let end_at = self.at;
                            let r = match std::mem::replace(&mut self.tok, Tok::Eof) {
                                Tok::Char(r) => r,
                                Tok::Dash => b'-',
                                other => {
                                    self.tok = other;
                                    return Err(PatternError { offset: end_at, problem: PatternProblem::Range });
                                }
                            };
                            self.advance()?;
                            ranges.push(range(l, r, end_at)?);
                            last = Last::None;
                        }
                        // First in the bracket, or after a range: a character, which may start
                        // a range (`[--/]`, `[a-c-e]`).
                        Last::None => push_char(&mut last, &mut chars, b'-'),
                    }
                }
                Tok::QuotedClass(c) => {
                    self.advance()?;
                    push_class(&mut last, &mut chars);
                    let f = class_by_name(&[c]).unwrap_or(|_| false);
                    if c.is_ascii_uppercase() {
                        negated_classes.push(f);
                    } else {
                        classes.push(f);
                    }
                }
                Tok::Eof => return Err(PatternError { offset: at, problem: PatternProblem::Bracket }),
                other => {
                    self.tok = other;
                    return Err(PatternError { offset: at, problem: PatternProblem::Bracket });
                }
            }
        }
        if let Last::Char(c) = last {
            chars.push(c);
        }
        Ok(ByteSet::of(|b| {
            let s = i8::from_le_bytes([b]);
            let hit = chars.contains(&b)
                || ranges.iter().any(|&(l, r)| l <= s && s <= r)
                || classes.iter().any(|f| f(b))
                || equivalent.contains(&b.to_ascii_lowercase())
                || negated_classes.iter().any(|f| !f(b));
            hit != negated
        }))
    }
}

/// A C `int` from decimal digits, as libstdc++ reads a count: accumulated in a `long` (wrapping),
/// then cut to `int`.
fn c_int(digits: &[u8]) -> i32 {
    let v = digits.iter().fold(0i64, |v, d| v.wrapping_mul(10).wrapping_add(i64::from(d - b'0')));
    i32::from_le_bytes(v.to_le_bytes()[..4].try_into().unwrap_or_default())
}

/// The `regex` syntax (for [`regex::bytes`] with Unicode off) that matches what the ECMAScript
/// pattern `pattern` matches under libstdc++'s `std::regex_search`, or why it is refused.
pub(crate) fn translate(pattern: &[u8]) -> Result<String, PatternError> {
    let mut c = Compiler {
        scanner: Scanner { p: pattern, at: 0, state: State::Normal },
        tok: Tok::Eof,
        at: 0,
        // The whole match's begin; its end and the accepting state come after.
        inserted: 1,
        groups: 1,
        open: vec![0],
        unsupported: None,
        nesting: 0,
    };
    c.advance()?;
    let whole = c.disjunction()?;
    if c.tok != Tok::Eof {
        return c.err(PatternProblem::Paren);
    }
    // The whole match's end and the accepting state.
    c.insert(2)?;
    if let Some(e) = c.unsupported {
        return Err(e);
    }
    Ok(whole.re)
}

/// The regular expression of a [`translate`]d pattern, compiled as every pattern is: over bytes,
/// Unicode off (`\xNN` is a byte, classes are of bytes), with room for any pattern [`translate`]
/// gives (within the state limit and [`MAX_DEPTH`]).
pub(crate) fn compile(syntax: &str) -> Result<regex::bytes::Regex, regex::Error> {
    regex::bytes::RegexBuilder::new(syntax).unicode(false).size_limit(REGEX_SIZE_LIMIT).build()
}

/// The compiled size a pattern may take: enough for any pattern within the state limit
/// (`[^a]{99990}` takes about 20 MB).
const REGEX_SIZE_LIMIT: usize = 1 << 28;

#[cfg(test)]
mod tests;
