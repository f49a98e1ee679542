//! `assay plugin new [--python] NAME` and `assay plugin build [DIR]`: the flags as
//! [`assay::authoring`] options, and what it made printed.

use super::CliError;
use super::args::{PluginBuildArgs, PluginCommand, PluginNewArgs};
use anyhow::Result;
use assay::authoring::{BuildOptions, ScaffoldOptions, SdkDependency, build, scaffold, scaffold_python};
use std::path::PathBuf;

pub fn run(command: PluginCommand) -> Result<u8> {
    match command {
        PluginCommand::New(args) => new(args),
        PluginCommand::Build(args) => build_crate(args),
    }
}

fn new(args: PluginNewArgs) -> Result<u8> {
    if args.python {
        return new_python(args);
    }
    let sdk = args.sdk.map_or_else(SdkDependency::default, SdkDependency::Path);
    let made = scaffold(ScaffoldOptions { name: args.name, dir: args.dir, sdk }).map_err(CliError::from)?;
    let (name, dir) = (&made.name, made.dir.display());
    println!("Created the plugin crate `{name}` in {dir} with the key `{}`.", made.key);
    println!("  cargo test                 runs its unit test natively");
    println!("  assay plugin build {dir}  builds {name}.wasm");
    Ok(assay::exit_codes::OK)
}

fn new_python(args: PluginNewArgs) -> Result<u8> {
    let made = scaffold_python(&args.name, args.dir).map_err(CliError::from)?;
    let (name, key, dir) = (&made.name, &made.key, made.dir.display());
    println!("Created the Python plugin `{name}` in {dir} with the key `{key}` ({key}.py).");
    println!("  python3 {key}.py \"output\" '{{\"expected\": \"...\"}}'  runs the metric as a script, in {dir}");
    println!("  python3 -m unittest         runs its unit tests, in {dir}");
    println!("  assay plugin build {dir}  builds {name}.wasm with componentize-py");
    Ok(assay::exit_codes::OK)
}

fn build_crate(args: PluginBuildArgs) -> Result<u8> {
    let mut options = BuildOptions::new(args.dir.unwrap_or_else(|| PathBuf::from(".")));
    options.target_dir = std::env::var_os("CARGO_TARGET_DIR").map(PathBuf::from);
    let built = build(options, |step| eprintln!("{step}")).map_err(CliError::from)?;
    let keys: Vec<&str> = built.keys.iter().map(|k| k.key.as_str()).collect();
    println!("{}", built.component.display());
    println!("sha256 {}", built.sha256);
    println!("{} {} provides: {}", built.name, built.version, keys.join(", "));
    Ok(assay::exit_codes::OK)
}
