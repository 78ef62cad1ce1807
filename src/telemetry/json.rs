//! A lean JSON-lines event formatter for `tracing-subscriber`.
//!
//! tracing-subscriber's own JSON formatter serialises every event through serde into an
//! `io::Write` adaptor (re-validating UTF-8 chunk by chunk) and re-parses span fields on each
//! event; measured under callgrind it was a third of a `/route` request's instructions. This
//! one writes each line straight into the subscriber's buffer: the same flat shape
//! (`timestamp`, `level`, `target`, `message`, the event's fields, then the fields of the spans
//! in scope, such as `request_id`), one JSON object per line.

use std::fmt::{self, Write as _};

use tracing::field::{Field, Visit};

use crate::core::json_out::{Escaping, push_key, push_str_literal as push_json_str, push_u64};
use tracing::{Event, Subscriber};
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields, FormattedFields};
use tracing_subscriber::registry::LookupSpan;

/// Formats events as flat JSON objects, one a line.
pub struct JsonLines;

/// Formats span fields as a JSON object-body fragment (`"k":v,"k2":v2`), stored once per span
/// and spliced into each event line inside it.
pub struct JsonFields;

impl<'writer> FormatFields<'writer> for JsonFields {
    fn format_fields<R: tracing_subscriber::field::RecordFields>(
        &self,
        mut writer: Writer<'writer>,
        fields: R,
    ) -> fmt::Result {
        let mut buf = String::new();
        let mut visitor = FieldWriter {
            out: &mut buf,
            first: true,
        };
        fields.record(&mut visitor);
        writer.write_str(&buf)
    }
}

impl<S, N> FormatEvent<S, N> for JsonLines
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
{
    fn format_event(
        &self,
        ctx: &FmtContext<'_, S, N>,
        mut writer: Writer<'_>,
        event: &Event<'_>,
    ) -> fmt::Result {
        with_line(|line| {
            format_line(line, ctx, event);
            writer.write_str(line)
        })
    }
}

thread_local! {
    /// Each thread formats its lines in one reused buffer.
    static LINE: std::cell::RefCell<String> = std::cell::RefCell::new(String::with_capacity(512));
}

/// Runs `f` with this thread's empty line buffer (a fresh one if it is in use: a line logged
/// while formatting one).
pub fn with_line<T>(f: impl FnOnce(&mut String) -> T) -> T {
    LINE.with(|cell| match cell.try_borrow_mut() {
        Ok(mut line) => {
            line.clear();
            f(&mut line)
        }
        Err(_) => f(&mut String::with_capacity(512)),
    })
}

/// One decision line, exactly as [`JsonLines`] writes an `info` event with these fields
/// under `target` and `message = "decision"`. Each key is written as given (`,"name":`).
pub fn decision_line<'f, 'a: 'f>(
    line: &mut String,
    target: &str,
    fields: impl IntoIterator<Item = &'f (&'static str, super::Field<'a>)>,
) {
    use super::Field;
    push_head(line, "INFO", target);
    for (key, value) in fields {
        match *value {
            Field::Absent => continue,
            _ => line.push_str(key),
        }
        match *value {
            Field::Str(v) => push_json_str(line, v),
            Field::Plain(v) => {
                debug_assert!(
                    !crate::core::json_out::needs_escape(v.as_bytes()),
                    "{key} {v:?}"
                );
                line.push('"');
                line.push_str(v);
                line.push('"');
            }
            Field::U64(v) => push_u64(line, v),
            Field::Bool(v) => line.push_str(if v { "true" } else { "false" }),
            Field::Absent => {}
        }
    }
    line.push_str(",\"message\":\"decision\"}\n");
}

/// `{"timestamp":"…","level":"…","target":"…"`: the start of every line.
fn push_head(line: &mut String, level: &str, target: &str) {
    line.push_str("{\"timestamp\":\"");
    push_rfc3339_micros(line, std::time::SystemTime::now());
    line.push_str("\",\"level\":\"");
    line.push_str(level);
    line.push_str("\",\"target\":");
    push_json_str(line, target);
}

fn format_line<S, N>(line: &mut String, ctx: &FmtContext<'_, S, N>, event: &Event<'_>)
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
{
    {
        push_head(
            line,
            event.metadata().level().as_str(),
            event.metadata().target(),
        );
        let mut visitor = FieldWriter {
            out: line,
            first: false,
        };
        event.record(&mut visitor);
        if let Some(scope) = ctx.event_scope() {
            for span in scope.from_root() {
                let ext = span.extensions();
                if let Some(fields) = ext.get::<FormattedFields<N>>()
                    && !fields.fields.is_empty()
                {
                    line.push(',');
                    line.push_str(&fields.fields);
                }
            }
        }
        line.push_str("}\n");
    }
}

