//! The plain-text alternative of an HTML e-mail: what a reader without HTML sees.
//!
//! Not a full HTML parser: tags are dropped, paragraphs and headings become blank-line breaks,
//! `<br>`, divisions and table rows line breaks, list items `- ` (or `1. ` in ordered lists)
//! lines, links keep their address after their text, `<pre>` keeps its spacing, scripts, styles
//! and the head are skipped, and the common character references are decoded.

/// The plain text of `html`.
pub fn html_to_text(html: &str) -> String {
    let mut out = TextOut::default();
    // An ordered list counts its items; an unordered one has `None`.
    let mut lists: Vec<Option<u32>> = Vec::new();
    // The `href` of each open link, with where its text starts in the output.
    let mut links: Vec<(Option<String>, usize)> = Vec::new();
    let mut skipping: Option<String> = None;
    let mut pre_depth = 0usize;
    let mut rest = html;
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix("<!--") {
            rest = after.find("-->").map_or("", |end| &after[end + 3..]);
            continue;
        }
        let Some(tag) = rest.starts_with('<').then(|| Tag::read(rest)).flatten() else {
            let end = rest[1..].find('<').map_or(rest.len(), |i| i + 1);
            if skipping.is_none() {
                out.text(&decode_entities(&rest[..end]), pre_depth > 0);
            }
            rest = &rest[end..];
            continue;
        };
        rest = &rest[tag.len..];
        if let Some(skipped) = &skipping {
            if tag.closing && tag.name == *skipped {
                skipping = None;
            }
            continue;
        }
        match (tag.name.as_str(), tag.closing) {
            ("script" | "style" | "head" | "title", false) if !tag.self_closing => {
                skipping = Some(tag.name.clone());
            }
            ("br", _) => out.line_break(),
            ("hr", _) => {
                out.breaks(1);
                out.push_raw("---");
                out.breaks(1);
            }
            ("p" | "h1" | "h2" | "h3" | "h4" | "h5" | "h6" | "blockquote" | "table", _) => {
                out.breaks(2)
            }
            ("pre", closing) => {
                out.breaks(2);
                if closing {
                    pre_depth = pre_depth.saturating_sub(1);
                } else {
                    pre_depth += 1;
                }
            }
            ("div" | "tr" | "section" | "article" | "header" | "footer" | "dd" | "dt", _) => {
                out.breaks(1)
            }
            ("td" | "th", false) => out.space(),
            ("ul", false) => {
                out.breaks(if lists.is_empty() { 2 } else { 1 });
                lists.push(None);
            }
            ("ol", false) => {
                out.breaks(if lists.is_empty() { 2 } else { 1 });
                lists.push(Some(0));
            }
            ("ul" | "ol", true) => {
                lists.pop();
                out.breaks(if lists.is_empty() { 2 } else { 1 });
            }
            ("li", false) => {
                out.breaks(1);
                out.push_raw(&"  ".repeat(lists.len().saturating_sub(1)));
                match lists.last_mut() {
                    Some(Some(n)) => {
                        *n += 1;
                        out.push_raw(&format!("{n}. "));
                    }
                    _ => out.push_raw("- "),
                }
            }
            ("li", true) => out.breaks(1),
            ("a", false) => links.push((tag.href, out.len())),
            ("a", true) => {
                if let Some((Some(href), start)) = links.pop() {
                    let shown = out.since(start).trim().to_owned();
                    let address = href.strip_prefix("mailto:").unwrap_or(&href);
                    let useful = !href.starts_with('#') && !href.starts_with("javascript:");
                    if useful && shown != address && shown != href {
                        if shown.is_empty() {
                            out.text(address, false);
                        } else {
                            out.text(&format!(" ({address})"), false);
                        }
                    }
                }
            }
            _ => {}
        }
    }
    out.finish()
}

/// One tag: its lower-case name, whether it closes, its `href`, and its length in the input.
struct Tag {
    name: String,
    closing: bool,
    self_closing: bool,
    href: Option<String>,
    len: usize,
}

