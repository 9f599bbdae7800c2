//! Plain tables written as Markdown, LaTeX (booktabs) or CSV, with the escaping each needs.

/// A table: a head row and body rows of text cells. `numeric[c]` right-aligns column `c`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Table {
    pub caption: String,
    pub head: Vec<String>,
    pub rows: Vec<Vec<String>>,
    pub numeric: Vec<bool>,
}

/// Escapes LaTeX specials so text prints as itself in a text-mode cell: `\ { } $ & # ^ _ ~ %`
/// and `< > |` (which the default OT1 encoding would print as other glyphs); line breaks
/// become spaces.
pub fn latex_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\textbackslash{}"),
            '{' | '}' | '$' | '&' | '#' | '_' | '%' => {
                out.push('\\');
                out.push(c);
            }
            '^' => out.push_str("\\textasciicircum{}"),
            '~' => out.push_str("\\textasciitilde{}"),
            '<' => out.push_str("\\textless{}"),
            '>' => out.push_str("\\textgreater{}"),
            '|' => out.push_str("\\textbar{}"),
            '\n' | '\r' | '\t' => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// Escapes Markdown so a cell shows its text literally: backslash-escapes the punctuation
/// Markdown gives meaning to (GitHub Markdown accepts `\` before any ASCII punctuation), and
/// turns line breaks into spaces (a table cell is one line).
pub fn md_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '\\' | '`' | '*' | '_' | '{' | '}' | '[' | ']' | '<' | '>' | '#' | '|' | '~' | '!' => {
                out.push('\\');
                out.push(c);
            }
            '\n' | '\r' | '\t' => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

impl Table {
    pub fn new(caption: impl Into<String>, head: &[&str]) -> Table {
        Table { caption: caption.into(), head: head.iter().map(|s| s.to_string()).collect(), ..Default::default() }
    }

    fn is_numeric(&self, c: usize) -> bool {
        self.numeric.get(c).copied().unwrap_or(false)
    }

    /// A GitHub Markdown table (cells escaped) with the caption as a line above it.
    pub fn markdown(&self) -> String {
        let mut s = String::new();
        if !self.caption.is_empty() {
            s += &format!("{}\n\n", md_escape(&self.caption));
        }
        let line = |cells: &[String]| format!("| {} |\n", cells.iter().map(|c| md_escape(c)).collect::<Vec<_>>().join(" | "));
        s += &line(&self.head);
        let rule: Vec<&str> = (0..self.head.len()).map(|c| if self.is_numeric(c) { "---:" } else { "---" }).collect();
        s += &format!("| {} |\n", rule.join(" | "));
        for r in &self.rows {
            s += &line(r);
        }
        s
    }

    /// A LaTeX `table` with a booktabs `tabular` (needs `\usepackage{booktabs}`); cells escaped.
    pub fn latex(&self) -> String {
        let spec: String = (0..self.head.len()).map(|c| if self.is_numeric(c) { 'r' } else { 'l' }).collect();
        let line = |cells: &[String]| format!("{} \\\\\n", cells.iter().map(|c| latex_escape(c)).collect::<Vec<_>>().join(" & "));
        let mut s = String::from("\\begin{table}[t]\n\\centering\n\\small\n");
        s += &format!("\\begin{{tabular}}{{{spec}}}\n\\toprule\n");
        s += &line(&self.head);
        s += "\\midrule\n";
        for r in &self.rows {
            s += &line(r);
        }
        s += "\\bottomrule\n\\end{tabular}\n";
        if !self.caption.is_empty() {
            s += &format!("\\caption{{{}}}\n", latex_escape(&self.caption));
        }
        s += "\\end{table}\n";
        s
    }

    /// Aligned plain text: the caption, then columns two spaces apart (numeric ones
    /// right-aligned), widths by terminal columns. Cells are not made terminal-safe here.
    pub fn text(&self) -> String {
        use crate::text::{pad, pad_left, width};
        let widths: Vec<usize> = (0..self.head.len())
            .map(|c| std::iter::once(&self.head).chain(&self.rows).map(|r| r.get(c).map_or(0, |s| width(s))).max().unwrap_or(0))
            .collect();
        let line = |cells: &[String]| {
            let parts: Vec<String> = widths
                .iter()
                .enumerate()
                .map(|(c, &w)| {
                    let s = cells.get(c).map_or("", String::as_str);
                    if self.is_numeric(c) { pad_left(s, w) } else { pad(s, w) }
                })
                .collect();
            parts.join("  ").trim_end().to_owned() + "\n"
        };
        let mut s = String::new();
        if !self.caption.is_empty() {
            s += &format!("{}\n", self.caption);
        }
        s += &line(&self.head);
        for r in &self.rows {
            s += &line(r);
        }
        s
    }

    /// CSV (RFC 4180 quoting), head first; the caption is not written.
    pub fn csv(&self) -> String {
        let mut w = csv::Writer::from_writer(Vec::new());
        // Writing to memory cannot fail.
        w.write_record(&self.head).expect("in-memory CSV");
        for r in &self.rows {
            w.write_record(r).expect("in-memory CSV");
        }
        String::from_utf8(w.into_inner().expect("in-memory CSV")).expect("CSV of UTF-8 cells")
    }
}

/// `0.1234` -> `0.123`; `None` -> `n/a`.
pub fn num(v: Option<f64>, digits: usize) -> String {
    v.map_or("n/a".into(), |x| format!("{x:.digits$}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latex_specials_are_escaped() {
        let raw = r"50% of $5 & #1_a {b} ~c^d \e <f> |g";
        assert_eq!(
            latex_escape(raw),
            r"50\% of \$5 \& \#1\_a \{b\} \textasciitilde{}c\textasciicircum{}d \textbackslash{}e \textless{}f\textgreater{} \textbar{}g"
        );
        assert_eq!(latex_escape("a\nb"), "a b");
        assert_eq!(latex_escape("café – ok"), "café – ok");
    }

    #[test]
    fn markdown_cells_cannot_break_the_table() {
        assert_eq!(md_escape("a | b *c* _d_ `e`\nf"), r"a \| b \*c\* \_d\_ \`e\` f");
        let mut t = Table::new("cap_1", &["name", "value"]);
        t.numeric = vec![false, true];
        t.rows.push(vec!["x|y".into(), "0.5".into()]);
        assert_eq!(t.markdown(), "cap\\_1\n\n| name | value |\n| --- | ---: |\n| x\\|y | 0.5 |\n");
        assert!(t.latex().contains("x\\textbar{}y & 0.5 \\\\\n") && t.latex().contains("\\caption{cap\\_1}"));
        assert_eq!(t.csv(), "name,value\nx|y,0.5\n");
        t.rows.push(vec!["a,\"b\"".into(), "1".into()]);
        assert!(t.csv().ends_with("\"a,\"\"b\"\"\",1\n"));
        assert_eq!(t.text(), "cap_1\nname   value\nx|y      0.5\na,\"b\"      1\n");
    }
}
