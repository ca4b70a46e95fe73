use super::*;
use crate::results::Row;

fn row(method: &str, runs: &[f64]) -> Row {
    let mut r = Row {
        suite: "count".into(),
        method: method.into(),
        cache: Some("warm".into()),
        bytes: 100,
        verified: true,
        ..Row::default()
    };
    r.set_timings(runs, runs, runs);
    r
}

fn baseline(runs: &[f64]) -> Row {
    Row {
        baseline: true,
        ..row("wc -l", runs)
    }
}

/// Five runs around `median`, spread by ±`spread` (relative).
fn around(median: f64, spread: f64) -> Vec<f64> {
    [
        1.0,
        1.0 + spread,
        1.0 - spread,
        1.0 + spread / 2.0,
        1.0 - spread / 2.0,
    ]
    .iter()
    .map(|f| median * f)
    .collect()
}

fn results(rows: Vec<Row>) -> Results {
    serde_json::from_value(serde_json::json!({
        "schema_version": 1, "iolab_version": "0", "command": [], "started_at": "",
        "finished_at": "", "partial": false, "config": {},
        "sysinfo": serde_json::to_value(iolab_lab::sysinfo::collect(std::path::Path::new("."))).unwrap(),
        "rows": serde_json::to_value(rows).unwrap(), "warnings": [], "notes": []
    }))
    .unwrap()
}

fn change_of(c: &[Comparison], name: &str) -> Change {
    c.iter()
        .find(|x| x.name.contains(name))
        .unwrap_or_else(|| panic!("no row {name} in {c:?}"))
        .change
}

#[test]
fn changes_beyond_the_noise_are_flagged_both_ways() {
    // Besides the two that changed, unchanged rows: each row is judged against the others.
    let unchanged = ["same", "other", "third", "fourth"];
    let mut rows_a = vec![
        row("fast", &around(1.0, 0.01)),
        row("slow", &around(1.0, 0.01)),
        row("gone", &around(1.0, 0.01)),
    ];
    let mut rows_b = vec![
        row("fast", &around(0.5, 0.01)),
        row("slow", &around(2.0, 0.01)),
        row("new", &around(1.0, 0.01)),
    ];
    for (i, m) in unchanged.iter().enumerate() {
        rows_a.push(row(m, &around(1.0, 0.01)));
        rows_b.push(row(m, &around(1.0 + 0.005 * i as f64, 0.01)));
    }
    let (a, b) = (results(rows_a), results(rows_b));
    let c = compare(&a, &b);
    assert_eq!(change_of(&c, "fast"), Change::Improved);
    assert_eq!(change_of(&c, "slow"), Change::Regressed);
    assert_eq!(change_of(&c, "same"), Change::Same);
    assert_eq!(change_of(&c, "gone"), Change::OnlyInA);
    assert_eq!(change_of(&c, "new"), Change::OnlyInB);
    assert!(has_regression(&c));
    let slow = c.iter().find(|x| x.name.contains("slow")).unwrap();
    assert!((slow.ratio.unwrap() - 2.0).abs() < 1e-9);
}

#[test]
fn noisy_runs_need_a_bigger_change() {
    let a = results(vec![row("m", &[1.0, 1.3, 0.7, 1.2, 0.8])]);
    let b = results(vec![row("m", &[1.2, 1.5, 0.9, 1.4, 1.0])]);
    let c = compare(&a, &b);
    assert_eq!(c[0].change, Change::Same, "{c:?}");
    assert!(c[0].threshold.unwrap() > 0.2);
}

#[test]
fn a_row_with_fewer_than_three_runs_is_not_judged() {
    let a = results(vec![row("m", &around(1.0, 0.01))]);
    let b = results(vec![row("m", &[1.84])]);
    let c = compare(&a, &b);
    assert_eq!(c[0].change, Change::TooFewRuns);
    assert_eq!(
        c[0].detail.as_deref(),
        Some("5 and 1 counted runs; 3 needed")
    );
    assert!(!has_regression(&c));
    assert!(render(&c, false).contains("too few runs"));
}

#[test]
fn a_method_that_fails_or_is_wrong_in_b_is_a_regression() {
    let a = results(vec![
        row("errs", &around(1.0, 0.01)),
        row("wrong", &around(1.0, 0.01)),
        row("gone", &around(1.0, 0.01)),
    ]);
    let mut errs = row("errs", &[]);
    errs.error = Some("exit status 1".into());
    let mut wrong = row("wrong", &around(1.0, 0.01));
    wrong.verified = false;
    let gone = Row {
        cache: Some("warm".into()),
        ..Row::unavailable("count", "gone", "io_uring is disabled")
    };
    let c = compare(&a, &results(vec![errs, wrong, gone]));
    for name in ["errs", "wrong", "gone"] {
        assert_eq!(change_of(&c, name), Change::FailedInB, "{c:?}");
    }
    assert!(has_regression(&c));
    let table = render(&c, false);
    assert!(
        table.contains("FAILED in B (in B: exit status 1)"),
        "{table}"
    );
    assert!(table.contains("FAILED in B (unverified in B)"), "{table}");
}