/// Writes each field as `"name":value`, separated by commas.
struct FieldWriter<'a> {
    out: &'a mut String,
    first: bool,
}

impl FieldWriter<'_> {
    fn key(&mut self, field: &Field) {
        if !self.first {
            self.out.push(',');
        }
        self.first = false;
        // Field names are Rust identifiers: nothing in them needs escaping.
        push_key(self.out, field.name());
    }
}

impl Visit for FieldWriter<'_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.key(field);
        push_json_str(self.out, value);
    }

    fn record_u64(&mut self, field: &Field, value: u64) {
        self.key(field);
        push_u64(self.out, value);
    }

    fn record_i64(&mut self, field: &Field, value: i64) {
        self.key(field);
        let _ = write!(self.out, "{value}");
    }

    fn record_bool(&mut self, field: &Field, value: bool) {
        self.key(field);
        self.out.push_str(if value { "true" } else { "false" });
    }

    fn record_f64(&mut self, field: &Field, value: f64) {
        self.key(field);
        if value.is_finite() {
            let _ = write!(self.out, "{value}");
        } else {
            self.out.push_str("null");
        }
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.key(field);
        self.out.push('"');
        let _ = write!(Escaping(self.out), "{value:?}");
        self.out.push('"');
    }
}

thread_local! {
    /// The date and time to the second of the last line this thread wrote, formatted: lines
    /// come many a second, and only the microseconds differ between them.
    static SECOND: std::cell::Cell<(u64, [u8; 20])> =
        const { std::cell::Cell::new((u64::MAX, [0; 20])) };
}

/// Appends `t` as RFC 3339 UTC with microseconds: `2026-11-29T14:29:03.561559Z`.
pub fn push_rfc3339_micros(out: &mut String, t: std::time::SystemTime) {
    let since = t.duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    let secs = since.as_secs();
    let head = match SECOND.try_with(std::cell::Cell::get) {
        Ok((cached, head)) if cached == secs => head,
        _ => {
            let head = format_second(secs);
            let _ = SECOND.try_with(|c| c.set((secs, head)));
            head
        }
    };
    let mut buf = [0u8; 27];
    if let Some((h, rest)) = buf.split_first_chunk_mut::<20>() {
        *h = head;
        put_digits(rest, 6, u64::from(since.subsec_micros()));
        if let Some(z) = rest.get_mut(6) {
            *z = b'Z';
        }
    }
    out.push_str(std::str::from_utf8(&buf).unwrap_or("1970-01-01T00:00:00.000000Z"));
}

/// Writes `v` as `width` decimal digits (zero-padded) at the start of `buf`.
fn put_digits(buf: &mut [u8], width: usize, mut v: u64) {
    for d in buf.iter_mut().take(width).rev() {
        *d = b'0' + (v % 10) as u8;
        v /= 10;
    }
}

