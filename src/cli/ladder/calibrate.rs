//! `patchgate calibrate`: where the fixes for each attribution landed, from rows written by
//! hand, or derived from a decision log (or kept gate answers) and git (the first article,
//! steps 4 and 6).

use std::collections::BTreeMap;

use super::*;
use crate::cli::config::{CONFIG_FILE, GateConfig};
use crate::cli::git::{enter_repository, object_exists};
use crate::core::ladder::{
    CalibrationRow, Decided, FixChanged, Followed, HistoryCalibration, NotCalibrated,
    decided_from_answer, decided_from_log_line, follow, history_calibration,
};

#[derive(Args, Debug)]
pub struct CalibrateArgs {
    /// Calibration rows (JSONL, `-` for stdin): `{"attribution","fix_files","fix_changed"}`,
    /// by hand or as `--rows-out` wrote them.
    #[arg(required_unless_present_any = ["log", "answers"], conflicts_with_all = ["log", "answers"])]
    pub file: Option<PathBuf>,
    /// Derive the rows from this decision log (the service's, or `patchgate gate
    /// --decision-log`'s): every BLOCK or ESCALATE followed, in log order, to the later
    /// MERGE_OK of the same `patch_id`; the fix is the commits from the blocked head to the
    /// merged one that the merge's base did not bring.
    #[arg(long, conflicts_with = "answers")]
    pub log: Option<PathBuf>,
    /// Derive the rows from a directory of kept gate answers (`patchgate gate --json-out`,
    /// every `*.json` in it), in the order of their decision ids (time-ordered UUIDv7).
    #[arg(long)]
    pub answers: Option<PathBuf>,
    /// The gate config's path in each merge's base: its guarded paths count as the check,
    /// with every test-adjacent path.
    #[arg(long, default_value = CONFIG_FILE)]
    pub config: String,
    /// The repository the commits are in (default: the current directory's).
    #[arg(short = 'C', long = "directory")]
    pub directory: Option<PathBuf>,
    /// Write the derived rows here (JSONL, each with its `decision_id`): what `POST
    /// /calibrate` and the page read.
    #[arg(long)]
    pub rows_out: Option<PathBuf>,
    /// Print the full answer as JSON instead of the table.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub remote: RemoteArgs,
}

pub fn calibrate(args: CalibrateArgs) -> CliResult {
    let Some(file) = &args.file else {
        return from_history(&args);
    };
    let body = read_input(file)
        .map_err(|e| CliError::data(format!("cannot read {}: {e}", file.display())))?;
    let classes = table(&args, body)?;
    if args.json {
        print_json(&classes)?;
    } else {
        output::stdout(&text(&classes))?;
    }
    Ok(Exit::Go)
}

/// The table of rows (JSONL): decided here, or by the server.
fn table(args: &CalibrateArgs, body: Vec<u8>) -> Result<Vec<CalibrationClass>, CliError> {
    match &args.remote.server {
        Some(server) => ask(
            &args.remote,
            server,
            "/calibrate",
            "application/x-ndjson",
            body,
        ),
        None => ladder::parse_rows(&body, true, ladder::parse_calibration_row)
            .map(|rows| ladder::calibrate(&rows))
            .map_err(|errors| refuse(&Problem::from(errors))),
    }
}

fn from_history(args: &CalibrateArgs) -> CliResult {
    let (decisions, skipped) = match (&args.log, &args.answers) {
        (Some(log), _) => read_log(log)?,
        (None, Some(dir)) => read_answers(dir)?,
        (None, None) => return Err(CliError::usage("give rows, --log or --answers")),
    };
    enter_repository(args.directory.as_deref())?;
    let mut rows = Vec::new();
    let mut not = Vec::new();
    let mut checks = Checks::new(&args.config);
    for f in follow(&decisions) {
        match f {
            Followed::Not(d, why) => not.push((d, why)),
            Followed::Fixed { blocked, merged } => match fix(blocked, merged, &mut checks)? {
                Ok((files, changed)) => rows.push(CalibrationRow {
                    attribution: blocked.class,
                    fix_files: files,
                    fix_changed: changed,
                    decision_id: Some(blocked.decision_id.clone()),
                }),
                Err(why) => not.push((blocked, why)),
            },
        }
    }
    let lines: String = rows.iter().map(|r| row_line(r) + "\n").collect();
    if let Some(path) = &args.rows_out {
        std::fs::write(path, &lines)
            .map_err(|e| CliError::data(format!("cannot write {}: {e}", path.display())))?;
    }
    let classes = table(args, lines.into_bytes())?;
    let answer = history_calibration(classes, rows.len() as u64, &not, skipped);
    if args.json {
        print_json(&answer)?;
    } else {
        output::stdout(&history_text(&answer))?;
    }
    Ok(Exit::Go)
}

