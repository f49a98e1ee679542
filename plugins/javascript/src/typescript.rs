//! TypeScript as promptfoo runs it: promptfoo compiles a `.ts` module with
//! `tsx` (esbuild), which erases the types and runs what is left. Here oxc's
//! parser and TypeScript transform do the same inside the sandbox: types,
//! interfaces, `import type`, `as`/`satisfies` and non-null assertions go,
//! enums and namespaces become JavaScript. A file that does not parse as
//! TypeScript is an error naming the first problem and its line.

use oxc_allocator::Allocator;
use oxc_codegen::Codegen;
use oxc_diagnostics::OxcDiagnostic;
use oxc_parser::Parser;
use oxc_semantic::SemanticBuilder;
use oxc_span::SourceType;
use oxc_transformer::{TransformOptions, Transformer};
use std::path::Path;

/// The extensions of TypeScript modules.
pub const EXTENSIONS: &[&str] = &[".ts", ".mts", ".cts"];

/// Whether the module `name` is TypeScript.
pub fn is_typescript(name: &str) -> bool {
    EXTENSIONS.iter().any(|extension| name.ends_with(extension))
}

/// `source`, the TypeScript module `name`, as JavaScript.
pub fn to_javascript(name: &str, source: &str) -> Result<String, String> {
    let allocator = Allocator::default();
    let source_type = SourceType::ts().with_module(true);
    let parsed = Parser::new(&allocator, source, source_type).parse();
    if let Some(error) = parsed.diagnostics.errors().next() {
        return Err(located(name, source, error));
    }
    let mut program = parsed.program;
    let scoping = SemanticBuilder::new().with_enum_eval(true).build(&program).semantic.into_scoping();
    let options = TransformOptions::default();
    let transformed = Transformer::new(&allocator, Path::new(name), &options).build_with_scoping(scoping, &mut program);
    if let Some(error) = transformed.diagnostics.errors().next() {
        return Err(located(name, source, error));
    }
    Ok(Codegen::new().build(&program).code)
}

/// An oxc diagnostic as one line: the file, the line of its first label,
/// and its message.
fn located(name: &str, source: &str, error: &OxcDiagnostic) -> String {
    let offset = error.labels.first().map(|label| label.offset() as usize);
    match offset {
        Some(offset) => {
            let line = source.get(..offset).unwrap_or(source).matches('\n').count() + 1;
            format!(
                "{name}:{line}: {error} (assay strips the types of TypeScript as tsx does; fix the file, or compile it and name the `.js` file)"
            )
        }
        None => format!(
            "{name}: {error} (assay strips the types of TypeScript as tsx does; fix the file, or compile it and name the `.js` file)"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn types_are_erased_and_the_rest_is_kept() {
        let source = "import type { TestCase } from 'promptfoo';\ninterface Row { input: string; n?: number }\n\
                      type Level = 'basic' | 'advanced';\n\
                      export async function generate(config?: { max?: number }): Promise<TestCase[]> {\n\
                      const rows: Row[] = [{ input: 'a' }];\n  const level = 'basic' as const;\n\
                      return rows.slice(0, config!.max).map((row: Row) => ({ vars: { text: row.input, level } })) satisfies TestCase[];\n}\n";
        let js = to_javascript("tests.ts", source).unwrap();
        assert!(!js.contains("interface") && !js.contains("import type") && !js.contains(": Row"), "{js}");
        assert!(js.contains("export async function generate(config)"), "{js}");
        assert!(js.contains("rows.slice(0, config.max)"), "{js}");
    }

    #[test]
    fn enums_become_javascript() {
        let js = to_javascript("e.ts", "export enum Color { Red, Green = 'g' }\n").unwrap();
        assert!(js.contains("Color[\"Red\"]"), "{js}");
    }

    #[test]
    fn a_file_that_does_not_parse_says_where() {
        let error = to_javascript("broken.ts", "const a = 1;\nconst b: = 2;\n").unwrap_err();
        assert!(error.starts_with("broken.ts:2: "), "{error}");
        assert!(error.contains("compile it and name the `.js` file"), "{error}");
    }
}
