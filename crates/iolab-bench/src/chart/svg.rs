//! Hand-written SVG charts: horizontal grouped bars, stacked bars and line charts.
//!
//! Why by hand rather than a plotting crate: the report must be one self-contained HTML
//! file that works offline, and inline SVG is exactly that — text, crisp at any zoom,
//! searchable, styleable with the page's CSS, testable by looking for elements. The three
//! chart shapes the report needs are a few hundred lines; a plotting crate would add a
//! large dependency tree (fonts, raster back ends) for them.

use std::fmt::Write;

/// Colours for series, chosen to stay distinguishable for common colour blindness
/// (Okabe–Ito palette).
pub const PALETTE: [&str; 8] = [
    "#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000",
];

/// Escapes text for XML.
pub fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The formatter charts use unless told otherwise: three significant digits.
fn plain(x: f64) -> String {
    format!("{x:.3}")
}

impl Default for BarChart {
    fn default() -> Self {
        BarChart {
            id: String::new(),
            title: String::new(),
            unit: String::new(),
            series: Vec::new(),
            rows: Vec::new(),
            markers: Vec::new(),
            log: false,
            format: plain,
        }
    }
}

impl Default for StackedChart {
    fn default() -> Self {
        StackedChart {
            id: String::new(),
            title: String::new(),
            unit: String::new(),
            parts: Vec::new(),
            rows: Vec::new(),
            format: plain,
        }
    }
}

impl Default for LineChart {
    fn default() -> Self {
        LineChart {
            id: String::new(),
            title: String::new(),
            x_unit: String::new(),
            y_unit: String::new(),
            series: Vec::new(),
            markers: Vec::new(),
            format_x: plain,
            format_y: plain,
        }
    }
}

/// A horizontal reference line across a bar chart (a ceiling).
#[derive(Clone, Debug)]
pub struct Marker {
    /// Its label.
    pub label: String,
    /// Its value on the value axis.
    pub value: f64,
    /// Which series' colour it takes.
    pub series: usize,
}

/// Horizontal bars: one row per category, one bar per series in each row.
#[derive(Clone, Debug)]
pub struct BarChart {
    /// Id of the `<svg>` element.
    pub id: String,
    /// Title above the chart.
    pub title: String,
    /// The value axis' label.
    pub unit: String,
    /// Series names (legend).
    pub series: Vec<String>,
    /// Categories, each with one optional value per series.
    pub rows: Vec<(String, Vec<Option<f64>>)>,
    /// Reference lines.
    pub markers: Vec<Marker>,
    /// A logarithmic value axis.
    pub log: bool,
    /// Formats a value for labels.
    pub format: fn(f64) -> String,
}

const WIDTH: f64 = 900.0;
const LABEL_WIDTH: f64 = 260.0;
const BAR_HEIGHT: f64 = 14.0;
const ROW_GAP: f64 = 8.0;
const TOP: f64 = 48.0;
const BOTTOM: f64 = 40.0;

fn scale(value: f64, max: f64, min_log: f64, log: bool, span: f64) -> f64 {
    if log {
        let (lo, hi) = (
            min_log.log10().floor(),
            max.log10().ceil().max(min_log.log10().floor() + 1.0),
        );
        ((value.max(min_log).log10() - lo) / (hi - lo)).clamp(0.0, 1.0) * span
    } else if max > 0.0 {
        (value / max).clamp(0.0, 1.0) * span
    } else {
        0.0
    }
}