/// A row as `POST /calibrate` reads it.
fn row_line(r: &CalibrationRow) -> String {
    serde_json::to_string(&crate::cli::wire::CalibrationLine {
        attribution: r.attribution.as_str(),
        fix_files: r.fix_files.iter().map(RepoPath::as_str).collect(),
        fix_changed: r.fix_changed.into(),
        decision_id: r.decision_id.as_deref(),
    })
    .unwrap_or_default()
}

/// The decisions of a decision log, in its order, and how many lines are not decisions.
fn read_log(path: &Path) -> Result<(Vec<Decided>, u64), CliError> {
    use std::io::BufRead;
    let cannot = |e: std::io::Error| CliError::data(format!("cannot read {}: {e}", path.display()));
    let reader: Box<dyn BufRead> = if path.as_os_str() == "-" {
        Box::new(std::io::BufReader::new(std::io::stdin()))
    } else {
        Box::new(std::io::BufReader::new(
            std::fs::File::open(path).map_err(cannot)?,
        ))
    };
    let (mut decisions, mut skipped) = (Vec::new(), 0u64);
    let mut reader = reader;
    let mut line = Vec::new();
    loop {
        line.clear();
        // A line is read up to MAX_LOG_LINE bytes (a decision line is under a few KiB): the
        // rest of a longer one is passed over unread, and it is counted as skipped.
        let n = std::io::Read::take(&mut reader, MAX_LOG_LINE as u64 + 1)
            .read_until(b'\n', &mut line)
            .map_err(cannot)?;
        if n == 0 {
            break;
        }
        if line.len() > MAX_LOG_LINE && line.last() != Some(&b'\n') {
            skip_line(&mut reader).map_err(cannot)?;
            skipped += 1;
            continue;
        }
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        match decided_from_log_line(&line) {
            Some(d) => decisions.push(d),
            None => skipped += 1,
        }
    }
    if decisions.is_empty() {
        return Err(CliError::data(format!(
            "{}: no line is a router or gate decision ({skipped} lines skipped): give the decision log (`patchgate serve`, or `patchgate gate --decision-log`)",
            path.display()
        )));
    }
    Ok((decisions, skipped))
}

/// The longest decision-log line read (1 MiB).
const MAX_LOG_LINE: usize = 1 << 20;

/// Passes over the rest of a line, through its newline, holding none of it.
fn skip_line(reader: &mut dyn std::io::BufRead) -> std::io::Result<()> {
    loop {
        let buf = reader.fill_buf()?;
        if buf.is_empty() {
            return Ok(());
        }
        match buf.iter().position(|b| *b == b'\n') {
            Some(i) => {
                reader.consume(i + 1);
                return Ok(());
            }
            None => {
                let n = buf.len();
                reader.consume(n);
            }
        }
    }
}

/// The decisions of a directory of kept answers, in decision-id order.
fn read_answers(dir: &Path) -> Result<(Vec<Decided>, u64), CliError> {
    let cannot = |e: std::io::Error| CliError::data(format!("cannot read {}: {e}", dir.display()));
    let (mut decisions, mut skipped) = (Vec::new(), 0u64);
    for entry in std::fs::read_dir(dir).map_err(cannot)? {
        let path = entry.map_err(cannot)?.path();
        if path.extension().is_none_or(|e| e != "json") || !path.is_file() {
            continue;
        }
        let bytes = std::fs::read(&path).map_err(cannot)?;
        match decided_from_answer(&bytes) {
            Some(d) => decisions.push(d),
            None => skipped += 1,
        }
    }
    if decisions.is_empty() {
        return Err(CliError::data(format!(
            "{}: no *.json file is a gate or router answer ({skipped} skipped): give the directory `patchgate gate --json-out` wrote into",
            dir.display()
        )));
    }
    decisions.sort_by(|a, b| a.decision_id.cmp(&b.decision_id));
    Ok((decisions, skipped))
}

/// What counts as the check in a fix: test-adjacent paths, and the guarded paths of the gate
/// config in the merge's base (read once a base).
struct Checks<'a> {
    config: &'a str,
    markers: ladder::ScopeMarkers,
    guarded: BTreeMap<String, Vec<String>>,
}

impl<'a> Checks<'a> {
    fn new(config: &'a str) -> Self {
        Self {
            config,
            markers: ladder::ScopeMarkers::default(),
            guarded: BTreeMap::new(),
        }
    }