#[test]
fn a_host_that_drifts_is_no_regression_but_a_slower_method_on_top_of_it_is() {
    // The same programs, B measured on a host 40% slower: the baseline drifts as much.
    let methods = ["a", "b", "c", "d", "e"];
    let mut rows_a: Vec<Row> = methods.iter().map(|m| row(m, &around(1.0, 0.03))).collect();
    rows_a.push(baseline(&around(2.0, 0.03)));
    let slower = |m: &str, f: f64| row(m, &around(1.4 * f, 0.03));
    let mut rows_b: Vec<Row> = methods.iter().map(|m| slower(m, 1.0)).collect();
    rows_b.push(baseline(&around(2.8, 0.03)));
    let c = compare(&results(rows_a.clone()), &results(rows_b.clone()));
    assert!(!has_regression(&c), "{}", render(&c, false));
    assert!(c.iter().all(|x| (x.drift.unwrap() - 1.4).abs() < 1e-9));
    // One method 1.5x slower than the others on that host: flagged.
    rows_b[2] = slower("c", 1.5);
    let c = compare(&results(rows_a), &results(rows_b));
    assert_eq!(
        change_of(&c, "count c "),
        Change::Regressed,
        "{}",
        render(&c, false)
    );
    assert_eq!(c.iter().filter(|x| x.change.is_regression()).count(), 1);
}

#[test]
fn a_row_that_did_not_move_is_the_same_however_its_group_drifted() {
    // Most rows 30% faster in B (their flushes got quicker); one row unchanged: its
    // corrected ratio is 1.4, its own 1.0, and that is no regression.
    let methods = ["a", "b", "c", "d", "e"];
    let rows_a: Vec<Row> = methods.iter().map(|m| row(m, &around(1.0, 0.02))).collect();
    let mut rows_b: Vec<Row> = methods.iter().map(|m| row(m, &around(0.7, 0.02))).collect();
    rows_b[4] = row("e", &around(1.0, 0.02));
    let c = compare(&results(rows_a), &results(rows_b));
    let e = c.iter().find(|x| x.name.contains("count e ")).unwrap();
    assert!(e.adjusted.unwrap() > 1.3, "{e:?}");
    assert_eq!(e.change, Change::Same, "{}", render(&c, false));
    assert!(!has_regression(&c));
}

#[test]
fn the_ratio_is_taken_on_the_median_the_table_prints() {
    let a = row("m", &around(1.0, 0.01));
    let mut b = row("m", &around(1.0, 0.01));
    // An edited file whose statistics disagree with its median: the median decides.
    b.median_s = Some(2.0);
    let c = compare(&results(vec![a]), &results(vec![b]));
    assert_eq!(c[0].b_median, Some(2.0));
    assert!((c[0].ratio.unwrap() - 2.0).abs() < 1e-9);
    assert_eq!(c[0].change, Change::Regressed);
}

#[test]
fn rows_with_different_settings_do_not_match() {
    let mut one = row("mmap-parallel", &around(1.0, 0.01));
    one.extra.insert("threads".into(), serde_json::json!(1));
    let mut two = row("mmap-parallel", &around(2.0, 0.01));
    two.extra.insert("threads".into(), serde_json::json!(2));
    let c = compare(&results(vec![one.clone()]), &results(vec![two]));
    assert_eq!(c.len(), 2);
    let same = compare(&results(vec![one.clone()]), &results(vec![one]));
    assert_eq!(same[0].change, Change::Same);
}

#[test]
fn rows_of_different_sizes_are_not_comparable() {
    let a = row("mmap", &[1.00, 1.01, 0.99, 1.00, 1.00]);
    let mut b = row("mmap", &[0.01, 0.01, 0.01, 0.01, 0.01]);
    b.bytes = 0;
    let c = compare(&results(vec![a.clone()]), &results(vec![b]));
    assert_eq!(c.len(), 1);
    assert_eq!(c[0].change, Change::NotComparable);
    assert!(!c[0].change.is_compared());
    assert_eq!(c[0].ratio, None);
    assert_eq!(c[0].detail.as_deref(), Some("bytes 100 B in A, 0 B in B"));
    assert!(!has_regression(&c));
    let table = render(&c, false);
    assert!(
        table.contains("not comparable (bytes 100 B in A, 0 B in B)"),
        "{table}"
    );
    assert!(!table.contains("improved"), "{table}");

    let mut file = a.clone();
    file.extra
        .insert("file_bytes".into(), serde_json::json!(1u64 << 30));
    let c = compare(&results(vec![a]), &results(vec![file]));
    assert_eq!(c[0].change, Change::NotComparable, "{c:?}");
}
