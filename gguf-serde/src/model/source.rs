//! What a typed model is read from.

#[cfg(feature = "mmap")]
use crate::container::ShardedGguf;
use crate::container::TensorSource;
use crate::container::{Gguf, Kv, Source};
use crate::format::Endian;

/// What a typed model is read from: tensors by name ([`TensorSource`]), the key/value metadata
/// and the byte order. Implemented by [`Gguf`] and [`ShardedGguf`].
pub trait ModelSource: TensorSource {
    /// The key/value metadata of the model, in file order (for a sharded model, the first
    /// shard's without the split keys).
    fn kvs(&self) -> Box<dyn Iterator<Item = Kv<'_>> + '_>;

    /// The byte order of the tensor data.
    fn endian(&self) -> Endian;
}

impl<S: Source> ModelSource for Gguf<S> {
    fn kvs(&self) -> Box<dyn Iterator<Item = Kv<'_>> + '_> {
        Box::new(self.metadata())
    }

    fn endian(&self) -> Endian {
        Gguf::endian(self)
    }
}

#[cfg(feature = "mmap")]
impl ModelSource for ShardedGguf {
    fn kvs(&self) -> Box<dyn Iterator<Item = Kv<'_>> + '_> {
        Box::new(self.metadata())
    }

    fn endian(&self) -> Endian {
        self.shard(0).map_or(Endian::Little, |f| f.endian())
    }
}