    fn is_check(&mut self, base: Option<&str>, path: &RepoPath) -> bool {
        if self.markers.is_test_adjacent(path) {
            return true;
        }
        let Some(base) = base else { return false };
        let config = self.config;
        let guarded = self.guarded.entry(base.to_owned()).or_insert_with(|| {
            // A base without the config (or with one that does not read) guards nothing more.
            GateConfig::from_base(base, base, config)
                .map_or_else(|_| Vec::new(), |c| c.guarded(config))
        });
        let p = path.as_str();
        guarded.iter().any(|g| {
            p == g
                || p.strip_prefix(g.as_str())
                    .is_some_and(|rest| rest.starts_with('/'))
        })
    }
}

/// The fix of a blocked decision: the files the commits from its head to the merged head
/// change (those the merge's base brought left out), and what they changed.
fn fix(
    blocked: &Decided,
    merged: &Decided,
    checks: &mut Checks<'_>,
) -> Result<Result<(Vec<RepoPath>, FixChanged), NotCalibrated>, CliError> {
    let (Some(from), Some(to)) = (&blocked.head, &merged.head) else {
        return Ok(Err(NotCalibrated::NoCommits));
    };
    let base = merged.base.as_deref();
    for rev in [Some(from.as_str()), Some(to.as_str()), base]
        .into_iter()
        .flatten()
    {
        if !object_exists(&format!("{rev}^{{commit}}"))? {
            return Ok(Err(NotCalibrated::CommitsNotFound));
        }
    }
    let not_from = format!("^{from}");
    let not_base = base.map(|b| format!("^{b}"));
    let mut args = vec![
        "log",
        "--no-merges",
        "--no-renames",
        "--format=",
        "--name-only",
        "-z",
        to.as_str(),
        not_from.as_str(),
    ];
    args.extend(not_base.as_deref());
    args.push("--");
    let out = git(&args)?;
    let mut files: Vec<RepoPath> = out
        .split(|b| *b == 0 || *b == b'\n')
        .filter(|f| !f.is_empty())
        .filter_map(|f| RepoPath::parse(&String::from_utf8_lossy(f)).ok())
        .collect();
    files.sort_by(|a, b| a.as_str().cmp(b.as_str()));
    files.dedup();
    let (mut production, mut check) = (false, false);
    for f in &files {
        if checks.is_check(base, f) {
            check = true;
        } else {
            production = true;
        }
    }
    Ok(FixChanged::of(production, check)
        .map(|c| (files, c))
        .ok_or(NotCalibrated::NoFixFiles))
}

fn pct(v: f64) -> String {
    format!("{:.1}%", v * 100.0)
}

/// The table people read: one line per class, with its hit rate, and the decisions it came
/// from (the first five).
fn text(classes: &[CalibrationClass]) -> String {
    let mut text = format!(
        "{:<38} {:>6} {:>11} {:>7} {:>7}  {:<10} {:>6}\n",
        "attribution", "count", "production", "check", "both", "points to", "hit"
    );
    for c in classes {
        text.push_str(&format!(
            "{:<38} {:>6} {:>11} {:>7} {:>7}  {:<10} {:>6}\n",
            c.attribution,
            c.count,
            pct(c.production),
            pct(c.check),
            pct(c.both),
            c.points_to.map_or("-", <&str>::from),
            c.hit_rate.map_or("-".to_owned(), pct),
        ));
    }
    for c in classes.iter().filter(|c| !c.decision_ids.is_empty()) {
        text.push_str(&format!(
            "  {}: {}\n",
            c.attribution,
            ids(&c.decision_ids, c.count)
        ));
    }
    text
}

fn ids(list: &[String], count: u64) -> String {
    let shown: Vec<&str> = list.iter().take(5).map(String::as_str).collect();
    let more = count.saturating_sub(shown.len() as u64);
    if more == 0 {
        shown.join(", ")
    } else {
        format!("{} and {more} more", shown.join(", "))
    }
}

fn history_text(a: &HistoryCalibration) -> String {
    let mut out = format!(
        "BLOCK or ESCALATE decisions: {} ({} followed to a fix)\n",
        a.decisions, a.calibrated
    );
    out.push_str(&text(&a.classes));
    if !a.not_calibrated.is_empty() {
        out.push_str("not calibrated (counted, not guessed):\n");
        for n in &a.not_calibrated {
            out.push_str(&format!(
                "  {:<18} {:>6}  {}\n",
                n.why.as_str(),
                n.count,
                ids(&n.decision_ids, n.count)
            ));
        }
    }
    if a.skipped > 0 {
        out.push_str(&format!("skipped (not a decision): {}\n", a.skipped));
    }
    out
}
