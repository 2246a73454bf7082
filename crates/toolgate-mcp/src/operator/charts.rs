//! charts: the status page's charts, drawn by the gateway as inline SVG (no script, nothing
//! fetched; the page's CSP allows neither): tool lists' tokens saved, searches, loads and
//! refusals minute by minute over the last hour, the slowest upstreams, and the searches where
//! nothing fitted.

use std::fmt::Write as _;

use serde_json::Value;

use super::status_page::esc;

/// Width and height of a chart's plot, in SVG units.
const WIDTH: f64 = 600.0;
const HEIGHT: f64 = 90.0;

/// The "Last hour" section of the page for `status["timeline"]`.
pub(crate) fn section(out: &mut String, status: &Value) {
    let timeline = &status["timeline"];
    let minutes = timeline["minutes"].as_array().map(Vec::as_slice).unwrap_or_default();
    let series = |key: &str| -> Vec<f64> { minutes.iter().map(|m| m[key].as_f64().unwrap_or(0.0)).collect() };
    out.push_str("<h2>Last hour</h2>\n");
    let saved = series("saved");
    let _ = writeln!(
        out,
        "<p>Tokens saved by deferral: <b id=\"saved-total\">{}</b> since start, {} in the last hour \
         (definitions a tool list did not send, against a full load).</p>",
        timeline["saved_total"].as_u64().unwrap_or(0),
        saved.iter().sum::<f64>() as u64
    );
    out.push_str("<div class=\"charts\">\n");
    out.push_str(&columns("chart-saved", "tokens saved per minute", &saved, "#2a7"));
    out.push_str(&columns("chart-searches", "searches per minute", &series("searches"), "#37b"));
    out.push_str(&columns("chart-loads", "tools loaded per minute", &series("loads"), "#a6c"));
    out.push_str(&columns("chart-refusals", "refusals per minute", &series("refusals"), "#c43"));
    out.push_str("</div>\n");
    let upstreams: Vec<(String, f64, f64)> = timeline["upstreams"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .take(8)
        .map(|u| {
            let name = u["upstream"].as_str().unwrap_or_default().to_owned();
            (name, u["mean_ms"].as_f64().unwrap_or(0.0), u["max_ms"].as_f64().unwrap_or(0.0))
        })
        .collect();
    out.push_str("<h3>Slowest upstreams (mean call time)</h3>\n");
    if upstreams.is_empty() {
        out.push_str("<p id=\"chart-upstreams\">No call was forwarded yet.</p>\n");
    } else {
        out.push_str(&rows("chart-upstreams", &upstreams));
    }
    out.push_str("<h3>Searches where nothing fitted</h3>\n");
    let misses = timeline["nothing_fitted"].as_array().map(Vec::as_slice).unwrap_or_default();
    if misses.is_empty() {
        out.push_str("<p id=\"nothing-fitted\">Every search found something.</p>\n");
        return;
    }
    out.push_str("<table id=\"nothing-fitted\"><tr><th>when</th><th>subject</th><th>query</th></tr>\n");
    for m in misses {
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td>{}</td><td>{}</td></tr>",
            super::status_page::clock(m["at"].as_u64().unwrap_or(0)),
            esc(m["subject"].as_str().unwrap_or_default()),
            esc(m["query"].as_str().unwrap_or_default())
        );
    }
    out.push_str("</table>\n");
}

