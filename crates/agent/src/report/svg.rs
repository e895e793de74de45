//! Inline SVG charts with no external assets: grouped bars and step lines.
//!
//! Every drawn data point carries its data as attributes so a test (or a
//! script) can read the chart back: a bar is a `<rect class="bar"
//! data-group=".." data-series=".." data-value="..">`; a line is a
//! `<polyline class="line" data-series=".." data-points="x:y x:y ...">`.
//! Values are written with [`num`] (full precision, round-trips through
//! `f64::from_str`).

use std::fmt::Write as _;

/// Series colours (colour-blind friendly palette), cycled.
const PALETTE: [&str; 8] = [
    "#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#999999",
];

/// The colour of series `i`.
pub fn colour(i: usize) -> &'static str {
    PALETTE[i % PALETTE.len()]
}

/// Escapes text for XML/HTML content and attribute values.
pub fn esc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A number as written into data attributes (shortest round-trip form).
pub fn num(v: f64) -> String {
    format!("{v}")
}

/// A grouped bar chart.
#[derive(Debug, Clone, PartialEq)]
pub struct Bars {
    /// `data-chart` id.
    pub id: String,
    /// Title above the chart.
    pub title: String,
    /// Y axis label.
    pub y_label: String,
    /// Groups along the x axis.
    pub groups: Vec<String>,
    /// Series (one bar per group each).
    pub series: Vec<String>,
    /// `values[g][s]`; None draws no bar.
    pub values: Vec<Vec<Option<f64>>>,
    /// A horizontal reference line (e.g. 1.0 for speedups).
    pub reference: Option<f64>,
}

/// A step-line chart.
#[derive(Debug, Clone, PartialEq)]
pub struct Lines {
    /// `data-chart` id.
    pub id: String,
    /// Title above the chart.
    pub title: String,
    /// X axis label.
    pub x_label: String,
    /// Y axis label.
    pub y_label: String,
    /// (series name, points sorted by x).
    pub series: Vec<(String, Vec<(f64, f64)>)>,
}

const H: f64 = 300.0;
const TOP: f64 = 30.0;
const BOTTOM: f64 = 80.0;
const LEFT: f64 = 60.0;
const RIGHT: f64 = 20.0;

fn nice_max(v: f64) -> f64 {
    if !(v.is_finite() && v > 0.0) {
        return 1.0;
    }
    let mag = 10f64.powf(v.log10().floor());
    for step in [1.0, 1.2, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0] {
        if step * mag >= v * 1.0001 {
            return step * mag;
        }
    }
    10.0 * mag
}

fn axis_ticks(s: &mut String, width: f64, y_max: f64, plot_h: f64) {
    for k in 0..=4 {
        let v = y_max * k as f64 / 4.0;
        let y = TOP + plot_h - plot_h * k as f64 / 4.0;
        let _ = write!(
            s,
            r##"<line x1="{LEFT}" y1="{y:.1}" x2="{x2:.1}" y2="{y:.1}" stroke="#ddd" stroke-width="1"/><text x="{tx:.1}" y="{ty:.1}" font-size="11" text-anchor="end">{label}</text>"##,
            x2 = width - RIGHT,
            tx = LEFT - 6.0,
            ty = y + 4.0,
            label = format_tick(v),
        );
    }
}