impl BarChart {
    /// The chart as an `<svg>` element.
    pub fn render(&self) -> String {
        let n_series = self.series.len().max(1);
        let row_height = BAR_HEIGHT * n_series as f64 + ROW_GAP;
        let height = TOP + BOTTOM + row_height * self.rows.len().max(1) as f64;
        let values = self
            .rows
            .iter()
            .flat_map(|(_, v)| v.iter().flatten().copied())
            .chain(self.markers.iter().map(|m| m.value))
            .filter(|v| v.is_finite() && *v > 0.0);
        let max = values.clone().fold(0.0f64, f64::max) * 1.05;
        let min_log = values.fold(f64::INFINITY, f64::min).min(max);
        let span = WIDTH - LABEL_WIDTH - 90.0;
        let mut svg = String::new();
        let _ = write!(
            svg,
            r#"<svg id="{}" class="chart bar-chart" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {height}" width="{WIDTH}" height="{height}" role="img"><title>{}</title>"#,
            escape(&self.id),
            escape(&self.title)
        );
        let _ = write!(
            svg,
            r#"<text x="4" y="18" class="chart-title">{}</text>"#,
            escape(&self.title)
        );
        // Legend.
        let mut x = LABEL_WIDTH;
        for (i, name) in self.series.iter().enumerate() {
            let _ = write!(
                svg,
                r#"<rect x="{x}" y="28" width="10" height="10" fill="{}"/><text x="{}" y="37" class="legend">{}</text>"#,
                PALETTE[i % PALETTE.len()],
                x + 14.0,
                escape(name)
            );
            x += 24.0 + 7.0 * name.len() as f64;
        }
        for (r, (label, values)) in self.rows.iter().enumerate() {
            let y0 = TOP + r as f64 * row_height;
            let _ = write!(
                svg,
                r#"<text x="{}" y="{}" class="label" text-anchor="end">{}</text>"#,
                LABEL_WIDTH - 6.0,
                y0 + row_height / 2.0,
                escape(label)
            );
            for (s, value) in values.iter().enumerate() {
                let y = y0 + s as f64 * BAR_HEIGHT;
                match value {
                    Some(v) if v.is_finite() && *v > 0.0 => {
                        let w = scale(*v, max, min_log, self.log, span).max(1.0);
                        let _ = write!(
                            svg,
                            r#"<rect class="bar" x="{LABEL_WIDTH}" y="{y}" width="{w:.1}" height="{}" fill="{}"><title>{}: {}</title></rect><text x="{:.1}" y="{}" class="value">{}</text>"#,
                            BAR_HEIGHT - 2.0,
                            PALETTE[s % PALETTE.len()],
                            escape(&format!(
                                "{label} ({})",
                                self.series.get(s).map_or("", |x| x)
                            )),
                            (self.format)(*v),
                            LABEL_WIDTH + w + 4.0,
                            y + BAR_HEIGHT - 4.0,
                            (self.format)(*v)
                        );
                    }
                    _ => {
                        let _ = write!(
                            svg,
                            r#"<text x="{}" y="{}" class="value missing">n/a</text>"#,
                            LABEL_WIDTH + 4.0,
                            y + BAR_HEIGHT - 4.0
                        );
                    }
                }
            }
        }
        let bottom = height - BOTTOM;
        for m in &self.markers {
            let x = LABEL_WIDTH + scale(m.value, max, min_log, self.log, span);
            let _ = write!(
                svg,
                r#"<line class="marker" x1="{x:.1}" y1="{TOP}" x2="{x:.1}" y2="{bottom}" stroke="{}" stroke-dasharray="5,4"/><text x="{x:.1}" y="{}" class="marker-label" text-anchor="middle">{}</text>"#,
                PALETTE[m.series % PALETTE.len()],
                bottom + 14.0 + 12.0 * (m.series % 2) as f64,
                escape(&format!("{} {}", m.label, (self.format)(m.value)))
            );
        }
        let _ = write!(
            svg,
            r#"<line x1="{LABEL_WIDTH}" y1="{bottom}" x2="{}" y2="{bottom}" class="axis"/><text x="{}" y="{}" class="axis-label" text-anchor="end">{}{}</text></svg>"#,
            LABEL_WIDTH + span,
            WIDTH - 4.0,
            height - 4.0,
            escape(&self.unit),
            if self.log { " (log scale)" } else { "" }
        );
        svg
    }
}

/// Stacked horizontal bars: one bar per category, split into parts (e.g. phases).
#[derive(Clone, Debug)]
pub struct StackedChart {
    /// Id of the `<svg>` element.
    pub id: String,
    /// Title above the chart.
    pub title: String,
    /// The value axis' label.
    pub unit: String,
    /// Part names (legend), in stacking order.
    pub parts: Vec<String>,
    /// Categories, each with one value per part.
    pub rows: Vec<(String, Vec<f64>)>,
    /// Formats a value for labels.
    pub format: fn(f64) -> String,
}

