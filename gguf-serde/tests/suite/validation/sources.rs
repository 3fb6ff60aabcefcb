//! Other sources: a reader not at the start of its stream, a reader that lies, a mapped file.

use super::*;

#[test]
fn from_reader_starts_at_the_current_position() {
    use std::io::{Seek, SeekFrom};
    let s = sample(false);
    let mut stream = vec![0xcc; 100];
    stream.extend_from_slice(&s.bytes);
    let mut c = Cursor::new(&stream);
    c.seek(SeekFrom::Start(100)).unwrap();
    let g = Gguf::from_reader(c).unwrap();
    assert_eq!((g.kv_count(), g.tensor_count(), g.file_len()), (7, 3, s.bytes.len() as u64));
    assert_eq!(g.tensor("c").unwrap().data_offset, s.data_offset + 96);
}

#[test]
fn from_reader_whose_length_lies_is_an_io_error() {
    use std::io::{Read, Seek, SeekFrom};
    /// Claims 1000 more bytes than it yields.
    struct Liar(Cursor<Vec<u8>>);
    impl Read for Liar {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            self.0.read(buf)
        }
    }
    impl Seek for Liar {
        fn seek(&mut self, pos: SeekFrom) -> std::io::Result<u64> {
            match pos {
                SeekFrom::End(d) => Ok((self.0.get_ref().len() as i64 + 1000 + d) as u64),
                p => self.0.seek(p),
            }
        }
    }
    // Metadata cut short by the lie: an I/O error.
    let s = sample(false);
    let e = Gguf::from_reader(Liar(Cursor::new(s.bytes[..100].to_vec()))).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::Io(source) if source.kind() == std::io::ErrorKind::UnexpectedEof), "{e:?}");
    // And says why: the reader ended before the length its `Seek` gave (the bytes are checked
    // against the file's length, `from_reader`'s docs), not merely that bytes ran out.
    assert!(e.to_string().contains("shorter than its length"), "{e}");
    // Metadata whole: from_reader reads no tensor data, so it trusts the claimed length.
    let g = Gguf::from_reader(Liar(Cursor::new(s.bytes.clone()))).unwrap();
    assert_eq!(g.file_len(), s.bytes.len() as u64 + 1000);
    assert_eq!(g.bytes().len() as u64, s.infos_end);
    // A reader that ends exactly where the tensor infos end has every byte the parser asks for,
    // whatever the read-ahead asked past it: read in small pieces, the last piece asked for
    // ends there. One byte fewer is the I/O error.
    let infos_end = s.infos_end as usize;
    for read_ahead in [0, 1, 3, 64, 8192] {
        let g = Gguf::from_reader_in_pieces(Liar(Cursor::new(s.bytes[..infos_end].to_vec())), read_ahead).unwrap();
        assert_eq!((g.bytes().len(), g.tensor_count()), (infos_end, 3), "read-ahead {read_ahead}");
        let e =
            Gguf::from_reader_in_pieces(Liar(Cursor::new(s.bytes[..infos_end - 1].to_vec())), read_ahead).unwrap_err();
        assert!(e.to_string().contains("shorter than its length"), "read-ahead {read_ahead}: {e}");
    }
}

#[test]
fn mapped_files_are_validated_the_same() {
    let dir = crate::common::temp_dir();
    let s = sample(false);
    for len in [0, 3, 4, 23, 24, 100, s.infos_end as usize, s.data_end as usize - 1, s.data_end as usize] {
        let path = dir.path().join(format!("cut{len}.gguf"));
        std::fs::write(&path, &s.bytes[..len]).unwrap();
        let mapped = Gguf::open(&path).map(|g| g.tensor_count());
        let slice = Gguf::from_slice(&s.bytes[..len]).map(|g| g.tensor_count());
        assert_eq!(format!("{mapped:?}"), format!("{slice:?}"), "cut at {len}");
    }
    let e = Gguf::open(dir.path().join("missing.gguf")).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::Io(source) if source.kind() == std::io::ErrorKind::NotFound), "{e:?}");
    assert!(e.to_string().starts_with("I/O error opening "), "{e}");
    // A folder is refused before it is opened, as not a regular file (`Gguf::open`'s docs), not
    // by the mapping that would fail after it (a FIFO would block in `open`).
    let e = Gguf::open(dir.path()).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::Io(source) if source.kind() == std::io::ErrorKind::InvalidInput), "{e:?}");
    assert!(e.to_string().contains("not a regular file"), "{e}");
}