/// `YYYY-MM-DDTHH:MM:SS.` for a second since the epoch, in UTC.
fn format_second(secs: u64) -> [u8; 20] {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    let (year, month, day) = crate::core::date::civil_from_days(days);
    // Digits by hand: core::fmt's padding machinery cost more than the rest of the line.
    let mut buf = *b"0000-00-00T00:00:00.";
    for (at, width, v) in [
        (0, 4, year.clamp(0, 9999) as u64),
        (5, 2, month as u64),
        (8, 2, day as u64),
        (11, 2, rem / 3600),
        (14, 2, rem % 3600 / 60),
        (17, 2, rem % 60),
    ] {
        if let Some(field) = buf.get_mut(at..) {
            put_digits(field, width, v);
        }
    }
    buf
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    /// A writer into a shared buffer, for reading the lines back.
    #[derive(Clone, Default)]
    struct Captured(Arc<Mutex<Vec<u8>>>);

    impl std::io::Write for Captured {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            if let Ok(mut b) = self.0.lock() {
                b.extend_from_slice(buf);
            }
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    /// A subscriber writing this module's lines, and what it wrote.
    fn capturing() -> (Captured, impl tracing::Subscriber + Send + Sync) {
        let captured = Captured::default();
        let writer = captured.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_writer(move || writer.clone())
            .fmt_fields(JsonFields)
            .event_format(JsonLines)
            .finish();
        (captured, subscriber)
    }

    /// Every line the hand-written formatter writes is one JSON object that serde_json reads
    /// back to exactly the values logged, whatever they hold (a patch id is the client's).
    #[test]
    fn lines_round_trip_through_serde_json_for_awkward_values() {
        let (captured, subscriber) = capturing();
        let awkward = [
            "plain",
            "a \"quoted\" id",
            "back\\slash",
            "new\nline and\r\ncarriage",
            "tab\tand \u{0}nul \u{1f} unit \u{7f} del",
            "non-ASCII: é ß 日本 🦀",
            "\u{2028}line separator\u{2029}",
            "",
        ];
        tracing::subscriber::with_default(subscriber, || {
            for (i, value) in awkward.iter().enumerate() {
                tracing::info!(
                    target: "patchgate::decision",
                    patch_id = *value,
                    index = i as u64,
                    negative = -3i64,
                    ratio = 0.25f64,
                    flag = true,
                    message = "decision",
                );
            }
        });
        let bytes = captured.0.lock().map(|b| b.clone()).unwrap_or_default();
        let text = String::from_utf8(bytes).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), awkward.len(), "{text}");
        for (line, want) in lines.iter().zip(awkward) {
            let v: serde_json::Value =
                serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}"));
            assert_eq!(v["patch_id"], *want, "{line}");
            assert_eq!(v["negative"], -3);
            assert_eq!(v["ratio"], 0.25);
            assert_eq!(v["flag"], true);
            assert_eq!(v["target"], "patchgate::decision");
            assert_eq!(v["level"], "INFO");
            assert_eq!(v["message"], "decision");
        }
    }

    /// Drops the timestamp, the one part of two lines written at different times that differs.
    fn without_timestamp(line: &str) -> String {
        let start = line.find("\"level\"").unwrap_or(0);
        line.get(start..).unwrap_or("").to_owned()
    }

    /// The decision line written without a tracing event is byte for byte the line the
    /// subscriber writes for the same event (but for the time), whatever the values hold.
    #[test]
    fn decision_lines_are_the_lines_of_the_same_event() {
        use crate::telemetry::Field;
        let (captured, subscriber) = capturing();
        let dispatch = tracing::Dispatch::new(subscriber);
        let awkward = [
            "pr-1841",
            "a \"quoted\" id\\",
            "new\nline\ttab \u{0}nul \u{1f}",
            "non-ASCII: é 日本 🦀 \u{2028}",
            "",
        ];
        for (i, value) in awkward.iter().enumerate() {
            let seal = i % 2 == 0;
            let absent: Option<&str> = None;
            tracing::dispatcher::with_default(&dispatch, || {
                tracing::info!(
                    target: "patchgate::decision",
                    endpoint = "route",
                    patch_id = *value,
                    attribution = absent,
                    exit_code = i as u64,
                    seal_match = seal,
                    message = "decision",
                );
            });
            let mut direct = String::new();
            decision_line(
                &mut direct,
                "patchgate::decision",
                &[
                    (",\"endpoint\":", Field::Plain("route")),
                    (",\"patch_id\":", Field::Str(value)),
                    (",\"attribution\":", Field::from(absent)),
                    (",\"exit_code\":", Field::U64(i as u64)),
                    (",\"seal_match\":", Field::Bool(seal)),
                ],
            );
            let bytes = std::mem::take(&mut *captured.0.lock().unwrap_or_else(|e| e.into_inner()));
            let event = String::from_utf8(bytes).unwrap_or_default();
            assert_eq!(without_timestamp(&direct), without_timestamp(&event));
            let v: serde_json::Value =
                serde_json::from_str(&direct).unwrap_or_else(|e| panic!("{e}: {direct}"));
            assert_eq!(v["patch_id"], *value);
            assert!(v.get("attribution").is_none(), "{direct}");
            assert!(direct.ends_with("}\n") && direct.matches('\n').count() == 1);
        }
    }

    #[test]
    fn timestamps_are_rfc3339_utc() {
        use std::time::{Duration, UNIX_EPOCH};
        let cases = [
            (0, 0, "1970-01-01T00:00:00.000000Z"),
            (0, 999_999, "1970-01-01T00:00:00.999999Z"),
            (1, 0, "1970-01-01T00:00:01.000000Z"),
            (951_782_400, 5, "2000-02-29T00:00:00.000005Z"),
            (1_796_049_743, 561_559, "2026-11-30T14:42:23.561559Z"),
            (1_796_049_743, 7, "2026-11-30T14:42:23.000007Z"),
            (951_782_400, 6, "2000-02-29T00:00:00.000006Z"),
            (4_107_542_399, 999_999, "2100-02-28T23:59:59.999999Z"),
        ];
        for (secs, micros, want) in cases {
            let mut out = String::new();
            push_rfc3339_micros(
                &mut out,
                UNIX_EPOCH + Duration::from_secs(secs) + Duration::from_micros(micros),
            );
            assert_eq!(out, want);
        }
    }
}
