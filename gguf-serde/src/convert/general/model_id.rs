//! What a model id or folder name says (gguf-py's `Metadata.get_model_id_components` and its
//! heuristics), the title-casing of names, and the size label from the parameter counts.

use super::*;

/// What a Hugging Face model id (`org/name` or a folder name) says, as gguf-py's
/// `Metadata.get_model_id_components` returns it: `(name, organization, basename, finetune,
/// version, size_label)`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ModelIdParts {
    /// The name part (after `org/`), unchanged.
    pub name: Option<String>,
    /// The organization (before `/`), unless it starts with `.`.
    pub organization: Option<String>,
    /// The base model name (`Mixtral`, `Qwen1.5-MoE`).
    pub basename: Option<String>,
    /// The finetune (`Instruct`, `chat-1m`).
    pub finetune: Option<String>,
    /// The version (`v0.1`, `2407`).
    pub version: Option<String>,
    /// The size label (`8x7B`, `57B-A14B`, `mini`).
    pub size_label: Option<String>,
}

/// Python's `str.islower()`: at least one cased character, and all cased characters lowercase.
fn py_islower(s: &str) -> bool {
    let mut cased = false;
    for c in s.chars() {
        if c.is_uppercase() {
            return false;
        }
        if c.is_lowercase() {
            cased = true;
        }
    }
    cased
}

/// Python's `str.title()`: each run of cased letters starts uppercase and goes on lowercase.
fn py_title(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut prev_cased = false;
    for c in s.chars() {
        let cased = c.is_uppercase() || c.is_lowercase();
        if cased && !prev_cased {
            out.extend(c.to_uppercase());
        } else if cased {
            out.extend(c.to_lowercase());
        } else {
            out.push(c);
        }
        prev_cased = cased;
    }
    out
}

fn is_decimal(c: char) -> bool {
    c.is_ascii_digit()
}

/// A pattern of the reference's heuristics, compiled once. The patterns are constants of this
/// file (each compiled by the unit tests), never built from input, so `Regex::new` cannot fail
/// whatever a checkpoint holds.
fn constant_re(pattern: &'static str) -> Regex {
    Regex::new(pattern).expect("a constant pattern of this module")
}

/// Words `id_to_title` keeps as they are: versions and words starting with a digit.
pub(super) static TITLE_KEEP_RE: LazyLock<Regex> = LazyLock::new(|| constant_re(r"^(v\d+(?:\.\d+)*|\d.*)"));
/// A version part of a model id (`v0.1`, `iter3`, `2.5`).
pub(super) static VERSION_RE: LazyLock<Regex> = LazyLock::new(|| constant_re(r"(?i)^(v|iter)?\d+([.]\d+)*$"));
/// A weight-type part (`q4_k`, `fp16`, `bf16`).
pub(super) static TYPE_RE: LazyLock<Regex> = LazyLock::new(|| constant_re(r"(?i)^(i?q\d(_\w)*|b?fp?(16|32))$"));
/// A size part (`7B`, `8x7B`, `A3B`, `small`, `xl`).
pub(super) static SIZE_RE: LazyLock<Regex> =
    LazyLock::new(|| constant_re(r"(?i)^(([A]|\d+[x])?\d+([._]\d+)?[KMBT][\d]?|small|mini|medium|large|x?xl)$"));
/// A finetune part (`chat`, `instruct`, `vision`, `lora`).
pub(super) static FINETUNE_RE: LazyLock<Regex> = LazyLock::new(|| constant_re(r"(?i)^(chat|instruct|vision|lora)$"));

/// A Hugging Face model URL, capturing `OWNER/REPO`.
pub(super) static HF_URL_RE: LazyLock<Regex> =
    LazyLock::new(|| constant_re(r"^https?://huggingface.co/([^/]+/[^/]+)$"));

/// gguf-py's `Metadata.id_to_title`: dashes to spaces, and each all-lowercase word title-cased
/// unless it is a version (`v0.1`) or starts with a digit (`8b`). `"Mixtral-8x7B-Instruct-v0.1"`
/// → `"Mixtral 8x7B Instruct v0.1"`.
pub fn id_to_title(s: &str) -> String {
    let keep = &*TITLE_KEEP_RE;
    s.trim()
        .replace('-', " ")
        .split_whitespace()
        .map(|w| if py_islower(w) && !keep.is_match(w) { py_title(w) } else { w.to_string() })
        .collect::<Vec<_>>()
        .join(" ")
}

#[derive(Default, Clone)]
struct Tags {
    basename: bool,
    size_label: bool,
    finetune: bool,
    version: bool,
    kind: bool,
}

impl Tags {
    fn is_empty(&self) -> bool {
        !(self.basename || self.size_label || self.finetune || self.version || self.kind)
    }
    fn count(&self) -> usize {
        [self.basename, self.size_label, self.finetune, self.version, self.kind].iter().filter(|b| **b).count()
    }
}

