//! Inline SVG charts with no external assets: horizontal grouped bars and
//! step lines, each scaled to its data.
//!
//! Scaling: a bar chart's value axis spans the data and its base (the
//! value bars grow from: 0, or 1.0 for speedups, so that 1.03 and 1.00 look
//! different), padded and rounded to "nice" ticks; a reference value (the
//! 1.0 of a speedup) is drawn as a marked line. Every bar carries a value
//! label, and a legend is drawn only when there is more than one series.
//! A step-line chart spans the evaluations actually spent on x, with
//! integer ticks, and its data on y.
//!
//! Every drawn data point carries its data as attributes so a test (or a
//! script) can read the chart back: a bar is a `<rect class="bar"
//! data-group=".." data-series=".." data-value="..">` followed by its
//! `<text class="value-label">`; a line is a `<polyline class="line"
//! data-series=".." data-points="x:y x:y ...">`. Values are written with
//! [`num`] (full precision, round-trips through `f64::from_str`). Charts
//! have a `viewBox` and `width="100%"`, so they shrink with the window
//! instead of making it scroll.

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

/// How a bar's value label is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Label {
    /// Three decimals and an `x` (`1.030x`): speedups.
    Times,
    /// Three decimals (`1.030`): geometric means.
    Plain,
    /// A fraction as a percentage with one decimal (`73.4%`).
    Percent,
}

impl Label {
    /// `v` as the label shows it.
    pub fn format(self, v: f64) -> String {
        match self {
            Label::Times => format!("{v:.3}x"),
            Label::Plain => format!("{v:.3}"),
            Label::Percent => format!("{:.1}%", v * 100.0),
        }
    }
}

/// A grouped bar chart, drawn with horizontal bars (one row per group and
/// series), so that any number of operators fits the page's width.
#[derive(Debug, Clone, PartialEq)]
pub struct Bars {
    /// `data-chart` id.
    pub id: String,
    /// Title (the SVG's `<title>`).
    pub title: String,
    /// Value axis label.
    pub y_label: String,
    /// Groups (rows of bars).
    pub groups: Vec<String>,
    /// Series (one bar per group each).
    pub series: Vec<String>,
    /// `values[g][s]`; None draws no bar.
    pub values: Vec<Vec<Option<f64>>>,
    /// The value bars grow from (0, or 1.0 for speedups).
    pub base: f64,
    /// A marked reference line (1.0 for speedups), labelled.
    pub reference: Option<f64>,
    /// How value labels are written.
    pub label: Label,
    /// Width of the drawing (its viewBox), e.g. [`WIDTH`]; the chart is
    /// scaled to its container.
    pub width: f64,
}

/// A step-line chart.
#[derive(Debug, Clone, PartialEq)]
pub struct Lines {
    /// `data-chart` id.
    pub id: String,
    /// Title (the SVG's `<title>`).
    pub title: String,
    /// X axis label.
    pub x_label: String,
    /// Y axis label.
    pub y_label: String,
    /// (series name, points sorted by x).
    pub series: Vec<(String, Vec<(f64, f64)>)>,
    /// A marked reference line on y (1.0 for speedups).
    pub reference: Option<f64>,
}

/// A step of 1, 2, 2.5 or 5 × 10^k that cuts `span` into about `n` parts.
pub fn nice_step(span: f64, n: usize) -> f64 {
    if !(span.is_finite() && span > 0.0) {
        return 1.0;
    }
    let raw = span / n.max(1) as f64;
    let mag = 10f64.powf(raw.log10().floor());
    for m in [1.0, 2.0, 2.5, 5.0, 10.0] {
        if m * mag >= raw * 0.999_999 {
            return m * mag;
        }
    }
    10.0 * mag
}

