//! Failed test ids from a JUnit XML report (pytest `--junitxml`, cargo-nextest, jest-junit,
//! go-junit-report all write it): a `<testcase>` with a `<failure>` or `<error>` child is
//! failed, and its id is `classname::name` (just `name` when there is no classname).

use std::io::BufRead;

use quick_xml::Reader;
use quick_xml::events::{BytesStart, Event};

/// Most failed ids read. Past it the list is not given at all: a partial list could make
/// the failures it left out look frozen.
pub const MAX_FAILED: usize = 10_000;

/// Why a report could not be read.
#[derive(Debug, thiserror::Error)]
pub enum JunitError {
    #[error("not well-formed XML: {0}")]
    Xml(#[from] quick_xml::Error),
    #[error("an attribute is not well-formed: {0}")]
    Attr(#[from] quick_xml::events::attributes::AttrError),
    #[error("more than {MAX_FAILED} failed test cases")]
    TooMany,
    #[error("no <testcase> in the report")]
    Empty,
}

fn id_of(start: &BytesStart<'_>) -> Result<String, JunitError> {
    let (mut classname, mut name) = (String::new(), String::new());
    for attr in start.attributes() {
        let attr = attr?;
        let value = attr
            .unescape_value()
            .map_err(JunitError::from)?
            .into_owned();
        match attr.key.as_ref() {
            b"classname" => classname = value,
            b"name" => name = value,
            _ => {}
        }
    }
    Ok(if classname.is_empty() {
        name
    } else {
        format!("{classname}::{name}")
    })
}

/// The ids of the failed or errored test cases, in report order, each once.
pub fn failed_tests(input: impl BufRead) -> Result<Vec<String>, JunitError> {
    let mut reader = Reader::from_reader(input);
    let mut buf = Vec::new();
    let mut failed = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let mut cases = 0usize;
    // The open <testcase>, if any: its id, and whether it failed already.
    let mut current: Option<(String, bool)> = None;
    loop {
        match reader.read_event_into(&mut buf)? {
            Event::Start(e) if e.local_name().as_ref() == b"testcase" => {
                cases += 1;
                current = Some((id_of(&e)?, false));
            }
            Event::Empty(e) if e.local_name().as_ref() == b"testcase" => {
                cases += 1;
            }
            Event::Start(e) | Event::Empty(e)
                if matches!(e.local_name().as_ref(), b"failure" | b"error") =>
            {
                if let Some((id, marked)) = current.as_mut()
                    && !*marked
                {
                    *marked = true;
                    if seen.insert(id.clone()) {
                        if failed.len() == MAX_FAILED {
                            return Err(JunitError::TooMany);
                        }
                        failed.push(id.clone());
                    }
                }
            }
            Event::End(e) if e.local_name().as_ref() == b"testcase" => current = None,
            Event::Eof => break,
            _ => {}
        }
        buf.clear();
    }
    if cases == 0 {
        return Err(JunitError::Empty);
    }
    Ok(failed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_pytest_nextest_and_jest_reports() {
        // pytest --junitxml (xunit2).
        let pytest = br#"<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" errors="1" failures="1" tests="4">
<testcase classname="tests.test_api" name="test_ok" time="0.001" />
<testcase classname="tests.test_api" name="test_retry_timeout" time="0.002"><failure message="assert 1 == 2">trace</failure></testcase>
<testcase classname="tests.test_api" name="test_param[a&amp;b]" time="0.002"><error message="fixture">trace</error></testcase>
<testcase classname="tests.test_api" name="test_skip" time="0"><skipped type="pytest.skip" message="no" /></testcase>
</testsuite></testsuites>"#;
        assert_eq!(
            failed_tests(&pytest[..]).unwrap(),
            [
                "tests.test_api::test_retry_timeout",
                "tests.test_api::test_param[a&b]"
            ]
        );
        // cargo-nextest: classname is the binary, name the test path; a self-closing failure.
        let nextest = br#"<testsuites><testsuite name="mycrate::tests"><testcase name="store::tests::replay" classname="mycrate::tests"><failure type="test failure"/><system-out>x</system-out></testcase></testsuite></testsuites>"#;
        assert_eq!(
            failed_tests(&nextest[..]).unwrap(),
            ["mycrate::tests::store::tests::replay"]
        );
        // No classname: the name alone.
        let bare = br#"<testsuite><testcase name="adds"><failure/></testcase></testsuite>"#;
        assert_eq!(failed_tests(&bare[..]).unwrap(), ["adds"]);
        // All passed.
        let ok = br#"<testsuite><testcase classname="a" name="b"/></testsuite>"#;
        assert!(failed_tests(&ok[..]).unwrap().is_empty());
    }

    #[test]
    fn refuses_what_is_not_a_report() {
        assert!(matches!(
            failed_tests(&b"<testsuite></testsuite>"[..]),
            Err(JunitError::Empty)
        ));
        assert!(failed_tests(&b"<testsuite><testcase name='a'></testsuite>"[..]).is_err());
        assert!(failed_tests(&b"not xml at all <<<"[..]).is_err());
    }
}
