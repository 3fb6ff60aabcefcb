//! Gemma 3 270M (a 6 MB vocabulary in its metadata) read over HTTP range requests from a local
//! server: the reading equals `Gguf::open` of the file, and only the metadata is fetched.

use gguf_serde::container::remote::RemoteOptions;
use gguf_serde::Gguf;
use gguf_tests::model;
use gguf_tests::support::range_server::{Behaviour, RangeServer};

#[test]
fn gemma_metadata_over_range_requests() {
    let Some(path) = model("gemma-3-270m-q4_k_m.gguf") else { return };
    let bytes = std::fs::read(&path).unwrap();
    let local = Gguf::open(&path).unwrap();
    let server = RangeServer::start(bytes, Behaviour::Ranges);
    let (remote, stats) = Gguf::from_url(&server.url("gemma.gguf"), &RemoteOptions::default()).unwrap();
    assert_eq!((remote.kv_count(), remote.tensor_count()), (local.kv_count(), local.tensor_count()));
    for (a, b) in remote.metadata().zip(local.metadata()) {
        assert_eq!((a.key, a.value.to_owned_value()), (b.key, b.value.to_owned_value()));
    }
    for (a, b) in remote.tensors().zip(local.tensors()) {
        assert_eq!(
            (a.name, a.dtype, &*a.shape, a.relative_offset, a.nbytes),
            (b.name, b.dtype, &*b.shape, b.relative_offset, b.nbytes)
        );
    }
    assert_eq!((remote.data_offset(), remote.file_len()), (local.data_offset(), local.file_len()));
    // The metadata and tensor infos, and less than one more request (8 MiB at most) of the data.
    let infos = local.tensor_infos_end();
    assert!(stats.bytes_fetched >= infos && stats.bytes_fetched < infos + (8 << 20), "{stats:?}");
    assert!(stats.bytes_fetched < local.file_len() / 10, "{stats:?}");
    println!(
        "gemma-3-270m-q4_k_m.gguf: {} bytes of metadata and tensor infos, {} of {} bytes fetched in {} requests",
        infos,
        stats.bytes_fetched,
        local.file_len(),
        stats.requests
    );
}
