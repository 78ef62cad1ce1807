//! patchgate's canary (CONTRACT.md section 11.5): this test must FAIL.
//!
//! It is ignored, so a plain `cargo test` stays green; the gate runs it with `--ignored`.
//!
//! The gate runs it on every patch before any property. If it passes, or leaves no report,
//! something in the patch switched the checker off (an exit under test, a harness turned off),
//! and the gate escalates `checker-neutered`. Call into your crate below: whatever it does
//! under test, it then does here too.

#[test]
#[ignore = "patchgate's canary: it must fail, and only the gate runs it (cargo test -- --ignored)"]
fn patchgate_canary() {
    // let _ = mycrate::some_function();  // your crate: make the canary see what it does
    let n: u64 = std::hint::black_box(10);
    assert!(n < 10, "the canary fails, as it must");
}