/// The axis range and ticks for `values` together with `must` (values the
/// axis has to show: the base, the reference): padded by 8% of the span
/// (at least 0.005), rounded outward to the tick step.
pub fn axis(values: &[f64], must: &[f64]) -> (f64, f64, Vec<f64>) {
    let all: Vec<f64> = values
        .iter()
        .chain(must)
        .copied()
        .filter(|v| v.is_finite())
        .collect();
    let (mut lo, mut hi) = all
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
            (a.min(*v), b.max(*v))
        });
    if !lo.is_finite() {
        (lo, hi) = (0.0, 1.0);
    }
    let pad = ((hi - lo) * 0.08).max(0.005);
    let touches_zero = lo >= 0.0 && lo - pad < 0.0;
    lo = if touches_zero { 0.0 } else { lo - pad };
    hi += pad;
    let step = nice_step(hi - lo, 5);
    let lo = (lo / step).floor() * step;
    let hi = (hi / step).ceil() * step;
    let mut ticks = Vec::new();
    let mut k = 0;
    loop {
        let t = lo + step * k as f64;
        if t > hi + step * 1e-9 {
            break;
        }
        ticks.push(t);
        k += 1;
    }
    (lo, hi, ticks)
}

/// A tick label: as many decimals as the step needs.
fn tick_label(v: f64, step: f64) -> String {
    let decimals = (0..=4usize)
        .find(|d| {
            let scaled = step * 10f64.powi(*d as i32);
            (scaled - scaled.round()).abs() < 1e-6
        })
        .unwrap_or(4);
    format!("{v:.decimals$}")
}

/// Integer ticks from 0 to `max` (at most about 8).
pub fn integer_ticks(max: u32) -> Vec<u32> {
    let max = max.max(1);
    let step = (nice_step(f64::from(max), 6).round() as u32).max(1);
    let mut ticks: Vec<u32> = (0..=max).step_by(step as usize).collect();
    if ticks.last() != Some(&max) {
        ticks.push(max);
    }
    ticks
}

/// The usual width of a chart's drawing.
pub const WIDTH: f64 = 960.0;
const ROW: f64 = 18.0;
const GROUP_GAP: f64 = 10.0;
const LEFT: f64 = 190.0;
const RIGHT: f64 = 80.0;

fn legend(s: &mut String, names: &[String], x0: f64, y: f64) {
    if names.len() < 2 {
        return;
    }
    let mut x = x0;
    for (i, name) in names.iter().enumerate() {
        let _ = write!(
            s,
            r#"<g class="legend-item"><rect x="{x:.1}" y="{ry:.1}" width="12" height="12" fill="{c}"/><text x="{tx:.1}" y="{y:.1}" font-size="12">{n}</text></g>"#,
            ry = y - 10.0,
            c = colour(i),
            tx = x + 16.0,
            n = esc(name),
        );
        x += 28.0 + 7.0 * name.chars().count() as f64;
    }
}

