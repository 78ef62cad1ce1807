#![deny(warnings, unused_qualifications)]
//! A hand-written module: each changed line below is named in the test.

/// Big, negative or small.
pub fn classify(x: i64) -> &'static str {
    let y = x
        * 2;
    if y > 10 {
        "big"
    } else if y < 0 {
        "negative"
    } else {
        "small"
    }
}

/// The first even number, when the slice has one.
pub fn first_even(xs: &[i64]) -> Option<i64> {
    let Some(_) = xs.first() else {
        return None;
    };
    for x in xs {
        // a comment
        if x % 2 == 0 {
            return Some(*x);
        }
    }
    #[allow(unused_variables, reason = "the probe goes before it")]
    let none = 0;
    None
}

/// A word per digit.
pub fn word(d: u8) -> &'static str {
    match d {
        0 => "zero",
        1 => {
            "one"
        }
        _ => "many",
    }
}

const fn twice(x: u32) -> u32 {
    x * 2
}

macro_rules! three {
    () => {
        3
    };
}

/// Twice three.
pub fn six() -> u32 {
    twice(three!())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn big() {
        assert_eq!(classify(6), "big");
        assert_eq!(word(0), "zero");
    }

    #[test]
    fn small_and_odd() {
        assert_eq!(classify(1), "small");
        assert_eq!(first_even(&[1, 3]), None);
        assert_eq!(six(), 6);
    }
}
