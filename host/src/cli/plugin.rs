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
    let sdk = match args.sdk.as_deref() {
        None | Some("vendored") => SdkDependency::Vendored,
        Some("registry") => SdkDependency::registry(),
        Some(path) => SdkDependency::Path(PathBuf::from(path)),
    };
    let vendored = sdk == SdkDependency::Vendored;
    let made = scaffold(ScaffoldOptions { name: args.name, dir: args.dir, sdk }).map_err(CliError::from)?;
    let (name, dir) = (&made.name, made.dir.display());
    println!("Created the plugin crate `{name}` in {dir} with the key `{}`.", made.key);
    if vendored {
        println!(
            "It builds with the SDK this assay carries, in {dir}/vendor/assay-plugin-sdk: commit it with the plugin."
        );
    }
    println!("Next:");
    println!("  cd {dir}");
    println!("  cargo test            # runs its unit tests natively");
    println!("  assay plugin build    # builds {name}.wasm and prints how to load it");
    Ok(assay::exit_codes::OK)
}

fn new_python(args: PluginNewArgs) -> Result<u8> {
    let made = scaffold_python(&args.name, args.dir).map_err(CliError::from)?;
    let (name, key, dir) = (&made.name, &made.key, made.dir.display());
    println!("Created the Python plugin `{name}` in {dir} with the key `{key}` ({key}.py).");
    println!("Next:");
    println!("  cd {dir}");
    println!("  python3 -m unittest   # runs its unit tests");
    println!("  assay plugin build    # builds {name}.wasm with componentize-py and prints how to load it");
    println!("({key}.py runs as a script too: python3 {key}.py \"output\" '{{\"expected\": \"...\"}}')");
    Ok(assay::exit_codes::OK)
}

fn build_crate(args: PluginBuildArgs) -> Result<u8> {
    let mut options = BuildOptions::new(args.dir.unwrap_or_else(|| PathBuf::from(".")));
    options.target_dir = std::env::var_os("CARGO_TARGET_DIR").map(PathBuf::from);
    let built = build(options, |step| eprintln!("{step}")).map_err(CliError::from)?;
    let keys: Vec<&str> = built.keys.iter().map(|k| k.key.as_str()).collect();
    println!("{}", built.component.strip_prefix(".").unwrap_or(&built.component).display());
    println!("sha256 {}", built.sha256);
    println!("{} {} provides: {}", built.name, built.version, keys.join(", "));
    let path = std::fs::canonicalize(&built.component).unwrap_or_else(|_| built.component.clone());
    println!("Load it with `--plugin {}`, or in assay.toml:", path.display());
    println!("  [plugins.{}]", built.name);
    println!("  path = {:?}", path.display().to_string());
    println!("  sha256 = {:?}", built.sha256);
    Ok(assay::exit_codes::OK)
}