impl Bars {
    /// The `<svg>` element.
    pub fn render(&self) -> String {
        let n_series = self.series.len().max(1);
        let top = if self.series.len() > 1 { 50.0 } else { 34.0 };
        let bottom = 40.0;
        let group_h = ROW * n_series as f64 + GROUP_GAP;
        let plot_h = group_h * self.groups.len().max(1) as f64;
        let height = top + plot_h + bottom;
        let plot_w = self.width - LEFT - RIGHT;
        let data: Vec<f64> = self
            .values
            .iter()
            .flatten()
            .flatten()
            .copied()
            .filter(|v| v.is_finite())
            .collect();
        let mut must = vec![self.base];
        must.extend(self.reference);
        let (lo, hi, ticks) = axis(&data, &must);
        let step = if ticks.len() > 1 {
            ticks[1] - ticks[0]
        } else {
            1.0
        };
        let x_of = |v: f64| LEFT + plot_w * ((v - lo) / (hi - lo)).clamp(0.0, 1.0);
        let mut s = String::new();
        let _ = write!(
            s,
            r#"<svg xmlns="http://www.w3.org/2000/svg" class="chart" data-chart="{id}" width="100%" viewBox="0 0 {w:.0} {height:.0}" preserveAspectRatio="xMinYMin meet" role="img" aria-label="{title}">"#,
            id = esc(&self.id),
            title = esc(&self.title),
            w = self.width,
        );
        let _ = write!(s, "<title>{}</title>", esc(&self.title));
        // Value axis: grid lines and tick labels along the top and bottom.
        for t in &ticks {
            let x = x_of(*t);
            let _ = write!(
                s,
                r##"<line x1="{x:.1}" y1="{top:.1}" x2="{x:.1}" y2="{y2:.1}" stroke="#e4e4e4"/><text class="tick" x="{x:.1}" y="{ty:.1}" font-size="11" text-anchor="middle">{l}</text>"##,
                y2 = top + plot_h,
                ty = top + plot_h + 14.0,
                l = tick_label(*t, step),
            );
        }
        let _ = write!(
            s,
            r#"<text class="axis-label" x="{x:.1}" y="{y:.1}" font-size="12" text-anchor="middle">{l}</text>"#,
            x = LEFT + plot_w / 2.0,
            y = top + plot_h + 32.0,
            l = esc(&self.y_label),
        );
        for (g, group) in self.groups.iter().enumerate() {
            let gy = top + group_h * g as f64 + GROUP_GAP / 2.0;
            let _ = write!(
                s,
                r#"<text class="group-label" x="{x:.1}" y="{y:.1}" font-size="12" text-anchor="end">{n}</text>"#,
                x = LEFT - 8.0,
                y = gy + ROW * n_series as f64 / 2.0 + 4.0,
                n = esc(group),
            );
            for (k, series) in self.series.iter().enumerate() {
                let Some(Some(v)) = self.values.get(g).and_then(|row| row.get(k)).copied() else {
                    continue;
                };
                if !v.is_finite() {
                    continue;
                }
                let y = gy + ROW * k as f64;
                let (x0, x1) = (x_of(self.base), x_of(v));
                let (x, w) = (x0.min(x1), (x1 - x0).abs().max(1.0));
                let label = self.label.format(v);
                let _ = write!(
                    s,
                    r#"<rect class="bar" x="{x:.1}" y="{y:.1}" width="{w:.1}" height="{h:.1}" fill="{c}" data-group="{gn}" data-series="{sn}" data-value="{val}"><title>{gn} / {sn}: {label}</title></rect>"#,
                    h = ROW - 3.0,
                    c = colour(k),
                    gn = esc(group),
                    sn = esc(series),
                    val = num(v),
                );
                // The label sits past the bar's end, on the side it grows.
                let (lx, anchor) = if v >= self.base {
                    (x + w + 4.0, "start")
                } else {
                    (x - 4.0, "end")
                };
                let _ = write!(
                    s,
                    r#"<text class="value-label" x="{lx:.1}" y="{ly:.1}" font-size="11" text-anchor="{anchor}">{label}</text>"#,
                    ly = y + ROW - 7.0,
                );
            }
        }
        let _ = write!(
            s,
            r##"<line class="base" x1="{x:.1}" y1="{top:.1}" x2="{x:.1}" y2="{y2:.1}" stroke="#000"/>"##,
            x = x_of(self.base),
            y2 = top + plot_h,
        );
        if let Some(r) = self.reference {
            let x = x_of(r);
            let _ = write!(
                s,
                r##"<line class="reference" x1="{x:.1}" y1="{y1:.1}" x2="{x:.1}" y2="{y2:.1}" stroke="#c00" stroke-width="1.5" stroke-dasharray="5 3" data-value="{v}"/><text class="reference-label" x="{x:.1}" y="{ty:.1}" font-size="11" fill="#c00" text-anchor="middle">{l}</text>"##,
                y1 = top - 4.0,
                y2 = top + plot_h,
                v = num(r),
                ty = top - 8.0,
                l = tick_label(r, 0.1),
            );
        }
        legend(&mut s, &self.series, LEFT, 16.0);
        s.push_str("</svg>");
        s
    }
}

