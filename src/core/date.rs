//! Dates from day counts, in the proleptic Gregorian calendar, UTC: the one conversion the
//! logs' timestamps and the ladder's weeks share.

/// The (year, month, day) of a day counted from 1970-01-01 (Howard Hinnant's days-to-civil
/// algorithm).
pub fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Days written by hand from a calendar.
    #[test]
    fn days_are_the_calendar_s() {
        for (days, date) in [
            (0, (1970, 1, 1)),
            (59, (1970, 3, 1)),
            (11_016, (2000, 2, 29)),
            (-1, (1969, 12, 31)),
            (20_791, (2026, 12, 4)),
        ] {
            assert_eq!(civil_from_days(days), date, "{days}");
        }
    }
}
