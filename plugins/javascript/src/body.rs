//! promptfoo's `buildFunctionBody` (promptfoo 0.123.1,
//! `src/assertions/javascript.ts`): how a one-line `javascript` assertion
//! becomes the body of `new Function('output', 'context', 'process', body)`.
//! A single expression is returned (`return EXPR`); a line that starts with
//! a declaration has `return` put before the expression after its last
//! statement-level `;`. Multi-line code is the body as written.

/// The function body promptfoo makes of `code` (already `trimEnd`ed).
pub fn function_body(code: &str) -> String {
    if code.contains('\n') {
        return code.to_owned();
    }
    build_function_body(code)
}

/// `buildFunctionBody`: for one line of code.
fn build_function_body(code: &str) -> String {
    let trimmed = strip_trailing_semicolons(trim(code));
    if !starts_with_declaration(trimmed) {
        return format!("return {trimmed}");
    }
    if let Some(last) = last_statement_semicolon(trimmed) {
        let statements = &trimmed[..=last];
        let expression = trim(&trimmed[last + 1..]);
        if !expression.is_empty() {
            return format!("{statements} return {expression}");
        }
    }
    // No expression after the last `;`: the code as it is (it returns
    // `undefined`, which promptfoo then refuses).
    trimmed.to_owned()
}

/// `s.replace(/;+\s*$/, '')`: one run of `;` followed only by spaces at the
/// end is removed.
fn strip_trailing_semicolons(s: &str) -> &str {
    let without_spaces = s.trim_end_matches(is_js_space);
    if without_spaces.ends_with(';') { without_spaces.trim_end_matches(';') } else { s }
}

/// `/^(const|let|var)\s/`.
fn starts_with_declaration(code: &str) -> bool {
    ["const", "let", "var"]
        .iter()
        .any(|keyword| code.strip_prefix(keyword).and_then(|rest| rest.chars().next()).is_some_and(is_js_space))
}

/// promptfoo's `findLastStatementSemicolon`: the byte index of the last `;`
/// outside single-quoted, double-quoted and template strings (a quote
/// preceded by an odd number of backslashes is escaped). Like promptfoo's,
/// it does not know regex literals or `${…}` inside templates.
fn last_statement_semicolon(code: &str) -> Option<usize> {
    let (mut single, mut double, mut template) = (false, false, false);
    let mut last = None;
    let bytes = code.as_bytes();
    for (i, &byte) in bytes.iter().enumerate() {
        let escaped = bytes[..i].iter().rev().take_while(|&&b| b == b'\\').count() % 2 == 1;
        if !escaped {
            match byte {
                b'\'' if !double && !template => single = !single,
                b'"' if !single && !template => double = !double,
                b'`' if !single && !double => template = !template,
                _ => {}
            }
        }
        if byte == b';' && !single && !double && !template {
            last = Some(i);
        }
    }
    last
}

/// JavaScript's `trim()`.
fn trim(s: &str) -> &str {
    s.trim_matches(is_js_space)
}

/// JavaScript's `\s` (WhiteSpace and LineTerminator).
fn is_js_space(c: char) -> bool {
    matches!(
        c,
        '\t' | '\n' | '\u{0B}' | '\u{0C}' | '\r' | ' ' | '\u{A0}' | '\u{1680}' | '\u{2000}'
            ..='\u{200A}' | '\u{2028}' | '\u{2029}' | '\u{202F}' | '\u{205F}' | '\u{3000}' | '\u{FEFF}'
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// promptfoo's own examples (`buildFunctionBody`'s doc comment) and
    /// the edges of its rules.
    #[test]
    fn one_line_code_becomes_a_body_as_promptfoo_makes_it() {
        let cases = [
            ("output === 'test'", "return output === 'test'"),
            ("const s = JSON.parse(output).score; s > 0.5", "const s = JSON.parse(output).score; return s > 0.5"),
            ("const s = output; s === 'a;b'", "const s = output; return s === 'a;b'"),
            ("  output.length > 3;;  ", "return output.length > 3"),
            ("let x = 1; let y = 2; x + y;", "let x = 1; let y = 2; return x + y"),
            // No expression after the last `;`: the code as it is.
            ("const x = 1", "const x = 1"),
            ("var s = `a;${1}`; s", "var s = `a;${1}`; return s"),
            (r#"const q = "say \"hi;\""; q.length"#, r#"const q = "say \"hi;\""; return q.length"#),
            // `constant` is not a declaration.
            ("constant > 1", "return constant > 1"),
            ("a; b", "return a; b"),
        ];
        for (code, body) in cases {
            assert_eq!(function_body(code), body, "{code}");
        }
    }

    #[test]
    fn multi_line_code_is_the_body_as_written() {
        let code = "const n = output.length;\nreturn n > 2;";
        assert_eq!(function_body(code), code);
    }
}