impl Lines {
    /// The `<svg>` element.
    pub fn render(&self) -> String {
        let height = 320.0;
        let top = if self.series.len() > 1 { 40.0 } else { 24.0 };
        let bottom = 52.0;
        let left = 70.0;
        let right = 90.0;
        let plot_h = height - top - bottom;
        let plot_w = WIDTH - left - right;
        let all = || self.series.iter().flat_map(|(_, p)| p.iter());
        let x_max = all().map(|p| p.0).fold(0.0, f64::max).max(1.0).ceil() as u32;
        let ys: Vec<f64> = all().map(|p| p.1).collect();
        let must: Vec<f64> = self.reference.into_iter().collect();
        let (lo, hi, ticks) = axis(&ys, &must);
        let step = if ticks.len() > 1 {
            ticks[1] - ticks[0]
        } else {
            1.0
        };
        let x_of = |x: f64| left + plot_w * (x / f64::from(x_max)).clamp(0.0, 1.0);
        let y_of = |y: f64| top + plot_h - plot_h * ((y - lo) / (hi - lo)).clamp(0.0, 1.0);
        let mut s = String::new();
        let _ = write!(
            s,
            r#"<svg xmlns="http://www.w3.org/2000/svg" class="chart" data-chart="{id}" width="100%" viewBox="0 0 {WIDTH:.0} {height:.0}" preserveAspectRatio="xMinYMin meet" role="img" aria-label="{title}">"#,
            id = esc(&self.id),
            title = esc(&self.title),
        );
        let _ = write!(s, "<title>{}</title>", esc(&self.title));
        for t in &ticks {
            let y = y_of(*t);
            let _ = write!(
                s,
                r##"<line x1="{left}" y1="{y:.1}" x2="{x2:.1}" y2="{y:.1}" stroke="#e4e4e4"/><text class="tick" x="{tx:.1}" y="{ty:.1}" font-size="11" text-anchor="end">{l}</text>"##,
                x2 = left + plot_w,
                tx = left - 6.0,
                ty = y + 4.0,
                l = tick_label(*t, step),
            );
        }
        for t in integer_ticks(x_max) {
            let x = x_of(f64::from(t));
            let _ = write!(
                s,
                r##"<line x1="{x:.1}" y1="{y1:.1}" x2="{x:.1}" y2="{y2:.1}" stroke="#000"/><text class="tick x-tick" x="{x:.1}" y="{ty:.1}" font-size="11" text-anchor="middle">{t}</text>"##,
                y1 = top + plot_h,
                y2 = top + plot_h + 4.0,
                ty = top + plot_h + 16.0,
            );
        }
        let _ = write!(
            s,
            r#"<text class="axis-label" x="{x:.1}" y="{y:.1}" font-size="12" text-anchor="middle">{l}</text><text class="axis-label" x="14" y="{ly:.1}" font-size="12" transform="rotate(-90 14 {ly:.1})" text-anchor="middle">{yl}</text>"#,
            x = left + plot_w / 2.0,
            y = top + plot_h + 36.0,
            l = esc(&self.x_label),
            ly = top + plot_h / 2.0,
            yl = esc(&self.y_label),
        );
        if let Some(r) = self.reference {
            let y = y_of(r);
            let _ = write!(
                s,
                r##"<line class="reference" x1="{left}" y1="{y:.1}" x2="{x2:.1}" y2="{y:.1}" stroke="#c00" stroke-width="1.5" stroke-dasharray="5 3" data-value="{v}"/><text class="reference-label" x="{lx:.1}" y="{ty:.1}" font-size="11" fill="#c00">{l}</text>"##,
                x2 = left + plot_w,
                v = num(r),
                lx = left + plot_w + 4.0,
                ty = y + 4.0,
                l = tick_label(r, 0.1),
            );
        }
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
            // A dot and a value label where the best so far changes, and
            // at the end.
            let mut prev: Option<f64> = None;
            for (i, (x, y)) in points.iter().enumerate() {
                let last = i + 1 == points.len();
                if prev.is_some_and(|p| (p - y).abs() < 1e-12) && !last {
                    continue;
                }
                prev = Some(*y);
                let _ = write!(
                    s,
                    r#"<circle cx="{cx:.1}" cy="{cy:.1}" r="3" fill="{c}"/><text class="value-label" x="{tx:.1}" y="{ty:.1}" font-size="11" fill="{c}">{l}</text>"#,
                    cx = x_of(*x),
                    cy = y_of(*y),
                    c = colour(k),
                    tx = x_of(*x) + 4.0,
                    ty = y_of(*y) - 6.0 - 12.0 * k as f64,
                    l = Label::Plain.format(*y),
                );
            }
        }
        let _ = write!(
            s,
            r##"<line x1="{left}" y1="{y0:.1}" x2="{x2:.1}" y2="{y0:.1}" stroke="#000"/>"##,
            y0 = top + plot_h,
            x2 = left + plot_w,
        );
        let names: Vec<String> = self.series.iter().map(|(n, _)| n.clone()).collect();
        legend(&mut s, &names, left, 18.0);
        s.push_str("</svg>");
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bars(values: Vec<Vec<Option<f64>>>, series: &[&str]) -> Bars {
        Bars {
            id: "t".into(),
            title: "A & B".into(),
            y_label: "speedup".into(),
            groups: vec!["L1".into(), "L2".into()],
            series: series.iter().map(|s| s.to_string()).collect(),
            values,
            base: 1.0,
            reference: Some(1.0),
            label: Label::Times,
            width: WIDTH,
        }
    }