impl Tag {
    /// The tag at the start of `s` (which starts with `<`), or `None` when the `<` starts no
    /// tag (it is text, as in "a < b").
    fn read(s: &str) -> Option<Tag> {
        let body = &s[1..];
        let (closing, body) = match body.strip_prefix('/') {
            Some(b) => (true, b),
            None => (false, body),
        };
        let first = body.chars().next()?;
        if !(first.is_ascii_alphabetic() || first == '!' || first == '?') {
            return None;
        }
        // The end: the first `>` outside a quoted attribute value.
        let mut quote: Option<char> = None;
        let mut end = None;
        for (i, c) in s.char_indices().skip(1) {
            match (quote, c) {
                (Some(q), c) if c == q => quote = None,
                (Some(_), _) => {}
                (None, '"' | '\'') => quote = Some(c),
                (None, '>') => {
                    end = Some(i);
                    break;
                }
                (None, _) => {}
            }
        }
        // An unclosed tag runs to the end of the input.
        let (inner, len) = match end {
            Some(end) => (&s[1..end], end + 1),
            None => (&s[1..], s.len()),
        };
        let inner = inner.strip_prefix('/').unwrap_or(inner);
        let name_end = inner
            .find(|c: char| c.is_whitespace() || c == '/' || c == '>')
            .unwrap_or(inner.len());
        let attributes = &inner[name_end..];
        Some(Tag {
            name: inner[..name_end].to_ascii_lowercase(),
            closing,
            self_closing: inner.ends_with('/'),
            href: attribute(attributes, "href").map(|v| decode_entities(v.trim())),
            len,
        })
    }
}

/// The value of attribute `name` in a tag's attribute text.
fn attribute<'a>(attributes: &'a str, name: &str) -> Option<&'a str> {
    let mut rest = attributes;
    loop {
        rest = rest.trim_start_matches(|c: char| c.is_whitespace() || c == '/');
        if rest.is_empty() {
            return None;
        }
        let key_end = rest
            .find(|c: char| c.is_whitespace() || c == '=' || c == '/')
            .unwrap_or(rest.len());
        let key = &rest[..key_end];
        rest = rest[key_end..].trim_start();
        let value = if let Some(after) = rest.strip_prefix('=') {
            let after = after.trim_start();
            let (value, remaining) = match after.chars().next() {
                Some(q @ ('"' | '\'')) => {
                    let close = after[1..].find(q).map_or(after.len(), |i| i + 1);
                    (&after[1..close], after.get(close + 1..).unwrap_or(""))
                }
                _ => {
                    let close = after.find(char::is_whitespace).unwrap_or(after.len());
                    (&after[..close], &after[close..])
                }
            };
            rest = remaining;
            Some(value)
        } else {
            None
        };
        if key.eq_ignore_ascii_case(name) {
            return value;
        }
    }
}