/// A column chart of `values` (oldest first), titled `title`, its highest value labelled.
fn columns(id: &str, title: &str, values: &[f64], colour: &str) -> String {
    let top = values.iter().copied().fold(0.0, f64::max);
    let n = values.len().max(1) as f64;
    let step = WIDTH / n;
    let mut svg = format!(
        "<figure><figcaption>{} <span class=\"muted\">(most {})</span></figcaption>\
         <svg id=\"{id}\" role=\"img\" aria-label=\"{}\" viewBox=\"0 0 {WIDTH} {}\" width=\"{WIDTH}\" height=\"{}\">",
        esc(title),
        top as u64,
        esc(title),
        HEIGHT + 12.0,
        HEIGHT + 12.0
    );
    let _ = write!(svg, "<line x1=\"0\" y1=\"{HEIGHT}\" x2=\"{WIDTH}\" y2=\"{HEIGHT}\" stroke=\"#999\"/>");
    for (i, v) in values.iter().enumerate() {
        if *v <= 0.0 {
            continue;
        }
        let h = (v / top * HEIGHT).max(1.0);
        let _ = write!(
            svg,
            "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{h:.1}\" fill=\"{colour}\"><title>{} {}</title></rect>",
            i as f64 * step + 0.5,
            HEIGHT - h,
            (step - 1.0).max(1.0),
            *v as u64,
            esc(title)
        );
    }
    let _ = writeln!(
        svg,
        "<text x=\"0\" y=\"{}\" font-size=\"10\" fill=\"#666\">60 min ago</text>\
         <text x=\"{WIDTH}\" y=\"{}\" font-size=\"10\" fill=\"#666\" text-anchor=\"end\">now</text></svg></figure>",
        HEIGHT + 11.0,
        HEIGHT + 11.0
    );
    svg
}

/// A bar chart of upstreams' mean call times, each bar labelled with its name and figures.
fn rows(id: &str, upstreams: &[(String, f64, f64)]) -> String {
    let top = upstreams.iter().map(|u| u.1).fold(0.0, f64::max).max(f64::MIN_POSITIVE);
    let row = 18.0;
    let height = row * upstreams.len() as f64;
    let mut svg = format!(
        "<svg id=\"{id}\" role=\"img\" aria-label=\"mean call time by upstream\" viewBox=\"0 0 {WIDTH} {height}\" \
         width=\"{WIDTH}\" height=\"{height}\">"
    );
    let label = 160.0;
    for (i, (name, mean, max)) in upstreams.iter().enumerate() {
        let y = i as f64 * row;
        let w = (mean / top * (WIDTH - label - 130.0)).max(1.0);
        let _ = write!(
            svg,
            "<text x=\"0\" y=\"{:.1}\" font-size=\"12\">{}</text>\
             <rect x=\"{label}\" y=\"{:.1}\" width=\"{w:.1}\" height=\"{:.1}\" fill=\"#e80\"/>\
             <text x=\"{:.1}\" y=\"{:.1}\" font-size=\"11\" fill=\"#333\">{mean:.1} ms (max {max:.0})</text>",
            y + 13.0,
            esc(name),
            y + 3.0,
            row - 6.0,
            label + w + 6.0,
            y + 13.0
        );
    }
    svg.push_str("</svg>\n");
    svg
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_are_as_high_as_their_share_of_the_highest_and_quiet_minutes_draw_nothing() {
        let svg = columns("c", "searches <per> minute", &[0.0, 2.0, 4.0], "#000");
        assert_eq!(svg.matches("<rect").count(), 2);
        assert!(svg.contains("height=\"45.0\"") && svg.contains("height=\"90.0\""), "{svg}");
        assert!(svg.contains("searches &lt;per&gt; minute") && !svg.contains("<per>"), "labels are escaped");
    }

    #[test]
    fn the_slowest_upstream_has_the_longest_bar_and_names_are_escaped() {
        let svg = rows("u", &[("slow<b>".into(), 40.0, 60.0), ("fast".into(), 10.0, 12.0)]);
        assert!(svg.contains("slow&lt;b&gt;") && svg.contains("40.0 ms (max 60)"), "{svg}");
        let widths: Vec<f64> = svg
            .match_indices("width=\"")
            .skip(1)
            .map(|(i, _)| svg[i + 7..].split('"').next().unwrap().parse().unwrap())
            .collect();
        assert!(widths[0] > widths[1] * 3.9 && widths[0] < widths[1] * 4.1, "{widths:?}");
    }
}