    #[test]
    fn bars_carry_their_data_and_labels() {
        let b = bars(
            vec![vec![Some(1.5), None], vec![Some(1.0), Some(0.25)]],
            &["full", "tiling"],
        );
        let svg = b.render();
        assert_eq!(svg.matches(r#"class="bar""#).count(), 3);
        assert_eq!(svg.matches(r#"class="value-label""#).count(), 3);
        assert!(svg.contains(r#"data-group="L1" data-series="full" data-value="1.5""#));
        assert!(svg.contains(r#"data-group="L2" data-series="tiling" data-value="0.25""#));
        assert!(svg.contains(">1.500x<") && svg.contains(">0.250x<"));
        assert!(svg.contains("A &amp; B"));
        assert_eq!(svg.matches(r#"class="legend-item""#).count(), 2);
    }

    #[test]
    fn a_small_speedup_is_visible_and_one_series_has_no_legend() {
        let b = bars(vec![vec![Some(1.03)], vec![Some(1.0)]], &["full"]);
        let svg = b.render();
        assert!(!svg.contains("legend-item"), "one series: no legend");
        assert!(svg.contains(r#"class="reference""#));
        // The axis spans about the data, not 0..1.2: the 1.03 bar is a
        // visible share of the plot width.
        let (lo, hi, ticks) = axis(&[1.03, 1.0], &[1.0]);
        assert!(lo >= 0.95 && hi <= 1.06, "{lo}..{hi}");
        assert!(ticks.len() >= 3);
        let width = |v: &str| -> f64 {
            let at = svg.find(&format!(r#"data-value="{v}""#)).unwrap();
            let rect = &svg[svg[..at].rfind("<rect").unwrap()..at];
            let w = rect.split("width=\"").nth(1).unwrap();
            w[..w.find('"').unwrap()].parse().unwrap()
        };
        assert!(width("1.03") > 100.0, "1.03 shows as a long bar");
        assert!(width("1") <= 1.0, "1.00 sits on the base line");
    }

    #[test]
    fn axis_and_ticks() {
        assert_eq!(nice_step(1.0, 5), 0.2);
        assert_eq!(nice_step(0.07, 5), 0.02);
        let (lo, hi, _) = axis(&[0.3, 0.9], &[0.0]);
        assert_eq!((lo, hi), (0.0, 1.0));
        assert_eq!(integer_ticks(12), vec![0, 2, 4, 6, 8, 10, 12]);
        assert_eq!(integer_ticks(3), vec![0, 1, 2, 3]);
        assert_eq!(integer_ticks(7), vec![0, 2, 4, 6, 7]);
        assert_eq!(tick_label(1.02, 0.02), "1.02");
        assert_eq!(tick_label(1.025, 0.025), "1.025");
        assert_eq!(tick_label(6.0, 2.0), "6");
    }

    #[test]
    fn lines_carry_their_data_with_integer_ticks() {
        let l = Lines {
            id: "c".into(),
            title: "GM".into(),
            x_label: "evaluations".into(),
            y_label: "GM".into(),
            series: vec![("full".into(), vec![(0.0, 1.0), (3.0, 1.25)])],
            reference: Some(1.0),
        };
        let svg = l.render();
        assert!(svg.contains(r#"data-series="full" data-points="0:1 3:1.25""#));
        let ticks: Vec<&str> = svg
            .split(r#"class="tick x-tick""#)
            .skip(1)
            .map(|t| {
                let t = &t[t.find('>').unwrap() + 1..];
                &t[..t.find('<').unwrap()]
            })
            .collect();
        assert_eq!(ticks, ["0", "1", "2", "3"]);
        assert!(!svg.contains("legend-item"));
    }
}