#[test]
fn serde_from_reader_reads_a_key_block_longer_than_its_read_ahead() {
    // serde's `from_reader` takes a plain `Read` (no length): it reads the key/value block in
    // pieces of 8 KiB past what the parser asks for. A block of about 100 KiB, read through a
    // reader that gives a few bytes a call, reads as from the bytes in memory.
    struct Trickle<'a>(&'a [u8]);
    impl std::io::Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let n = buf.len().min(self.0.len()).min(7);
            buf[..n].copy_from_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            Ok(n)
        }
    }
    let mut w = gguf_serde::GgufWriter::new(Vec::new());
    w.add_kv("a", "x".repeat(100_000)).unwrap();
    w.add_kv("b", (0..3000u32).collect::<Vec<_>>()).unwrap();
    w.add_kv("c", 7u32).unwrap();
    let bytes = w.finish().unwrap();
    assert!(bytes.len() > 100_000);
    let read: std::collections::BTreeMap<String, gguf_serde::Value> = gguf_serde::from_reader(Trickle(&bytes)).unwrap();
    let slice: std::collections::BTreeMap<String, gguf_serde::Value> = gguf_serde::from_slice(&bytes).unwrap();
    assert_eq!(read, slice);
    assert_eq!(read["c"], gguf_serde::Value::U32(7));
}

#[test]
fn from_reader_reads_no_tensor_data() {
    use std::io::{Read, Seek, SeekFrom};
    /// Records the furthest byte read.
    struct Watch {
        inner: Cursor<Vec<u8>>,
        furthest: u64,
    }
    impl Read for Watch {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let n = self.inner.read(buf)?;
            self.furthest = self.furthest.max(self.inner.position());
            Ok(n)
        }
    }
    impl Seek for Watch {
        fn seek(&mut self, pos: SeekFrom) -> std::io::Result<u64> {
            self.inner.seek(pos)
        }
    }
    // One key, one 1 MiB F32 tensor.
    let mut w = gguf_serde::GgufWriter::new(Vec::new());
    w.add_kv("general.architecture", "llama").unwrap();
    w.add_tensor("big", gguf_serde::GgmlType::F32, &[512, 512]).unwrap();
    w.write_tensor_data(&vec![0u8; 512 * 512 * 4]).unwrap();
    let bytes = w.finish().unwrap();
    let mut watch = Watch { inner: Cursor::new(bytes), furthest: 0 };
    let g = Gguf::from_reader(&mut watch).unwrap();
    assert_eq!(g.tensor("big").unwrap().nbytes, 1 << 20);
    // Header 24 + key/value 45 + tensor info 43 = 112 bytes; the read-ahead adds at most 8 KiB.
    assert_eq!(g.tensor_infos_end(), 112);
    assert!(watch.furthest <= 112 + 8192, "read up to byte {}", watch.furthest);
}

/// `tensor_data_borrowed` gives each tensor's bytes at the offset the spec puts them (the data
/// section's start plus the tensor's offset, `nbytes` long), as the byte builder wrote them, with
/// the slice's lifetime: they outlive the `Gguf`. A name the file does not have is `NotFound`.
#[test]
fn borrowed_tensor_data_is_the_bytes_at_each_tensors_offset() {
    let s = sample(false);
    let at = |from: u64, n: u64| &s.bytes[(s.data_offset + from) as usize..(s.data_offset + from + n) as usize];
    let expected = [("a", at(0, 32)), ("b", at(32, 34)), ("c", at(96, 6))];
    let borrowed: Vec<&[u8]> = {
        let g = Gguf::from_slice(&s.bytes).unwrap();
        for (name, bytes) in expected {
            assert_eq!(g.tensor_data_by_name(name).unwrap(), bytes, "{name}");
        }
        let e = g.tensor_data_borrowed("d").unwrap_err();
        assert!(matches!(e.kind(), ErrorKind::NotFound { .. }), "{e:?}");
        expected.iter().map(|(name, _)| g.tensor_data_borrowed(name).unwrap()).collect()
    };
    for ((name, bytes), got) in expected.iter().zip(borrowed) {
        assert_eq!(got, *bytes, "{name}");
    }
}
