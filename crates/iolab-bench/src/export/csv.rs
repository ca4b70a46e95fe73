//! `results.csv`: one line per row, flat columns, for spreadsheets and scripts.

use super::Exporter;
use crate::results::Results;
use crate::suite::Suite;

/// The CSV exporter.
pub struct Csv;

/// The fixed columns; suite-specific keys follow as `key=value` pairs in `extra`.
const HEADER: &str = "suite,method,cache,baseline,bytes,runs,median_s,min_s,max_s,mean_s,stddev_s,\
throughput_bytes_per_s,user_s,sys_s,result,verified,residency_before,unavailable,error,extra";

impl Exporter for Csv {
    fn file_name(&self) -> &'static str {
        "results.csv"
    }

    fn render(&self, results: &Results, _suites: &[Suite]) -> String {
        let mut out = String::from(HEADER);
        out.push('\n');
        for r in &results.rows {
            let num = |v: Option<f64>| v.map(|x| format!("{x:.9}")).unwrap_or_default();
            let stats = r.stats.as_ref();
            let extra = r
                .extra
                .iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect::<Vec<_>>()
                .join(";");
            let fields = [
                r.suite.clone(),
                r.method.clone(),
                r.cache.clone().unwrap_or_default(),
                r.baseline.to_string(),
                r.bytes.to_string(),
                r.runs.len().to_string(),
                num(r.median_s),
                num(stats.map(|s| s.min)),
                num(stats.map(|s| s.max)),
                num(stats.map(|s| s.mean)),
                num(stats.map(|s| s.stddev)),
                num(r.throughput_bytes_per_s),
                num(r.user_s),
                num(r.sys_s),
                r.result.clone().unwrap_or_default(),
                r.verified.to_string(),
                num(r.residency_before),
                r.unavailable.clone().unwrap_or_default(),
                r.error.clone().unwrap_or_default(),
                extra,
            ];
            let line: Vec<String> = fields.iter().map(|f| quote(f)).collect();
            out.push_str(&line.join(","));
            out.push('\n');
        }
        out
    }
}

/// Quotes a field when it holds a comma, quote or line break (RFC 4180).
fn quote(field: &str) -> String {
    if field.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", field.replace('"', "\"\""))
    } else {
        field.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::quote;

    #[test]
    fn quoting_follows_rfc_4180() {
        assert_eq!(quote("plain"), "plain");
        assert_eq!(quote("a,b"), "\"a,b\"");
        assert_eq!(quote("say \"hi\""), "\"say \"\"hi\"\"\"");
    }
}
