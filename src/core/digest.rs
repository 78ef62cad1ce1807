//! A SHA-256 digest as a value: 32 bytes, parsed once from 64 hex digits and printed as
//! lowercase hex (the way `sha256sum` prints it). Seals and fixture hashes are this type.

use std::fmt;

#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Digest(pub [u8; 32]);

/// Why a string is not a SHA-256 digest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum DigestError {
    #[error("must be 64 hexadecimal digits (a SHA-256 digest), not {0} characters")]
    Length(usize),
    #[error(
        "must be 64 hexadecimal digits (a SHA-256 digest); it holds a character that is not 0-9 or a-f"
    )]
    NotHex,
}

impl Digest {
    /// Parses 64 hex digits, either case.
    pub fn parse_hex(s: &str) -> Result<Self, DigestError> {
        let bytes = s.as_bytes();
        if bytes.len() != 64 {
            return Err(DigestError::Length(s.chars().count()));
        }
        let mut out = [0u8; 32];
        for (i, pair) in bytes.chunks_exact(2).enumerate() {
            let (Some(&hi), Some(&lo)) = (pair.first(), pair.get(1)) else {
                return Err(DigestError::NotHex);
            };
            let (Some(hi), Some(lo)) = (hex_value(hi), hex_value(lo)) else {
                return Err(DigestError::NotHex);
            };
            if let Some(slot) = out.get_mut(i) {
                *slot = (hi << 4) | lo;
            }
        }
        Ok(Self(out))
    }

    pub fn to_hex(&self) -> String {
        String::from_utf8_lossy(&self.hex()).into_owned()
    }

    /// The 64 lowercase hex digits, without allocating (a manifest writes one per file).
    pub fn hex(&self) -> [u8; 64] {
        const DIGITS: &[u8; 16] = b"0123456789abcdef";
        let mut out = [0u8; 64];
        for (pair, b) in out.chunks_exact_mut(2).zip(self.0) {
            if let [hi, lo] = pair {
                *hi = DIGITS.get(usize::from(b >> 4)).copied().unwrap_or(b'0');
                *lo = DIGITS.get(usize::from(b & 0xf)).copied().unwrap_or(b'0');
            }
        }
        out
    }
}

fn hex_value(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

impl fmt::Display for Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(std::str::from_utf8(&self.hex()).unwrap_or(""))
    }
}

impl fmt::Debug for Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Digest({self})")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_refuses_what_is_not_a_digest() {
        let hex = "abcfa6a9d4df344d1781bc2560b5e4cdcae08b39ed303063535e7e1e926a304a";
        let d = Digest::parse_hex(hex).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(d.to_hex(), hex);
        assert_eq!(d.to_string(), hex);
        // Every byte value, against the standard formatter.
        let all = Digest(std::array::from_fn(|i| (i * 8 + 7) as u8));
        let want: String = all.0.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(all.to_hex(), want);
        let low = Digest(std::array::from_fn(|i| i as u8));
        let want: String = low.0.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(low.to_hex(), want);
        assert_eq!(Digest::parse_hex(&hex.to_uppercase()), Ok(d));
        assert_eq!(Digest::parse_hex("abc"), Err(DigestError::Length(3)));
        assert_eq!(
            Digest::parse_hex(&hex.replace('a', "g")),
            Err(DigestError::NotHex)
        );
        assert_eq!(Digest::parse_hex(&"é".repeat(32)), Err(DigestError::NotHex));
    }
}
