//! The fixture suite: the concrete cases in fixtures/cases.txt (`total parts share,share,...`).

#[test]
fn fixture_cases() {
    let text = std::fs::read_to_string("fixtures/cases.txt").unwrap();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let mut f = line.split_whitespace();
        let total: u64 = f.next().unwrap().parse().unwrap();
        let parts: u64 = f.next().unwrap().parse().unwrap();
        let want: Vec<u64> = f.next().unwrap().split(',').map(|x| x.parse().unwrap()).collect();
        assert_eq!(budget::split(total, parts), want, "{line}");
    }
}