impl StackedChart {
    /// The chart as an `<svg>` element.
    pub fn render(&self) -> String {
        let row_height = BAR_HEIGHT + ROW_GAP;
        let legend_rows = self.parts.len().div_ceil(5) as f64;
        let top = TOP + 14.0 * (legend_rows - 1.0).max(0.0);
        let height = top + BOTTOM + row_height * self.rows.len().max(1) as f64;
        let max = self
            .rows
            .iter()
            .map(|(_, v)| v.iter().filter(|x| x.is_finite()).sum::<f64>())
            .fold(0.0f64, f64::max)
            * 1.05;
        let span = WIDTH - LABEL_WIDTH - 90.0;
        let mut svg = String::new();
        let _ = write!(
            svg,
            r#"<svg id="{}" class="chart stacked-chart" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {height}" width="{WIDTH}" height="{height}" role="img"><title>{}</title><text x="4" y="18" class="chart-title">{}</text>"#,
            escape(&self.id),
            escape(&self.title),
            escape(&self.title)
        );
        for (i, name) in self.parts.iter().enumerate() {
            let (col, line) = (i % 5, i / 5);
            let x = LABEL_WIDTH + col as f64 * 130.0;
            let y = 28.0 + 14.0 * line as f64;
            let _ = write!(
                svg,
                r#"<rect x="{x}" y="{y}" width="10" height="10" fill="{}"/><text x="{}" y="{}" class="legend">{}</text>"#,
                PALETTE[i % PALETTE.len()],
                x + 14.0,
                y + 9.0,
                escape(name)
            );
        }
        for (r, (label, values)) in self.rows.iter().enumerate() {
            let y = top + r as f64 * row_height;
            let _ = write!(
                svg,
                r#"<text x="{}" y="{}" class="label" text-anchor="end">{}</text>"#,
                LABEL_WIDTH - 6.0,
                y + BAR_HEIGHT - 3.0,
                escape(label)
            );
            let mut x = LABEL_WIDTH;
            for (p, v) in values.iter().enumerate() {
                if !v.is_finite() || *v <= 0.0 {
                    continue;
                }
                let w = scale(*v, max, 0.0, false, span);
                let _ = write!(
                    svg,
                    r#"<rect class="bar" x="{x:.1}" y="{y}" width="{w:.1}" height="{BAR_HEIGHT}" fill="{}"><title>{}: {}</title></rect>"#,
                    PALETTE[p % PALETTE.len()],
                    escape(&format!("{label} {}", self.parts.get(p).map_or("", |x| x))),
                    (self.format)(*v)
                );
                x += w;
            }
            let total: f64 = values.iter().filter(|x| x.is_finite()).sum();
            let _ = write!(
                svg,
                r#"<text x="{:.1}" y="{}" class="value">{}</text>"#,
                x + 4.0,
                y + BAR_HEIGHT - 3.0,
                (self.format)(total)
            );
        }
        let bottom = height - BOTTOM;
        let _ = write!(
            svg,
            r#"<line x1="{LABEL_WIDTH}" y1="{bottom}" x2="{}" y2="{bottom}" class="axis"/><text x="{}" y="{}" class="axis-label" text-anchor="end">{}</text></svg>"#,
            LABEL_WIDTH + span,
            WIDTH - 4.0,
            height - 4.0,
            escape(&self.unit)
        );
        svg
    }
}

/// A line chart over a logarithmic (base 2) x axis, e.g. throughput by buffer size.
#[derive(Clone, Debug)]
pub struct LineChart {
    /// Id of the `<svg>` element.
    pub id: String,
    /// Title above the chart.
    pub title: String,
    /// The x axis' label.
    pub x_unit: String,
    /// The y axis' label.
    pub y_unit: String,
    /// Series: a name and its (x, y) points.
    pub series: Vec<(String, Vec<(f64, f64)>)>,
    /// Vertical markers: a label and an x value (e.g. the L1d size).
    pub markers: Vec<(String, f64)>,
    /// Formats an x value for ticks.
    pub format_x: fn(f64) -> String,
    /// Formats a y value for ticks.
    pub format_y: fn(f64) -> String,
}