/// gguf-py's `Metadata.get_model_id_components(model_id, total_params)`: splits a model id into
/// its parts by the reference's heuristics. `total_params` (0 = unknown, negative = a LoRA
/// adapter) demotes a size in the name that is far from the real size to a finetune (a context
/// length like `4k`). An id with a space is a plain name; an id with neither size, finetune nor
/// version gives no basename.
pub fn model_id_components(model_id: &str, total_params: i64) -> ModelIdParts {
    if model_id.contains(' ') {
        return ModelIdParts { name: Some(model_id.to_string()), ..Default::default() };
    }
    let (mut org, full) = match model_id.split_once('/') {
        Some((o, n)) => (Some(o.to_string()), n.to_string()),
        None => (None, model_id.to_string()),
    };
    if org.as_deref().is_some_and(|o| o.starts_with('.')) {
        org = None;
    }
    let mut parts: Vec<String> = full.split('-').filter(|p| !p.is_empty()).map(str::to_string).collect();
    let mut tags = vec![Tags::default(); parts.len()];
    let (version_re, type_re, size_re, finetune_re) = (&*VERSION_RE, &*TYPE_RE, &*SIZE_RE, &*FINETUNE_RE);
    for i in 0..parts.len() {
        let part = parts[i].clone();
        if version_re.is_match(&part) {
            tags[i].version = true;
        } else if type_re.is_match(&part) {
            tags[i].kind = true;
            parts[i] = part.to_uppercase();
        } else if i > 0 && size_re.is_match(&part) {
            let mut p: Vec<char> = part.replace('_', ".").chars().collect();
            // bloom-7b1: the digit after the unit is the first decimal
            if p.last().is_some_and(|c| is_decimal(*c)) && p.len() >= 2 {
                let n = p.len();
                let (unit, last) = (p[n - 2], p[n - 1]);
                p.truncate(n - 2);
                p.extend(['.', last, unit]);
            }
            let n = p.len();
            if n > 1 && is_decimal(p[n - 2]) && "kmbt".contains(p[n - 1]) {
                p[n - 1] = p[n - 1].to_ascii_uppercase();
            }
            let mut part: String = p.iter().collect();
            if total_params != 0 {
                let n = p.len();
                let number: String = p[..n - 1].iter().collect();
                if let Ok(x) = number.parse::<f64>() {
                    // " KMBT".find(unit): -1 when absent, as in Python
                    let idx = " KMBT".find(p[n - 1]).map_or(-1, |i| i as i32);
                    let label = x * 1000f64.powi(idx);
                    let t = total_params;
                    let far = (t < 0 && label < (t.unsigned_abs() / 8) as f64)
                        || (t > 0 && (label - t as f64).abs() > (7 * t).div_euclid(8) as f64);
                    if far {
                        tags[i].finetune = true;
                        let last = p[n - 1].to_lowercase().collect::<String>();
                        part = format!("{number}{last}");
                    }
                }
            }
            if tags[i].is_empty() {
                tags[i].size_label = true;
            }
            parts[i] = part;
        } else if i > 0 && finetune_re.is_match(&part) {
            if total_params < 0 && part.to_lowercase() == "lora" {
                tags[i].kind = true;
            } else {
                tags[i].finetune = true;
            }
        }
    }
    // Word sizes (mini, large) give way to a numeric one
    let numeric = parts.iter().zip(&tags).any(|(n, t)| t.size_label && n.chars().any(is_decimal));
    if numeric {
        for (n, t) in parts.iter().zip(tags.iter_mut()) {
            if t.size_label && n.chars().all(char::is_alphabetic) {
                t.size_label = false;
            }
        }
    }
    let mut at_start = true;
    for (part, t) in parts.iter().zip(tags.iter_mut()) {
        let starts_alpha = part.chars().next().is_some_and(char::is_alphabetic);
        if at_start && ((t.is_empty() && starts_alpha) || t.version) {
            t.basename = true;
        } else {
            at_start = false;
            if t.is_empty() {
                t.finetune = true;
            }
        }
    }
    for t in tags.iter_mut().rev() {
        if t.basename && t.count() > 1 {
            t.basename = false;
        } else {
            break;
        }
    }
    let join = |f: &dyn Fn(&Tags) -> bool| {
        let v: Vec<&str> = parts.iter().zip(&tags).filter(|(_, t)| f(t)).map(|(n, _)| n.as_str()).collect();
        if v.is_empty() {
            None
        } else {
            Some(v.join("-"))
        }
    };
    let mut basename = join(&|t| t.basename);
    let mut sizes: Vec<&str> = Vec::new();
    for (n, t) in parts.iter().zip(&tags) {
        if t.size_label && !sizes.contains(&n.as_str()) {
            sizes.push(n);
        }
    }
    let size_label = if sizes.is_empty() { None } else { Some(sizes.join("-")) };
    let finetune = join(&|t| t.finetune);
    let version = join(&|t| t.version && !t.basename);
    if size_label.is_none() && finetune.is_none() && version.is_none() {
        basename = None;
    }
    ModelIdParts { name: Some(full), organization: org, basename, finetune, version, size_label }
}

/// gguf-py's `utility.model_weight_count_rounded_notation`: `n` scaled to K, M, B or T (the
/// first whose threshold `n` exceeds, from T down; K otherwise) with enough decimals for
/// `min_digits` significant digits: 4,200,000 → `"4.2M"`, 268,098,176 → `"268M"`.
pub fn weight_count_rounded(n: u64, min_digits: usize) -> String {
    let x = n as f64;
    let (scaled, suffix) = if x > 1e12 {
        (x * 1e-12, "T")
    } else if x > 1e9 {
        (x * 1e-9, "B")
    } else if x > 1e6 {
        (x * 1e-6, "M")
    } else {
        (x * 1e-3, "K")
    };
    let digits = format!("{}", scaled.round_ties_even() as u64);
    let digits = digits.trim_start_matches('0').len();
    let fix = min_digits.saturating_sub(digits);
    format!("{scaled:.fix$}{suffix}")
}

/// gguf-py's `utility.size_label`: `"{experts}x{shared + expert}"` for a mixture of experts,
/// else the rounded total (absolute values, so a LoRA's negative count works too).
pub fn size_label(p: &ParamCounts) -> String {
    if p.expert_count > 0 {
        let pretty = weight_count_rounded(p.shared.unsigned_abs() + p.expert.unsigned_abs(), 2);
        format!("{}x{pretty}", p.expert_count)
    } else {
        weight_count_rounded(p.total.unsigned_abs(), 2)
    }
}
