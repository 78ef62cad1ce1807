//! Properties of zeroize, over generated inputs (a small xorshift: no dev-dependencies).

use zeroize::Zeroize;

fn inputs(seed: u64, n: usize) -> Vec<u64> {
    let mut x = seed | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        })
        .collect()
}

/// After `Vec::zeroize`, the vector is empty and its whole allocation is zero.
#[test]
fn vec_zeroize_clears_the_allocation() {
    for len in 0..200 {
        let mut v: Vec<u8> = inputs(len as u64 + 1, len).iter().map(|x| *x as u8 | 1).collect();
        v.reserve(len % 7);
        v.zeroize();
        assert!(v.is_empty(), "len {len}: {} left", v.len());
        let capacity = v.capacity();
        let all = unsafe { std::slice::from_raw_parts(v.as_ptr(), capacity) };
        assert!(all.iter().all(|b| *b == 0), "len {len}: the allocation is not zero: {all:?}");
    }
}

/// After zeroizing an array, every element is zero.
#[test]
fn array_zeroize_zeroes_every_element() {
    for seed in 1..100 {
        let mut bytes = [0u8; 33];
        let mut words = [0u64; 7];
        for (b, x) in bytes.iter_mut().zip(inputs(seed, 33)) {
            *b = x as u8 | 1;
        }
        words.copy_from_slice(&inputs(seed * 31, 7));
        bytes.zeroize();
        words.zeroize();
        assert_eq!(bytes, [0u8; 33], "seed {seed}");
        assert_eq!(words, [0u64; 7], "seed {seed}");
    }
}