fn format_tick(v: f64) -> String {
    if v == 0.0 {
        "0".into()
    } else if v.abs() >= 100.0 {
        format!("{v:.0}")
    } else if v.abs() >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

fn legend(s: &mut String, names: &[String], width: f64) {
    let mut x = LEFT;
    for (i, name) in names.iter().enumerate() {
        if x > width - 80.0 {
            break;
        }
        let _ = write!(
            s,
            r#"<rect x="{x:.1}" y="8" width="12" height="12" fill="{c}"/><text x="{tx:.1}" y="18" font-size="12">{n}</text>"#,
            c = colour(i),
            tx = x + 16.0,
            n = esc(name),
        );
        x += 24.0 + 7.0 * name.chars().count() as f64;
    }
}

impl Bars {
    /// The `<svg>` element.
    pub fn render(&self) -> String {
        let n_series = self.series.len().max(1);
        let bar_w = 14.0;
        let group_w = bar_w * n_series as f64 + 16.0;
        let width = (LEFT + RIGHT + group_w * self.groups.len().max(1) as f64).max(420.0);
        let plot_h = H - TOP - BOTTOM;
        let data_max = self
            .values
            .iter()
            .flatten()
            .flatten()
            .copied()
            .filter(|v| v.is_finite())
            .fold(self.reference.unwrap_or(0.0), f64::max);
        let y_max = nice_max(data_max);
        let y_of = |v: f64| TOP + plot_h - plot_h * (v.max(0.0) / y_max).min(1.0);
        let mut s = String::new();
        let _ = write!(
            s,
            r#"<svg xmlns="http://www.w3.org/2000/svg" class="chart" data-chart="{id}" width="{width:.0}" height="{H:.0}" viewBox="0 0 {width:.0} {H:.0}" role="img" aria-label="{title}">"#,
            id = esc(&self.id),
            title = esc(&self.title),
        );
        let _ = write!(s, "<title>{}</title>", esc(&self.title));
        axis_ticks(&mut s, width, y_max, plot_h);
        let _ = write!(
            s,
            r#"<text x="14" y="{y:.1}" font-size="11" transform="rotate(-90 14 {y:.1})" text-anchor="middle">{l}</text>"#,
            y = TOP + plot_h / 2.0,
            l = esc(&self.y_label),
        );
        for (g, group) in self.groups.iter().enumerate() {
            let gx = LEFT + group_w * g as f64 + 8.0;
            for (k, series) in self.series.iter().enumerate() {
                let Some(Some(v)) = self.values.get(g).and_then(|row| row.get(k)).copied() else {
                    continue;
                };
                if !v.is_finite() {
                    continue;
                }
                let x = gx + bar_w * k as f64;
                let y = y_of(v);
                let h = TOP + plot_h - y;
                let _ = write!(
                    s,
                    r#"<rect class="bar" x="{x:.1}" y="{y:.1}" width="{bw:.1}" height="{h:.1}" fill="{c}" data-group="{gn}" data-series="{sn}" data-value="{val}"><title>{gn} / {sn}: {shown}</title></rect>"#,
                    bw = bar_w - 2.0,
                    c = colour(k),
                    gn = esc(group),
                    sn = esc(series),
                    val = num(v),
                    shown = format_tick(v),
                );
            }
            let lx = gx + bar_w * n_series as f64 / 2.0;
            let ly = TOP + plot_h + 12.0;
            let _ = write!(
                s,
                r#"<text x="{lx:.1}" y="{ly:.1}" font-size="11" text-anchor="end" transform="rotate(-40 {lx:.1} {ly:.1})">{n}</text>"#,
                n = esc(group),
            );
        }
        if let Some(r) = self.reference {
            let y = y_of(r);
            let _ = write!(
                s,
                r##"<line class="reference" x1="{LEFT}" y1="{y:.1}" x2="{x2:.1}" y2="{y:.1}" stroke="#444" stroke-dasharray="4 3" data-value="{v}"/>"##,
                x2 = width - RIGHT,
                v = num(r),
            );
        }
        let _ = write!(
            s,
            r##"<line x1="{LEFT}" y1="{y0:.1}" x2="{x2:.1}" y2="{y0:.1}" stroke="#000"/>"##,
            y0 = TOP + plot_h,
            x2 = width - RIGHT,
        );
        legend(&mut s, &self.series, width);
        s.push_str("</svg>");
        s
    }
}

impl Lines {
    /// The `<svg>` element.
    pub fn render(&self) -> String {
        let width = 640.0;
        let plot_h = H - TOP - BOTTOM + 30.0;
        let plot_w = width - LEFT - RIGHT;
        let all = || self.series.iter().flat_map(|(_, p)| p.iter());
        let x_max = all().map(|p| p.0).fold(0.0, f64::max).max(1.0);
        let y_max = nice_max(all().map(|p| p.1).fold(1.0, f64::max));
        let x_of = |x: f64| LEFT + plot_w * (x / x_max).clamp(0.0, 1.0);
        let y_of = |y: f64| TOP + plot_h - plot_h * (y.max(0.0) / y_max).min(1.0);
        let mut s = String::new();
        let _ = write!(
            s,
            r#"<svg xmlns="http://www.w3.org/2000/svg" class="chart" data-chart="{id}" width="{width:.0}" height="{H:.0}" viewBox="0 0 {width:.0} {H:.0}" role="img" aria-label="{title}">"#,
            id = esc(&self.id),
            title = esc(&self.title),
        );
        let _ = write!(s, "<title>{}</title>", esc(&self.title));
        axis_ticks(&mut s, width, y_max, plot_h);
        for k in 0..=4 {
            let v = x_max * k as f64 / 4.0;
            let _ = write!(
                s,
                r#"<text x="{x:.1}" y="{y:.1}" font-size="11" text-anchor="middle">{l}</text>"#,
                x = x_of(v),
                y = TOP + plot_h + 16.0,
                l = format_tick(v),
            );
        }
        let _ = write!(
            s,
            r#"<text x="{x:.1}" y="{y:.1}" font-size="11" text-anchor="middle">{l}</text>"#,
            x = LEFT + plot_w / 2.0,
            y = TOP + plot_h + 34.0,
            l = esc(&self.x_label),
        );
        let _ = write!(
            s,
            r#"<text x="14" y="{y:.1}" font-size="11" transform="rotate(-90 14 {y:.1})" text-anchor="middle">{l}</text>"#,
            y = TOP + plot_h / 2.0,
            l = esc(&self.y_label),
        );
        for (k, (name, points)) in self.series.iter().enumerate() {
            // Step line: hold each value until the next x.
            let mut coords = Vec::new();
            for (i, (x, y)) in points.iter().enumerate() {
                if i > 0 {
                    coords.push(format!("{:.1},{:.1}", x_of(*x), y_of(points[i - 1].1)));
                }
                coords.push(format!("{:.1},{:.1}", x_of(*x), y_of(*y)));
            }
            let data: Vec<String> = points
                .iter()
                .map(|(x, y)| format!("{}:{}", num(*x), num(*y)))
                .collect();
            let _ = write!(
                s,
                r#"<polyline class="line" fill="none" stroke="{c}" stroke-width="2" points="{pts}" data-series="{n}" data-points="{d}"><title>{n}</title></polyline>"#,
                c = colour(k),
                pts = coords.join(" "),
                n = esc(name),
                d = data.join(" "),
            );
        }
        let _ = write!(
            s,
            r##"<line x1="{LEFT}" y1="{y0:.1}" x2="{x2:.1}" y2="{y0:.1}" stroke="#000"/>"##,
            y0 = TOP + plot_h,
            x2 = width - RIGHT,
        );
        let names: Vec<String> = self.series.iter().map(|(n, _)| n.clone()).collect();
        legend(&mut s, &names, width);
        s.push_str("</svg>");
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bars_carry_their_data() {
        let b = Bars {
            id: "t".into(),
            title: "A & B".into(),
            y_label: "speedup".into(),
            groups: vec!["L1".into(), "L2".into()],
            series: vec!["full".into(), "tiling".into()],
            values: vec![vec![Some(1.5), None], vec![Some(1.0), Some(0.25)]],
            reference: Some(1.0),
        };
        let svg = b.render();
        assert_eq!(svg.matches(r#"class="bar""#).count(), 3);
        assert!(svg.contains(r#"data-group="L1" data-series="full" data-value="1.5""#));
        assert!(svg.contains(r#"data-group="L2" data-series="tiling" data-value="0.25""#));
        assert!(svg.contains("A &amp; B"));
    }

    #[test]
    fn lines_carry_their_data() {
        let l = Lines {
            id: "c".into(),
            title: "GM".into(),
            x_label: "evaluations".into(),
            y_label: "GM".into(),
            series: vec![("full".into(), vec![(0.0, 1.0), (3.0, 1.25)])],
        };
        let svg = l.render();
        assert!(svg.contains(r#"data-series="full" data-points="0:1 3:1.25""#));
    }

    #[test]
    fn nice_max_rounds_up() {
        assert_eq!(nice_max(1.0), 1.2);
        assert_eq!(nice_max(1.9), 2.0);
        assert_eq!(nice_max(0.0), 1.0);
        assert!(nice_max(37.0) >= 37.0);
    }
}
