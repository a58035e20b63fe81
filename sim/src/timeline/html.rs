//! A [`Picture`] as one self-contained HTML file: an inline SVG of the lanes, then the
//! violations with the two things each compares, then the panels marks open.
//!
//! Guarantee: the output is well-formed (the SVG parses as XML: every text and
//! attribute is escaped, and characters XML forbids are replaced), deterministic, and
//! refers to nothing outside the file: no URL, no `src`, every `href` an anchor in the
//! file, and a Content-Security-Policy that lets the browser fetch nothing.

use super::diff::{around, first_difference};
use super::layout::{LEFT, Layout, PAD};
use super::{Alarm, Kind, Mark, Picture};
use std::fmt::Write;

const TOP: f64 = 44.0;
const LANE_H: f64 = 44.0;
const BOTTOM: f64 = 34.0;

const STYLE: &str = "\
body{font:14px/1.4 system-ui,sans-serif;margin:16px;color:#1d1d1f;background:#fff}
h1{font-size:18px;margin:0 0 4px}h2{font-size:16px;margin:18px 0 6px}
.facts{margin:0 0 10px;padding:0;list-style:none;color:#555}
.scroll{overflow-x:auto;border:1px solid #ddd;border-radius:4px}
svg text{font:11px system-ui,sans-serif;fill:#333}
svg .lane-label{font-weight:600;font-size:12px}
svg .tick{font-size:10px;fill:#777}
.ev{fill:#5b7db1}.req{fill:#2a9d8f}.fault{fill:#e76f51}.sig{fill:#8e44ad}
.exit{fill:#222}.eff{fill:#2e8b57}.bad{fill:#d00000}
.span{fill:#9bb7d4;opacity:.7}.span.badspan{fill:#d00000;opacity:.45}
.alarm line{stroke:#d00000;stroke-width:2;stroke-dasharray:5 3}
.alarm text{fill:#d00000;font-weight:700;font-size:12px}
a:hover .req{stroke:#000;stroke-width:2}
.violation{border-left:4px solid #d00000;padding:4px 12px;margin:12px 0;background:#fff5f5}
.cmp{display:flex;gap:12px;flex-wrap:wrap}.cmp>div{flex:1 1 420px;min-width:0}
pre{white-space:pre-wrap;word-break:break-all;background:#f6f6f6;padding:8px;margin:4px 0;font-size:12px}
mark{background:#ffd6d6;color:#000}mark b{background:#ff8080}
details{margin:4px 0}summary{cursor:pointer}details:target{outline:2px solid #2a9d8f}
";

/// Opens the `<details>` a mark links to (`#req-…`) when the address names it.
const SCRIPT: &str = "function openTarget(){var d=document.getElementById(location.hash.slice(1));\
if(d&&d.tagName==='DETAILS'){d.open=true;}}\
window.addEventListener('hashchange',openTarget);openTarget();";

/// Text for HTML and XML: escaped, with the characters XML 1.0 forbids replaced, and
/// the `//` after a URL scheme written as character references, so a URL in a text
/// (a client's `--base-url`) reads as itself but the file holds no URL at all.
pub fn esc(s: &str) -> String {
    escape(s).replace("://", ":&#47;&#47;")
}

fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            '\t' | '\n' | '\r' => out.push(c),
            c if (c as u32) < 0x20 || c == '\u{FFFE}' || c == '\u{FFFF}' => {
                out.push('\u{FFFD}');
            }
            c => out.push(c),
        }
    }
    out
}

/// An id usable in `href="#…"` and `id="…"`: letters, digits, `-` and `_` only.
pub fn anchor(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '-'
            }
        })
        .collect()
}

/// The whole file.
pub fn html(p: &Picture) -> String {
    let mut o = String::new();
    let _ = write!(
        o,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; \
style-src 'unsafe-inline'; script-src 'unsafe-inline'\">\n<title>{}</title>\n\
<style>\n{STYLE}</style>\n</head>\n<body>\n<h1>{}</h1>\n<ul class=\"facts\">\n",
        esc(&p.title),
        esc(&p.title)
    );
    for f in &p.facts {
        let _ = writeln!(o, "<li>{}</li>", esc(f));
    }
    o.push_str("</ul>\n<div class=\"scroll\">\n");
    svg(&mut o, p);
    o.push_str("</div>\n");
    let _ = writeln!(
        o,
        "<p class=\"facts\">Time runs left to right in {}; hover a mark for its details, \
click a request to open what it carried.</p>",
        esc(&p.unit)
    );
    for (i, a) in p.alarms.iter().enumerate() {
        alarm_section(&mut o, i, a);
    }
    if !p.panels.is_empty() {
        o.push_str("<h2>Requests</h2>\n");
    }
    for panel in &p.panels {
        let _ = writeln!(
            o,
            "<details id=\"{}\"><summary>{}</summary><pre>{}</pre></details>",
            anchor(&panel.id),
            esc(&panel.heading),
            esc(&panel.body)
        );
    }
    let _ = write!(o, "<script>{SCRIPT}</script>\n</body>\n</html>\n");
    o
}

fn lane_y(lane: usize) -> f64 {
    TOP + lane as f64 * LANE_H + LANE_H / 2.0
}

fn svg(o: &mut String, p: &Picture) {
    let l = Layout::new(p);
    let width = l.end + PAD + 140.0;
    let height = TOP + p.lanes.len() as f64 * LANE_H + BOTTOM;
    let _ = writeln!(
        o,
        "<svg width=\"{width:.0}\" height=\"{height:.0}\" viewBox=\"0 0 {width:.0} {height:.0}\" \
role=\"img\" aria-label=\"{}\">",
        esc(&p.title)
    );
    for (i, name) in p.lanes.iter().enumerate() {
        let y = TOP + i as f64 * LANE_H;
        let fill = if i % 2 == 0 { "#f7f9fc" } else { "#ffffff" };
        let _ = writeln!(
            o,
            "<g class=\"lane\" data-lane=\"{}\"><rect x=\"0\" y=\"{y:.1}\" width=\"{width:.0}\" \
height=\"{LANE_H:.1}\" fill=\"{fill}\"/><text class=\"lane-label\" x=\"8\" y=\"{:.1}\">{}</text></g>",
            esc(name),
            y + LANE_H / 2.0 + 4.0,
            esc(name)
        );
    }
    let axis_y = TOP + p.lanes.len() as f64 * LANE_H;
    for (x, t) in l.ticks() {
        let _ = writeln!(
            o,
            "<g class=\"tick\"><line x1=\"{x:.1}\" y1=\"{TOP:.1}\" x2=\"{x:.1}\" y2=\"{axis_y:.1}\" \
stroke=\"#e3e3e3\"/><text class=\"tick\" x=\"{x:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{t} ms</text></g>",
            axis_y + 16.0
        );
    }
    let _ = writeln!(
        o,
        "<line x1=\"{LEFT:.1}\" y1=\"{TOP:.1}\" x2=\"{LEFT:.1}\" y2=\"{axis_y:.1}\" stroke=\"#ccc\"/>"
    );
    for s in &p.spans {
        let (x1, x2) = (l.x_time(s.from), l.x_time(s.to));
        let y = lane_y(s.lane);
        let class = if s.bad { "span badspan" } else { "span" };
        let _ = writeln!(
            o,
            "<g class=\"spanmark\"><title>{}</title><rect class=\"{class}\" x=\"{x1:.1}\" y=\"{:.1}\" \
width=\"{:.1}\" height=\"14\" rx=\"3\"/><text x=\"{:.1}\" y=\"{:.1}\">{}</text></g>",
            esc(&s.detail),
            y - 7.0,
            (x2 - x1).max(2.0),
            x1 + 3.0,
            y + 18.0,
            esc(&s.label)
        );
    }
    let mut label_end = vec![f64::MIN; p.lanes.len()];
    let mut marks: Vec<&Mark> = p.marks.iter().collect();
    marks.sort_by_key(|m| (m.t, m.order));
    for m in marks {
        let x = l.x_at(m.t, m.order);
        mark(o, m, x, label_end.get_mut(m.lane));
    }
    for (i, a) in p.alarms.iter().enumerate() {
        let x = l.x_at(a.t, a.order);
        let _ = writeln!(
            o,
            "<a href=\"#violation-{i}\"><g class=\"alarm\" id=\"alarm-{i}\"><title>{}: {}</title>\
<line x1=\"{x:.1}\" y1=\"16\" x2=\"{x:.1}\" y2=\"{axis_y:.1}\"/><text x=\"{:.1}\" y=\"14\">✗ {}</text></g></a>",
            esc(&a.name),
            esc(&a.message),
            x + 4.0,
            esc(&a.name)
        );
    }
    o.push_str("</svg>\n");
}

fn mark(o: &mut String, m: &Mark, x: f64, label_end: Option<&mut f64>) {
    let y = lane_y(m.lane);
    let class = m.kind.class();
    let shape = match m.kind {
        Kind::Event => format!("<circle class=\"{class}\" cx=\"{x:.1}\" cy=\"{y:.1}\" r=\"4\"/>"),
        Kind::Request => format!(
            "<rect class=\"{class}\" x=\"{:.1}\" y=\"{:.1}\" width=\"10\" height=\"10\"/>",
            x - 5.0,
            y - 5.0
        ),
        Kind::Fault | Kind::Bad => format!(
            "<polygon class=\"{class}\" points=\"{x:.1},{:.1} {:.1},{y:.1} {x:.1},{:.1} {:.1},{y:.1}\"/>",
            y - 7.0,
            x + 7.0,
            y + 7.0,
            x - 7.0
        ),
        Kind::Signal => format!(
            "<polygon class=\"{class}\" points=\"{:.1},{:.1} {:.1},{:.1} {x:.1},{:.1}\"/>",
            x - 6.0,
            y - 6.0,
            x + 6.0,
            y - 6.0,
            y + 6.0
        ),
        Kind::Exit => format!(
            "<rect class=\"{class}\" x=\"{:.1}\" y=\"{:.1}\" width=\"4\" height=\"20\"/>",
            x - 2.0,
            y - 10.0
        ),
        Kind::Effect => format!("<circle class=\"{class}\" cx=\"{x:.1}\" cy=\"{y:.1}\" r=\"6\"/>"),
    };
    let mut g = format!(
        "<g class=\"mark {class}-mark\"><title>{}</title>{shape}",
        esc(&m.detail)
    );
    if let Some(end) = label_end
        && !m.label.is_empty()
        && x > *end
    {
        let _ = write!(
            g,
            "<text x=\"{:.1}\" y=\"{:.1}\">{}</text>",
            x + 6.0,
            y - 9.0,
            esc(&m.label)
        );
        *end = x + 8.0 + 6.5 * m.label.chars().count() as f64;
    }
    g.push_str("</g>");
    match &m.panel {
        Some(id) => {
            let _ = writeln!(o, "<a href=\"#{}\">{g}</a>", anchor(id));
        }
        None => {
            let _ = writeln!(o, "{g}");
        }
    }
}

fn alarm_section(o: &mut String, i: usize, a: &Alarm) {
    let _ = writeln!(
        o,
        "<section class=\"violation\" id=\"violation-{i}\">\n<h2>✗ {}</h2>\n<p class=\"message\">{}</p>",
        esc(&a.name),
        esc(&a.message)
    );
    if let Some(c) = &a.compare {
        let _ = writeln!(o, "<p>{}</p>", esc(&c.what));
        match first_difference(&c.left, &c.right) {
            None => {
                let _ = writeln!(
                    o,
                    "<p>The two are byte for byte the same ({} bytes).</p>",
                    c.left.len()
                );
            }
            Some(d) => {
                let _ = writeln!(
                    o,
                    "<p class=\"first-difference\">First difference at byte {} (line {}).</p>\n<div class=\"cmp\">",
                    d.at, d.line
                );
                for (name, text) in [(&c.left_name, &c.left), (&c.right_name, &c.right)] {
                    let (before, rest) = around(text, d.at);
                    let mut chars = rest.chars();
                    let first = chars.next().map(String::from).unwrap_or_default();
                    let shown_first = if first.is_empty() {
                        "(ends here)".to_owned()
                    } else {
                        first
                    };
                    let _ = writeln!(
                        o,
                        "<div><h3>{} ({} bytes)</h3><pre>{}<mark><b>{}</b>{}</mark></pre></div>",
                        esc(name),
                        text.len(),
                        esc(&before),
                        esc(&shown_first),
                        esc(chars.as_str())
                    );
                }
                o.push_str("</div>\n");
            }
        }
    }
    o.push_str("</section>\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_escaped_for_xml_and_holds_no_url() {
        assert_eq!(
            esc("<a href=\"x\">'&'</a>"),
            "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;"
        );
        assert_eq!(esc("a\u{0}b\u{1b}c\td"), "a\u{FFFD}b\u{FFFD}c\td");
        assert_eq!(
            esc("--base-url http://127.0.0.1:9"),
            "--base-url http:&#47;&#47;127.0.0.1:9"
        );
    }

    #[test]
    fn anchors_keep_only_safe_characters() {
        assert_eq!(anchor("req-3"), "req-3");
        assert_eq!(anchor("a\"b c/#"), "a-b-c--");
    }
}