/// Decodes numeric references and the named ones e-mails commonly hold; leaves others as
/// written.
pub fn decode_entities(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(at) = rest.find('&') {
        out.push_str(&rest[..at]);
        rest = &rest[at..];
        let decoded = rest[1..]
            .find(';')
            .filter(|&end| end <= 10)
            .and_then(|end| Some((entity(&rest[1..end + 1])?, end + 2)));
        match decoded {
            Some((c, len)) => {
                out.push(c);
                rest = &rest[len..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

fn entity(name: &str) -> Option<char> {
    if let Some(number) = name.strip_prefix('#') {
        let code = match number.strip_prefix(['x', 'X']) {
            Some(hex) => u32::from_str_radix(hex, 16).ok()?,
            None => number.parse().ok()?,
        };
        return char::from_u32(code).filter(|c| *c != '\0');
    }
    Some(match name {
        "amp" => '&',
        "lt" => '<',
        "gt" => '>',
        "quot" => '"',
        "apos" => '\'',
        "nbsp" => '\u{a0}',
        "ndash" => '–',
        "mdash" => '—',
        "hellip" => '…',
        "lsquo" => '‘',
        "rsquo" => '’',
        "ldquo" => '“',
        "rdquo" => '”',
        "bull" => '•',
        "middot" => '·',
        "copy" => '©',
        "reg" => '®',
        "trade" => '™',
        "euro" => '€',
        "pound" => '£',
        "deg" => '°',
        "times" => '×',
        _ => return None,
    })
}

/// The text being written: white space collapsed as a browser would, breaks never doubled
/// beyond what was asked.
#[derive(Default)]
struct TextOut {
    out: String,
    pending_space: bool,
}

impl TextOut {
    fn len(&self) -> usize {
        self.out.len()
    }

    fn since(&self, start: usize) -> &str {
        self.out.get(start..).unwrap_or("")
    }

    fn text(&mut self, text: &str, preformatted: bool) {
        for c in text.chars() {
            if preformatted {
                self.out.push(if c == '\u{a0}' { ' ' } else { c });
            } else if c.is_whitespace() {
                self.pending_space = true;
            } else {
                if self.pending_space && !self.out.is_empty() && !self.out.ends_with([' ', '\n']) {
                    self.out.push(' ');
                }
                self.pending_space = false;
                self.out.push(c);
            }
        }
    }

    fn push_raw(&mut self, s: &str) {
        self.pending_space = false;
        self.out.push_str(s);
    }

    fn space(&mut self) {
        self.pending_space = true;
    }

    fn line_break(&mut self) {
        self.trim_trailing_spaces();
        self.out.push('\n');
        self.pending_space = false;
    }

    /// At least `n` line breaks end the text (none at its start).
    fn breaks(&mut self, n: usize) {
        self.trim_trailing_spaces();
        self.pending_space = false;
        if self.out.is_empty() {
            return;
        }
        let have = self.out.len() - self.out.trim_end_matches('\n').len();
        for _ in have..n {
            self.out.push('\n');
        }
    }

    fn trim_trailing_spaces(&mut self) {
        let kept = self.out.trim_end_matches(' ').len();
        self.out.truncate(kept);
    }

    fn finish(self) -> String {
        let mut text = String::with_capacity(self.out.len());
        let mut blank_lines = 0;
        for line in self.out.trim().lines() {
            let line = line.trim_end();
            if line.is_empty() {
                blank_lines += 1;
                if blank_lines > 1 {
                    continue;
                }
            } else {
                blank_lines = 0;
            }
            text.push_str(line);
            text.push('\n');
        }
        text.truncate(text.trim_end().len());
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paragraphs_breaks_and_white_space() {
        let html = "<html><head><title>T</title><style>p{color:red}</style></head>\
            <body><h1>Weekly  news</h1>\n<p>Hello\n   team,<br>all good.</p><p>Bye</p>\
            <div>one</div><div>two</div></body></html>";
        assert_eq!(
            html_to_text(html),
            "Weekly news\n\nHello team,\nall good.\n\nBye\n\none\ntwo"
        );
    }

    #[test]
    fn lists_keep_their_items_and_numbers() {
        let html = "<p>Agenda:</p><ul><li>Intro</li><li>Plan<ol><li>a</li><li>b</li></ol></li></ul><p>End</p>";
        assert_eq!(
            html_to_text(html),
            "Agenda:\n\n- Intro\n- Plan\n  1. a\n  2. b\n\nEnd"
        );
    }

    #[test]
    fn links_keep_their_address() {
        let html = r##"<p>Read <a class="x" href="https://acme.test/a?b=1&amp;c=2">the notes</a>,
            mail <a href='mailto:ada@acme.test'>ada@acme.test</a>,
            <a href="https://acme.test">https://acme.test</a>, <a href="#top">top</a>,
            <a href=https://bare.test></a></p>"##;
        assert_eq!(
            html_to_text(html),
            "Read the notes (https://acme.test/a?b=1&c=2), mail ada@acme.test, \
             https://acme.test, top, https://bare.test"
        );
    }

    #[test]
    fn entities_are_decoded_and_stray_markup_is_text() {
        assert_eq!(
            html_to_text(
                "Fish &amp; chips &lt;3 &#8212; &#x2713; caf&eacute;&nbsp;ok; 1 < 2 & 3 > 2"
            ),
            "Fish & chips <3 — ✓ caf&eacute; ok; 1 < 2 & 3 > 2"
        );
        assert_eq!(decode_entities("&quot;a&apos;&#39;&#0;"), "\"a''&#0;");
    }

    #[test]
    fn scripts_comments_and_pre() {
        let html = "<script>var a = '<p>';</script><!-- hidden <b> -->\
            <pre>  keep\n    this</pre><p>x</p><hr><table><tr><td>a</td><td>b</td></tr>\
            <tr><td>c</td><td>d</td></tr></table>";
        assert_eq!(html_to_text(html), "keep\n    this\n\nx\n\n---\n\na b\nc d");
    }

    #[test]
    fn plain_text_stays_as_it_is() {
        assert_eq!(
            html_to_text("Just text.\nSecond line"),
            "Just text. Second line"
        );
        assert_eq!(html_to_text(""), "");
        assert_eq!(html_to_text("<p><b>Bold</b> <i>move</i></p>"), "Bold move");
        assert_eq!(html_to_text("unclosed <a href=\"x"), "unclosed");
    }
}
