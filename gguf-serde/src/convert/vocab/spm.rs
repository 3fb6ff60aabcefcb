//! A SentencePiece `tokenizer.model`: the `ModelProto` protobuf message of sentencepiece's
//! `sentencepiece_model.proto`, decoded by a small wire-format reader.
//!
//! Only the fields llama.cpp's converter reads are kept: each piece's text, score and type
//! (`ModelProto.pieces`, field 1), and the normalizer's `add_dummy_prefix`,
//! `remove_extra_whitespaces` and `precompiled_charsmap` (`ModelProto.normalizer_spec`,
//! field 3). Other fields are skipped by their wire type. Every read is bounds-checked: a
//! truncated or malformed message is a [`ProtoError`] with the byte offset, never a panic, and
//! nothing is allocated beyond the input's own length.

/// The type of a piece (`SentencePiece.Type`; values as sentencepiece and llama.cpp number them).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PieceType {
    /// 1: an ordinary piece (also the default when the field is absent).
    Normal,
    /// 2: the unknown piece.
    Unknown,
    /// 3: a control piece (`<s>`, `</s>`).
    Control,
    /// 4: a user-defined piece.
    UserDefined,
    /// 5: an unused piece.
    Unused,
    /// 6: a byte piece (`<0x41>`).
    Byte,
}

/// One piece of the vocabulary.
#[derive(Clone, Debug, PartialEq)]
pub struct Piece {
    /// The piece's text (UTF-8, `▁` for a space).
    pub piece: String,
    /// Its score (0.0 when absent, the proto default).
    pub score: f32,
    /// Its type.
    pub kind: PieceType,
}

/// The parts of a SentencePiece model the converter uses.
#[derive(Clone, Debug, PartialEq)]
pub struct SpmModel {
    /// The pieces in id order.
    pub pieces: Vec<Piece>,
    /// `normalizer_spec.add_dummy_prefix` (proto default true).
    pub add_dummy_prefix: bool,
    /// `normalizer_spec.remove_extra_whitespaces` (proto default true).
    pub remove_extra_whitespaces: bool,
    /// `normalizer_spec.precompiled_charsmap` (empty when absent).
    pub precompiled_charsmap: Vec<u8>,
}

/// What is wrong in a protobuf message, at which byte offset of the file.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ProtoError {
    /// The input ends inside a field.
    #[error("truncated at byte {offset}: {what}")]
    Truncated {
        /// Byte offset in the file.
        offset: usize,
        /// What was being read.
        what: &'static str,
    },
    /// A varint longer than 10 bytes or beyond 64 bits.
    #[error("invalid varint at byte {offset}")]
    BadVarint {
        /// Byte offset in the file.
        offset: usize,
    },
    /// A wire type protobuf does not define (6, 7), or groups (3, 4), which ModelProto never uses.
    #[error("unsupported wire type {wire_type} of field {field} at byte {offset}")]
    BadWireType {
        /// Byte offset in the file.
        offset: usize,
        /// The field number.
        field: u64,
        /// The wire type.
        wire_type: u8,
    },
    /// A known field stored with another wire type than its declared one.
    #[error("field {field} of {message} has wire type {wire_type} at byte {offset}, expected {expected}")]
    WrongWireType {
        /// Byte offset in the file.
        offset: usize,
        /// The message.
        message: &'static str,
        /// The field number.
        field: u64,
        /// The wire type found.
        wire_type: u8,
        /// The wire type the field has.
        expected: u8,
    },
    /// A piece text that is not UTF-8.
    #[error("piece text at byte {offset} is not UTF-8")]
    BadUtf8 {
        /// Byte offset in the file.
        offset: usize,
    },
    /// A piece type outside 1..=6.
    #[error("piece type {value} at byte {offset} is not one of sentencepiece's (1..=6)")]
    BadPieceType {
        /// Byte offset in the file.
        offset: usize,
        /// The value.
        value: u64,
    },
    /// A model with no pieces.
    #[error("the model has no pieces")]
    NoPieces,
}

const VARINT: u8 = 0;
const I64: u8 = 1;
const LEN: u8 = 2;
const I32: u8 = 5;

/// A cursor over a message's bytes; offsets are absolute (`base` is where `buf` starts in the file).
struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
    base: usize,
}

impl<'a> Reader<'a> {
    fn new(buf: &'a [u8], base: usize) -> Self {
        Self { buf, pos: 0, base }
    }

    fn at(&self) -> usize {
        self.base + self.pos
    }

