//! The tar stream reader (plain and gzip) never panics and never accepts a member path that
//! leaves the tree, whatever sizes its headers claim.
#![no_main]

use libfuzzer_sys::fuzz_target;
use patchgate::core::seal::TreeLimits;
use patchgate::tree::{Limited, StreamFault, read_tar_tree};

fuzz_target!(|data: &[u8]| {
    let fault = StreamFault::default();
    if let Ok(tree) = read_tar_tree(data, &fault, &TreeLimits::DEFAULT) {
        for e in &tree.entries {
            assert!(!e.path.starts_with(b"/"));
            assert!(!e.path.split(|b| *b == b'/').any(|s| s == b".."));
        }
    }
    let fault = StreamFault::default();
    let inflated = Limited::new(flate2::read::MultiGzDecoder::new(data), 16 << 20, "decompressed archive", fault.clone());
    let _ = read_tar_tree(inflated, &fault, &TreeLimits::DEFAULT);
});
