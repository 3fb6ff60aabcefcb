//! Which instruction sets the kernels may use: detected once per process, then passed down to
//! every kernel as an [`Isa`] value, and chosen at each SIMD call site by the one [`simd!`] macro.
//!
//! Holding an [`Isa`] that has a feature proves the CPU has it: the only values are
//! [`Isa::detected`] and [`Isa::portable`] (no features), so a kernel given one may call that
//! feature's code. Tests and benchmarks pass [`Isa::portable`] to run the portable code on a
//! machine with AVX2 (no process-wide switch). Setting the environment variable
//! `GGUF_CODEC_NO_SIMD` (read once, at detection) makes the detected value portable too.

use std::sync::OnceLock;

/// The SIMD features the codec kernels may use (see the module docs): the CPU's, or none.
///
/// Results are the same bits with every value; only speed differs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Isa {
    avx2: bool,
    f16c: bool,
}

impl Isa {
    /// No SIMD: the portable kernels only.
    pub const fn portable() -> Isa {
        Isa { avx2: false, f16c: false }
    }

    /// What this CPU supports (x86-64: AVX2 and F16C), detected on the first call; portable when
    /// the environment variable `GGUF_CODEC_NO_SIMD` is set at that time.
    pub fn detected() -> Isa {
        static DETECTED: OnceLock<Isa> = OnceLock::new();
        *DETECTED.get_or_init(|| {
            if std::env::var_os("GGUF_CODEC_NO_SIMD").is_some() {
                return Isa::portable();
            }
            #[cfg(target_arch = "x86_64")]
            {
                Isa {
                    avx2: std::arch::is_x86_feature_detected!("avx2"),
                    f16c: std::arch::is_x86_feature_detected!("f16c"),
                }
            }
            #[cfg(not(target_arch = "x86_64"))]
            {
                Isa::portable()
            }
        })
    }

    /// Whether AVX2 may be used.
    #[inline(always)]
    pub(crate) fn avx2(self) -> bool {
        self.avx2
    }

    /// Whether AVX2 and F16C may be used.
    #[inline(always)]
    pub(crate) fn avx2_f16c(self) -> bool {
        self.avx2 && self.f16c
    }
}

/// For tests of SIMD code against the portable code: whether `isa` lacks AVX2, in which case the
/// calling test should return early, and this reports it as skipped (a `SKIPPED: <test>: ...`
/// line written past libtest's capture, which `scripts/test.sh` counts) rather than let it pass
/// silently. A CPU without AVX2 is a skip; `GGUF_CODEC_NO_SIMD` under `CI` is a failure.
#[cfg(test)]
pub(crate) fn skip_without_avx2(isa: Isa) -> bool {
    use std::io::Write as _;
    if isa.avx2() {
        return false;
    }
    let current = std::thread::current();
    let test = current.name().unwrap_or("?");
    let var = std::env::var_os("GGUF_CODEC_NO_SIMD").is_some();
    let ci = std::env::var("CI").is_ok_and(|v| v != "false" && v != "0");
    assert!(!(var && ci), "{test}: GGUF_CODEC_NO_SIMD is set under CI: the SIMD code would not be checked");
    let why = if var { "GGUF_CODEC_NO_SIMD is set" } else { "this CPU has no AVX2" };
    let _ = writeln!(std::io::stderr(), "SKIPPED: {test}: {why}, SIMD code not compared with the portable code");
    true
}

/// The one way a kernel picks its SIMD or portable code:
/// `simd!(if isa.avx2() { unsafe_call(..) } else { portable(..) })`.
///
/// The first block runs (in `unsafe`) when `isa` has the feature the method names and the target
/// is x86-64; otherwise the second. Its code may call `#[target_feature]` functions of that
/// feature: an [`Isa`] only has a feature the CPU has (see the module docs). Functions called in
/// the first block must be sound for any argument values besides the feature.
macro_rules! simd {
    (if $isa:ident . $feature:ident () $simd:block else $portable:block) => {{
        #[cfg(target_arch = "x86_64")]
        {
            if $isa.$feature() {
                // SAFETY: `$isa` has the feature only if the CPU does (see `codec::isa`).
                #[allow(unsafe_code, unused_unsafe)]
                unsafe {
                    $simd
                }
            } else {
                $portable
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            let _ = $isa;
            $portable
        }
    }};
}
pub(crate) use simd;
