//! Text as charts lay it out: escaping, an upper bound of its width (SVG
//! has no text layout, so legends and labels are placed from estimates
//! that err on the wide side) and cutting it to fit.

/// Escapes text for SVG/HTML content and attributes.
pub fn escape(text: &str) -> String {
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

/// The width of one character in ems, rounded up from the widest common
/// sans-serif faces (DejaVu Sans, Liberation Sans, Arial).
fn char_em(c: char) -> f64 {
    match c {
        'i' | 'j' | 'l' | '.' | ',' | ':' | ';' | '\'' | '!' | '|' | '·' | ' ' => 0.34,
        'f' | 't' | 'r' | '(' | ')' | '[' | ']' | '-' | '/' | 'I' => 0.46,
        'm' | 'w' | 'M' | 'W' | '%' | '@' | '—' => 1.0,
        c if c.is_ascii_uppercase() => 0.8,
        c if c.is_ascii_digit() => 0.66,
        _ => 0.66,
    }
}

/// An upper bound of the width of `text` in pixels at `font_size`.
pub fn text_width(text: &str, font_size: f64) -> f64 {
    text.chars().map(char_em).sum::<f64>() * font_size
}

/// `text`, cut with an ellipsis so that it fits in `max_width` pixels at
/// `font_size` (whole when it fits).
pub fn fit(text: &str, max_width: f64, font_size: f64) -> String {
    if text_width(text, font_size) <= max_width {
        return text.to_string();
    }
    let ellipsis = char_em('…').max(0.8) * font_size;
    let mut out = String::new();
    let mut width = ellipsis;
    for c in text.chars() {
        let w = char_em(c) * font_size;
        if width + w > max_width {
            break;
        }
        width += w;
        out.push(c);
    }
    out.push('…');
    out
}

/// `text` broken into lines of at most `max_width` pixels at `font_size`,
/// at spaces (a word longer than a line is cut).
pub fn wrap(text: &str, max_width: f64, font_size: f64) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        let candidate = if line.is_empty() {
            word.to_string()
        } else {
            format!("{line} {word}")
        };
        if text_width(&candidate, font_size) <= max_width || line.is_empty() {
            line = candidate;
        } else {
            lines.push(std::mem::take(&mut line));
            line = word.to_string();
        }
    }
    if !line.is_empty() || lines.is_empty() {
        lines.push(line);
    }
    lines
        .into_iter()
        .map(|l| fit(&l, max_width, font_size))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_cut_and_wrapped_to_its_width() {
        assert_eq!(fit("short", 100.0, 12.0), "short");
        let cut = fit("a rather long legend entry for a run", 80.0, 12.0);
        assert!(
            cut.ends_with('…') && text_width(&cut, 12.0) <= 80.0 + 12.0,
            "{cut}"
        );
        let lines = wrap("one two three four five six seven", 60.0, 12.0);
        assert!(lines.len() > 2, "{lines:?}");
        assert!(lines.iter().all(|l| text_width(l, 12.0) <= 60.0 + 12.0));
        assert_eq!(escape("<a & 'b'>"), "&lt;a &amp; &#39;b&#39;&gt;");
    }
}