impl LineChart {
    /// The chart as an `<svg>` element.
    pub fn render(&self) -> String {
        let (w, h) = (WIDTH, 340.0);
        let (left, right, top, bottom) = (90.0, 180.0, 40.0, 50.0);
        let points = self.series.iter().flat_map(|(_, p)| p.iter().copied());
        let xs: Vec<f64> = points
            .clone()
            .map(|p| p.0)
            .chain(self.markers.iter().map(|m| m.1))
            .filter(|x| *x > 0.0)
            .collect();
        let (x_lo, x_hi) = (
            xs.iter().copied().fold(f64::INFINITY, f64::min).log2(),
            xs.iter().copied().fold(0.0f64, f64::max).log2(),
        );
        let x_hi = if x_hi > x_lo { x_hi } else { x_lo + 1.0 };
        let y_max = points.map(|p| p.1).fold(0.0f64, f64::max) * 1.1;
        let px = |x: f64| left + (x.log2() - x_lo) / (x_hi - x_lo) * (w - left - right);
        let py = |y: f64| {
            if y_max > 0.0 {
                h - bottom - y / y_max * (h - top - bottom)
            } else {
                h - bottom
            }
        };
        let mut svg = String::new();
        let _ = write!(
            svg,
            r#"<svg id="{}" class="chart line-chart" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {w} {h}" width="{w}" height="{h}" role="img"><title>{}</title><text x="4" y="18" class="chart-title">{}</text>"#,
            escape(&self.id),
            escape(&self.title),
            escape(&self.title)
        );
        // Axes and ticks: every power of two on x, five steps on y.
        let _ = write!(
            svg,
            r#"<line x1="{left}" y1="{}" x2="{}" y2="{}" class="axis"/><line x1="{left}" y1="{top}" x2="{left}" y2="{}" class="axis"/>"#,
            h - bottom,
            w - right,
            h - bottom,
            h - bottom
        );
        let mut e = x_lo.ceil();
        while e <= x_hi.floor() {
            let x = 2f64.powf(e);
            let _ = write!(
                svg,
                r#"<text x="{:.1}" y="{}" class="tick" text-anchor="middle">{}</text>"#,
                px(x),
                h - bottom + 16.0,
                escape(&(self.format_x)(x))
            );
            e += 1.0;
        }
        for i in 0..=5 {
            let y = y_max * f64::from(i) / 5.0;
            let _ = write!(
                svg,
                r#"<text x="{}" y="{:.1}" class="tick" text-anchor="end">{}</text><line x1="{left}" y1="{:.1}" x2="{}" y2="{:.1}" class="grid"/>"#,
                left - 6.0,
                py(y) + 4.0,
                escape(&(self.format_y)(y)),
                py(y),
                w - right,
                py(y)
            );
        }
        for (label, x) in &self.markers {
            let _ = write!(
                svg,
                r##"<line class="marker" x1="{0:.1}" y1="{top}" x2="{0:.1}" y2="{1}" stroke="#555" stroke-dasharray="5,4"/><text x="{2:.1}" y="{3}" class="marker-label">{4}</text>"##,
                px(*x),
                h - bottom,
                px(*x) + 3.0,
                top + 10.0,
                escape(label)
            );
        }
        self.write_series(&mut svg, &px, &py, w - right, top);
        let _ = write!(
            svg,
            r#"<text x="{}" y="{}" class="axis-label" text-anchor="middle">{}</text><text x="12" y="{}" class="axis-label" transform="rotate(-90 12 {})" text-anchor="middle">{}</text></svg>"#,
            (left + w - right) / 2.0,
            h - 8.0,
            escape(&self.x_unit),
            h / 2.0,
            h / 2.0,
            escape(&self.y_unit)
        );
        svg
    }