    fn done(&self) -> bool {
        self.pos >= self.buf.len()
    }

    fn varint(&mut self, what: &'static str) -> Result<u64, ProtoError> {
        let start = self.at();
        let mut v: u64 = 0;
        for i in 0..10 {
            let Some(&b) = self.buf.get(self.pos) else {
                return Err(ProtoError::Truncated { offset: start, what });
            };
            self.pos += 1;
            if i == 9 && b > 1 {
                return Err(ProtoError::BadVarint { offset: start });
            }
            v |= u64::from(b & 0x7f) << (7 * i);
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err(ProtoError::BadVarint { offset: start })
    }

    fn take(&mut self, n: u64, what: &'static str) -> Result<(&'a [u8], usize), ProtoError> {
        let start = self.at();
        let left = (self.buf.len() - self.pos) as u64;
        if n > left {
            return Err(ProtoError::Truncated { offset: start, what });
        }
        let n = n as usize;
        let s = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok((s, start))
    }

    /// Reads a tag: (field number, wire type, offset of the tag).
    fn tag(&mut self) -> Result<(u64, u8, usize), ProtoError> {
        let at = self.at();
        let t = self.varint("field tag")?;
        Ok((t >> 3, (t & 7) as u8, at))
    }

    fn skip(&mut self, field: u64, wire_type: u8, at: usize) -> Result<(), ProtoError> {
        match wire_type {
            VARINT => self.varint("varint field").map(drop),
            I64 => self.take(8, "fixed64 field").map(drop),
            LEN => {
                let n = self.varint("length")?;
                self.take(n, "length-delimited field").map(drop)
            }
            I32 => self.take(4, "fixed32 field").map(drop),
            _ => Err(ProtoError::BadWireType { offset: at, field, wire_type }),
        }
    }
}

fn expect(message: &'static str, field: u64, wire_type: u8, expected: u8, at: usize) -> Result<(), ProtoError> {
    if wire_type == expected {
        Ok(())
    } else {
        Err(ProtoError::WrongWireType { offset: at, message, field, wire_type, expected })
    }
}

fn piece(buf: &[u8], base: usize) -> Result<Piece, ProtoError> {
    let mut r = Reader::new(buf, base);
    let mut out = Piece { piece: String::new(), score: 0.0, kind: PieceType::Normal };
    while !r.done() {
        let (field, wt, at) = r.tag()?;
        match field {
            1 => {
                expect("SentencePiece", 1, wt, LEN, at)?;
                let n = r.varint("piece length")?;
                let (s, off) = r.take(n, "piece text")?;
                out.piece = std::str::from_utf8(s).map_err(|_| ProtoError::BadUtf8 { offset: off })?.to_owned();
            }
            2 => {
                expect("SentencePiece", 2, wt, I32, at)?;
                let (s, _) = r.take(4, "piece score")?;
                out.score = f32::from_le_bytes([s[0], s[1], s[2], s[3]]);
            }
            3 => {
                expect("SentencePiece", 3, wt, VARINT, at)?;
                let v = r.varint("piece type")?;
                out.kind = match v {
                    1 => PieceType::Normal,
                    2 => PieceType::Unknown,
                    3 => PieceType::Control,
                    4 => PieceType::UserDefined,
                    5 => PieceType::Unused,
                    6 => PieceType::Byte,
                    value => return Err(ProtoError::BadPieceType { offset: at, value }),
                };
            }
            _ => r.skip(field, wt, at)?,
        }
    }
    Ok(out)
}

fn bool_field(r: &mut Reader<'_>, message: &'static str, field: u64, wt: u8, at: usize) -> Result<bool, ProtoError> {
    expect(message, field, wt, VARINT, at)?;
    Ok(r.varint("bool field")? != 0)
}

/// Decodes a `tokenizer.model` (sentencepiece `ModelProto`).
///
/// Protobuf's rules apply: a field repeated outside `pieces` keeps its last value, unknown
/// fields are skipped. A model without pieces is refused, as sentencepiece's loader refuses it.
pub fn parse_model(buf: &[u8]) -> Result<SpmModel, ProtoError> {
    let mut r = Reader::new(buf, 0);
    let mut m = SpmModel {
        pieces: Vec::new(),
        add_dummy_prefix: true,
        remove_extra_whitespaces: true,
        precompiled_charsmap: Vec::new(),
    };
    while !r.done() {
        let (field, wt, at) = r.tag()?;
        match field {
            1 => {
                expect("ModelProto", 1, wt, LEN, at)?;
                let n = r.varint("piece message length")?;
                let (s, off) = r.take(n, "piece message")?;
                m.pieces.push(piece(s, off)?);
            }
            3 => {
                expect("ModelProto", 3, wt, LEN, at)?;
                let n = r.varint("normalizer_spec length")?;
                let (s, off) = r.take(n, "normalizer_spec")?;
                let mut nr = Reader::new(s, off);
                while !nr.done() {
                    let (f, w, a) = nr.tag()?;
                    match f {
                        2 => {
                            expect("NormalizerSpec", 2, w, LEN, a)?;
                            let n = nr.varint("precompiled_charsmap length")?;
                            m.precompiled_charsmap = nr.take(n, "precompiled_charsmap")?.0.to_vec();
                        }
                        3 => m.add_dummy_prefix = bool_field(&mut nr, "NormalizerSpec", 3, w, a)?,
                        4 => m.remove_extra_whitespaces = bool_field(&mut nr, "NormalizerSpec", 4, w, a)?,
                        _ => nr.skip(f, w, a)?,
                    }
                }
            }
            _ => r.skip(field, wt, at)?,
        }
    }
    if m.pieces.is_empty() {
        return Err(ProtoError::NoPieces);
    }
    Ok(m)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn varint(mut v: u64, out: &mut Vec<u8>) {
        loop {
            let b = (v & 0x7f) as u8;
            v >>= 7;
            if v == 0 {
                out.push(b);
                return;
            }
            out.push(b | 0x80);
        }
    }

    fn piece_msg(text: &str, score: f32, kind: Option<u64>) -> Vec<u8> {
        let mut p = vec![0x0a];
        varint(text.len() as u64, &mut p);
        p.extend_from_slice(text.as_bytes());
        p.push(0x15);
        p.extend_from_slice(&score.to_le_bytes());
        if let Some(k) = kind {
            p.push(0x18);
            varint(k, &mut p);
        }
        let mut out = vec![0x0a];
        varint(p.len() as u64, &mut out);
        out.extend(p);
        out
    }

    #[test]
    fn pieces_and_normalizer() {
        let mut buf = piece_msg("<unk>", 0.0, Some(2));
        buf.extend(piece_msg("▁a", -1.5, None));
        // trainer_spec (field 2) skipped; normalizer_spec with add_dummy_prefix = false.
        buf.extend([0x12, 0x02, 0x08, 0x01]);
        buf.extend([0x1a, 0x02, 0x18, 0x00]);
        let m = parse_model(&buf).unwrap();
        assert_eq!(m.pieces.len(), 2);
        assert_eq!(m.pieces[0], Piece { piece: "<unk>".into(), score: 0.0, kind: PieceType::Unknown });
        assert_eq!(m.pieces[1], Piece { piece: "▁a".into(), score: -1.5, kind: PieceType::Normal });
        assert!(!m.add_dummy_prefix);
        assert!(m.remove_extra_whitespaces);
    }

    #[test]
    fn hostile_inputs_are_errors() {
        let good = piece_msg("ab", 1.0, Some(1));
        // Every truncation of a valid message is an error or a shorter valid message, never a panic.
        for n in 0..good.len() {
            let _ = parse_model(&good[..n]);
        }
        assert_eq!(parse_model(&[]), Err(ProtoError::NoPieces));
        assert!(matches!(parse_model(&[0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f]), Err(ProtoError::Truncated { .. })));
        assert!(matches!(parse_model(&[0x0a; 11].map(|_| 0xff)), Err(ProtoError::BadVarint { .. })));
        assert!(matches!(parse_model(&[0x17]), Err(ProtoError::BadWireType { wire_type: 7, .. })));
        assert!(matches!(parse_model(&[0x08, 0x01]), Err(ProtoError::WrongWireType { field: 1, .. })));
        assert!(matches!(parse_model(&[0x0a, 0x03, 0x0a, 0x01, 0xff]), Err(ProtoError::BadUtf8 { offset: 4 })));
        assert!(matches!(parse_model(&[0x0a, 0x02, 0x18, 0x09]), Err(ProtoError::BadPieceType { value: 9, .. })));
        // Every byte flip of a valid message gives a result, never a panic.
        for i in 0..good.len() {
            for b in [0u8, 0x7f, 0x80, 0xff] {
                let mut v = good.clone();
                v[i] = b;
                let _ = parse_model(&v);
            }
        }
    }
}