    /// Each series as a line with its points and its legend entry at `legend`.
    fn write_series(
        &self,
        svg: &mut String,
        px: &dyn Fn(f64) -> f64,
        py: &dyn Fn(f64) -> f64,
        legend: f64,
        top: f64,
    ) {
        for (i, (name, pts)) in self.series.iter().enumerate() {
            let colour = PALETTE[i % PALETTE.len()];
            let path: Vec<String> = pts
                .iter()
                .filter(|p| p.0 > 0.0 && p.1.is_finite())
                .map(|&(x, y)| format!("{:.1},{:.1}", px(x), py(y)))
                .collect();
            let _ = write!(
                svg,
                r#"<polyline class="series" fill="none" stroke="{colour}" stroke-width="2" points="{}"><title>{}</title></polyline>"#,
                path.join(" "),
                escape(name)
            );
            for &(x, y) in pts.iter().filter(|p| p.0 > 0.0 && p.1.is_finite()) {
                let _ = write!(
                    svg,
                    r#"<circle cx="{:.1}" cy="{:.1}" r="3" fill="{colour}"><title>{}: {} at {}</title></circle>"#,
                    px(x),
                    py(y),
                    escape(name),
                    escape(&(self.format_y)(y)),
                    escape(&(self.format_x)(x))
                );
            }
            let _ = write!(
                svg,
                r#"<rect x="{}" y="{}" width="10" height="10" fill="{colour}"/><text x="{}" y="{}" class="legend">{}</text>"#,
                legend + 12.0,
                top + 16.0 * i as f64,
                legend + 26.0,
                top + 9.0 + 16.0 * i as f64,
                escape(name)
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rate(x: f64) -> String {
        format!("{x:.0}")
    }

    #[test]
    fn bar_chart_has_a_bar_per_value_and_escapes_labels() {
        let chart = BarChart {
            id: "c".into(),
            title: "a <b>".into(),
            unit: "GB/s".into(),
            series: vec!["warm".into(), "cold".into()],
            rows: vec![
                ("x".into(), vec![Some(2.0), Some(1.0)]),
                ("y & z".into(), vec![Some(4.0), None]),
            ],
            markers: vec![Marker {
                label: "ceiling".into(),
                value: 5.0,
                series: 0,
            }],
            log: false,
            format: rate,
        }
        .render();
        assert_eq!(chart.matches("class=\"bar\"").count(), 3);
        assert_eq!(chart.matches("class=\"marker\"").count(), 1);
        assert!(chart.contains("a &lt;b&gt;") && chart.contains("y &amp; z"));
        assert!(chart.contains("n/a"));
    }

    #[test]
    fn log_scale_orders_bars_by_magnitude() {
        let chart = BarChart {
            id: "c".into(),
            series: vec!["s".into()],
            rows: vec![
                ("a".into(), vec![Some(10.0)]),
                ("b".into(), vec![Some(1000.0)]),
            ],
            log: true,
            format: rate,
            ..BarChart::default()
        }
        .render();
        let widths: Vec<f64> = chart
            .split("class=\"bar\"")
            .skip(1)
            .map(|s| {
                let w = s.split("width=\"").nth(1).unwrap();
                w[..w.find('"').unwrap()].parse().unwrap()
            })
            .collect();
        assert!(widths[0] < widths[1] && widths[0] > 0.0);
    }

    #[test]
    fn line_and_stacked_charts_render_every_series_and_part() {
        let line = LineChart {
            id: "l".into(),
            series: vec![("raw".into(), vec![(1024.0, 1.0), (2048.0, 2.0)])],
            markers: vec![("L1d".into(), 32768.0)],
            format_x: rate,
            format_y: rate,
            ..LineChart::default()
        }
        .render();
        assert_eq!(line.matches("<polyline").count(), 1);
        assert_eq!(line.matches("<circle").count(), 2);
        assert!(line.contains("L1d"));
        let stacked = StackedChart {
            id: "s".into(),
            parts: vec!["open".into(), "write".into()],
            rows: vec![("mmap".into(), vec![0.1, 0.2])],
            format: rate,
            ..StackedChart::default()
        }
        .render();
        assert_eq!(stacked.matches("class=\"bar\"").count(), 2);
    }
}
